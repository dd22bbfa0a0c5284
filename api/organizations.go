package api

import (
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store"
)

func (h *Handler) updateOrganization(c echo.Context) error {
	var in store.OrganizationInput
	if err := bind(c, &in); err != nil {
		return err
	}
	o, err := h.store.UpdateOrganization(c.Request().Context(), actor(c), in)
	return respond(c, o, err)
}
