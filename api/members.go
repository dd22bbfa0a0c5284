package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

func (h *Handler) listMembers(c echo.Context) error {
	f, err := iamFilter(c, "searchText", "")
	if err != nil {
		return err
	}
	ms, err := h.store.IAM().ListMembers(c.Request().Context(), actor(c), f)
	return respond(c, ms, err)
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
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	f, err := iamFilter(c, "name", "getAllGroups")
	if err != nil {
		return err
	}
	gs, err := h.store.IAM().ListMemberGroups(c.Request().Context(), actor(c), ids.Member, f)
	return respond(c, gs, err)
}

func (h *Handler) listMemberDirectPolicies(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	f, err := iamFilter(c, "name", "getAllPolicies")
	if err != nil {
		return err
	}
	ps, err := h.store.IAM().ListMemberDirectPolicies(c.Request().Context(), actor(c), ids.Member, f)
	return respond(c, ps, err)
}

func (h *Handler) listMemberInheritedPolicies(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	f, err := iamFilter(c, "name", "")
	if err != nil {
		return err
	}
	ps, err := h.store.IAM().ListMemberInheritedPolicies(c.Request().Context(), actor(c), ids.Member, f)
	return respond(c, ps, err)
}

func (h *Handler) addMemberPolicy(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	if err := noBody(c); err != nil {
		return err
	}
	return respond(c, true, h.store.IAM().AddMemberPolicy(c.Request().Context(), actor(c), ids.Member, ids.Policy))
}

func (h *Handler) removeMemberPolicy(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	if err := noBody(c); err != nil {
		return err
	}
	return respond(c, true, h.store.IAM().RemoveMemberPolicy(c.Request().Context(), actor(c), ids.Member, ids.Policy))
}
