package iam

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Group is a set of members that share the policies attached to it.
type Group struct {
	ID          uuid.UUID `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// GroupInput creates or updates a group.
type GroupInput struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

func (in GroupInput) check(v *core.Validator) {
	v.Required("name", in.Name, core.MaxNameLen)
	v.Text("description", in.Description, core.MaxDescriptionLen)
}

// GroupMember is a member in a group's member page.
type GroupMember struct {
	ID            uuid.UUID `json:"id"`
	Name          string    `json:"name"`
	Email         string    `json:"email"`
	IsGroupMember bool      `json:"isGroupMember"`
}

// GroupPolicy is a policy in a group's policy page.
type GroupPolicy struct {
	ID            uuid.UUID `json:"id"`
	Name          string    `json:"name"`
	Type          string    `json:"type"`
	Description   string    `json:"description"`
	IsGroupPolicy bool      `json:"isGroupPolicy"`
}

// groupAccess is a group as the audit log records it, with its policies.
type groupAccess struct {
	Group
	PolicyIDs []uuid.UUID `json:"policyIds"`
}

func group(r db.Group) Group {
	return Group{ID: r.ID, Name: r.Name, Description: r.Description, UpdatedAt: r.UpdatedAt.UTC()}
}

func groupAccessOf(ctx context.Context, q *db.Queries, g Group) (groupAccess, error) {
	ids, err := q.ListGroupPolicyIDs(ctx, g.ID)
	return groupAccess{Group: g, PolicyIDs: ids}, err
}

// groupOf loads one of the organization's groups.
func (s *IAM) groupOf(ctx context.Context, a *core.Actor, id uuid.UUID) (Group, error) {
	orgID, err := a.Org()
	if err != nil {
		return Group{}, err
	}
	row, err := s.core.Q.GetGroup(ctx, db.GetGroupParams{OrganizationID: orgID, ID: id})
	return group(row), core.Translate(err)
}

// ListGroups pages the organization's groups by name; Search is part of the name.
func (s *IAM) ListGroups(ctx context.Context, a *core.Actor, f IAMFilter) (core.Paged[Group], error) {
	return listIAM(a, f, "name", nil, func(orgID uuid.UUID, name string, f IAMFilter) (core.Paged[Group], error) {
		if f.Search == "" {
			rows, err := s.core.Q.ListGroups(ctx, db.ListGroupsParams{OrganizationID: orgID, PageSize: f.Page.Limit(), PageOffset: f.Page.Offset()})
			return core.PageOf(rows, err, group, func() (int64, error) { return s.core.Q.CountGroups(ctx, orgID) })
		}
		rows, err := s.core.Q.SearchGroups(ctx, db.SearchGroupsParams{OrganizationID: orgID, Name: name,
			PageSize: f.Page.Limit(), PageOffset: f.Page.Offset()})
		return core.PageOf(rows, err, group, func() (int64, error) {
			return s.core.Q.CountSearchGroups(ctx, db.CountSearchGroupsParams{OrganizationID: orgID, Name: name})
		})
	})
}

// GetGroup returns one of the organization's groups.
func (s *IAM) GetGroup(ctx context.Context, a *core.Actor, id uuid.UUID) (Group, error) {
	g, err := s.groupOf(ctx, a, id)
	if err != nil {
		return Group{}, err
	}
	if err := a.RequireIAM(); err != nil {
		return Group{}, err
	}
	return g, nil
}

// CreateGroup creates a group; names are unique in the organization, case-insensitively.
func (s *IAM) CreateGroup(ctx context.Context, a *core.Actor, in GroupInput) (Group, error) {
	var v core.Validator
	in.check(&v)
	orgID, err := a.IAMOrg(&v)
	if err != nil {
		return Group{}, err
	}
	var out Group
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		row, err := q.CreateGroup(ctx, db.CreateGroupParams{OrganizationID: orgID, Name: strings.TrimSpace(in.Name), Description: in.Description})
		if err != nil {
			return err
		}
		out = group(row)
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Group", RefID: row.ID.String(), Keyword: row.Name,
			Operation: core.OpCreate, Current: groupAccess{Group: out, PolicyIDs: []uuid.UUID{}}})
	})
	return out, err
}

// UpdateGroup renames and describes a group.
func (s *IAM) UpdateGroup(ctx context.Context, a *core.Actor, id uuid.UUID, in GroupInput) (Group, error) {
	before, err := s.groupOf(ctx, a, id)
	if err != nil {
		return Group{}, err
	}
	var v core.Validator
	in.check(&v)
	if _, err := a.IAMOrg(&v); err != nil {
		return Group{}, err
	}
	var out Group
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		row, err := q.UpdateGroup(ctx, db.UpdateGroupParams{OrganizationID: a.OrgID, ID: id,
			Name: strings.TrimSpace(in.Name), Description: in.Description})
		if err != nil {
			return err
		}
		out = group(row)
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Group", RefID: id.String(), Keyword: row.Name,
			Operation: core.OpUpdate, Previous: before, Current: out})
	})
	return out, err
}

// DeleteGroup removes a group with its memberships and policies, unless that
// removes the organization's last owner, and drops it from the default
// permissions of new members.
func (s *IAM) DeleteGroup(ctx context.Context, a *core.Actor, id uuid.UUID) error {
	g, err := s.groupOf(ctx, a, id)
	if err != nil {
		return err
	}
	if err := a.RequireIAM(); err != nil {
		return err
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		before, err := groupAccessOf(ctx, q, g)
		if err != nil {
			return err
		}
		err = keepOwner(ctx, q, a.OrgID, func() error {
			if n, err := q.DeleteGroup(ctx, db.DeleteGroupParams{OrganizationID: a.OrgID, ID: id}); err != nil || n == 0 {
				return core.OrNotFound(err)
			}
			return q.RemoveDefaultGroup(ctx, db.RemoveDefaultGroupParams{ID: a.OrgID, GroupID: id})
		})
		if err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Group", RefID: id.String(), Keyword: g.Name,
			Operation: core.OpRemove, Previous: before})
	})
}

// ListGroupMembers pages a group's members, or with All every member of the
// organization, each marked; Search is part of the email or name.
func (s *IAM) ListGroupMembers(ctx context.Context, a *core.Actor, groupID uuid.UUID, f IAMFilter) (core.Paged[GroupMember], error) {
	return listIAM(a, f, "searchText", func() error { _, err := s.groupOf(ctx, a, groupID); return err },
		func(orgID uuid.UUID, search string, f IAMFilter) (core.Paged[GroupMember], error) {
			limit, offset := f.Page.Limit(), f.Page.Offset()
			switch {
			case f.Search != "":
				rows, err := s.core.Q.SearchGroupMembers(ctx, db.SearchGroupMembersParams{OrganizationID: orgID, GroupID: groupID,
					Search: search, GetAll: f.All, PageSize: limit, PageOffset: offset})
				return core.PageOf(rows, err, func(r db.SearchGroupMembersRow) GroupMember { return GroupMember(r) }, func() (int64, error) {
					return s.core.Q.CountSearchGroupMembers(ctx, db.CountSearchGroupMembersParams{OrganizationID: orgID,
						GroupID: groupID, Search: search, GetAll: f.All})
				})
			case f.All:
				rows, err := s.core.Q.ListAllMembersForGroup(ctx, db.ListAllMembersForGroupParams{OrganizationID: orgID, GroupID: groupID,
					PageSize: limit, PageOffset: offset})
				return core.PageOf(rows, err, func(r db.ListAllMembersForGroupRow) GroupMember { return GroupMember(r) }, func() (int64, error) {
					return s.core.Q.CountMembers(ctx, orgID)
				})
			default:
				rows, err := s.core.Q.ListGroupMembers(ctx, db.ListGroupMembersParams{OrganizationID: orgID, GroupID: groupID,
					PageSize: limit, PageOffset: offset})
				return core.PageOf(rows, err, func(r db.ListGroupMembersRow) GroupMember {
					return GroupMember{ID: r.ID, Name: r.Name, Email: r.Email, IsGroupMember: true}
				}, func() (int64, error) {
					return s.core.Q.CountGroupMembers(ctx, groupID)
				})
			}
		})
}

// AddGroupMember puts a member of the organization in a group; adding twice
// changes nothing.
func (s *IAM) AddGroupMember(ctx context.Context, a *core.Actor, groupID, memberID uuid.UUID) error {
	g, m, err := s.groupAndMember(ctx, a, groupID, memberID)
	if err != nil {
		return err
	}
	return s.changeMemberAccess(ctx, a, m, false, func(q *db.Queries) error {
		return q.AddGroupMember(ctx, db.AddGroupMemberParams{GroupID: g.ID, OrganizationID: a.OrgID, UserID: m.ID})
	})
}

// RemoveGroupMember takes a member out of a group, unless that removes the
// organization's last owner; removing twice changes nothing.
func (s *IAM) RemoveGroupMember(ctx context.Context, a *core.Actor, groupID, memberID uuid.UUID) error {
	g, m, err := s.groupAndMember(ctx, a, groupID, memberID)
	if err != nil {
		return err
	}
	return s.changeMemberAccess(ctx, a, m, true, func(q *db.Queries) error {
		return q.RemoveGroupMember(ctx, db.RemoveGroupMemberParams{GroupID: g.ID, UserID: m.ID})
	})
}

func (s *IAM) groupAndMember(ctx context.Context, a *core.Actor, groupID, memberID uuid.UUID) (Group, memberRow, error) {
	g, err := s.groupOf(ctx, a, groupID)
	if err != nil {
		return Group{}, memberRow{}, err
	}
	m, err := s.memberOf(ctx, a, memberID)
	if err != nil {
		return Group{}, memberRow{}, err
	}
	return g, m, a.RequireIAM()
}

// ListGroupPolicies pages the policies attached to a group, or with All every
// policy usable in the organization, each marked; Search is part of the name.
func (s *IAM) ListGroupPolicies(ctx context.Context, a *core.Actor, groupID uuid.UUID, f IAMFilter) (core.Paged[GroupPolicy], error) {
	return listIAM(a, f, "name", func() error { _, err := s.groupOf(ctx, a, groupID); return err },
		func(orgID uuid.UUID, name string, f IAMFilter) (core.Paged[GroupPolicy], error) {
			rows, err := s.core.Q.ListGroupPolicies(ctx, db.ListGroupPoliciesParams{OrganizationID: orgID, GroupID: groupID,
				Name: name, GetAll: f.All, PageSize: f.Page.Limit(), PageOffset: f.Page.Offset()})
			return core.PageOf(rows, err, func(r db.ListGroupPoliciesRow) GroupPolicy { return GroupPolicy(r) }, func() (int64, error) {
				return s.core.Q.CountGroupPolicies(ctx, db.CountGroupPoliciesParams{OrganizationID: orgID, GroupID: groupID,
					Name: name, GetAll: f.All})
			})
		})
}

// AddGroupPolicy attaches a policy to a group; attaching twice changes nothing.
func (s *IAM) AddGroupPolicy(ctx context.Context, a *core.Actor, groupID, policyID uuid.UUID) error {
	return s.changeGroupPolicies(ctx, a, groupID, policyID, false, func(q *db.Queries) error {
		return q.AddGroupPolicy(ctx, db.AddGroupPolicyParams{GroupID: groupID, PolicyID: policyID})
	})
}

// RemoveGroupPolicy detaches a policy from a group, unless that removes the
// organization's last owner; detaching twice changes nothing.
func (s *IAM) RemoveGroupPolicy(ctx context.Context, a *core.Actor, groupID, policyID uuid.UUID) error {
	return s.changeGroupPolicies(ctx, a, groupID, policyID, true, func(q *db.Queries) error {
		return q.RemoveGroupPolicy(ctx, db.RemoveGroupPolicyParams{GroupID: groupID, PolicyID: policyID})
	})
}

// changeGroupPolicies applies a change to a group's policies in one
// transaction and records it unless it changed nothing.
func (s *IAM) changeGroupPolicies(ctx context.Context, a *core.Actor, groupID, policyID uuid.UUID, guard bool, apply func(q *db.Queries) error) error {
	g, err := s.groupOf(ctx, a, groupID)
	if err != nil {
		return err
	}
	if _, err := s.policyOf(ctx, a, policyID); err != nil {
		return err
	}
	if err := a.RequireIAM(); err != nil {
		return err
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		var before, after groupAccess
		run := func() error {
			var err error
			if before, err = groupAccessOf(ctx, q, g); err != nil {
				return err
			}
			if err := apply(q); err != nil {
				return err
			}
			after, err = groupAccessOf(ctx, q, g)
			return err
		}
		if guard {
			err = keepOwner(ctx, q, a.OrgID, run)
		} else {
			err = run()
		}
		if err != nil || slices.Equal(before.PolicyIDs, after.PolicyIDs) {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Group", RefID: g.ID.String(), Keyword: g.Name,
			Operation: core.OpUpdate, Previous: before, Current: after})
	})
}
