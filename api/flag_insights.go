package api

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
)

// evaluateFlag tests a flag with an end user ({keyId, name?,
// customizedProperties?}): the variation SDKs of the environment get, and why.
func (h *Handler) evaluateFlag(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	var u eval.EndUser
	if err := bind(c, &u); err != nil {
		return err
	}
	ev, err := h.store.SDK().EvaluateFlag(c.Request().Context(), actor(c), ids.Env, c.Param("key"), u)
	return respond(c, ev, err)
}

// flagInsights answers what SDKs reported evaluating of a flag.
func (h *Handler) flagInsights(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	in, err := h.store.SDK().FlagInsights(c.Request().Context(), actor(c), ids.Env, c.Param("key"))
	return respond(c, in, err)
}

// staleFlags pages an environment's flags, those never or longest ago
// evaluated first.
func (h *Handler) staleFlags(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	flags, err := h.store.SDK().StaleFlags(c.Request().Context(), actor(c), ids.Env, page(c))
	return respond(c, flags, err)
}

// flagStatsByVariation answers FeatBit's insights query: featureFlagKey,
// intervalType, and from and to in Unix milliseconds.
func (h *Handler) flagStatsByVariation(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	f := sdkdata.InsightsFilter{FeatureFlagKey: query(c, "featureFlagKey"), IntervalType: query(c, "intervalType"),
		From: queryMillis(c, "from"), To: queryMillis(c, "to")}
	points, err := h.store.SDK().FlagStatsByVariation(c.Request().Context(), actor(c), ids.Env, f)
	return respond(c, points, err)
}

// queryMillis reads a Unix time in milliseconds; absent or unparsable is 0,
// which the store refuses with the parameter's name.
func queryMillis(c echo.Context, name string) int64 {
	n, err := strconv.ParseInt(query(c, name), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
