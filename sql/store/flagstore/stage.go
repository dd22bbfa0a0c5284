package flagstore

import (
	"time"
)

// Stage is where a flag is in its life, from its creation to its removal,
// as Unleash's lifecycle and LaunchDarkly's flag health tell it: whether it
// is still being rolled out, has been launched to everyone for a while, or
// no longer asked for, and so can come out of the code.
type Stage string

// A flag's stages, in the order of its life.
const (
	// StageNew: created lately, or never evaluated yet, and not split.
	StageNew Stage = "new"
	// StageRollingOut: serving more than one variation (targets, rules or a
	// percentage rollout), or changed lately.
	StageRollingOut Stage = "rolling-out"
	// StageLaunched: serving one variation to everyone, unchanged for
	// LaunchedAfter.
	StageLaunched Stage = "launched"
	// StageUnused: not evaluated for UnusedAfter.
	StageUnused Stage = "unused"
	// StageArchived: archived.
	StageArchived Stage = "archived"
)

// Stages are the stages in the order of a flag's life, for filters.
var Stages = []Stage{StageNew, StageRollingOut, StageLaunched, StageUnused, StageArchived}

// The stages' thresholds, LaunchDarkly's defaults: a flag is new for a
// week, launched once it has served one variation to everyone for a week,
// and unused once SDKs have not evaluated it for 30 days.
const (
	NewFor        = 7 * 24 * time.Hour
	LaunchedAfter = 7 * 24 * time.Hour
	UnusedAfter   = 30 * 24 * time.Hour
)

// StageFacts are what a flag's stage is read from: the flag, its revision
// history and its evaluations, each as one time or fact, so a list reads
// them from its rows without a statement more.
type StageFacts struct {
	CreatedAt  time.Time
	IsArchived bool
	// ChangedAt is when the flag's latest revision was made: a flag's
	// targeting, state and settings are one revision, so any change
	// restarts the wait before it counts as launched.
	ChangedAt time.Time
	// Split is whether it serves more than one variation to its users.
	Split bool
	// LastEvaluatedAt is when SDKs last evaluated it; nil when never.
	LastEvaluatedAt *time.Time
}

// StageOf is a flag's stage at now. The rules, first that applies:
//   - archived: the flag is archived;
//   - new: never evaluated, and created within UnusedAfter;
//   - unused: not evaluated within UnusedAfter (never, for an older flag);
//   - rolling out: serving more than one variation;
//   - launched: serving one variation (its off variation, when off) and
//     unchanged for LaunchedAfter;
//   - new: created within NewFor;
//   - rolling out: changed within LaunchedAfter, on its way to launched.
func StageOf(f StageFacts, now time.Time) Stage {
	switch {
	case f.IsArchived:
		return StageArchived
	case f.LastEvaluatedAt == nil && now.Sub(f.CreatedAt) < UnusedAfter:
		return StageNew
	case f.LastEvaluatedAt == nil || now.Sub(*f.LastEvaluatedAt) >= UnusedAfter:
		return StageUnused
	case f.Split:
		return StageRollingOut
	case now.Sub(f.ChangedAt) >= LaunchedAfter:
		return StageLaunched
	case now.Sub(f.CreatedAt) < NewFor:
		return StageNew
	}
	return StageRollingOut
}

// ReadyToRemove is whether a flag at a stage can come out of the code: it
// has been launched (one variation to everyone for LaunchedAfter), it is
// unused (UnusedAfter without an evaluation), or it is archived and no SDK
// has evaluated it since it was archived (its latest revision).
func ReadyToRemove(stage Stage, f StageFacts) bool {
	switch stage {
	case StageLaunched, StageUnused:
		return true
	case StageArchived:
		return f.LastEvaluatedAt == nil || !f.LastEvaluatedAt.After(f.ChangedAt)
	}
	return false
}

// Split is whether a flag's serving gives more than one variation to its
// users: an off flag serves its off variation to everyone.
func (s Serving) Split(enabled bool) bool {
	if !enabled {
		return false
	}
	values := map[string]bool{}
	for _, v := range s.Targets {
		values[v] = true
	}
	for _, r := range s.Rules {
		for _, sh := range r.Shares {
			values[sh.Value] = true
		}
	}
	for _, sh := range s.Default {
		values[sh.Value] = true
	}
	return len(values) > 1
}

// StageFacts are a listed flag's stage facts; its latest revision is its
// last change, when the list has it.
func (f FlagListItem) StageFacts() StageFacts {
	changed := f.UpdatedAt
	if f.LastChange != nil {
		changed = f.LastChange.ChangedAt
	}
	return StageFacts{CreatedAt: f.CreatedAt, IsArchived: f.IsArchived, ChangedAt: changed,
		Split: f.Serving.Split(f.IsEnabled), LastEvaluatedAt: f.LastEvaluatedAt}
}

// FlagStageFacts are a flag's stage facts, with when SDKs last evaluated
// it (FlagInsights).
func FlagStageFacts(f Flag, lastEvaluatedAt *time.Time) StageFacts {
	return StageFacts{CreatedAt: f.CreatedAt, IsArchived: f.IsArchived, ChangedAt: f.UpdatedAt,
		Split: ServingOf(f).Split(f.IsEnabled), LastEvaluatedAt: lastEvaluatedAt}
}
