package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
)

func (h *Handler) listAccessTokens(c echo.Context) error {
	creator, err := queryUUID(c, "creatorId")
	if err != nil {
		return err
	}
	tokens, err := h.store.Tokens().ListAccessTokens(c.Request().Context(), actor(c),
		accesstokens.AccessTokenFilter{Name: query(c, "name"), Type: query(c, "type"), CreatorID: creator, Page: page(c)})
	return respond(c, tokens, err)
}

func (h *Handler) createAccessToken(c echo.Context) error {
	var in accesstokens.AccessTokenInput
	if err := bind(c, &in); err != nil {
		return err
	}
	if !h.limits.AllowTokenMint(actor(c)) {
		return core.ErrTooManyRequests
	}
	t, err := h.store.Tokens().CreateAccessToken(c.Request().Context(), actor(c), in)
	return respond(c, t, err)
}

func (h *Handler) updateAccessToken(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in accesstokens.AccessTokenInput) (any, error) {
		return h.store.Tokens().UpdateAccessToken(ctx, a, ids.ID, in)
	})
}

func (h *Handler) toggleAccessToken(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	if err := noBody(c); err != nil {
		return err
	}
	// FeatBit answers true (ApiResponse<bool>); the new status is in the list.
	_, err = h.store.Tokens().ToggleAccessToken(c.Request().Context(), actor(c), ids.ID)
	return respond(c, true, err)
}

func (h *Handler) deleteAccessToken(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return true, h.store.Tokens().DeleteAccessToken(ctx, a, ids.ID)
	})
}
