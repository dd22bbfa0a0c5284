package runner

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
)

// Evaluations the SDK endpoints answer (OFREP) are counted without the
// database: Served adds them to an in-process tally per flag, variation and
// minute, which Evaluations.Run writes every EvaluationFlushEvery in
// batches (store.WriteEvaluationTallies), as EndUsers does with end users.
// The tally holds at most maxPendingTallies keys; past it, evaluations of
// new keys are dropped and counted (known keys still add) until the next
// write, so a flood costs bounded memory and never waits for the database.
const (
	EvaluationFlushEvery = time.Second
	maxPendingTallies    = 100_000
	// tallyKick is how many pending keys make Run write before its tick.
	tallyKick = 5_000
)

// Served is one evaluation an SDK endpoint answered: the flag (as the
// endpoint's snapshot holds it) and the index of the variation it served.
type Served struct {
	Flag      *flagstore.Flag
	Variation int
}

// tallyKey is a flag by its snapshot's pointer, not its id: hashing a
// pointer and two numbers is a fraction of hashing an id and a variation's
// text, on the path of every bulk evaluation. Keys of one flag from two
// snapshots are merged when written (Flush).
type tallyKey struct {
	flag      *flagstore.Flag
	variation int
	minute    int64 // Unix minutes
}

type tally struct {
	count       int64
	first, last time.Time
}

// Evaluations counts the evaluations the SDK endpoints answer until they
// are written (Run, Flush).
type Evaluations struct {
	store *store.Store
	log   *slog.Logger

	mu      sync.Mutex
	pending map[tallyKey]*tally
	dropped int64
	kick    chan struct{}
	// writing serialises writes.
	writing sync.Mutex
}

// NewEvaluations returns an empty tally that writes to st.
func NewEvaluations(st *store.Store, log *slog.Logger) *Evaluations {
	return &Evaluations{store: st, log: log, pending: map[tallyKey]*tally{}, kick: make(chan struct{}, 1)}
}

// Served counts evaluations answered at at. It takes one lock for the
// whole list (a bulk evaluation's flags) and never waits for the database.
func (e *Evaluations) Served(served []Served, at time.Time) {
	if len(served) == 0 {
		return
	}
	minute := at.Unix() / 60
	e.mu.Lock()
	for _, s := range served {
		if s.Flag == nil || s.Variation < 0 || s.Variation >= len(s.Flag.Variations) {
			continue
		}
		k := tallyKey{s.Flag, s.Variation, minute}
		if t, ok := e.pending[k]; ok {
			t.count++
			if at.After(t.last) {
				t.last = at
			}
			continue
		}
		if len(e.pending) >= maxPendingTallies {
			e.dropped++
			continue
		}
		e.pending[k] = &tally{count: 1, first: at, last: at}
	}
	full := len(e.pending) >= tallyKick
	e.mu.Unlock()
	if full {
		select {
		case e.kick <- struct{}{}:
		default:
		}
	}
}

// Dropped is how many evaluations were not counted since the last write
// because the tally was full.
func (e *Evaluations) Dropped() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dropped
}

// Run writes the tally every EvaluationFlushEvery, or sooner when many keys
// are pending, until ctx ends. The last write is the caller's: Flush after
// the SDK endpoints stopped taking requests.
func (e *Evaluations) Run(ctx context.Context) {
	flushLoop(ctx, EvaluationFlushEvery, e.kick, e.Flush, e.log, "evaluation counts")
}

// Flush writes every pending count now. A batch the database refuses is
// dropped (and the error returned).
func (e *Evaluations) Flush(ctx context.Context) error {
	e.writing.Lock()
	defer e.writing.Unlock()
	e.mu.Lock()
	pending, dropped := e.pending, e.dropped
	e.pending, e.dropped = map[tallyKey]*tally{}, 0
	e.mu.Unlock()
	if dropped > 0 {
		e.log.WarnContext(ctx, "evaluations not counted: the tally was full", "count", dropped)
	}
	if len(pending) == 0 {
		return nil
	}
	return e.store.SDK().WriteEvaluationTallies(ctx, tallies(pending))
}

// tallies are the pending counts as rows: one flag's keys from several
// snapshots become one tally, as a statement may write each row once.
func tallies(pending map[tallyKey]*tally) []sdkdata.EvaluationTally {
	type rowKey struct {
		flag      uuid.UUID
		variation string
		minute    int64
	}
	merged := make(map[rowKey]*sdkdata.EvaluationTally, len(pending))
	for k, t := range pending {
		rk := rowKey{k.flag.ID, k.flag.Variations[k.variation].ID, k.minute}
		if m, ok := merged[rk]; ok {
			m.Count += t.count
			if t.first.Before(m.First) {
				m.First = t.first
			}
			if t.last.After(m.Last) {
				m.Last = t.last
			}
			continue
		}
		merged[rk] = &sdkdata.EvaluationTally{FlagID: rk.flag, VariationID: rk.variation,
			Minute: time.Unix(k.minute*60, 0).UTC(), Count: t.count, First: t.first, Last: t.last}
	}
	out := make([]sdkdata.EvaluationTally, 0, len(merged))
	for _, t := range merged {
		out = append(out, *t)
	}
	return out
}

// SeriesTick is how often the evaluation series is rolled up and pruned.
const SeriesTick = time.Minute

// Series rolls the evaluation series up to hours and days and prunes it
// past its retention; run one in every instance (one at a time does the
// work, and doing it again changes nothing).
type Series struct {
	store *store.Store
	log   *slog.Logger
	keep  sdkdata.SeriesRetention
}

// NewSeries returns a roll-up runner over st keeping the series for keep.
func NewSeries(st *store.Store, log *slog.Logger, keep sdkdata.SeriesRetention) *Series {
	return &Series{store: st, log: log, keep: keep}
}

// Once rolls up and prunes as of now.
func (r *Series) Once(ctx context.Context, now time.Time) (sdkdata.RollUp, error) {
	return r.store.SDK().RollUpEvaluations(ctx, now, r.keep)
}

// Run rolls up and prunes at start and every tick until ctx ends.
func (r *Series) Run(ctx context.Context, tick time.Duration) {
	var logged time.Time
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		if _, err := r.Once(ctx, time.Now()); err != nil && ctx.Err() == nil && time.Since(logged) > 10*time.Minute {
			r.log.Error("rolling up the evaluation series", "err", err)
			logged = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
