package api

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagcopy"
)

// FeatBit's compare and copy routes: the source environment is the path's
// envId, the target is targetEnvId.

func (h *Handler) compareOverview(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in flagcopy.CompareOverviewInput) (any, error) {
		return h.store.FlagCopy().CompareOverview(ctx, a, ids.Env, in)
	})
}

func (h *Handler) compareFlag(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	out, err := h.store.FlagCopy().CompareFlag(c.Request().Context(), actor(c), ids.Env, c.Param("key"), ids.TargetEnv)
	if errors.Is(err, flagcopy.ErrNotInTarget) {
		return respond(c, out, nil) // FeatBit answers null
	}
	return respond(c, out, err)
}

func (h *Handler) copyToEnvPrecheck(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, flagIDs []uuid.UUID) (any, error) {
		return h.store.FlagCopy().CopyToEnvPrecheck(ctx, a, ids.Env, ids.TargetEnv, flagIDs)
	})
}

func (h *Handler) copyToEnv(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in flagcopy.CopyToEnvInput) (any, error) {
		return h.store.FlagCopy().CopyToEnv(ctx, a, ids.Env, ids.TargetEnv, in)
	})
}

func (h *Handler) copyFlagSettings(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	var in flagcopy.CopyFlagSettingsInput
	if err := bind(c, &in); err != nil {
		return err
	}
	// FeatBit answers true.
	out, err := done(h.store.FlagCopy().CopyFlagSettings(c.Request().Context(), actor(c), ids.Env, c.Param("key"), ids.TargetEnv, in))
	return respond(c, out, err)
}
