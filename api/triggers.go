package api

import (
	"context"
	"errors"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/web/limit"
)

// FeatBit's TriggerController: a flag's triggers, named by the flag's id
// (targetId), and the public run route whose token is the credential.

func (h *Handler) listTriggers(c echo.Context) error {
	target, err := queryUUID(c, "targetId")
	if err != nil {
		return err
	}
	if target == nil {
		return core.Invalid("targetId_is_required")
	}
	triggers, err := h.store.Governance().ListTriggers(c.Request().Context(), actor(c), *target)
	return respond(c, triggers, err)
}

func (h *Handler) createTrigger(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in governance.TriggerInput) (any, error) {
		return h.store.Governance().CreateTrigger(ctx, a, in)
	})
}

func (h *Handler) updateTrigger(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	var in governance.TriggerStatusInput
	if err := bind(c, &in); err != nil {
		return err
	}
	// FeatBit answers true (ApiResponse<bool>).
	_, err = h.store.Governance().SetTriggerStatus(c.Request().Context(), actor(c), ids.ID, in)
	return respond(c, true, err)
}

func (h *Handler) resetTriggerToken(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	if err := noBody(c); err != nil {
		return err
	}
	// FeatBit answers the new token (ApiResponse<string>), shown this once.
	t, err := h.store.Governance().ResetTriggerToken(c.Request().Context(), actor(c), ids.ID)
	return respond(c, t.Token, err)
}

func (h *Handler) deleteTrigger(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return true, h.store.Governance().DeleteTrigger(ctx, a, ids.ID)
	})
}

// runTrigger is the URL alerting systems call. It needs no sign-in: the
// token is the credential. Whatever body the caller sends (an alert's
// payload) is not read. An unknown token and a disabled trigger both answer
// 404; past the trigger's rate (or too many misses from one address), 429
// with Retry-After.
func (h *Handler) runTrigger(c echo.Context) error {
	_, err := h.store.Governance().RunTrigger(c.Request().Context(), c.Param("token"), h.limits.AllowTriggerRun)
	if errors.Is(err, core.ErrNotFound) && !h.limits.AllowTriggerMiss(c.RealIP()) {
		err = core.ErrTooManyRequests
	}
	if errors.Is(err, core.ErrTooManyRequests) {
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(limit.TriggerRefill.Seconds())))
	}
	return respond(c, true, err)
}
