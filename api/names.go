package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// The is-key-used and is-name-used checks, with FeatBit's query names.

func (h *Handler) isWorkspaceKeyUsed(c echo.Context) error {
	used, err := h.store.Projects().IsWorkspaceKeyUsed(c.Request().Context(), actor(c), query(c, "key"))
	return respond(c, used, err)
}

func (h *Handler) isOrganizationKeyUsed(c echo.Context) error {
	used, err := h.store.Projects().IsOrganizationKeyUsed(c.Request().Context(), actor(c), query(c, "key"))
	return respond(c, used, err)
}

func (h *Handler) isProjectKeyUsed(c echo.Context) error {
	used, err := h.store.Projects().IsProjectKeyUsed(c.Request().Context(), actor(c), query(c, "key"))
	return respond(c, used, err)
}

func (h *Handler) isEnvironmentKeyUsed(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.Projects().IsEnvironmentKeyUsed(ctx, a, ids.Project, query(c, "key"))
	})
}

func (h *Handler) isGroupNameUsed(c echo.Context) error {
	used, err := h.store.Projects().IsGroupNameUsed(c.Request().Context(), actor(c), query(c, "name"))
	return respond(c, used, err)
}

func (h *Handler) isAccessTokenNameUsed(c echo.Context) error {
	used, err := h.store.Projects().IsAccessTokenNameUsed(c.Request().Context(), actor(c), query(c, "name"))
	return respond(c, used, err)
}
