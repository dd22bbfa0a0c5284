package iam

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Policy types: the built-in policies are SysManaged (shared by every
// organization and never editable); every policy an organization makes is
// CustomerManaged.
const (
	PolicySysManaged      = "SysManaged"
	PolicyCustomerManaged = "CustomerManaged"
)

// maxSearchLen bounds the text of a search by part of a name or an email.
const maxSearchLen = 256

// IAMFilter selects a page of an IAM list: Search is part of a name or an
// email, matched case-insensitively; All lists every candidate, each marked,
// instead of only those attached.
type IAMFilter struct {
	Search string
	All    bool
	Page   core.Page
}

// check adds the filter's problems to v; param is the search's query name.
func (f *IAMFilter) check(v *core.Validator, param string) {
	f.Page.Check(v)
	f.Search = strings.TrimSpace(f.Search)
	v.Text(param, f.Search, maxSearchLen)
}

// listIAM is the frame of every IAM list: the parent it lists under first,
// when there is one (an unknown parent is not found, whatever else is
// wrong), then the filter (param names its search in the request) and the
// caller's organization and CanManageIAM. page reads the page and its
// count, given the organization and the search as a LIKE pattern.
func listIAM[T any](a *core.Actor, f IAMFilter, param string, parent func() error,
	page func(orgID uuid.UUID, pattern string, f IAMFilter) (core.Paged[T], error)) (core.Paged[T], error) {
	if parent != nil {
		if err := parent(); err != nil {
			return core.Paged[T]{}, err
		}
	}
	var v core.Validator
	f.check(&v, param)
	orgID, err := a.IAMOrg(&v)
	if err != nil {
		return core.Paged[T]{}, err
	}
	return page(orgID, core.EscapeLike(f.Search), f)
}

// keepOwner runs change with the organization locked against other such
// changes, and fails it (so the transaction rolls back) when it leaves an
// organization that had a member holding the built-in Owner policy, directly
// or through a group, without one.
func keepOwner(ctx context.Context, q *db.Queries, orgID uuid.UUID, change func() error) error {
	if err := q.LockOrganization(ctx, orgID); err != nil {
		return err
	}
	hasOwner := func() (bool, error) {
		return q.OrganizationHasOwner(ctx, db.OrganizationHasOwnerParams{OrganizationID: orgID, OwnerPolicyID: core.OwnerPolicyID})
	}
	before, err := hasOwner()
	if err != nil {
		return err
	}
	if err := change(); err != nil {
		return err
	}
	after, err := hasOwner()
	if err != nil {
		return err
	}
	if before && !after {
		return core.ErrLastOwner
	}
	return nil
}

// Actions returns every action the server checks, by resource type, for
// editors of statements.
func (s *IAM) Actions(ctx context.Context, a *core.Actor) []access.ActionGroup {
	return access.Catalogue
}

// distinct returns ids without repeats, in their first order, never nil.
func distinct(ids []uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(ids))
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// memberAccess is a member's access as the audit log records it. Group
// membership changes are recorded here, on the member, because a member
// belongs to few groups while a group may have thousands of members.
type memberAccess struct {
	ID        uuid.UUID   `json:"id"`
	Email     string      `json:"email"`
	Name      string      `json:"name"`
	PolicyIDs []uuid.UUID `json:"policyIds"`
	GroupIDs  []uuid.UUID `json:"groupIds"`
}

func (m memberAccess) equal(o memberAccess) bool {
	return slices.Equal(m.PolicyIDs, o.PolicyIDs) && slices.Equal(m.GroupIDs, o.GroupIDs)
}

// accessOf reads a member's direct policies and groups.
func accessOf(ctx context.Context, q *db.Queries, orgID uuid.UUID, m memberRow) (memberAccess, error) {
	out := memberAccess{ID: m.ID, Email: m.Email, Name: m.Name}
	var err error
	if out.PolicyIDs, err = q.ListMemberPolicyIDs(ctx, db.ListMemberPolicyIDsParams{OrganizationID: orgID, UserID: m.ID}); err != nil {
		return memberAccess{}, err
	}
	out.GroupIDs, err = q.ListMemberGroupIDs(ctx, db.ListMemberGroupIDsParams{OrganizationID: orgID, UserID: m.ID})
	return out, err
}

// changeMemberAccess applies apply to a member's access in one transaction
// and records it, unless it changed nothing (adding and removing are
// idempotent). guard refuses a change that removes the last owner.
func (s *IAM) changeMemberAccess(ctx context.Context, a *core.Actor, m memberRow, guard bool, apply func(q *db.Queries) error) error {
	return s.core.InTx(ctx, func(q *db.Queries) error {
		var before, after memberAccess
		run := func() error {
			var err error
			if before, err = accessOf(ctx, q, a.OrgID, m); err != nil {
				return err
			}
			if err := apply(q); err != nil {
				return err
			}
			after, err = accessOf(ctx, q, a.OrgID, m)
			return err
		}
		var err error
		if guard {
			err = keepOwner(ctx, q, a.OrgID, run)
		} else {
			err = run()
		}
		if err != nil || before.equal(after) {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Member", RefID: m.ID.String(), Keyword: m.Email,
			Operation: core.OpUpdate, Previous: before, Current: after})
	})
}
