package api

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/experiments"
)

// FeatBit's ExperimentController, and Bunting's analysis of an experiment
// (GET .../experiments/{id}/analysis).

func (h *Handler) listExperiments(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	envID := ids.Env
	var flagID *uuid.UUID
	if s := filterQuery(c, "featureFlagId"); s != "" {
		id, err := uuid.Parse(s)
		if err != nil {
			return core.Invalid("featureFlagId_is_invalid")
		}
		flagID = &id
	}
	list, err := h.store.Experiments().ListExperiments(c.Request().Context(), actor(c), envID, experiments.ExperimentFilter{
		FlagName: filterQuery(c, "featureFlagName"), FlagID: flagID, Page: page(c)})
	return respond(c, list, err)
}

// experimentBody is FeatBit's CreateExperiment; FeatBit's C# property is
// BaseLineVariationId, bound case-insensitively. Alpha is a number or a
// string holding one: FeatBit's UI sends "0.05" (its select's values are
// strings), which .NET's web defaults read as a number.
type experimentBody struct {
	FeatureFlagID       string          `json:"featureFlagId"`
	MetricID            string          `json:"metricId"`
	BaselineVariationID string          `json:"baselineVariationId"`
	Alpha               json.RawMessage `json:"alpha"`
}

// numberOrString reads a field that is a JSON number, a string holding
// one, or null (nil); anything else is the field's 400.
func numberOrString(field string, raw json.RawMessage) (*float64, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, core.Invalid(field + "_is_invalid")
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, core.Invalid(field + "_is_invalid")
	}
	return &v, nil
}

// optionalID parses a uuid field of a body: "" is uuid.Nil, which the store
// reports as required.
func optionalID(field, s string) (uuid.UUID, error) {
	if s == "" {
		return uuid.Nil, nil
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, core.Invalid(field + "_is_invalid")
	}
	return id, nil
}

// experimentEntity is FeatBit's Experiment entity, what creating one answers.
type experimentEntity struct {
	ID                  uuid.UUID               `json:"id"`
	CreatedAt           time.Time               `json:"createdAt"`
	UpdatedAt           time.Time               `json:"updatedAt"`
	EnvID               uuid.UUID               `json:"envId"`
	MetricID            uuid.UUID               `json:"metricId"`
	FeatureFlagID       uuid.UUID               `json:"featureFlagId"`
	IsArchived          bool                    `json:"isArchived"`
	Status              string                  `json:"status"`
	BaselineVariationID string                  `json:"baselineVariationId"`
	Iterations          []experiments.Iteration `json:"iterations"`
	Alpha               float64                 `json:"alpha"`
}

func (h *Handler) createExperiment(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	envID := ids.Env
	var b experimentBody
	if err := bind(c, &b); err != nil {
		return err
	}
	alpha, err := numberOrString("alpha", b.Alpha)
	if err != nil {
		return err
	}
	in := experiments.ExperimentInput{BaselineVariationID: b.BaselineVariationID, Alpha: alpha}
	if in.FeatureFlagID, err = optionalID("featureFlagId", b.FeatureFlagID); err != nil {
		return err
	}
	if in.MetricID, err = optionalID("metricId", b.MetricID); err != nil {
		return err
	}
	x, err := h.store.Experiments().CreateExperiment(c.Request().Context(), actor(c), envID, in)
	return respond(c, experimentEntity{ID: x.ID, CreatedAt: x.CreatedAt, UpdatedAt: x.UpdatedAt, EnvID: x.EnvID, MetricID: x.MetricID,
		FeatureFlagID: x.FeatureFlagID, IsArchived: x.IsArchived, Status: x.Status, BaselineVariationID: x.BaselineVariationID,
		Iterations: x.Iterations, Alpha: x.Alpha}, err)
}

func (h *Handler) experimentReferences(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	envID := ids.Env
	flagID, err := queryUUID(c, "flagId")
	if err != nil {
		return core.Invalid("featureFlagId_is_invalid")
	}
	if flagID == nil {
		flagID = &uuid.Nil
	}
	refs, err := h.store.Experiments().VariationReferences(c.Request().Context(), actor(c), envID, *flagID, query(c, "variationId"))
	return respond(c, refs, err)
}

func (h *Handler) experimentStatusCounts(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	envID := ids.Env
	counts, err := h.store.Experiments().StatusCounts(c.Request().Context(), actor(c), envID)
	return respond(c, counts, err)
}

// iterationParam is FeatBit's ExperimentIterationParam. Only exptId and
// iterationId are read: the rest comes from the stored experiment, as
// FeatBit takes the end time from the stored iteration.
type iterationParam struct {
	ExptID                     string          `json:"exptId"`
	IterationID                string          `json:"iterationId"`
	FlagExptID                 string          `json:"flagExptId"`
	BaselineVariationID        string          `json:"baselineVariationId"`
	VariationIDs               []string        `json:"variationIds"`
	EventName                  string          `json:"eventName"`
	EventType                  json.RawMessage `json:"eventType"`
	CustomEventTrackOption     json.RawMessage `json:"customEventTrackOption"`
	CustomEventSuccessCriteria json.RawMessage `json:"customEventSuccessCriteria"`
	CustomEventUnit            string          `json:"customEventUnit"`
	StartTime                  json.RawMessage `json:"startTime"`
	EndTime                    json.RawMessage `json:"endTime"`
	IsFinish                   json.RawMessage `json:"isFinish"`
}

func (h *Handler) iterationResults(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	envID := ids.Env
	var body []iterationParam
	if err := bind(c, &body); err != nil {
		return err
	}
	params := make([]experiments.IterationParam, 0, len(body))
	for _, p := range body {
		// An id that is no uuid names no experiment or iteration: skipped,
		// as FeatBit skips unknown ones.
		x, err1 := uuid.Parse(p.ExptID)
		it, err2 := uuid.Parse(p.IterationID)
		if err1 == nil && err2 == nil {
			params = append(params, experiments.IterationParam{ExperimentID: x, IterationID: it})
		}
	}
	if len(body) > experiments.MaxIterationParams {
		return core.Invalid("body_is_invalid")
	}
	out, err := h.store.Experiments().RefreshIterationResults(c.Request().Context(), actor(c), envID, params)
	return respond(c, out, err)
}

func (h *Handler) startExperiment(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		if err := noBody(c); err != nil {
			return nil, err
		}
		return h.store.Experiments().StartExperiment(ctx, a, ids.Env, ids.ID)
	})
}

func (h *Handler) stopExperiment(c echo.Context) error {
	return answerNoBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs) error {
		return h.store.Experiments().StopExperiment(ctx, a, ids.Env, ids.ID)
	})
}

func (h *Handler) archiveExperimentData(c echo.Context) error {
	return answerNoBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs) error {
		return h.store.Experiments().ArchiveIterations(ctx, a, ids.Env, ids.ID)
	})
}

func (h *Handler) archiveExperiment(c echo.Context) error {
	return answerNoBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs) error {
		return h.store.Experiments().ArchiveExperiment(ctx, a, ids.Env, ids.ID)
	})
}

// analyzeExperiment is Bunting's analysis of an iteration (the latest when
// iterationId is not given).
func (h *Handler) analyzeExperiment(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		iteration, err := queryUUID(c, "iterationId")
		if err != nil {
			return nil, err
		}
		return h.store.Experiments().Analyze(ctx, a, ids.Env, ids.ID, iteration)
	})
}
