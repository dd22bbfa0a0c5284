package experiments

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// FeatBit's metric enums, numbered as FeatBit numbers them.
const (
	EventCustom   = 1
	EventPageView = 2
	EventClick    = 3

	TrackUndefined  = 0
	TrackConversion = 1
	TrackNumeric    = 2

	CriteriaUndefined = 0
	CriteriaHigher    = 1
	CriteriaLower     = 2

	URLMatchSubstring = 1
)

// EventTypeName is the name SDKs give each event type (metrics[].type);
// FeatBit's analytics maps any other number to CustomEvent.
func EventTypeName(t int) string {
	switch t {
	case EventPageView:
		return "PageView"
	case EventClick:
		return "Click"
	}
	return "CustomEvent"
}

// EventTypeOf is the event type of an SDK metric's type name, 0 for a name
// FeatBit does not know.
func EventTypeOf(name string) int {
	switch name {
	case "CustomEvent":
		return EventCustom
	case "PageView":
		return EventPageView
	case "Click":
		return EventClick
	}
	return 0
}

// Bounds of a metric's input.
const (
	MaxTargetURLs   = 50
	MaxURLLen       = 2048
	MaxEventNameLen = 256
	maxTextLen      = 4096
)

// TargetURL is a page a page-view or click metric watches.
type TargetURL struct {
	ID        string `json:"id"`
	MatchType int    `json:"matchType"`
	URL       string `json:"url"`
}

// Metric is FeatBit's ExperimentMetricVm. isArvhived is spelt as FeatBit
// spells it.
type Metric struct {
	ID                         uuid.UUID   `json:"id"`
	Name                       string      `json:"name"`
	EnvID                      uuid.UUID   `json:"envId"`
	Description                string      `json:"description"`
	MaintainerUserID           uuid.UUID   `json:"maintainerUserId"`
	MaintainerName             string      `json:"maintainerName"`
	MaintainerEmail            string      `json:"maintainerEmail"`
	EventName                  string      `json:"eventName"`
	EventType                  int         `json:"eventType"`
	CustomEventTrackOption     int         `json:"customEventTrackOption"`
	CustomEventUnit            string      `json:"customEventUnit"`
	CustomEventSuccessCriteria int         `json:"customEventSuccessCriteria"`
	ElementTargets             string      `json:"elementTargets"`
	TargetURLs                 []TargetURL `json:"targetUrls"`
	IsArchived                 bool        `json:"isArvhived"`
	CreatedAt                  time.Time   `json:"createdAt"`
	UpdatedAt                  time.Time   `json:"updatedAt"`
}

// IsNumeric tells whether results average the metric's values rather than
// count conversions: FeatBit's rule, a custom event tracked as numeric.
func (m Metric) IsNumeric() bool { return isNumeric(m.EventType, m.CustomEventTrackOption) }

func isNumeric(eventType, track int) bool { return eventType == EventCustom && track == TrackNumeric }

func metricOf(m db.ExperimentMetric, name, email string) Metric {
	out := Metric{ID: m.ID, Name: m.Name, EnvID: m.EnvID, Description: m.Description, MaintainerUserID: m.MaintainerUserID,
		MaintainerName: name, MaintainerEmail: email, EventName: m.EventName, EventType: int(m.EventType),
		CustomEventTrackOption: int(m.CustomEventTrackOption), CustomEventUnit: m.CustomEventUnit,
		CustomEventSuccessCriteria: int(m.CustomEventSuccessCriteria), ElementTargets: m.ElementTargets,
		TargetURLs: []TargetURL{}, IsArchived: m.IsArchived, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
	_ = json.Unmarshal(m.TargetUrls, &out.TargetURLs) // written by CreateMetric, always an array
	return out
}

// MetricInput is a metric as created or updated. Numbers left out are 0:
// FeatBit's "undefined" for the track option and success criteria, and a
// missing event type.
type MetricInput struct {
	Name                       string
	Description                string
	MaintainerUserID           uuid.UUID
	EventName                  string
	EventType                  int
	CustomEventTrackOption     int
	CustomEventUnit            string
	CustomEventSuccessCriteria int
	ElementTargets             string
	TargetURLs                 []TargetURL
}

// check validates the input as FeatBit's validators do (name, eventType and
// maintainerUserId required; on update eventName too), and what FeatBit
// leaves unchecked and Bunting stores: enums in range, bounded text.
func (in *MetricInput) check(update bool) error {
	var v core.Validator
	v.Required("name", in.Name, core.MaxNameLen)
	v.Text("description", in.Description, core.MaxDescriptionLen)
	if in.MaintainerUserID == uuid.Nil {
		v.Add("maintainerUserId", "required")
	}
	if update || in.EventName != "" {
		v.Required("eventName", in.EventName, MaxEventNameLen)
	}
	switch {
	case in.EventType == 0:
		v.Add("eventType", "required")
	case in.EventType < EventCustom || in.EventType > EventClick:
		v.Add("eventType", "invalid")
	}
	if in.CustomEventTrackOption < TrackUndefined || in.CustomEventTrackOption > TrackNumeric {
		v.Add("customEventTrackOption", "invalid")
	}
	if in.CustomEventSuccessCriteria < CriteriaUndefined || in.CustomEventSuccessCriteria > CriteriaLower {
		v.Add("customEventSuccessCriteria", "invalid")
	}
	v.Text("customEventUnit", in.CustomEventUnit, core.MaxNameLen)
	v.Text("elementTargets", in.ElementTargets, maxTextLen)
	if len(in.TargetURLs) > MaxTargetURLs {
		v.Add("targetUrls", "invalid")
	} else {
		for _, u := range in.TargetURLs {
			if u.MatchType != URLMatchSubstring || !v.Text("targetUrls", u.URL, MaxURLLen) || len(u.ID) > core.MaxKeyLen {
				v.Add("targetUrls", "invalid")
				break
			}
		}
	}
	in.Name = strings.TrimSpace(in.Name)
	if in.TargetURLs == nil {
		in.TargetURLs = []TargetURL{}
	}
	return v.Err()
}

// mayChangeMetrics is what a metric's changes need: the right to change who
// gets what on every flag of the environment.
func mayChangeMetrics(a *core.Actor, env core.EnvRow) error {
	return a.Require(access.UpdateFlagTargetingRules, env.RN()+":flag/*")
}

// AuthorizeMetricChange checks what creating, updating or archiving a
// metric in the environment requires, before its body is read.
func (s *Experiments) AuthorizeMetricChange(ctx context.Context, a *core.Actor, envID uuid.UUID) error {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return err
	}
	return mayChangeMetrics(a, env)
}

// MetricFilter selects metrics: by part of the name (any case), by event
// type (0: any), one page.
type MetricFilter struct {
	Name      string
	EventType int
	Page      core.Page
}

// ListMetrics is one page of the environment's live metrics, newest change
// first.
func (s *Experiments) ListMetrics(ctx context.Context, a *core.Actor, envID uuid.UUID, f MetricFilter) (core.Paged[Metric], error) {
	var v core.Validator
	f.Page.Check(&v)
	v.Text("metricName", f.Name, core.MaxNameLen)
	if f.EventType < 0 || f.EventType > EventClick {
		v.Add("eventType", "invalid")
	}
	if err := v.Err(); err != nil {
		return core.Paged[Metric]{}, err
	}
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return core.Paged[Metric]{}, err
	}
	name := likeEscape(f.Name)
	rows, err := s.core.Q.ListExperimentMetrics(ctx, db.ListExperimentMetricsParams{EnvID: envID, Name: name,
		EventType: int16(f.EventType), Lim: f.Page.Limit(), Off: f.Page.Offset()})
	return core.PageOfCounted(rows, err, func(r db.ListExperimentMetricsRow) (Metric, int64) {
		return metricOf(r.ExperimentMetric, r.MaintainerName, r.MaintainerEmail), r.Total
	}, func() (int64, error) {
		return s.core.Q.CountExperimentMetrics(ctx, db.CountExperimentMetricsParams{EnvID: envID, Name: name, EventType: int16(f.EventType)})
	})
}

// likeEscape makes a search text match itself inside ILIKE's pattern.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.TrimSpace(s))
}

// GetMetric is one metric of the environment, archived or not.
func (s *Experiments) GetMetric(ctx context.Context, a *core.Actor, envID, id uuid.UUID) (Metric, error) {
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return Metric{}, err
	}
	return s.metric(ctx, s.core.Q, envID, id)
}

func (s *Experiments) metric(ctx context.Context, q *db.Queries, envID, id uuid.UUID) (Metric, error) {
	r, err := q.GetExperimentMetric(ctx, db.GetExperimentMetricParams{EnvID: envID, ID: id})
	if err != nil {
		return Metric{}, core.Translate(err)
	}
	return metricOf(r.ExperimentMetric, r.MaintainerName, r.MaintainerEmail), nil
}

// metricChange is what creating and updating a metric check first: the
// caller's right in the environment, then the input (update: whether it
// is an update; check may tidy it in place), and it returns the input's
// target URLs as stored.
func (s *Experiments) metricChange(ctx context.Context, a *core.Actor, envID uuid.UUID, in *MetricInput, update bool) ([]byte, error) {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return nil, err
	}
	if err := mayChangeMetrics(a, env); err != nil {
		return nil, err
	}
	if err := in.check(update); err != nil {
		return nil, err
	}
	return json.Marshal(in.TargetURLs)
}

// CreateMetric adds a metric to the environment.
func (s *Experiments) CreateMetric(ctx context.Context, a *core.Actor, envID uuid.UUID, in MetricInput) (Metric, error) {
	urls, err := s.metricChange(ctx, a, envID, &in, false)
	if err != nil {
		return Metric{}, err
	}
	var out Metric
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		id, err := q.InsertExperimentMetric(ctx, db.InsertExperimentMetricParams{EnvID: envID, Name: in.Name,
			Description: in.Description, MaintainerUserID: in.MaintainerUserID, EventName: in.EventName,
			EventType: int16(in.EventType), CustomEventTrackOption: int16(in.CustomEventTrackOption),
			CustomEventUnit: in.CustomEventUnit, CustomEventSuccessCriteria: int16(in.CustomEventSuccessCriteria),
			ElementTargets: in.ElementTargets, TargetUrls: urls})
		if err != nil {
			return err
		}
		if out, err = s.metric(ctx, q, envID, id); err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: RefMetric, RefID: id.String(), Keyword: out.Name,
			Operation: core.OpCreate, EnvID: &envID, Current: out})
	})
	return out, core.Translate(err)
}

// UpdateMetric changes a live metric. Running experiments keep the snapshot
// their iteration took when it started.
func (s *Experiments) UpdateMetric(ctx context.Context, a *core.Actor, envID, id uuid.UUID, in MetricInput) (Metric, error) {
	urls, err := s.metricChange(ctx, a, envID, &in, true)
	if err != nil {
		return Metric{}, err
	}
	var out Metric
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		before, err := s.metric(ctx, q, envID, id)
		if err != nil {
			return err
		}
		n, err := q.UpdateExperimentMetric(ctx, db.UpdateExperimentMetricParams{EnvID: envID, ID: id, Name: in.Name,
			Description: in.Description, MaintainerUserID: in.MaintainerUserID, EventName: in.EventName,
			EventType: int16(in.EventType), CustomEventTrackOption: int16(in.CustomEventTrackOption),
			CustomEventUnit: in.CustomEventUnit, CustomEventSuccessCriteria: int16(in.CustomEventSuccessCriteria),
			ElementTargets: in.ElementTargets, TargetUrls: urls})
		if err != nil {
			return err
		}
		if n == 0 {
			return core.ErrNotFound // archived
		}
		if out, err = s.metric(ctx, q, envID, id); err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: RefMetric, RefID: id.String(), Keyword: out.Name,
			Operation: core.OpUpdate, EnvID: &envID, Previous: before, Current: out})
	})
	return out, core.Translate(err)
}

// ErrMetricInUse refuses to archive a metric a live experiment measures.
var ErrMetricInUse = &core.RuleError{Code: "MetricIsBeingUsedByExperiment"}

// ArchiveMetric archives a metric no live experiment measures.
func (s *Experiments) ArchiveMetric(ctx context.Context, a *core.Actor, envID, id uuid.UUID) error {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return err
	}
	if err := mayChangeMetrics(a, env); err != nil {
		return err
	}
	return core.Translate(s.core.InTx(ctx, func(q *db.Queries) error {
		before, err := s.metric(ctx, q, envID, id)
		if err != nil {
			return err
		}
		if before.IsArchived {
			return nil
		}
		// Archived first, then checked: the update waits for an experiment
		// being made of the metric (it holds the metric), so the check sees it.
		if _, err := q.ArchiveExperimentMetric(ctx, db.ArchiveExperimentMetricParams{EnvID: envID, ID: id}); err != nil {
			return err
		}
		used, err := q.ExperimentMetricInUse(ctx, id)
		if err != nil {
			return err
		}
		if used {
			return ErrMetricInUse // the transaction is rolled back
		}
		after := before
		after.IsArchived = true
		return s.core.Audit(ctx, q, a, core.Change{RefType: RefMetric, RefID: id.String(), Keyword: before.Name,
			Operation: core.OpArchive, EnvID: &envID, Previous: before, Current: after})
	}))
}
