package api

import (
	"context"
	"strconv"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/experiments"
)

// FeatBit's ExperimentMetricController: an environment's experiment
// metrics. Enums are FeatBit's integers.

// metricBody is FeatBit's CreateExperimentMetric and UpdateExperimentMetric.
// isArvhived (FeatBit's spelling) is accepted and ignored: archiving has its
// own route.
type metricBody struct {
	Name                       string                  `json:"name"`
	Description                string                  `json:"description"`
	MaintainerUserID           string                  `json:"maintainerUserId"`
	EventName                  string                  `json:"eventName"`
	EventType                  int                     `json:"eventType"`
	CustomEventTrackOption     int                     `json:"customEventTrackOption"`
	CustomEventUnit            string                  `json:"customEventUnit"`
	CustomEventSuccessCriteria int                     `json:"customEventSuccessCriteria"`
	ElementTargets             string                  `json:"elementTargets"`
	TargetURLs                 []experiments.TargetURL `json:"targetUrls"`
	IsArchived                 bool                    `json:"isArvhived"`
}

func (b metricBody) input() (experiments.MetricInput, error) {
	in := experiments.MetricInput{Name: b.Name, Description: b.Description, EventName: b.EventName, EventType: b.EventType,
		CustomEventTrackOption: b.CustomEventTrackOption, CustomEventUnit: b.CustomEventUnit,
		CustomEventSuccessCriteria: b.CustomEventSuccessCriteria, ElementTargets: b.ElementTargets, TargetURLs: b.TargetURLs}
	if b.MaintainerUserID != "" {
		id, err := uuid.Parse(b.MaintainerUserID)
		if err != nil {
			return in, core.Invalid("maintainerUserId_is_invalid")
		}
		in.MaintainerUserID = id
	}
	return in, nil
}

func (h *Handler) listMetrics(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	envID := ids.Env
	eventType := 0
	if s := filterQuery(c, "eventType"); s != "" {
		if eventType, err = strconv.Atoi(s); err != nil {
			return core.Invalid("eventType_is_invalid")
		}
	}
	list, err := h.store.Experiments().ListMetrics(c.Request().Context(), actor(c), envID, experiments.MetricFilter{
		Name: filterQuery(c, "metricName"), EventType: eventType, Page: page(c)})
	return respond(c, list, err)
}

// filterQuery reads an optional filter of FeatBit's list pages, which send
// a filter left unset as "undefined" or "null" (Angular writes the value as
// text): those are absent.
func filterQuery(c echo.Context, name string) string {
	switch s := query(c, name); s {
	case "undefined", "null":
		return ""
	default:
		return s
	}
}

func (h *Handler) createMetric(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	envID := ids.Env
	var b metricBody
	if err := bind(c, &b); err != nil {
		return err
	}
	in, err := b.input()
	if err != nil {
		return err
	}
	m, err := h.store.Experiments().CreateMetric(c.Request().Context(), actor(c), envID, in)
	return respond(c, m, err)
}

func (h *Handler) updateMetric(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, b metricBody) (any, error) {
		in, err := b.input()
		if err != nil {
			return nil, err
		}
		return h.store.Experiments().UpdateMetric(ctx, a, ids.Env, ids.ID, in)
	})
}

func (h *Handler) archiveMetric(c echo.Context) error {
	return answerNoBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs) error {
		return h.store.Experiments().ArchiveMetric(ctx, a, ids.Env, ids.ID)
	})
}
