package api

import (
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/web/httpx"
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
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	p, err := h.store.Projects().GetProject(c.Request().Context(), actor(c), id)
	return respond(c, p, err)
}

func (h *Handler) renameProject(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	var in core.ProjectInput
	if err := bind(c, &in); err != nil {
		return err
	}
	p, err := h.store.Projects().RenameProject(c.Request().Context(), actor(c), id, in)
	return respond(c, p, err)
}

func (h *Handler) deleteProject(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	return respond(c, true, h.store.Projects().DeleteProject(c.Request().Context(), actor(c), id))
}

func (h *Handler) createEnvironment(c echo.Context) error {
	projectID, err := httpx.PathID(c, "projectId")
	if err != nil {
		return err
	}
	var in core.EnvironmentInput
	if err := bind(c, &in); err != nil {
		return err
	}
	env, err := h.store.Projects().CreateEnvironment(c.Request().Context(), actor(c), projectID, in)
	return respond(c, env, err)
}

func (h *Handler) getEnvironment(c echo.Context) error {
	projectID, envID, err := pathIDs(c, "projectId", "id")
	if err != nil {
		return err
	}
	env, err := h.store.Projects().GetEnvironment(c.Request().Context(), actor(c), projectID, envID)
	return respond(c, env, err)
}

func (h *Handler) updateEnvironment(c echo.Context) error {
	projectID, envID, err := pathIDs(c, "projectId", "id")
	if err != nil {
		return err
	}
	var in core.EnvironmentInput
	if err := bind(c, &in); err != nil {
		return err
	}
	env, err := h.store.Projects().UpdateEnvironment(c.Request().Context(), actor(c), projectID, envID, in)
	return respond(c, env, err)
}

func (h *Handler) deleteEnvironment(c echo.Context) error {
	projectID, envID, err := pathIDs(c, "projectId", "id")
	if err != nil {
		return err
	}
	return respond(c, true, h.store.Projects().DeleteEnvironment(c.Request().Context(), actor(c), projectID, envID))
}

func (h *Handler) createSecret(c echo.Context) error {
	envID, err := httpx.PathID(c, "envId")
	if err != nil {
		return err
	}
	var in core.SecretInput
	if err := bind(c, &in); err != nil {
		return err
	}
	sec, err := h.store.Projects().CreateSecret(c.Request().Context(), actor(c), envID, in)
	return respond(c, sec, err)
}

func (h *Handler) updateSecret(c echo.Context) error {
	envID, secretID, err := pathIDs(c, "envId", "id")
	if err != nil {
		return err
	}
	var in core.SecretInput
	if err := bind(c, &in); err != nil {
		return err
	}
	// FeatBit answers true (ApiResponse<bool>).
	_, err = h.store.Projects().UpdateSecret(c.Request().Context(), actor(c), envID, secretID, in)
	return respond(c, true, err)
}

func (h *Handler) deleteSecret(c echo.Context) error {
	envID, secretID, err := pathIDs(c, "envId", "id")
	if err != nil {
		return err
	}
	return respond(c, true, h.store.Projects().DeleteSecret(c.Request().Context(), actor(c), envID, secretID))
}
