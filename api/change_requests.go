package api

import (
	"context"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
)

// Change requests: FeatBit's routes and answers (true for each). The body
// of approve and decline may carry a comment, which FeatBit's does not.

func (h *Handler) createFlagChangeRequest(c echo.Context) error {
	return flagChange(c, func(a *core.Actor, envID uuid.UUID, key string, in flagstore.FlagChangeRequestInput) (bool, error) {
		return done(h.store.Governance().CreateFlagChangeRequest(c.Request().Context(), a, envID, key, in))
	})
}

// changeRequestAction runs an action on the change request named by the path.
func changeRequestAction(c echo.Context, do func(ctx context.Context, a *core.Actor, envID, id uuid.UUID) error) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	return respond(c, true, do(c.Request().Context(), actor(c), ids.Env, ids.ID))
}

// review decides a change request with an optional {comment}.
func (h *Handler) review(decide func(context.Context, *core.Actor, uuid.UUID, uuid.UUID, governance.ReviewInput) (flagstore.FlagChangeRequest, error)) echo.HandlerFunc {
	return func(c echo.Context) error {
		var in governance.ReviewInput
		if err := bind(c, &in); err != nil {
			return err
		}
		return changeRequestAction(c, func(ctx context.Context, a *core.Actor, envID, id uuid.UUID) error {
			_, err := decide(ctx, a, envID, id, in)
			return err
		})
	}
}

func (h *Handler) approveFlagChangeRequest(c echo.Context) error {
	return h.review(h.store.Governance().ApproveFlagChangeRequest)(c)
}

func (h *Handler) declineFlagChangeRequest(c echo.Context) error {
	return h.review(h.store.Governance().DeclineFlagChangeRequest)(c)
}

func (h *Handler) applyFlagChangeRequest(c echo.Context) error {
	if err := noBody(c); err != nil {
		return err
	}
	return changeRequestAction(c, func(ctx context.Context, a *core.Actor, envID, id uuid.UUID) error {
		_, err := h.store.Governance().ApplyFlagChangeRequest(ctx, a, envID, id)
		return err
	})
}

func (h *Handler) deleteFlagChangeRequest(c echo.Context) error {
	if err := noBody(c); err != nil {
		return err
	}
	return changeRequestAction(c, h.store.Governance().DeleteFlagChangeRequest)
}
