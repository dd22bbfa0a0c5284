package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// streamClients are open connections being measured.
type streamClients struct {
	mu      sync.Mutex
	conns   []*streamConn
	errors  int64
	samples []string
	closing atomic.Bool
	wg      sync.WaitGroup
}

func (sc *streamClients) fail(msg string) { sc.failN(1, msg) }

// failN counts n errors, described by msg.
func (sc *streamClients) failN(n int64, msg string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.errors += n
	if len(sc.samples) < maxErrorSamples {
		sc.samples = append(sc.samples, msg)
	}
}

func (sc *streamClients) add(c *streamConn) {
	sc.mu.Lock()
	sc.conns = append(sc.conns, c)
	sc.mu.Unlock()
}

// closeAll closes every connection (a close frame, then the socket) and
// waits for their readers.
func (sc *streamClients) closeAll() {
	sc.closing.Store(true)
	sc.mu.Lock()
	conns := sc.conns
	sc.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
	sc.wg.Wait()
}

// open dials connection i, asks for its data-sync and reads it; then
// passes every later message to onMessage until the connection ends. It
// reports the times from dialing and from the request to the full
// data-sync, or an error.
func (sc *streamClients) open(ctx context.Context, host, path string, request []byte, i int, synced func(fromDial, fromRequest time.Duration, err error),
	onMessage func(msg []byte)) {
	start := time.Now()
	c, err := dialStream(ctx, host, path, streamSource(i))
	if err != nil {
		synced(0, 0, err)
		return
	}
	sc.add(c)
	sent := time.Now()
	if err := c.write(opText, request); err != nil {
		synced(0, 0, err)
		return
	}
	first := true
	for {
		msg, _, err := c.next(64 << 10)
		if err != nil {
			if first {
				synced(0, 0, fmt.Errorf("before the data-sync: %w", err))
			} else if !sc.closing.Load() {
				sc.fail(fmt.Sprintf("connection %d ended: %v", i, err))
			}
			return
		}
		if first {
			if !bytes.HasPrefix(msg, fullPrefix) {
				synced(0, 0, fmt.Errorf("the first message is not a full data-sync: %.100q", msg))
				return
			}
			first = false
			synced(time.Since(start), time.Since(sent), nil)
			continue
		}
		onMessage(msg)
	}
}

// markedConns are streaming connections that note when each reads the
// marker of change k: markerStem followed by k, in a change's message.
type markedConns struct {
	clients     *streamClients
	connected   atomic.Int64
	connectTime time.Duration
	// started[k] is when change k began (Unix nanoseconds); received[k]
	// counts the connections that have it; at[k][i] is the nanoseconds from
	// its start until connection i had it.
	started  []atomic.Int64
	received []atomic.Int64
	at       [][]atomic.Int64
}

// openMarked opens n connections to target, 256 at a time, each waiting
// for its full data-sync, and follows changes 0 to changes-1.
func (w *benchWorld) openMarked(ctx context.Context, target string, s *streamWorld, n, changes int, markerStem []byte) *markedConns {
	return w.openMarkedWith(ctx, n, changes, func(i int) (string, string, []byte) {
		host, path := w.streamTarget(target, s, i)
		return host, path, dataSyncRequest
	}, func(m *markedConns, i int, msg []byte) { m.mark(i, msg, markerStem) })
}

// openMarkedWith opens n connections, 256 at a time, each to where dial
// says with the data-sync request it gives, waiting for its full
// data-sync; every later message goes to onMessage.
func (w *benchWorld) openMarkedWith(ctx context.Context, n, changes int, dial func(i int) (host, path string, request []byte),
	onMessage func(m *markedConns, i int, msg []byte)) *markedConns {
	m := &markedConns{clients: &streamClients{}, started: make([]atomic.Int64, changes), received: make([]atomic.Int64, changes),
		at: make([][]atomic.Int64, changes)}
	for k := range m.at {
		m.at[k] = make([]atomic.Int64, n)
	}
	var connecting sync.WaitGroup
	sem := make(chan struct{}, 256) // dials and data-syncs in flight
	start := time.Now()
	for i := range n {
		sem <- struct{}{}
		connecting.Add(1)
		m.clients.wg.Add(1)
		host, path, request := dial(i)
		go func() {
			defer m.clients.wg.Done()
			once := sync.OnceFunc(func() { <-sem; connecting.Done() })
			defer once()
			m.clients.open(ctx, host, path, request, i, func(_, _ time.Duration, err error) {
				if err != nil {
					m.clients.fail(fmt.Sprintf("connection %d: %v", i, err))
				} else {
					m.connected.Add(1)
				}
				once()
			}, func(msg []byte) { onMessage(m, i, msg) })
		}()
	}
	connecting.Wait()
	m.connectTime = time.Since(start)
	return m
}

// mark notes when connection i read a change's marker.
func (m *markedConns) mark(i int, msg, markerStem []byte) {
	if !bytes.HasPrefix(msg, patchPrefix) {
		return
	}
	j := bytes.Index(msg, markerStem)
	if j < 0 {
		return
	}
	rest := msg[j+len(markerStem):]
	end := bytes.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	k, err := strconv.Atoi(string(rest[:max(end, 0)]))
	if err != nil || k < 0 || k >= len(m.at) {
		return
	}
	m.markAt(k, i)
}

// markAt notes that connection i has change k, unless it had it already.
func (m *markedConns) markAt(k, i int) {
	if m.at[k][i].CompareAndSwap(0, time.Now().UnixNano()-m.started[k].Load()) {
		m.received[k].Add(1)
	}
}

// await waits until every connection has change k, 30 s at most; the
// connections still without it count as errors.
func (m *markedConns) await(ctx context.Context, k int) {
	deadline := time.Now().Add(30 * time.Second)
	for m.received[k].Load() < m.connected.Load() && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(200 * time.Microsecond)
	}
	if missing := m.connected.Load() - m.received[k].Load(); missing > 0 {
		m.clients.failN(missing, fmt.Sprintf("change %d reached %d of %d connections within 30 s", k, m.received[k].Load(), m.connected.Load()))
	}
}

// deliveries appends change k's delivery times to all, and returns the
// slowest and the first in milliseconds (0, 0 when none arrived).
func (m *markedConns) deliveries(k int, all []int64) (out []int64, slowestMs, firstMs float64) {
	var slowest int64
	first := int64(math.MaxInt64)
	for i := range m.at[k] {
		if ns := m.at[k][i].Load(); ns > 0 {
			all = append(all, ns)
			slowest, first = max(slowest, ns), min(first, ns)
		}
	}
	if slowest == 0 {
		return all, 0, 0
	}
	return all, round(float64(slowest)/1e6, 3), round(float64(first)/1e6, 3)
}

// changeEach makes changes of the flag through target, one at a time, each
// awaited at m's connections before the next; next is told which change is
// about to be made. It returns every delivery's time, each change's slowest
// and first delivery in milliseconds, and how long the changes took with
// their deliveries.
func (w *benchWorld) changeEach(ctx context.Context, s *streamWorld, m *markedConns, target string, changes int, markerStem []byte,
	next func(k int)) (all []int64, reached, firsts []float64, busy time.Duration) {
	all = make([]int64, 0, int(m.connected.Load())*changes)
	reached, firsts = make([]float64, 0, changes), make([]float64, 0, changes)
	for k := range changes {
		m.started[k].Store(time.Now().UnixNano())
		next(k)
		begin := time.Now()
		if err := w.streamChange(ctx, s, target, s.flagKey, string(markerStem)+strconv.Itoa(k)); err != nil {
			m.clients.fail(fmt.Sprintf("change %d: %v", k, err))
			continue
		}
		m.await(ctx, k)
		busy += time.Since(begin)
		var slowest, first float64
		if all, slowest, first = m.deliveries(k, all); slowest > 0 {
			reached, firsts = append(reached, slowest), append(firsts, first)
		}
	}
	return all, reached, firsts, busy
}

// runFanout is stream-fanout against one target.
func runFanout(ctx context.Context, w *benchWorld, target string) (benchResult, error) {
	o := w.o.Stream
	s, err := w.streamSetup(ctx)
	if err != nil {
		return benchResult{}, err
	}
	s.runs++
	markerStem := []byte(fmt.Sprintf("fanout-%s-%d-", target, s.runs))
	if err := w.settleServer(ctx); err != nil {
		return benchResult{}, err
	}
	before := w.serverMemory(ctx)
	m := w.openMarked(ctx, target, s, o.Streams, o.Changes, markerStem)
	open := w.serverMemory(ctx)
	var apiP50, apiMax float64
	if target == targetBunting {
		if apiP50, apiMax, err = w.apiLatency(ctx); err != nil {
			m.clients.fail(fmt.Sprintf("the management API with the connections open: %v", err))
		}
	}

	queriesBefore, err := w.queryStats(ctx)
	if err != nil {
		return benchResult{}, err
	}
	stopProfiles := func() error { return nil }
	if o.Profile != "" && target == targetBunting {
		if stopProfiles, err = w.startProfiles(ctx, o.Profile); err != nil {
			return benchResult{}, err
		}
	}
	serverCPU, benchCPU := procCPU(w.childPID), procCPU(os.Getpid())
	all, reached, firsts, busy := w.changeEach(ctx, s, m, target, o.Changes, markerStem, func(int) {})
	serverCPU, benchCPU = procCPU(w.childPID)-serverCPU, procCPU(os.Getpid())-benchCPU
	if err := stopProfiles(); err != nil {
		return benchResult{}, err
	}
	queriesAfter, err := w.queryStats(ctx)
	if err != nil {
		return benchResult{}, err
	}
	after := w.serverMemory(ctx)
	m.clients.closeAll()

	r := streamResultRow(scenarioStreamFanout, target, o.Flags, m.clients, busy, all)
	r.RSSMB = max(open.RSSMB, after.RSSMB)
	st := &streamResult{Connections: int(m.connected.Load()), ConnectSeconds: round(m.connectTime.Seconds(), 2),
		RSSBeforeMB: before.RSSMB, RSSOpenMB: open.RSSMB, RSSAfterMB: after.RSSMB, HeapMB: open.HeapMB, StacksMB: open.StacksMB,
		Goroutines: open.Goroutines, AllReachedMs: reached, APIP50Ms: apiP50, APIMaxMs: apiMax}
	if st.Connections > 0 {
		st.KBPerConnection = round((open.RSSMB-before.RSSMB)*1024/float64(st.Connections), 1)
	}
	st.summarize(reached, firsts)
	st.FullBytes, st.ChangeBytes = len(s.full), len(s.patch)
	st.ServerCPUMs, st.BenchCPUMs = perItemMs(serverCPU, o.Changes), perItemMs(benchCPU, o.Changes)
	r.Stream = st
	perChange(&r, queriesBefore, queriesAfter, int64(o.Changes))
	return r, nil
}

// streamResultRow is a streaming scenario's row of the table: its
// deliveries (or connections) over the time they took, and its errors.
func streamResultRow(scenario, target string, flags int, clients *streamClients, took time.Duration, all []int64) benchResult {
	r := benchResult{Scenario: scenario, Kind: "stream", Flags: flags, Target: target, Seconds: round(took.Seconds(), 3),
		Requests: int64(len(all)), Errors: clients.errors, ErrorSamples: clients.samples, Statements: map[string]float64{}}
	if r.ErrorSamples == nil {
		r.ErrorSamples = []string{}
	}
	fillLatencies(&r, all, took)
	return r
}

// summarize sets the times until every connection, and the first, had
// each change.
func (st *streamResult) summarize(reached, firsts []float64) {
	if len(reached) == 0 {
		return
	}
	sorted := slices.Clone(reached)
	slices.Sort(sorted)
	st.AllReachedP50Ms, st.AllReachedP99Ms, st.AllReachedMaxMs = percentileF(sorted, 0.5), percentileF(sorted, 0.99), sorted[len(sorted)-1]
	slices.Sort(firsts)
	st.FirstReachedP50Ms = percentileF(firsts, 0.5)
}

// runStorm is stream-storm against one target: connections are opened on a
// fixed schedule (not when earlier ones are done), held until the storm
// ends, then closed.
func runStorm(ctx context.Context, w *benchWorld, target string) (benchResult, error) {
	o := w.o.Stream
	s, err := w.streamSetup(ctx)
	if err != nil {
		return benchResult{}, err
	}
	if err := w.settleServer(ctx); err != nil {
		return benchResult{}, err
	}
	before := w.serverMemory(ctx)
	queriesBefore, err := w.queryStats(ctx)
	if err != nil {
		return benchResult{}, err
	}
	n := max(1, int(float64(o.StormRate)*o.StormSeconds))
	serverCPU, benchCPU := procCPU(w.childPID), procCPU(os.Getpid())
	fromDial, fromRequest := make([]int64, n), make([]int64, n)
	clients := &streamClients{}
	var syncing sync.WaitGroup
	interval := time.Second / time.Duration(o.StormRate)
	start := time.Now()
	for i := range n {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		syncing.Add(1)
		clients.wg.Add(1)
		host, path := w.streamTarget(target, s, i)
		go func() {
			defer clients.wg.Done()
			once := sync.OnceFunc(syncing.Done)
			defer once()
			clients.open(ctx, host, path, dataSyncRequest, i, func(dial, request time.Duration, err error) {
				if err != nil {
					clients.fail(fmt.Sprintf("connection %d: %v", i, err))
				} else {
					fromDial[i], fromRequest[i] = dial.Nanoseconds(), request.Nanoseconds()
				}
				once()
			}, func([]byte) {})
		}()
	}
	syncing.Wait()
	elapsed := time.Since(start)
	serverCPU, benchCPU = procCPU(w.childPID)-serverCPU, procCPU(os.Getpid())-benchCPU
	open := w.serverMemory(ctx)
	queriesAfter, err := w.queryStats(ctx)
	if err != nil {
		return benchResult{}, err
	}
	clients.closeAll()

	var all, requests []int64
	for i := range n {
		if fromDial[i] > 0 {
			all, requests = append(all, fromDial[i]), append(requests, fromRequest[i])
		}
	}
	r := streamResultRow(scenarioStreamStorm, target, o.Flags, clients, elapsed, all)
	r.RSSMB = open.RSSMB
	st := &streamResult{Connections: len(all), FullBytes: len(s.full), RSSBeforeMB: before.RSSMB, RSSOpenMB: open.RSSMB, RSSAfterMB: open.RSSMB,
		HeapMB: open.HeapMB, StacksMB: open.StacksMB, Goroutines: open.Goroutines}
	if len(all) > 0 {
		st.ServerCPUMs, st.BenchCPUMs = perItemMs(serverCPU, len(all)), perItemMs(benchCPU, len(all))
		st.KBPerConnection = round((open.RSSMB-before.RSSMB)*1024/float64(len(all)), 1)
		slices.Sort(requests)
		st.SyncP50Ms, st.SyncP99Ms = round(float64(percentile(requests, 0.5))/1e6, 3), round(float64(percentile(requests, 0.99))/1e6, 3)
	}
	r.Stream = st
	perChange(&r, queriesBefore, queriesAfter, int64(max(1, len(all))))
	return r, nil
}

// procCPU is procCPUSeconds as a duration.
func procCPU(pid int) time.Duration { return time.Duration(procCPUSeconds(pid) * float64(time.Second)) }

func perItemMs(d time.Duration, n int) float64 {
	return round(float64(d.Milliseconds())/float64(max(n, 1)), 3)
}

// fillLatencies sets the table's rate and percentiles from nanoseconds.
func fillLatencies(r *benchResult, all []int64, elapsed time.Duration) {
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	ms := func(ns int64) float64 { return round(float64(ns)/1e6, 3) }
	if elapsed > 0 {
		r.RPS = round(float64(len(all))/elapsed.Seconds(), 1)
	}
	r.P50Ms, r.P95Ms, r.P99Ms, r.MaxMs = ms(percentile(all, 0.50)), ms(percentile(all, 0.95)), ms(percentile(all, 0.99)), ms(all[len(all)-1])
}

// perChange sets the statement columns per change (stream-fanout) or per
// connection (stream-storm).
func perChange(r *benchResult, before, after queryStats, n int64) {
	per := func(d int64) float64 { return round(float64(d)/float64(n), 2) }
	r.StatementsPerRequest = per(after.Statements - before.Statements)
	r.RoundTripsPerRequest = per(after.RoundTrips - before.RoundTrips)
	for name, c := range after.ByName {
		if d := c - before.ByName[name]; d > 0 {
			r.Statements[name] = per(d)
		}
	}
}

func percentileF(sorted []float64, p float64) float64 {
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// streamChecks holds the streaming results to their targets.
func streamChecks(r benchReport) []benchCheck {
	var checks []benchCheck
	for _, res := range r.Results {
		if res.Target != targetBunting || res.Stream == nil {
			continue
		}
		add := func(target, value string, ok bool) {
			checks = append(checks, benchCheck{Target: target, Scenario: res.Scenario, Flags: res.Flags, Value: value, OK: ok})
		}
		st := res.Stream
		switch res.Scenario {
		case scenarioStreamFanout:
			add(fmt.Sprintf("server process < %d MB with %d connections", streamRSSLimitMB, st.Connections),
				fmt.Sprintf("%.1f MB resident, %.1f KB per connection", res.RSSMB, st.KBPerConnection), res.RSSMB < streamRSSLimitMB)
			add(fmt.Sprintf("a change reaches every connection, p99 < %d ms", fanoutP99Ms),
				fmt.Sprintf("deliveries p99 %.1f ms; all reached p50 %.1f ms, p99 %.1f ms, max %.1f ms over %d changes; the first in %.1f ms (p50); server CPU %.0f ms a change",
					res.P99Ms, st.AllReachedP50Ms, st.AllReachedP99Ms, st.AllReachedMaxMs, len(st.AllReachedMs), st.FirstReachedP50Ms, st.ServerCPUMs),
				res.P99Ms < fanoutP99Ms && st.AllReachedP99Ms < fanoutP99Ms)
			if st.APIP50Ms > 0 {
				add(fmt.Sprintf("the management API answers with %d connections open, median < %d ms", st.Connections, heldAPIP50Ms),
					fmt.Sprintf("median %.1f ms, slowest %.1f ms of %d calls", st.APIP50Ms, st.APIMaxMs, apiCalls), st.APIP50Ms < heldAPIP50Ms)
			}
		case scenarioStreamSchedule:
			add(fmt.Sprintf("a scheduled change reaches every connection, p99 < %d ms after its time", scheduleLateP99Ms),
				fmt.Sprintf("deliveries p99 %.1f ms after their time; all reached p50 %.1f ms, max %.1f ms over %d changes",
					res.P99Ms, st.AllReachedP50Ms, st.AllReachedMaxMs, len(st.AllReachedMs)),
				res.P99Ms < scheduleLateP99Ms)
		case scenarioStreamStorm:
			add(fmt.Sprintf("full data-sync of a new connection p99 < %d ms while %d connect a second", stormSyncP99Ms, r.Options.Stream.StormRate),
				fmt.Sprintf("p99 %.1f ms from dialing, %.1f ms from the request; %.0f connections/s reached", res.P99Ms, st.SyncP99Ms, res.RPS),
				res.P99Ms < stormSyncP99Ms)
		}
	}
	return checks
}

// apiCalls is how many management API calls stream-fanout times with its
// connections open.
const apiCalls = 50

// apiLatency times apiCalls calls of the management API (the project
// list), one after the other, and returns their median and the slowest, in
// milliseconds.
func (w *benchWorld) apiLatency(ctx context.Context) (p50, slowest float64, err error) {
	took := make([]int64, 0, apiCalls)
	for range apiCalls {
		start := time.Now()
		if err := w.call(ctx, "GET", w.buntingURL+"/api/v1/projects", nil, true, nil); err != nil {
			return 0, 0, err
		}
		took = append(took, time.Since(start).Nanoseconds())
	}
	slices.Sort(took)
	return round(float64(percentile(took, 0.5))/1e6, 3), round(float64(took[len(took)-1])/1e6, 3), nil
}
