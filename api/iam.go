package api

// The IAM routes: policies, groups and members. Each handler decodes, calls
// the IAM seam of the store and encodes; the lists share one frame
// (answerIAMList) and the three kinds share one set of imports here.

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

func (h *Handler) listMembers(c echo.Context) error {
	return answerIAMList(c, "searchText", "", func(ctx context.Context, a *core.Actor, ids routeIDs, f iam.IAMFilter) (any, error) {
		return h.store.IAM().ListMembers(ctx, a, f)
	})
}

func (h *Handler) addMember(c echo.Context) error {
	var in iam.MemberInput
	if err := bind(c, &in); err != nil {
		return err
	}
	// FeatBit answers true (ApiResponse<bool>); the inviter reads the new
	// member, with the initial password, from GET /members/{id}.
	_, err := h.store.IAM().AddMember(c.Request().Context(), actor(c), in)
	return respond(c, true, err)
}

func (h *Handler) getMember(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.IAM().GetMember(ctx, a, ids.Member)
	})
}

func (h *Handler) removeMember(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return true, h.store.IAM().RemoveMember(ctx, a, ids.Member)
	})
}

func (h *Handler) removeFromWorkspace(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return true, h.store.IAM().RemoveFromWorkspace(ctx, a, ids.Member)
	})
}

func (h *Handler) listMemberPolicies(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.IAM().MemberPolicies(ctx, a, ids.Member)
	})
}

func (h *Handler) listMemberGroups(c echo.Context) error {
	return answerIAMList(c, "name", "getAllGroups", func(ctx context.Context, a *core.Actor, ids routeIDs, f iam.IAMFilter) (any, error) {
		return h.store.IAM().ListMemberGroups(ctx, a, ids.Member, f)
	})
}

func (h *Handler) listMemberDirectPolicies(c echo.Context) error {
	return answerIAMList(c, "name", "getAllPolicies", func(ctx context.Context, a *core.Actor, ids routeIDs, f iam.IAMFilter) (any, error) {
		return h.store.IAM().ListMemberDirectPolicies(ctx, a, ids.Member, f)
	})
}

func (h *Handler) listMemberInheritedPolicies(c echo.Context) error {
	return answerIAMList(c, "name", "", func(ctx context.Context, a *core.Actor, ids routeIDs, f iam.IAMFilter) (any, error) {
		return h.store.IAM().ListMemberInheritedPolicies(ctx, a, ids.Member, f)
	})
}

func (h *Handler) addMemberPolicy(c echo.Context) error {
	return answerNoBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs) error {
		return h.store.IAM().AddMemberPolicy(ctx, a, ids.Member, ids.Policy)
	})
}

func (h *Handler) removeMemberPolicy(c echo.Context) error {
	return answerNoBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs) error {
		return h.store.IAM().RemoveMemberPolicy(ctx, a, ids.Member, ids.Policy)
	})
}
