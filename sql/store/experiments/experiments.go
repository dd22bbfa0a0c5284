package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// Experiment statuses, FeatBit's strings.
const (
	StatusNotStarted = "NotStarted"
	StatusRecording  = "Recording"
	StatusPaused     = "Paused"
)

// DefaultAlpha is an experiment's significance level unless it names one.
const DefaultAlpha = 0.05

// Experiment is FeatBit's ExperimentVm: the experiment with its flag's
// variations and its metric, and its live iterations oldest first.
type Experiment struct {
	ID                               uuid.UUID             `json:"id"`
	EnvID                            uuid.UUID             `json:"envId"`
	BaselineVariationID              string                `json:"baselineVariationId"`
	Variations                       []targeting.Variation `json:"variations"`
	BaselineVariation                *targeting.Variation  `json:"baselineVariation"`
	FeatureFlagID                    uuid.UUID             `json:"featureFlagId"`
	FeatureFlagKey                   string                `json:"featureFlagKey"`
	FeatureFlagName                  string                `json:"featureFlagName"`
	MetricID                         uuid.UUID             `json:"metricId"`
	MetricName                       string                `json:"metricName"`
	MetricEventName                  string                `json:"metricEventName"`
	MetricEventType                  int                   `json:"metricEventType"`
	MetricCustomEventTrackOption     int                   `json:"metricCustomEventTrackOption"`
	MetricCustomEventSuccessCriteria int                   `json:"metricCustomEventSuccessCriteria"`
	MetricCustomEventUnit            string                `json:"metricCustomEventUnit"`
	Status                           string                `json:"status"`
	Iterations                       []Iteration           `json:"iterations"`
	Alpha                            float64               `json:"alpha"`
	IsArchived                       bool                  `json:"isArchived"`
	CreatedAt                        time.Time             `json:"createdAt"`
	UpdatedAt                        time.Time             `json:"updatedAt"`

	// weights is the share of traffic each variation is served by the
	// flag's default rule, for the sample-ratio check; nil when exposures
	// may come from targets or rules too, whose shares are not known.
	weights map[string]float64
	tags    []string
}

// IsNumeric tells whether the experiment's metric averages values.
func (x Experiment) IsNumeric() bool {
	return isNumeric(x.MetricEventType, x.MetricCustomEventTrackOption)
}

// Iteration is FeatBit's ExperimentIteration: one recording window, the
// metric as it was when it started, and its results as last computed.
type Iteration struct {
	ID                         uuid.UUID  `json:"id"`
	StartTime                  time.Time  `json:"startTime"`
	EndTime                    *time.Time `json:"endTime"`
	UpdatedAt                  *time.Time `json:"updatedAt"`
	IsArchived                 bool       `json:"isArchived"`
	EventType                  int        `json:"eventType"`
	EventName                  string     `json:"eventName"`
	CustomEventTrackOption     int        `json:"customEventTrackOption"`
	CustomEventUnit            string     `json:"customEventUnit"`
	CustomEventSuccessCriteria int        `json:"customEventSuccessCriteria"`
	Results                    []Result   `json:"results"`
	IsFinish                   bool       `json:"isFinish"`
}

// IsNumeric tells whether the iteration's metric averages values.
func (it Iteration) IsNumeric() bool { return isNumeric(it.EventType, it.CustomEventTrackOption) }

// LockAfter is how long after its end an iteration's results stop being
// recomputed: FeatBit's ExperimentIteration.IsLocked.
const LockAfter = 3 * 24 * time.Hour

func iterationOf(r db.ExperimentIteration) Iteration {
	it := Iteration{ID: r.ID, StartTime: r.StartTime, EndTime: r.EndTime, UpdatedAt: r.UpdatedAt, IsArchived: r.IsArchived,
		EventType: int(r.EventType), EventName: r.EventName, CustomEventTrackOption: int(r.CustomEventTrackOption),
		CustomEventUnit: r.CustomEventUnit, CustomEventSuccessCriteria: int(r.CustomEventSuccessCriteria),
		IsFinish: r.IsFinish, Results: []Result{}}
	_ = json.Unmarshal(r.Results, &it.Results) // written by this package, always an array
	return it
}

// experimentRow is what GetExperiment and ListExperiments both read.
type experimentRow struct {
	e                                                         db.Experiment
	flagKey, flagName                                         string
	variations, defaultRule                                   json.RawMessage
	tags                                                      []string
	mixed                                                     bool
	metricName, metricEventName, metricUnit                   string
	metricEventType, metricTrackOption, metricSuccessCriteria int16
}

func experimentOf(r experimentRow) Experiment {
	x := Experiment{ID: r.e.ID, EnvID: r.e.EnvID, BaselineVariationID: r.e.BaselineVariationID, Variations: []targeting.Variation{},
		FeatureFlagID: r.e.FlagID, FeatureFlagKey: r.flagKey, FeatureFlagName: r.flagName, MetricID: r.e.MetricID,
		MetricName: r.metricName, MetricEventName: r.metricEventName, MetricEventType: int(r.metricEventType),
		MetricCustomEventTrackOption: int(r.metricTrackOption), MetricCustomEventSuccessCriteria: int(r.metricSuccessCriteria),
		MetricCustomEventUnit: r.metricUnit, Status: r.e.Status, Iterations: []Iteration{}, Alpha: r.e.Alpha,
		IsArchived: r.e.IsArchived, CreatedAt: r.e.CreatedAt, UpdatedAt: r.e.UpdatedAt, tags: r.tags}
	_ = json.Unmarshal(r.variations, &x.Variations)
	for i := range x.Variations {
		if x.Variations[i].ID == x.BaselineVariationID {
			v := x.Variations[i]
			x.BaselineVariation = &v
		}
	}
	if !r.mixed {
		x.weights = weightsOf(r.defaultRule)
	}
	return x
}

// weightsOf is the share of the default rule's traffic each variation gets
// in the experiment (its rollout width times its experiment rollout), nil
// when the rule serves nothing: the sample-ratio check then expects equal
// shares.
func weightsOf(defaultRule json.RawMessage) map[string]float64 {
	var ft targeting.Fallthrough
	if json.Unmarshal(defaultRule, &ft) != nil {
		return nil
	}
	w := map[string]float64{}
	total := 0.0
	for _, v := range ft.Variations {
		if len(v.Rollout) == 2 && v.Rollout[1] > v.Rollout[0] {
			share := v.Rollout[1] - v.Rollout[0]
			if v.ExptRollout > 0 {
				share *= v.ExptRollout
			}
			w[v.ID] += share
			total += share
		}
	}
	if total == 0 {
		return nil
	}
	return w
}

func fromGet(r db.GetExperimentRow) experimentRow {
	return experimentRow{r.Experiment, r.FlagKey, r.FlagName, r.FlagVariations, r.FlagFallthrough, r.FlagTags, r.FlagMixedTraffic,
		r.MetricName, r.MetricEventName, r.MetricUnit, r.MetricEventType, r.MetricTrackOption, r.MetricSuccessCriteria}
}

func fromList(r db.ListExperimentsRow) experimentRow {
	return experimentRow{r.Experiment, r.FlagKey, r.FlagName, r.FlagVariations, r.FlagFallthrough, r.FlagTags, r.FlagMixedTraffic,
		r.MetricName, r.MetricEventName, r.MetricUnit, r.MetricEventType, r.MetricTrackOption, r.MetricSuccessCriteria}
}

// withIterations fills each experiment's live iterations.
func withIterations(ctx context.Context, q *db.Queries, xs []Experiment) error {
	if len(xs) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(xs))
	at := make(map[uuid.UUID]int, len(xs))
	for i, x := range xs {
		ids[i], at[x.ID] = x.ID, i
	}
	rows, err := q.ListExperimentIterations(ctx, ids)
	if err != nil {
		return err
	}
	for _, r := range rows {
		x := &xs[at[r.ExperimentID]]
		x.Iterations = append(x.Iterations, iterationOf(r))
	}
	return nil
}

// ExperimentFilter selects experiments: by part of the flag's name, by flag,
// one page. A Page.Size of -1 asks for every experiment (FeatBit's "no
// paging"), up to MaxUnpaged.
type ExperimentFilter struct {
	FlagName string
	FlagID   *uuid.UUID
	Page     core.Page
}

// Paging of experiments: the flag page asks for up to a thousand.
const (
	MaxExperimentPageSize = 1000
	MaxUnpaged            = 1000
)

// ListExperiments is one page of the environment's live experiments, newest
// first.
func (s *Experiments) ListExperiments(ctx context.Context, a *core.Actor, envID uuid.UUID, f ExperimentFilter) (core.Paged[Experiment], error) {
	var v core.Validator
	if f.Page.Size == -1 {
		f.Page = core.Page{Index: 0, Size: MaxUnpaged}
	}
	if f.Page.Index < 0 || f.Page.Index > 1<<20 {
		v.Add("pageIndex", "invalid")
	}
	if f.Page.Size < 1 || f.Page.Size > MaxExperimentPageSize {
		v.Add("pageSize", "invalid")
	}
	v.Text("featureFlagName", f.FlagName, core.MaxNameLen)
	if err := v.Err(); err != nil {
		return core.Paged[Experiment]{}, err
	}
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return core.Paged[Experiment]{}, err
	}
	return s.list(ctx, envID, likeEscape(f.FlagName), f.FlagID, "", f.Page)
}

func (s *Experiments) list(ctx context.Context, envID uuid.UUID, flagName string, flagID *uuid.UUID, baseline string, p core.Page) (core.Paged[Experiment], error) {
	rows, err := s.core.Q.ListExperiments(ctx, db.ListExperimentsParams{EnvID: envID, FlagName: flagName, FlagID: flagID,
		Baseline: baseline, Lim: p.Limit(), Off: p.Offset()})
	out, err := core.PageOfCounted(rows, err, func(r db.ListExperimentsRow) (Experiment, int64) {
		return experimentOf(fromList(r)), r.Total
	}, func() (int64, error) {
		return s.core.Q.CountExperiments(ctx, db.CountExperimentsParams{EnvID: envID, FlagName: flagName, FlagID: flagID, Baseline: baseline})
	})
	if err != nil {
		return out, err
	}
	return out, core.Translate(withIterations(ctx, s.core.Q, out.Items))
}

// GetExperiment is one experiment of the environment with its iterations.
func (s *Experiments) GetExperiment(ctx context.Context, a *core.Actor, envID, id uuid.UUID) (Experiment, error) {
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return Experiment{}, err
	}
	return s.experiment(ctx, s.core.Q, envID, id)
}

func (s *Experiments) experiment(ctx context.Context, q *db.Queries, envID, id uuid.UUID) (Experiment, error) {
	r, err := q.GetExperiment(ctx, db.GetExperimentParams{EnvID: envID, ID: id})
	if err != nil {
		return Experiment{}, core.Translate(err)
	}
	xs := []Experiment{experimentOf(fromGet(r))}
	if err := withIterations(ctx, q, xs); err != nil {
		return Experiment{}, core.Translate(err)
	}
	return xs[0], nil
}

// VariationReferences is the experiments of a flag whose baseline is the
// variation: FeatBit's variation-experiment-references.
func (s *Experiments) VariationReferences(ctx context.Context, a *core.Actor, envID, flagID uuid.UUID, variationID string) ([]Experiment, error) {
	var v core.Validator
	if flagID == uuid.Nil {
		v.Add("featureFlagId", "required")
	}
	if variationID == "" {
		v.Add("variationId", "required")
	} else {
		v.Text("variationId", variationID, core.MaxKeyLen)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return nil, err
	}
	out, err := s.list(ctx, envID, "", &flagID, variationID, core.Page{Size: MaxUnpaged})
	return out.Items, err
}

// AuthorizeExperimentRead checks what reading the environment's
// experiments and their results needs, before a request's body is read.
func (s *Experiments) AuthorizeExperimentRead(ctx context.Context, a *core.Actor, envID uuid.UUID) error {
	_, err := s.core.ReadableEnv(ctx, a, envID)
	return err
}

// StatusCount is how many live experiments of an environment have a status.
type StatusCount struct {
	Status string `json:"status"`
	Count  int64  `json:"count"`
}

// StatusCounts groups the environment's live experiments by status.
func (s *Experiments) StatusCounts(ctx context.Context, a *core.Actor, envID uuid.UUID) ([]StatusCount, error) {
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return nil, err
	}
	rows, err := s.core.Q.ExperimentStatusCounts(ctx, envID)
	if err != nil {
		return nil, core.Translate(err)
	}
	out := make([]StatusCount, len(rows))
	for i, r := range rows {
		out[i] = StatusCount{r.Status, r.Count}
	}
	return out, nil
}

// ExperimentInput is an experiment as created: FeatBit's CreateExperiment.
type ExperimentInput struct {
	FeatureFlagID       uuid.UUID
	MetricID            uuid.UUID
	BaselineVariationID string
	Alpha               *float64
}

// mayChangeExperiment is what changing an experiment needs: the right to
// change who gets what on its flag.
func mayChangeExperiment(a *core.Actor, env core.EnvRow, flagKey string, tags []string) error {
	return a.Require(access.UpdateFlagTargetingRules, flagstore.EnvFlagRN(env, flagKey, tags))
}

// AuthorizeExperimentChange checks, before a body is read, that the actor
// may change some flag's targeting in the environment: what any change of an
// experiment needs at least. Each operation checks its own flag again.
func (s *Experiments) AuthorizeExperimentChange(ctx context.Context, a *core.Actor, envID uuid.UUID) error {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return err
	}
	if !a.Can(access.UpdateFlagTargetingRules, env.RN()+":flag/*") && !canSomeFlag(a) {
		return core.ErrForbidden
	}
	return nil
}

// canSomeFlag tells whether any statement could allow changing a flag's
// targeting somewhere (a statement may name only some flags or tags).
func canSomeFlag(a *core.Actor) bool {
	for _, st := range a.Statements() {
		if st.Effect != "allow" {
			continue
		}
		if st.ResourceType == "*" || st.ResourceType == access.TypeFlag {
			for _, act := range st.Actions {
				if act == "*" || act == string(access.UpdateFlagTargetingRules) {
					return true
				}
			}
		}
	}
	return false
}

// CreateExperiment adds an experiment of a flag on a metric. As in FeatBit,
// when a live experiment of the same flag and metric exists nothing is
// added and that one is answered.
func (s *Experiments) CreateExperiment(ctx context.Context, a *core.Actor, envID uuid.UUID, in ExperimentInput) (Experiment, error) {
	var v core.Validator
	if in.FeatureFlagID == uuid.Nil {
		v.Add("featureFlagId", "required")
	}
	if in.MetricID == uuid.Nil {
		v.Add("metricId", "required")
	}
	if in.BaselineVariationID == "" {
		v.Add("baselineVariationId", "required")
	}
	alpha := DefaultAlpha
	if in.Alpha != nil {
		if *in.Alpha <= 0 || *in.Alpha >= 1 {
			v.Add("alpha", "invalid")
		}
		alpha = *in.Alpha
	}
	if err := v.Err(); err != nil {
		return Experiment{}, err
	}
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return Experiment{}, err
	}
	var out Experiment
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		flag, err := q.GetFlagForExperiment(ctx, db.GetFlagForExperimentParams{EnvID: envID, ID: in.FeatureFlagID})
		if errors.Is(err, pgx.ErrNoRows) {
			return core.Invalid("featureFlagId_is_invalid")
		} else if err != nil {
			return err
		}
		if err := mayChangeExperiment(a, env, flag.Key, flag.Tags); err != nil {
			return err
		}
		if flag.IsArchived {
			return flagstore.ErrFlagIsArchived // an archived flag is only restored or deleted
		}
		var variations []targeting.Variation
		_ = json.Unmarshal(flag.Variations, &variations)
		found := false
		for _, fv := range variations {
			found = found || fv.ID == in.BaselineVariationID
		}
		if !found {
			return core.Invalid("baselineVariationId_is_invalid")
		}
		// The metric is held until the experiment is in: an archive of it
		// running meanwhile then sees the experiment and refuses.
		archived, err := q.ShareExperimentMetric(ctx, db.ShareExperimentMetricParams{EnvID: envID, ID: in.MetricID})
		if errors.Is(err, pgx.ErrNoRows) || err == nil && archived {
			return core.Invalid("metricId_is_invalid")
		} else if err != nil {
			return err
		}
		metric, err := s.metric(ctx, q, envID, in.MetricID)
		if err != nil {
			return err
		}
		row, err := q.InsertExperiment(ctx, db.InsertExperimentParams{EnvID: envID, FlagID: flag.ID, MetricID: metric.ID,
			BaselineVariationID: in.BaselineVariationID, Alpha: alpha})
		if errors.Is(err, pgx.ErrNoRows) {
			live, err := q.GetLiveExperiment(ctx, db.GetLiveExperimentParams{FlagID: flag.ID, MetricID: metric.ID})
			if err != nil {
				return err
			}
			out, err = s.experiment(ctx, q, envID, live.ID)
			return err
		} else if err != nil {
			return err
		}
		if out, err = s.experiment(ctx, q, envID, row.ID); err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: RefExperiment, RefID: row.ID.String(),
			Keyword: flag.Name + " / " + metric.Name, Operation: core.OpCreate, EnvID: &envID, Current: out})
	})
	return out, core.Translate(err)
}

// change runs one change of a live experiment in a transaction: the
// experiment locked, the right checked on its flag, the change made, then
// audited with the experiment before and after.
func (s *Experiments) change(ctx context.Context, a *core.Actor, envID, id uuid.UUID, op string,
	fn func(q *db.Queries, x Experiment) (bool, error)) error {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return err
	}
	return core.Translate(s.core.InTx(ctx, func(q *db.Queries) error {
		if _, err := q.LockExperiment(ctx, db.LockExperimentParams{EnvID: envID, ID: id}); err != nil {
			return err
		}
		before, err := s.experiment(ctx, q, envID, id)
		if err != nil {
			return err
		}
		if err := mayChangeExperiment(a, env, before.FeatureFlagKey, before.tags); err != nil {
			return err
		}
		changed, err := fn(q, before)
		if err != nil || !changed {
			return err
		}
		after, err := s.experiment(ctx, q, envID, id)
		if err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: RefExperiment, RefID: id.String(),
			Keyword: before.FeatureFlagName + " / " + before.MetricName, Operation: op, EnvID: &envID,
			Previous: before, Current: after})
	}))
}

// finishOpen closes the experiment's open iterations at now with their
// final results, as every stop, start and archive does. It tells whether
// there were any.
func (s *Experiments) finishOpen(ctx context.Context, q *db.Queries, x Experiment, now time.Time) (bool, error) {
	open, err := q.OpenExperimentIterations(ctx, x.ID)
	if err != nil {
		return false, err
	}
	for _, r := range open {
		it := iterationOf(r)
		it.EndTime, it.IsFinish = &now, true
		results, err := s.featbitResults(ctx, q, x, it, DefaultAlpha)
		if err != nil {
			return false, err
		}
		b, err := json.Marshal(results)
		if err != nil {
			return false, err
		}
		if err := q.FinishExperimentIteration(ctx, db.FinishExperimentIterationParams{ID: r.ID, EndTime: &now, Results: b}); err != nil {
			return false, err
		}
	}
	return len(open) > 0, nil
}

// StartExperiment closes any open iteration and starts a new one with a
// snapshot of the metric; the experiment is then Recording.
func (s *Experiments) StartExperiment(ctx context.Context, a *core.Actor, envID, id uuid.UUID) (Iteration, error) {
	var out Iteration
	err := s.change(ctx, a, envID, id, core.OpUpdate, func(q *db.Queries, x Experiment) (bool, error) {
		now := s.now().UTC()
		if _, err := s.finishOpen(ctx, q, x, now); err != nil {
			return false, err
		}
		m, err := s.metric(ctx, q, envID, x.MetricID)
		if err != nil {
			return false, err
		}
		r, err := q.InsertExperimentIteration(ctx, db.InsertExperimentIterationParams{ExperimentID: x.ID, EnvID: envID,
			StartTime: now, EventName: m.EventName, EventType: int16(m.EventType),
			CustomEventTrackOption: int16(m.CustomEventTrackOption), CustomEventUnit: m.CustomEventUnit,
			CustomEventSuccessCriteria: int16(m.CustomEventSuccessCriteria)})
		if err != nil {
			return false, err
		}
		out = iterationOf(r)
		return true, q.SetExperimentStatus(ctx, db.SetExperimentStatusParams{ID: x.ID, Status: StatusRecording})
	})
	return out, err
}

// StopExperiment closes the open iterations with their final results and
// pauses the experiment; with none open it does nothing.
func (s *Experiments) StopExperiment(ctx context.Context, a *core.Actor, envID, id uuid.UUID) error {
	return s.change(ctx, a, envID, id, core.OpUpdate, func(q *db.Queries, x Experiment) (bool, error) {
		closed, err := s.finishOpen(ctx, q, x, s.now().UTC())
		if err != nil || !closed {
			return false, err
		}
		return true, q.SetExperimentStatus(ctx, db.SetExperimentStatusParams{ID: x.ID, Status: StatusPaused})
	})
}

// ArchiveIterations closes the open iterations, archives every iteration
// (their data leaves results and lists) and sets the experiment back to
// NotStarted; with no iterations it does nothing.
func (s *Experiments) ArchiveIterations(ctx context.Context, a *core.Actor, envID, id uuid.UUID) error {
	return s.change(ctx, a, envID, id, core.OpUpdate, func(q *db.Queries, x Experiment) (bool, error) {
		if len(x.Iterations) == 0 {
			return false, nil
		}
		if _, err := s.finishOpen(ctx, q, x, s.now().UTC()); err != nil {
			return false, err
		}
		if _, err := q.ArchiveExperimentIterations(ctx, x.ID); err != nil {
			return false, err
		}
		return true, q.SetExperimentStatus(ctx, db.SetExperimentStatusParams{ID: x.ID, Status: StatusNotStarted})
	})
}

// ArchiveExperiment closes the open iterations and archives the experiment
// (paused).
func (s *Experiments) ArchiveExperiment(ctx context.Context, a *core.Actor, envID, id uuid.UUID) error {
	return s.change(ctx, a, envID, id, core.OpArchive, func(q *db.Queries, x Experiment) (bool, error) {
		if _, err := s.finishOpen(ctx, q, x, s.now().UTC()); err != nil {
			return false, err
		}
		return true, q.SetExperimentStatus(ctx, db.SetExperimentStatusParams{ID: x.ID, Status: StatusPaused, IsArchived: true})
	})
}
