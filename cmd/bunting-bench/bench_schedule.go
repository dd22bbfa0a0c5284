package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/bunting-flags/bunting/sql/seed"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
)

// stream-schedule: scheduled changes reaching SDKs. Bunting is given
// -stream-changes schedules at once, change k setting the individual
// targets of the streaming environment's flag k+2 to a marker at its own
// time, scheduleGap after the one before, and its schedule worker applies
// them; a delivery is the time from a change's scheduled time until a
// connection reads its marker. The floor has no scheduler: the benchmark
// makes the floor's change (its write, then the broadcast) on the dot, so
// its deliveries are what any server's are when it acts at the very time.
const (
	scenarioStreamSchedule = "stream-schedule"
	scheduleGap            = 500 * time.Millisecond
	scheduleStreams        = 100  // connections, at most
	scheduleLateP99Ms      = 1000 // the check: p99 of the time after a change's time until an SDK has it
	// scheduleLead is how far ahead the first change is scheduled, so that
	// every schedule is made before the first is due.
	scheduleLead = 2 * time.Second
)

// runSchedule is stream-schedule against one target.
func runSchedule(ctx context.Context, w *benchWorld, target string) (benchResult, error) {
	o := w.o.Stream
	s, err := w.streamSetup(ctx)
	if err != nil {
		return benchResult{}, err
	}
	s.runs++
	changes := min(o.Changes, o.Flags-1) // flag 1 is stream-fanout's
	if changes < 1 {
		return benchResult{}, errors.New("stream-schedule needs -stream-flags of 2 or more")
	}
	markerStem := []byte(fmt.Sprintf("schedule-%s-%d-", target, s.runs))
	m := w.openMarked(ctx, target, s, min(o.Streams, scheduleStreams), changes, markerStem)
	queriesBefore, err := w.queryStats(ctx)
	if err != nil {
		return benchResult{}, err
	}
	serverCPU := procCPU(w.childPID)
	first := time.Now().Add(scheduleLead)
	marker := func(k int) string { return string(markerStem) + strconv.Itoa(k) }
	for k := range changes {
		due := first.Add(time.Duration(k) * scheduleGap)
		m.started[k].Store(due.UnixNano())
		if target != targetBunting {
			continue
		}
		body := jsonBody(governance.ScheduleInput{Title: marker(k), ScheduledTime: &due,
			DraftInput: flagstore.DraftInput{Targeting: markerTargeting(marker(k))}})
		path := "/api/v1/envs/" + s.envID.String() + "/feature-flags/" + seed.FlagKey(k+2) + "/schedules"
		if err := w.call(ctx, "POST", w.buntingURL+path, body, true, nil); err != nil {
			m.clients.fail(fmt.Sprintf("schedule %d: %v", k, err))
		}
	}
	all := make([]int64, 0, int(m.connected.Load())*changes)
	var reached, firsts []float64
	for k := range changes {
		if target == targetFloor {
			time.Sleep(time.Until(time.Unix(0, m.started[k].Load())))
			if err := w.streamChange(ctx, s, target, seed.FlagKey(k+2), marker(k)); err != nil {
				m.clients.fail(fmt.Sprintf("change %d: %v", k, err))
				continue
			}
		}
		m.await(ctx, k)
		var slowest, firstMs float64
		if all, slowest, firstMs = m.deliveries(k, all); slowest > 0 {
			reached, firsts = append(reached, slowest), append(firsts, firstMs)
		}
	}
	took := time.Since(first)
	serverCPU = procCPU(w.childPID) - serverCPU
	queriesAfter, err := w.queryStats(ctx)
	if err != nil {
		return benchResult{}, err
	}
	open := w.serverMemory(ctx)
	m.clients.closeAll()

	r := streamResultRow(scenarioStreamSchedule, target, o.Flags, m.clients, took, all)
	r.RSSMB = open.RSSMB
	st := &streamResult{Connections: int(m.connected.Load()), ConnectSeconds: round(m.connectTime.Seconds(), 2),
		RSSOpenMB: open.RSSMB, HeapMB: open.HeapMB, StacksMB: open.StacksMB, Goroutines: open.Goroutines, AllReachedMs: reached,
		FullBytes: len(s.full), ChangeBytes: len(s.patch), ServerCPUMs: perItemMs(serverCPU, changes)}
	st.summarize(reached, firsts)
	r.Stream = st
	perChange(&r, queriesBefore, queriesAfter, int64(changes))
	return r, nil
}
