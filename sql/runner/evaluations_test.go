package runner

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// The evaluation tally is bounded by keys: past the cap, evaluations of new
// keys are dropped and counted, known keys still add, and a large tally
// asks for a write before its tick.
func TestEvaluationTallyIsBounded(t *testing.T) {
	e := NewEvaluations(nil, nil)
	t0 := time.Unix(1_800_000_000, 0)
	flags := make([]flagstore.Flag, maxPendingTallies+10)
	served := make([]Served, len(flags))
	for i := range served {
		flags[i] = flagstore.Flag{ID: uuid.New(), Variations: []flagstore.Variation{{ID: "v" + strconv.Itoa(i)}}}
		served[i] = Served{Flag: &flags[i], Variation: 0}
	}
	e.Served(served, t0)
	flag := &flags[0]
	if len(e.pending) != maxPendingTallies || e.Dropped() != 10 {
		t.Fatalf("%d pending, %d dropped; want %d and 10", len(e.pending), e.Dropped(), maxPendingTallies)
	}
	e.Served([]Served{{flag, 0}, {flag, 0}}, t0.Add(time.Second))
	if p := e.pending[tallyKey{flag, 0, t0.Unix() / 60}]; p.count != 3 || !p.last.Equal(t0.Add(time.Second)) || !p.first.Equal(t0) {
		t.Fatalf("a pending key did not add: %+v", p)
	}
	// Another minute is another key, dropped while the tally is full.
	e.Served([]Served{{flag, 0}}, t0.Add(time.Minute))
	if e.Dropped() != 11 {
		t.Fatalf("%d dropped, want 11", e.Dropped())
	}
	select {
	case <-e.kick:
	default:
		t.Fatal("a large tally did not ask for a write")
	}
}

// A flag's counts from two snapshots (a change between two evaluations)
// are written as one row per variation and minute; a variation out of the
// flag's range is not counted.
func TestEvaluationTallyMergesSnapshots(t *testing.T) {
	e := NewEvaluations(nil, nil)
	id := uuid.New()
	before := &flagstore.Flag{ID: id, Variations: []flagstore.Variation{{ID: "on"}, {ID: "off"}}}
	after := &flagstore.Flag{ID: id, Variations: []flagstore.Variation{{ID: "off"}, {ID: "on"}}}
	t0 := time.Unix(1_800_000_000, 0)
	e.Served([]Served{{before, 0}, {before, 1}, {before, 2}}, t0)
	e.Served([]Served{{after, 1}, {after, 1}, {after, 0}}, t0.Add(30*time.Second))
	got := map[string]int64{}
	for _, r := range tallies(e.pending) {
		got[r.VariationID] += r.Count
		if r.FlagID != id || !r.Minute.Equal(t0) {
			t.Errorf("row %+v", r)
		}
	}
	if rows := len(tallies(e.pending)); rows != 2 || got["on"] != 3 || got["off"] != 2 {
		t.Fatalf("%d rows %v, want 2: on 3, off 2", rows, got)
	}
}
