package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
)

func (h *Handler) listProjects(c echo.Context) error {
	ps, err := h.store.Projects().ListProjects(c.Request().Context(), actor(c))
	return respond(c, ps, err)
}

func (h *Handler) createProject(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in core.ProjectInput) (any, error) {
		return h.store.Projects().CreateProject(ctx, a, in)
	})
}

func (h *Handler) getProject(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.Projects().GetProject(ctx, a, ids.ID)
	})
}

func (h *Handler) renameProject(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in core.ProjectInput) (any, error) {
		return h.store.Projects().RenameProject(ctx, a, ids.ID, in)
	})
}

func (h *Handler) deleteProject(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return true, h.store.Projects().DeleteProject(ctx, a, ids.ID)
	})
}

func (h *Handler) createEnvironment(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in core.EnvironmentInput) (any, error) {
		return h.store.Projects().CreateEnvironment(ctx, a, ids.Project, in)
	})
}

func (h *Handler) getEnvironment(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.Projects().GetEnvironment(ctx, a, ids.Project, ids.ID)
	})
}

func (h *Handler) updateEnvironment(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in core.EnvironmentInput) (any, error) {
		return h.store.Projects().UpdateEnvironment(ctx, a, ids.Project, ids.ID, in)
	})
}

func (h *Handler) deleteEnvironment(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return true, h.store.Projects().DeleteEnvironment(ctx, a, ids.Project, ids.ID)
	})
}

func (h *Handler) createSecret(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in core.SecretInput) (any, error) {
		return h.store.Projects().CreateSecret(ctx, a, ids.Env, in)
	})
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
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return true, h.store.Projects().DeleteSecret(ctx, a, ids.Env, ids.ID)
	})
}
