package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

func (h *Handler) updateOrganization(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in iam.OrganizationInput) (any, error) {
		return h.store.IAM().UpdateOrganization(ctx, a, in)
	})
}

func (h *Handler) getOrganization(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.IAM().GetOrganization(ctx, a, ids.ID)
	})
}

func (h *Handler) createOrganization(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in iam.NewOrganizationInput) (any, error) {
		return h.store.IAM().CreateOrganization(ctx, a, in)
	})
}

func (h *Handler) onboardOrganization(c echo.Context) error {
	var in iam.OnboardingInput
	if err := bind(c, &in); err != nil {
		return err
	}
	err := h.store.IAM().Onboard(c.Request().Context(), actor(c), in)
	return respond(c, true, err)
}

func (h *Handler) deleteOrganization(c echo.Context) error {
	err := h.store.IAM().DeleteOrganization(c.Request().Context(), actor(c))
	return respond(c, true, err)
}
