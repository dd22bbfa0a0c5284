package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

func (h *Handler) updateProfile(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in iam.ProfileInput) (any, error) {
		return h.store.IAM().UpdateProfile(ctx, a, in)
	})
}

func (h *Handler) userWorkspaces(c echo.Context) error {
	ws, err := h.store.IAM().ListUserWorkspaces(c.Request().Context(), actor(c))
	return respond(c, ws, err)
}
