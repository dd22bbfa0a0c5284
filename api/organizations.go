package api

import (
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/iam"
)

func (h *Handler) updateOrganization(c echo.Context) error {
	var in iam.OrganizationInput
	if err := bind(c, &in); err != nil {
		return err
	}
	o, err := h.store.IAM().UpdateOrganization(c.Request().Context(), actor(c), in)
	return respond(c, o, err)
}

func (h *Handler) getOrganization(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	o, err := h.store.IAM().GetOrganization(c.Request().Context(), actor(c), ids.ID)
	return respond(c, o, err)
}

func (h *Handler) createOrganization(c echo.Context) error {
	var in iam.NewOrganizationInput
	if err := bind(c, &in); err != nil {
		return err
	}
	o, err := h.store.IAM().CreateOrganization(c.Request().Context(), actor(c), in)
	return respond(c, o, err)
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
