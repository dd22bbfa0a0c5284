package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// Code references: bunting coderefs uploads where a project's flag keys are
// used in a repository (flagstore.UploadCodeRefs); the flag pages list them.

func (h *Handler) uploadCodeRefs(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	var in flagstore.CodeRefsInput
	if err := bindWithin(c, &in, flagstore.CodeRefsBodyBytes); err != nil {
		return err
	}
	out, err := h.store.Flags().UploadCodeRefs(c.Request().Context(), actor(c), ids.Env, in)
	return respond(c, out, err)
}

func (h *Handler) flagCodeRefs(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.Flags().FlagCodeRefs(ctx, a, ids.Env, c.Param("key"))
	})
}
