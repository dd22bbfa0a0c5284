package sdkdata

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// EvaluationTally is how often one variation of a flag was served in one
// minute, as the SDK endpoints count them in memory (sql/runner), with the
// first and last time within the minute.
type EvaluationTally struct {
	FlagID      uuid.UUID
	VariationID string
	Minute      time.Time
	Count       int64
	First, Last time.Time
}

// evaluationBatch bounds one statement's tallies.
const evaluationBatch = 5_000

// WriteEvaluationTallies adds counted evaluations to their flags' running
// totals and minute series, in batches of one statement each. Tallies of
// flags deleted meanwhile are skipped. A batch the database refuses is
// lost (the first error is returned): counts are a record, not a ledger.
func (s *SDK) WriteEvaluationTallies(ctx context.Context, tallies []EvaluationTally) error {
	slices.SortFunc(tallies, func(a, b EvaluationTally) int {
		if c := bytes.Compare(a.FlagID[:], b.FlagID[:]); c != 0 {
			return c
		}
		if c := a.Minute.Compare(b.Minute); c != 0 {
			return c
		}
		return strings.Compare(a.VariationID, b.VariationID)
	})
	var firstErr error
	for len(tallies) > 0 {
		batch := tallies[:min(len(tallies), evaluationBatch)]
		tallies = tallies[len(batch):]
		n := len(batch)
		p := db.WriteEvaluationTalliesParams{FlagIds: make([]uuid.UUID, n), VariationIds: make([]string, n),
			Minutes: make([]time.Time, n), Counts: make([]int64, n), Firsts: make([]time.Time, n), Lasts: make([]time.Time, n)}
		for i, t := range batch {
			p.FlagIds[i], p.VariationIds[i], p.Minutes[i] = t.FlagID, t.VariationID, t.Minute.UTC().Truncate(time.Minute)
			p.Counts[i], p.Firsts[i], p.Lasts[i] = t.Count, t.First, t.Last
		}
		if err := s.core.Q.WriteEvaluationTallies(ctx, p); err != nil && firstErr == nil {
			firstErr = core.Translate(err)
		}
	}
	return firstErr
}

// Series resolutions, as flag_evaluation_series names them.
const (
	resMinute = "minute"
	resHour   = "hour"
	resDay    = "day"
)

const day = 24 * time.Hour

// seriesCount is what a variation was served from at, at the finest
// resolution kept for that time.
type seriesCount struct {
	at        time.Time
	variation string
	count     int64
}

// series reads what some flags of an environment were served in [from, to)
// (from is widened to its UTC day, so the day and hour rows that start
// before it are seen). unit is resMinute or resHour: minutes are summed to
// it in the database. Each hour comes from its minutes when any are kept,
// else from its hour row; each day from its minutes and hours when any are
// kept, else from its day row. Pruning drops minutes whole hours and hours
// whole days at a time, and only once rolled up, so this counts every
// evaluation once.
func (s *SDK) series(ctx context.Context, envID uuid.UUID, flagIDs []uuid.UUID, from, to time.Time, unit string) (map[uuid.UUID][]seriesCount, error) {
	rows, err := s.core.Q.EvaluationSeries(ctx, db.EvaluationSeriesParams{Unit: unit, EnvID: envID, FlagIds: flagIDs,
		FromAt: from.UTC().Truncate(day), ToAt: to})
	if err != nil {
		return nil, core.Translate(err)
	}
	type finer struct{ hours, days map[time.Time]bool }
	cover := map[uuid.UUID]finer{}
	for _, r := range rows {
		f, ok := cover[r.FlagID]
		if !ok {
			f = finer{hours: map[time.Time]bool{}, days: map[time.Time]bool{}}
			cover[r.FlagID] = f
		}
		at := r.Bucket.UTC()
		switch r.Resolution {
		case resMinute:
			f.hours[at.Truncate(time.Hour)] = true
			f.days[at.Truncate(day)] = true
		case resHour:
			f.days[at.Truncate(day)] = true
		}
	}
	out := map[uuid.UUID][]seriesCount{}
	for _, r := range rows {
		at, f := r.Bucket.UTC(), cover[r.FlagID]
		if (r.Resolution == resHour && f.hours[at]) || (r.Resolution == resDay && f.days[at]) {
			continue
		}
		out[r.FlagID] = append(out[r.FlagID], seriesCount{at: at, variation: r.VariationID, count: r.Count})
	}
	return out, nil
}

// SeriesRetention is how long each resolution of the evaluation series is
// kept; sql/runner prunes past it.
type SeriesRetention struct {
	Minutes, Hours, Days time.Duration
}

// DefaultSeriesRetention keeps minutes 48 hours, hours 90 days and days two years.
var DefaultSeriesRetention = SeriesRetention{Minutes: 48 * time.Hour, Hours: 90 * day, Days: 730 * day}

// lateMinutes is how long after an hour (or a day) ends its minutes (or
// hours) are still summed again: the counting buffer writes up to a flush
// and a shutdown late, and a write may wait on the database.
const lateMinutes = time.Hour

// pruneBatch bounds the rows one pruning statement deletes.
const pruneBatch = 10_000

// RollUp is what one roll-up did.
type RollUp struct {
	// Ran is false when another instance was rolling up.
	Ran          bool
	Hours, Days  int64
	Pruned       int64
	HourMark     time.Time
	DayMark      time.Time
	MinuteCutoff time.Time
}

// RollUpEvaluations sums the complete hours of minutes not yet summed (and
// the last hour again, for late writes) into hour rows and the complete
// days of hours into day rows, then prunes each resolution past its
// retention, never past what is rolled up. Sums are set, not added, and
// one instance at a time rolls up (an advisory lock; the other skips), so
// running it again or on two instances changes nothing.
func (s *SDK) RollUpEvaluations(ctx context.Context, now time.Time, keep SeriesRetention) (RollUp, error) {
	now = now.UTC()
	var r RollUp
	err := s.core.InTx(ctx, func(q *db.Queries) error {
		locked, err := q.TryRollupLock(ctx)
		if err != nil || !locked {
			return err
		}
		r.Ran = true
		hourEnd := now.Truncate(time.Hour)
		mark, err := q.RollupMark(ctx, resHour)
		if err != nil {
			return err
		}
		// Minutes from the mark less an hour are all kept: pruning stops there.
		from := time.Time{}
		if mark.Year() > 1 {
			from = mark.Add(-lateMinutes)
		}
		if from.Before(hourEnd) {
			if r.Hours, err = q.RollUpHours(ctx, db.RollUpHoursParams{FromAt: from, ToAt: hourEnd}); err != nil {
				return err
			}
			if err := q.SetRollupMark(ctx, db.SetRollupMarkParams{Resolution: resHour, DoneUntil: hourEnd}); err != nil {
				return err
			}
		}
		r.HourMark = hourEnd
		dayEnd := hourEnd.Truncate(day)
		dmark, err := q.RollupMark(ctx, resDay)
		if err != nil {
			return err
		}
		dfrom := time.Time{}
		if dmark.Year() > 1 {
			dfrom = dmark.Add(-day)
		}
		if dfrom.Before(dayEnd) {
			if r.Days, err = q.RollUpDays(ctx, db.RollUpDaysParams{FromAt: dfrom, ToAt: dayEnd}); err != nil {
				return err
			}
			if err := q.SetRollupMark(ctx, db.SetRollupMarkParams{Resolution: resDay, DoneUntil: dayEnd}); err != nil {
				return err
			}
		}
		r.DayMark = dayEnd
		return nil
	})
	if err != nil || !r.Ran {
		return r, err
	}
	// Minutes go whole hours at a time, hours whole days at a time, and
	// never those a roll-up may still read (the mark less its lateness).
	minuteCutoff := minTime(now.Add(-keep.Minutes).Truncate(time.Hour), r.HourMark.Add(-lateMinutes))
	hourCutoff := minTime(now.Add(-keep.Hours).Truncate(day), r.DayMark.Add(-day))
	dayCutoff := now.Add(-keep.Days).Truncate(day)
	r.MinuteCutoff = minuteCutoff
	for _, p := range []struct {
		res    string
		before time.Time
	}{{resMinute, minuteCutoff}, {resHour, hourCutoff}, {resDay, dayCutoff}} {
		for {
			n, err := s.core.Q.PruneEvaluationSeries(ctx, db.PruneEvaluationSeriesParams{Resolution: p.res, Before: p.before, RowLimit: pruneBatch})
			if err != nil {
				return r, core.Translate(err)
			}
			r.Pruned += n
			if n < pruneBatch {
				break
			}
		}
	}
	return r, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
