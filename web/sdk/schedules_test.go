package sdk_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
)

// runSchedules starts the instance's schedule worker, as serve does, until
// the test ends.
func (in *instance) runSchedules() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { runner.NewSchedules(in.store, slog.New(slog.DiscardHandler)).Run(ctx, runner.ScheduleTick) })
	in.t.Cleanup(func() { cancel(); wg.Wait() })
}

// schedule schedules turning flag key on at at.
func (e *env) schedule(key, title string, at time.Time) {
	e.in.t.Helper()
	e.scheduleTarget(key, title, at, map[string]any{"isEnabled": true})
}

// scheduleTarget schedules changing flag key to target at at.
func (e *env) scheduleTarget(key, title string, at time.Time, target map[string]any) {
	e.in.t.Helper()
	_, err := e.in.store.Governance().CreateFlagSchedule(context.Background(), e.owner, e.id, key, input[governance.ScheduleInput](e.in.t,
		map[string]any{"title": title, "scheduledTime": at.UTC(), "targetFlag": target}))
	must(e.in.t, err)
}

// appliedSchedules are the history entries of the flag's applied schedules.
func (e *env) appliedSchedules(f flagstore.Flag) []flagstore.AuditEntry {
	e.in.t.Helper()
	page, err := e.in.store.Flags().ListAuditLogs(context.Background(), e.owner, e.id,
		flagstore.AuditFilter{RefType: "FeatureFlag", RefID: f.ID.String(), Page: core.Page{Size: 100}})
	must(e.in.t, err)
	var out []flagstore.AuditEntry
	for _, it := range page.Items {
		if it.Operation == flagstore.OpApplyFlagSchedule {
			out = append(out, it)
		}
	}
	return out
}

// A schedule set two seconds ahead, with two instances on one database each
// running its worker, is applied once, not before its time, and reaches SDKs
// connected to either instance. How long after its time it arrives is
// bunting-bench's stream-schedule scenario.
func TestScheduleAppliesOnceAcrossTwoInstances(t *testing.T) {
	t.Parallel()
	a := newServer(t)
	prod, _ := a.project("web")
	f := prod.flag(map[string]any{"name": "Launch", "key": "launch"})
	b := newInstance(t, a.dbURL)
	a.runSchedules()
	b.runSchedules()
	var conns []*sdkConn
	for _, in := range []*instance{a, b} {
		c := in.dial("server", prod.server)
		c.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
		c.readSync(5 * time.Second)
		conns = append(conns, c)
	}

	due := time.Now().Add(2 * time.Second)
	prod.schedule("launch", "Launch day", due)
	for i, c := range conns {
		p := c.readUntil(due.Add(pushWait), "launch")
		var got flagstore.Flag
		if err := json.Unmarshal(p.Data.FeatureFlags[0], &got); err != nil {
			t.Fatal(err)
		}
		late := time.Since(due)
		t.Logf("instance %d's SDK got the scheduled change %v after its time", i, late)
		if !got.IsEnabled {
			t.Errorf("instance %d pushed %+v, want the flag on", i, got)
		}
		if late < 0 {
			t.Errorf("instance %d's SDK got the change %v before its time", i, -late)
		}
	}
	// A later schedule, turning the flag off again, is applied after the
	// workers' ticks that followed the first: the first was still applied
	// only once.
	prod.scheduleTarget("launch", "Launch over", time.Now().Add(2*time.Second), map[string]any{"isEnabled": false})
	for _, c := range conns {
		for on := true; on; {
			var got flagstore.Flag
			if err := json.Unmarshal(c.readUntil(time.Now().Add(pushWait), "launch").Data.FeatureFlags[0], &got); err != nil {
				t.Fatal(err)
			}
			on = got.IsEnabled
		}
	}
	applied := prod.appliedSchedules(f)
	if len(applied) != 2 || !strings.Contains(applied[1].Comment, `"Launch day"`) || !strings.Contains(applied[0].Comment, `"Launch over"`) {
		t.Fatalf("history has %d applied schedules, want Launch day once, then Launch over: %+v", len(applied), applied)
	}
	applied = applied[1:]
	if !strings.Contains(applied[0].Comment, `Scheduled change "Launch day"`) || strings.Contains(applied[0].Comment, "at start") {
		t.Errorf("history comment %q", applied[0].Comment)
	}
	pending, err := a.store.Governance().FlagPendingChanges(context.Background(), prod.owner, prod.id, "launch")
	must(t, err)
	if len(pending) != 0 {
		t.Errorf("pending changes after applying: %+v", pending)
	}
}

// A schedule whose time passes while no instance runs a worker is applied
// when one starts, and its history entry says so.
func TestMissedScheduleAppliesAtStart(t *testing.T) {
	t.Parallel()
	a := newServer(t) // runs no worker: as if every instance were down
	prod, _ := a.project("web")
	f := prod.flag(map[string]any{"name": "Launch", "key": "launch"})
	due := time.Now().Add(time.Hour).Truncate(time.Second)
	prod.schedule("launch", "Launch day", due)
	// Its time passes while no instance runs.
	due = due.Add(-2 * time.Hour)
	db, err := pgx.Connect(context.Background(), a.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	if _, err := db.Exec(context.Background(), `UPDATE flag_schedules SET scheduled_at = $1`, due); err != nil {
		t.Fatal(err)
	}
	if got := prod.get(a, "launch"); got.IsEnabled {
		t.Fatal("applied with no worker running")
	}

	b := newInstance(t, a.dbURL) // the restart
	c := b.dial("server", prod.server)
	c.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
	c.readSync(5 * time.Second)
	b.runSchedules()
	var got flagstore.Flag
	if err := json.Unmarshal(c.readUntil(time.Now().Add(pushWait), "launch").Data.FeatureFlags[0], &got); err != nil || !got.IsEnabled {
		t.Fatalf("pushed %+v (%v), want the missed schedule's flag on", got, err)
	}
	applied := prod.appliedSchedules(f)
	if len(applied) != 1 {
		t.Fatalf("history has %d applied schedules, want 1", len(applied))
	}
	want := "applied at start; it was due at " + due.UTC().Format(time.RFC3339)
	if !strings.Contains(applied[0].Comment, want) {
		t.Errorf("history comment %q, want it to say %q", applied[0].Comment, want)
	}
}
