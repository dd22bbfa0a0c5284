package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// compareChange is FeatBit's POST audit-logs/compare: the instructions
// between a flag or segment before and after an edit, which FeatBit's Save
// dialog lists, enabling Save only when there are some.
func (h *Handler) compareChange(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in flagstore.CompareInput) (any, error) {
		return h.store.Flags().CompareChange(ctx, a, ids.Env, in)
	})
}
