package api

import (
	"context"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
)

// evaluateFlag tests a flag with an end user ({keyId, name?,
// customizedProperties?}): the variation SDKs of the environment get, and why.
func (h *Handler) evaluateFlag(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, u eval.EndUser) (any, error) {
		return h.store.SDK().EvaluateFlag(ctx, a, ids.Env, c.Param("key"), u)
	})
}

// flagInsights answers what SDKs reported evaluating of a flag.
func (h *Handler) flagInsights(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.SDK().FlagInsights(ctx, a, ids.Env, c.Param("key"))
	})
}

// staleFlags pages an environment's flags, those never or longest ago
// evaluated first.
func (h *Handler) staleFlags(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.SDK().StaleFlags(ctx, a, ids.Env, page(c))
	})
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
