package api

import (
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
)

func (h *Handler) listProjects(c echo.Context) error {
	ps, err := h.store.Projects().ListProjects(c.Request().Context(), actor(c))
	return respond(c, ps, err)
}

func (h *Handler) createProject(c echo.Context) error {
	var in core.ProjectInput
	if err := bind(c, &in); err != nil {
		return err
	}
	p, err := h.store.Projects().CreateProject(c.Request().Context(), actor(c), in)
	return respond(c, p, err)
}

func (h *Handler) getProject(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	p, err := h.store.Projects().GetProject(c.Request().Context(), actor(c), ids.ID)
	return respond(c, p, err)
}

func (h *Handler) renameProject(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	var in core.ProjectInput
	if err := bind(c, &in); err != nil {
		return err
	}
	p, err := h.store.Projects().RenameProject(c.Request().Context(), actor(c), ids.ID, in)
	return respond(c, p, err)
}

func (h *Handler) deleteProject(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	return respond(c, true, h.store.Projects().DeleteProject(c.Request().Context(), actor(c), ids.ID))
}

func (h *Handler) createEnvironment(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	var in core.EnvironmentInput
	if err := bind(c, &in); err != nil {
		return err
	}
	env, err := h.store.Projects().CreateEnvironment(c.Request().Context(), actor(c), ids.Project, in)
	return respond(c, env, err)
}

func (h *Handler) getEnvironment(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	env, err := h.store.Projects().GetEnvironment(c.Request().Context(), actor(c), ids.Project, ids.ID)
	return respond(c, env, err)
}

func (h *Handler) updateEnvironment(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	var in core.EnvironmentInput
	if err := bind(c, &in); err != nil {
		return err
	}
	env, err := h.store.Projects().UpdateEnvironment(c.Request().Context(), actor(c), ids.Project, ids.ID, in)
	return respond(c, env, err)
}

func (h *Handler) deleteEnvironment(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	return respond(c, true, h.store.Projects().DeleteEnvironment(c.Request().Context(), actor(c), ids.Project, ids.ID))
}

func (h *Handler) createSecret(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	var in core.SecretInput
	if err := bind(c, &in); err != nil {
		return err
	}
	sec, err := h.store.Projects().CreateSecret(c.Request().Context(), actor(c), ids.Env, in)
	return respond(c, sec, err)
}

func (h *Handler) updateSecret(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	var in core.SecretInput
	if err := bind(c, &in); err != nil {
		return err
	}
	// FeatBit answers true (ApiResponse<bool>).
	_, err = h.store.Projects().UpdateSecret(c.Request().Context(), actor(c), ids.Env, ids.ID, in)
	return respond(c, true, err)
}

func (h *Handler) deleteSecret(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	return respond(c, true, h.store.Projects().DeleteSecret(c.Request().Context(), actor(c), ids.Env, ids.ID))
}
