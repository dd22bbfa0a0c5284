package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

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
