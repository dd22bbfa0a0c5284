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
	"github.com/bunting-flags/bunting/sql/store"
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
	_, err := e.in.store.CreateFlagSchedule(context.Background(), e.owner, e.id, key, input[store.ScheduleInput](e.in.t,
		map[string]any{"title": title, "scheduledTime": at.UTC(), "targetFlag": map[string]any{"isEnabled": true}}))
	must(e.in.t, err)
}

// appliedSchedules are the history entries of the flag's applied schedules.
func (e *env) appliedSchedules(f store.Flag) []store.AuditEntry {
	e.in.t.Helper()
	page, err := e.in.store.ListAuditLogs(context.Background(), e.owner, e.id,
		store.AuditFilter{RefType: "FeatureFlag", RefID: f.ID.String(), Page: store.Page{Size: 100}})
	must(e.in.t, err)
	var out []store.AuditEntry
	for _, it := range page.Items {
		if it.Operation == store.OpApplyFlagSchedule {
			out = append(out, it)
		}
	}
	return out
}

// A schedule set two seconds ahead, with two instances on one database each
// running its worker, is applied once, close to its time, and reaches SDKs
// connected to either instance.
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
		p := c.readUntil(due.Add(3*time.Second), "launch")
		var got store.Flag
		if err := json.Unmarshal(p.Data.FeatureFlags[0], &got); err != nil {
			t.Fatal(err)
		}
		late := time.Since(due)
		t.Logf("instance %d's SDK got the scheduled change %v after its time", i, late)
		if !got.IsEnabled {
			t.Errorf("instance %d pushed %+v, want the flag on", i, got)
		}
		if late > 1500*time.Millisecond {
			t.Errorf("instance %d's SDK got the change %v after its time, want about a second at most", i, late)
		}
	}
	// Both workers have had many ticks since: still one application.
	time.Sleep(3 * runner.ScheduleTick)
	applied := prod.appliedSchedules(f)
	if len(applied) != 1 {
		t.Fatalf("history has %d applied schedules, want 1: %+v", len(applied), applied)
	}
	if !strings.Contains(applied[0].Comment, `Scheduled change "Launch day"`) || strings.Contains(applied[0].Comment, "at start") {
		t.Errorf("history comment %q", applied[0].Comment)
	}
	pending, err := a.store.FlagPendingChanges(context.Background(), prod.owner, prod.id, "launch")
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
	due := time.Now().Add(time.Second).Truncate(time.Second).Add(time.Second)
	prod.schedule("launch", "Launch day", due)
	time.Sleep(time.Until(due) + 300*time.Millisecond)
	if prod.get(a, "launch").IsEnabled {
		t.Fatal("applied with no worker running")
	}

	b := newInstance(t, a.dbURL) // the restart
	b.runSchedules()
	waitFor(t, "the missed schedule", func() bool {
		return prod.get(b, "launch").IsEnabled
	})
	applied := prod.appliedSchedules(f)
	if len(applied) != 1 {
		t.Fatalf("history has %d applied schedules, want 1", len(applied))
	}
	want := "applied at start; it was due at " + due.UTC().Format(time.RFC3339)
	if !strings.Contains(applied[0].Comment, want) {
		t.Errorf("history comment %q, want it to say %q", applied[0].Comment, want)
	}
}
