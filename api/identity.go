package api

import (
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/iam"
)

func (h *Handler) login(c echo.Context) error {
	var in iam.LoginInput
	if err := bindWithin(c, &in, signInBodyBytes); err != nil {
		return err
	}
	s, err := h.store.Login(c.Request().Context(), in, c.RealIP())
	return respond(c, s, err)
}

// logout ends the caller's session on the server; FeatBit answers true.
func (h *Handler) logout(c echo.Context) error {
	if err := noBody(c); err != nil {
		return err
	}
	return respond(c, true, h.store.Logout(c.Request().Context(), actor(c)))
}

// refreshToken answers a new session token in place of the caller's, in
// FeatBit's LoginToken shape.
func (h *Handler) refreshToken(c echo.Context) error {
	if err := noBody(c); err != nil {
		return err
	}
	s, err := h.store.RefreshSession(c.Request().Context(), actor(c))
	return respond(c, s, err)
}

// resetPassword answers FeatBit's {success, reason} with the caller's new
// session token, since the change ends every earlier one.
func (h *Handler) resetPassword(c echo.Context) error {
	var in iam.ResetPasswordInput
	if err := bind(c, &in); err != nil {
		return err
	}
	s, err := h.store.ResetPassword(c.Request().Context(), actor(c), in)
	return respond(c, iam.PasswordReset{Success: true, Token: s.Token}, err)
}

func (h *Handler) profile(c echo.Context) error {
	p, err := h.store.GetProfile(c.Request().Context(), actor(c))
	return respond(c, p, err)
}

func (h *Handler) listOrganizations(c echo.Context) error {
	orgs, err := h.store.ListOrganizations(c.Request().Context(), actor(c))
	return respond(c, orgs, err)
}

func (h *Handler) getWorkspace(c echo.Context) error {
	w, err := h.store.GetWorkspace(c.Request().Context(), actor(c))
	return respond(c, w, err)
}

func (h *Handler) updateWorkspace(c echo.Context) error {
	var in iam.WorkspaceInput
	if err := bind(c, &in); err != nil {
		return err
	}
	w, err := h.store.UpdateWorkspace(c.Request().Context(), actor(c), in)
	return respond(c, w, err)
}

func (h *Handler) updateWorkspaceSSO(c echo.Context) error {
	var in iam.OIDCSettings
	if err := bind(c, &in); err != nil {
		return err
	}
	w, err := h.store.UpdateWorkspaceSSO(c.Request().Context(), actor(c), in)
	return respond(c, w, err)
}
