package api

import (
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// listResources is FeatBit's GET /api/v1/resources?type=&name=.
func (h *Handler) listResources(c echo.Context) error {
	rs, err := h.store.Projects().ListResources(c.Request().Context(), actor(c),
		core.ResourceFilter{Type: query(c, "type"), Name: query(c, "name")})
	return respond(c, rs, err)
}

// listResourcesV2 is FeatBit's GET /api/v2/resources?spaceLevel=&name=&types=,
// types repeated or comma-separated.
func (h *Handler) listResourcesV2(c echo.Context) error {
	rs, err := h.store.Projects().ListResourcesV2(c.Request().Context(), actor(c),
		core.ResourceFilterV2{SpaceLevel: query(c, "spaceLevel"), Name: query(c, "name"), Types: queryList(c, "types")})
	return respond(c, rs, err)
}
