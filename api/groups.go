package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

func (h *Handler) listGroups(c echo.Context) error {
	f, err := iamFilter(c, "name", "")
	if err != nil {
		return err
	}
	gs, err := h.store.IAM().ListGroups(c.Request().Context(), actor(c), f)
	return respond(c, gs, err)
}

func (h *Handler) createGroup(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in iam.GroupInput) (any, error) {
		return h.store.IAM().CreateGroup(ctx, a, in)
	})
}

func (h *Handler) getGroup(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.IAM().GetGroup(ctx, a, ids.Group)
	})
}

func (h *Handler) updateGroup(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in iam.GroupInput) (any, error) {
		return h.store.IAM().UpdateGroup(ctx, a, ids.Group, in)
	})
}

func (h *Handler) deleteGroup(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return true, h.store.IAM().DeleteGroup(ctx, a, ids.Group)
	})
}

func (h *Handler) listGroupMembers(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	f, err := iamFilter(c, "searchText", "getAllMembers")
	if err != nil {
		return err
	}
	ms, err := h.store.IAM().ListGroupMembers(c.Request().Context(), actor(c), ids.Group, f)
	return respond(c, ms, err)
}

func (h *Handler) addGroupMember(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	if err := noBody(c); err != nil {
		return err
	}
	return respond(c, true, h.store.IAM().AddGroupMember(c.Request().Context(), actor(c), ids.Group, ids.Member))
}

func (h *Handler) removeGroupMember(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	if err := noBody(c); err != nil {
		return err
	}
	return respond(c, true, h.store.IAM().RemoveGroupMember(c.Request().Context(), actor(c), ids.Group, ids.Member))
}

func (h *Handler) listGroupPolicies(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	f, err := iamFilter(c, "name", "getAllPolicies")
	if err != nil {
		return err
	}
	ps, err := h.store.IAM().ListGroupPolicies(c.Request().Context(), actor(c), ids.Group, f)
	return respond(c, ps, err)
}

func (h *Handler) addGroupPolicy(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	if err := noBody(c); err != nil {
		return err
	}
	return respond(c, true, h.store.IAM().AddGroupPolicy(c.Request().Context(), actor(c), ids.Group, ids.Policy))
}

func (h *Handler) removeGroupPolicy(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	if err := noBody(c); err != nil {
		return err
	}
	return respond(c, true, h.store.IAM().RemoveGroupPolicy(c.Request().Context(), actor(c), ids.Group, ids.Policy))
}
