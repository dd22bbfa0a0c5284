package api

import (
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/iam"
)

func (h *Handler) updateProfile(c echo.Context) error {
	var in iam.ProfileInput
	if err := bind(c, &in); err != nil {
		return err
	}
	p, err := h.store.IAM().UpdateProfile(c.Request().Context(), actor(c), in)
	return respond(c, p, err)
}

func (h *Handler) userWorkspaces(c echo.Context) error {
	ws, err := h.store.IAM().ListUserWorkspaces(c.Request().Context(), actor(c))
	return respond(c, ws, err)
}
