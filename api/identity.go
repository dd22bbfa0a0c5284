package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// login signs in by email and password, answering the session token and,
// as FeatBit does, setting the refresh-token cookie (featbit_entry.go).
func (h *Handler) login(c echo.Context) error {
	var in iam.LoginInput
	if err := bindWithin(c, &in, signInBodyBytes); err != nil {
		return err
	}
	s, err := h.store.IAM().LoginWithRefresh(c.Request().Context(), in, c.RealIP())
	if err != nil {
		return err
	}
	setRefreshCookie(c, s.Refresh)
	return respond(c, s.Session, nil)
}

// logout ends the caller's session on the server, and revokes and deletes
// the refresh-token cookie when the browser sends one; FeatBit answers true.
func (h *Handler) logout(c echo.Context) error {
	if err := noBody(c); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := h.store.IAM().Logout(ctx, actor(c)); err != nil {
		return err
	}
	if refresh := refreshCookieValue(c); refresh != "" {
		if err := h.store.IAM().RevokeRefreshToken(ctx, refresh, c.RealIP()); err != nil {
			return err
		}
		deleteRefreshCookie(c)
	}
	return respond(c, true, nil)
}

// resetPassword answers FeatBit's {success, reason} with the caller's new
// session token, since the change ends every earlier one.
func (h *Handler) resetPassword(c echo.Context) error {
	var in iam.ResetPasswordInput
	if err := bind(c, &in); err != nil {
		return err
	}
	s, err := h.store.IAM().ResetPassword(c.Request().Context(), actor(c), in)
	return respond(c, iam.PasswordReset{Success: true, Token: s.Token}, err)
}

func (h *Handler) profile(c echo.Context) error {
	p, err := h.store.IAM().GetProfile(c.Request().Context(), actor(c))
	return respond(c, p, err)
}

func (h *Handler) listOrganizations(c echo.Context) error {
	orgs, err := h.store.IAM().ListOrganizations(c.Request().Context(), actor(c))
	return respond(c, orgs, err)
}

func (h *Handler) getWorkspace(c echo.Context) error {
	w, err := h.store.IAM().GetWorkspace(c.Request().Context(), actor(c))
	return respond(c, w, err)
}

func (h *Handler) updateWorkspace(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in iam.WorkspaceInput) (any, error) {
		return h.store.IAM().UpdateWorkspace(ctx, a, in)
	})
}

func (h *Handler) updateWorkspaceSSO(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in iam.OIDCSettings) (any, error) {
		return h.store.IAM().UpdateWorkspaceSSO(ctx, a, in)
	})
}
