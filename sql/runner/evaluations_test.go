package runner

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
)

// The evaluation tally is bounded by keys: past the cap, evaluations of new
// keys are dropped and counted, known keys still add, and a large tally
// asks for a write before its tick.
func TestEvaluationTallyIsBounded(t *testing.T) {
	e := NewEvaluations(nil, nil)
	flag := uuid.New()
	t0 := time.Unix(1_800_000_000, 0)
	served := make([]Served, maxPendingTallies+10)
	for i := range served {
		served[i] = Served{FlagID: flag, VariationID: "v" + strconv.Itoa(i)}
	}
	e.Served(served, t0)
	if len(e.pending) != maxPendingTallies || e.Dropped() != 10 {
		t.Fatalf("%d pending, %d dropped; want %d and 10", len(e.pending), e.Dropped(), maxPendingTallies)
	}
	e.Served([]Served{{flag, "v0"}, {flag, "v0"}}, t0.Add(time.Second))
	if p := e.pending[tallyKey{flag, "v0", t0.Unix() / 60}]; p.count != 3 || !p.last.Equal(t0.Add(time.Second)) || !p.first.Equal(t0) {
		t.Fatalf("a pending key did not add: %+v", p)
	}
	// Another minute is another key, dropped while the tally is full.
	e.Served([]Served{{flag, "v0"}}, t0.Add(time.Minute))
	if e.Dropped() != 11 {
		t.Fatalf("%d dropped, want 11", e.Dropped())
	}
	select {
	case <-e.kick:
	default:
		t.Fatal("a large tally did not ask for a write")
	}
}
