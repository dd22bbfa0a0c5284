// Package experiments is the store's seam of experiments: FeatBit's
// experiment metrics, experiments and their iterations, the exposures and
// metric events SDKs report for them, and their results, both FeatBit's
// (computed as its data-analytics service computes them) and Bunting's
// analysis (sql/stats.Analyze: sample ratio mismatch, always-valid
// intervals, Holm, chance to beat the baseline).
//
// An experiment is an environment's resource. Reading needs CanAccessEnv on
// the environment; changing an experiment needs UpdateFlagTargetingRules on
// its flag, changing a metric UpdateFlagTargetingRules on the environment's
// flag/*: running an experiment decides what is measured of who gets what.
// Every change is one transaction with its audit entry (refType Experiment
// or ExperimentMetric).
//
// What users did is kept per iteration and user (experiment_users): the
// variation first seen and running totals of the metric's events, so
// storage grows with users, not events; the statements that write them keep
// each variation's sums too (experiment_variation_totals), so results read
// one row per variation.
package experiments

import (
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// Experiments is the experiments seam over the core.
type Experiments struct {
	core *core.Core
	now  func() time.Time

	// snapped is the minute each environment's recording iterations were
	// last snapshotted from this instance, so a minute costs one snapshot
	// statement, not one per report (another instance's is kept once too:
	// the statement keeps the first of a minute).
	snapMu  sync.Mutex
	snapped map[uuid.UUID]time.Time
}

// New returns the seam over c.
func New(c *core.Core) *Experiments {
	return &Experiments{core: c, now: time.Now, snapped: map[uuid.UUID]time.Time{}}
}

// Audit reference types.
const (
	RefExperiment = "Experiment"
	RefMetric     = "ExperimentMetric"
)
