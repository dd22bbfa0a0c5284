package api

import (
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

func (h *Handler) listPolicies(c echo.Context) error {
	f, err := iamFilter(c, "name", "")
	if err != nil {
		return err
	}
	ps, err := h.store.IAM().ListPolicies(c.Request().Context(), actor(c), f)
	return respond(c, ps, err)
}

func (h *Handler) createPolicy(c echo.Context) error {
	var in iam.PolicyInput
	if err := bind(c, &in); err != nil {
		return err
	}
	p, err := h.store.IAM().CreatePolicy(c.Request().Context(), actor(c), in)
	return respond(c, p, err)
}

func (h *Handler) isPolicyKeyUsed(c echo.Context) error {
	used, err := h.store.IAM().IsPolicyKeyUsed(c.Request().Context(), actor(c), query(c, "key"))
	return respond(c, used, err)
}

func (h *Handler) clonePolicy(c echo.Context) error {
	var in iam.PolicyInput
	if err := bind(c, &in); err != nil {
		return err
	}
	p, err := h.store.IAM().ClonePolicy(c.Request().Context(), actor(c), c.Param("key"), in)
	return respond(c, p, err)
}

func (h *Handler) getPolicy(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	p, err := h.store.IAM().GetPolicy(c.Request().Context(), actor(c), ids.Policy)
	return respond(c, p, err)
}

func (h *Handler) updatePolicySettings(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	var in iam.PolicySettingsInput
	if err := bind(c, &in); err != nil {
		return err
	}
	p, err := h.store.IAM().UpdatePolicySettings(c.Request().Context(), actor(c), ids.Policy, in)
	return respond(c, p, err)
}

func (h *Handler) updatePolicyStatements(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	var statements []access.Statement
	if err := bind(c, &statements); err != nil {
		return err
	}
	p, err := h.store.IAM().UpdatePolicyStatements(c.Request().Context(), actor(c), ids.Policy, statements)
	return respond(c, p, err)
}

func (h *Handler) deletePolicy(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	return respond(c, true, h.store.IAM().DeletePolicy(c.Request().Context(), actor(c), ids.Policy))
}

func (h *Handler) listPolicyMembers(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	f, err := iamFilter(c, "searchText", "getAllMembers")
	if err != nil {
		return err
	}
	ms, err := h.store.IAM().ListPolicyMembers(c.Request().Context(), actor(c), ids.Policy, f)
	return respond(c, ms, err)
}

func (h *Handler) listPolicyGroups(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	f, err := iamFilter(c, "name", "getAllGroups")
	if err != nil {
		return err
	}
	gs, err := h.store.IAM().ListPolicyGroups(c.Request().Context(), actor(c), ids.Policy, f)
	return respond(c, gs, err)
}

func (h *Handler) userPolicies(c echo.Context) error {
	ps, err := h.store.IAM().UserPolicies(c.Request().Context(), actor(c))
	return respond(c, ps, err)
}

func (h *Handler) iamActions(c echo.Context) error {
	return respond(c, h.store.IAM().Actions(c.Request().Context(), actor(c)), nil)
}
