package api

import (
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store"
)

// evaluateFlag tests a flag with an end user ({keyId, name?,
// customizedProperties?}): the variation SDKs of the environment get, and why.
func (h *Handler) evaluateFlag(c echo.Context) error {
	envID, err := pathID(c, "envId")
	if err != nil {
		return err
	}
	var u store.EndUser
	if err := bind(c, &u); err != nil {
		return err
	}
	ev, err := h.store.EvaluateFlag(c.Request().Context(), actor(c), envID, c.Param("key"), u)
	return respond(c, ev, err)
}

// flagInsights answers what SDKs reported evaluating of a flag.
func (h *Handler) flagInsights(c echo.Context) error {
	envID, err := pathID(c, "envId")
	if err != nil {
		return err
	}
	in, err := h.store.FlagInsights(c.Request().Context(), actor(c), envID, c.Param("key"))
	return respond(c, in, err)
}

// staleFlags pages an environment's flags, those never or longest ago
// evaluated first.
func (h *Handler) staleFlags(c echo.Context) error {
	envID, err := pathID(c, "envId")
	if err != nil {
		return err
	}
	flags, err := h.store.StaleFlags(c.Request().Context(), actor(c), envID, page(c))
	return respond(c, flags, err)
}
