package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

func (h *Handler) listPolicies(c echo.Context) error {
	return answerIAMList(c, "name", "", func(ctx context.Context, a *core.Actor, ids routeIDs, f iam.IAMFilter) (any, error) {
		return h.store.IAM().ListPolicies(ctx, a, f)
	})
}

func (h *Handler) createPolicy(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in iam.PolicyInput) (any, error) {
		return h.store.IAM().CreatePolicy(ctx, a, in)
	})
}

func (h *Handler) isPolicyKeyUsed(c echo.Context) error {
	used, err := h.store.IAM().IsPolicyKeyUsed(c.Request().Context(), actor(c), query(c, "key"))
	return respond(c, used, err)
}

func (h *Handler) clonePolicy(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in iam.PolicyInput) (any, error) {
		return h.store.IAM().ClonePolicy(ctx, a, c.Param("key"), in)
	})
}

func (h *Handler) getPolicy(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.IAM().GetPolicy(ctx, a, ids.Policy)
	})
}

func (h *Handler) updatePolicySettings(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in iam.PolicySettingsInput) (any, error) {
		return h.store.IAM().UpdatePolicySettings(ctx, a, ids.Policy, in)
	})
}

func (h *Handler) updatePolicyStatements(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, statements []access.Statement) (any, error) {
		return h.store.IAM().UpdatePolicyStatements(ctx, a, ids.Policy, statements)
	})
}

func (h *Handler) deletePolicy(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return true, h.store.IAM().DeletePolicy(ctx, a, ids.Policy)
	})
}

func (h *Handler) listPolicyMembers(c echo.Context) error {
	return answerIAMList(c, "searchText", "getAllMembers", func(ctx context.Context, a *core.Actor, ids routeIDs, f iam.IAMFilter) (any, error) {
		return h.store.IAM().ListPolicyMembers(ctx, a, ids.Policy, f)
	})
}

func (h *Handler) listPolicyGroups(c echo.Context) error {
	return answerIAMList(c, "name", "getAllGroups", func(ctx context.Context, a *core.Actor, ids routeIDs, f iam.IAMFilter) (any, error) {
		return h.store.IAM().ListPolicyGroups(ctx, a, ids.Policy, f)
	})
}

func (h *Handler) userPolicies(c echo.Context) error {
	ps, err := h.store.IAM().UserPolicies(c.Request().Context(), actor(c))
	return respond(c, ps, err)
}

func (h *Handler) iamActions(c echo.Context) error {
	return respond(c, h.store.IAM().Actions(c.Request().Context(), actor(c)), nil)
}
