package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

func (h *Handler) listGroups(c echo.Context) error {
	return answerIAMList(c, "name", "", func(ctx context.Context, a *core.Actor, ids routeIDs, f iam.IAMFilter) (any, error) {
		return h.store.IAM().ListGroups(ctx, a, f)
	})
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
	return answerIAMList(c, "searchText", "getAllMembers", func(ctx context.Context, a *core.Actor, ids routeIDs, f iam.IAMFilter) (any, error) {
		return h.store.IAM().ListGroupMembers(ctx, a, ids.Group, f)
	})
}

func (h *Handler) addGroupMember(c echo.Context) error {
	return answerNoBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs) error {
		return h.store.IAM().AddGroupMember(ctx, a, ids.Group, ids.Member)
	})
}

func (h *Handler) removeGroupMember(c echo.Context) error {
	return answerNoBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs) error {
		return h.store.IAM().RemoveGroupMember(ctx, a, ids.Group, ids.Member)
	})
}

func (h *Handler) listGroupPolicies(c echo.Context) error {
	return answerIAMList(c, "name", "getAllPolicies", func(ctx context.Context, a *core.Actor, ids routeIDs, f iam.IAMFilter) (any, error) {
		return h.store.IAM().ListGroupPolicies(ctx, a, ids.Group, f)
	})
}

func (h *Handler) addGroupPolicy(c echo.Context) error {
	return answerNoBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs) error {
		return h.store.IAM().AddGroupPolicy(ctx, a, ids.Group, ids.Policy)
	})
}

func (h *Handler) removeGroupPolicy(c echo.Context) error {
	return answerNoBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs) error {
		return h.store.IAM().RemoveGroupPolicy(ctx, a, ids.Group, ids.Policy)
	})
}
