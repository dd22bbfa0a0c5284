package experiments

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Exposure is an evaluation an SDK reported with sendToExperiment: the user
// saw the variation of the flag.
type Exposure struct {
	FlagKey     string
	UserKey     string
	VariationID string
	At          time.Time
}

// Conversion is a metric event an SDK reported (track()): a custom event,
// page view or click, with its numeric value (1 unless the SDK sent one).
type Conversion struct {
	EventName string
	EventType int
	UserKey   string
	Value     float64
	At        time.Time
}

// Events is one batch of what SDKs reported for an environment.
type Events struct {
	Exposures   []Exposure
	Conversions []Conversion
}

// Len is the number of events in the batch.
func (e *Events) Len() int { return len(e.Exposures) + len(e.Conversions) }

// RecordEvents adds a batch of SDK events to the running totals of the
// environment's recording iterations: one index probe when nothing records,
// otherwise one statement for the exposures and one for the conversions,
// whatever the batch's size. The caller has authenticated the environment's
// secret and bounded the batch. Events outside every recording iteration
// (other flags, other metrics, before an iteration started) are dropped, as
// FeatBit's analysis leaves them out of every window.
func (s *Experiments) RecordEvents(ctx context.Context, envID uuid.UUID, ev Events) error {
	if ev.Len() == 0 {
		return nil
	}
	open, err := s.core.Q.HasOpenExperimentIterations(ctx, envID)
	if err != nil || !open {
		return core.Translate(err)
	}
	if n := len(ev.Exposures); n > 0 {
		p := db.RecordExperimentExposuresParams{EnvID: envID, FlagKeys: make([]string, n), UserKeys: make([]string, n),
			VariationIds: make([]string, n), Ats: make([]time.Time, n)}
		for i, e := range ev.Exposures {
			p.FlagKeys[i], p.UserKeys[i], p.VariationIds[i], p.Ats[i] = e.FlagKey, e.UserKey, e.VariationID, e.At
		}
		if _, err := s.core.Q.RecordExperimentExposures(ctx, p); err != nil {
			return core.Translate(err)
		}
	}
	if n := len(ev.Conversions); n > 0 {
		p := db.RecordExperimentEventsParams{EnvID: envID, EventNames: make([]string, n), EventTypes: make([]int16, n),
			UserKeys: make([]string, n), Vals: make([]float64, n), Ats: make([]time.Time, n)}
		for i, e := range ev.Conversions {
			p.EventNames[i], p.EventTypes[i], p.UserKeys[i], p.Vals[i], p.Ats[i] = e.EventName, int16(e.EventType), e.UserKey, e.Value, e.At
		}
		if _, err := s.core.Q.RecordExperimentEvents(ctx, p); err != nil {
			return core.Translate(err)
		}
	}
	return s.snapshot(ctx, envID)
}

// maxSnapshotEnvs bounds the minutes remembered; past it they are forgotten
// at once (a snapshot statement more, never a snapshot less).
const maxSnapshotEnvs = 10_000

// snapshot keeps the environment's recording iterations' sums once a
// minute, for the intervals over time.
func (s *Experiments) snapshot(ctx context.Context, envID uuid.UUID) error {
	minute := s.now().UTC().Truncate(time.Minute)
	s.snapMu.Lock()
	done := s.snapped[envID].Equal(minute)
	if !done {
		if len(s.snapped) >= maxSnapshotEnvs {
			clear(s.snapped)
		}
		s.snapped[envID] = minute
	}
	s.snapMu.Unlock()
	if done {
		return nil
	}
	err := s.core.Q.SnapshotExperimentTotals(ctx, db.SnapshotExperimentTotalsParams{EnvID: envID, At: minute})
	if err != nil {
		s.snapMu.Lock()
		delete(s.snapped, envID) // the next report tries again
		s.snapMu.Unlock()
	}
	return core.Translate(err)
}
