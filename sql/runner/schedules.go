package runner

import (
	"context"
	"log/slog"
	"time"

	"github.com/bunting-flags/bunting/sql/store"
)

// Schedule runner bounds.
const (
	// ScheduleTick is how often a runner looks for due schedules: a
	// schedule applies at most this long after its time.
	ScheduleTick = 250 * time.Millisecond
	// schedulesPerTick bounds the schedules one tick applies; the rest wait
	// for the next tick (or another instance).
	schedulesPerTick = 20
)

// Schedules applies scheduled flag changes when they are due; run one in
// every instance (store.ApplyDueSchedule lets exactly one instance apply
// each).
type Schedules struct {
	store *store.Store
	log   *slog.Logger
	// Ran, when set, is told of every schedule this runner applied or
	// failed to ("applied", "failed"); looks that found nothing due are
	// not runs. The server wires it to its metrics.
	Ran func(result string)
}

// NewSchedules returns a runner that applies st's due schedules.
func NewSchedules(st *store.Store, log *slog.Logger) *Schedules {
	return &Schedules{store: st, log: log}
}

// Run applies due scheduled changes, looking every tick, until ctx ends.
// First it applies every schedule whose time passed while no instance ran.
func (r *Schedules) Run(ctx context.Context, tick time.Duration) {
	var logged time.Time
	// missedBefore is the start until everything due then has been applied
	// (a database away at start delays that), zero after.
	missedBefore := time.Now()
	run := func() bool {
		claimed, err := r.store.Governance().ApplyDueSchedule(ctx, missedBefore)
		if err != nil && ctx.Err() == nil && time.Since(logged) > time.Minute {
			// A database that is away fails every tick: say so once a minute.
			r.log.Error("applying scheduled changes", "err", err)
			logged = time.Now()
		}
		if err == nil && !claimed {
			missedBefore = time.Time{}
		}
		if r.Ran != nil && ctx.Err() == nil {
			switch {
			case err != nil:
				r.Ran("failed")
			case claimed:
				r.Ran("applied")
			}
		}
		return claimed && err == nil
	}
	for run() { // at start, all that is due
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for range schedulesPerTick {
			if !run() {
				break
			}
		}
	}
}
