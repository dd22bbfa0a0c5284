package api

import (
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store"
)

func (h *Handler) login(c echo.Context) error {
	var in store.LoginInput
	if err := bind(c, &in); err != nil {
		return err
	}
	s, err := h.store.Login(c.Request().Context(), in, c.RealIP())
	return respond(c, s, err)
}

func (h *Handler) resetPassword(c echo.Context) error {
	var in store.ResetPasswordInput
	if err := bind(c, &in); err != nil {
		return err
	}
	s, err := h.store.ResetPassword(c.Request().Context(), actor(c), in)
	return respond(c, s, err)
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
	var in store.WorkspaceInput
	if err := bind(c, &in); err != nil {
		return err
	}
	w, err := h.store.UpdateWorkspace(c.Request().Context(), actor(c), in)
	return respond(c, w, err)
}

func (h *Handler) updateWorkspaceSSO(c echo.Context) error {
	var in store.OIDCSettings
	if err := bind(c, &in); err != nil {
		return err
	}
	w, err := h.store.UpdateWorkspaceSSO(c.Request().Context(), actor(c), in)
	return respond(c, w, err)
}
