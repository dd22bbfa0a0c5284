package iam

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Policy is a named set of statements granted to members and groups.
type Policy struct {
	ID          uuid.UUID          `json:"id"`
	Name        string             `json:"name"`
	Key         string             `json:"key"`
	Type        string             `json:"type"`
	Description string             `json:"description"`
	Statements  []access.Statement `json:"statements"`
	UpdatedAt   time.Time          `json:"updatedAt"`
}

// PolicyInput creates a policy or a clone of one; a clone's key is its own.
type PolicyInput struct {
	Name        string `json:"name"`
	Key         string `json:"key"`
	Description string `json:"description"`
}

func (in PolicyInput) check(v *core.Validator) {
	v.Required("name", in.Name, core.MaxNameLen)
	v.Key("key", in.Key)
	v.Text("description", in.Description, core.MaxDescriptionLen)
}

// PolicySettingsInput renames and describes a policy.
type PolicySettingsInput struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// PolicyMember is a member in a policy's member page.
type PolicyMember struct {
	ID             uuid.UUID `json:"id"`
	Name           string    `json:"name"`
	Email          string    `json:"email"`
	IsPolicyMember bool      `json:"isPolicyMember"`
}

// PolicyGroup is a group in a policy's group page.
type PolicyGroup struct {
	ID            uuid.UUID `json:"id"`
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	IsPolicyGroup bool      `json:"isPolicyGroup"`
}

// maxStatementIDLen bounds the id a client gives a statement.
const maxStatementIDLen = 128

func policy(r db.Policy) (Policy, error) {
	p := Policy{ID: r.ID, Name: r.Name, Key: r.Key, Type: r.Type, Description: r.Description, UpdatedAt: r.UpdatedAt.UTC()}
	if err := json.Unmarshal(r.Statements, &p.Statements); err != nil {
		return Policy{}, err
	}
	if p.Statements == nil {
		p.Statements = []access.Statement{}
	}
	return p, nil
}

// policyOf loads one of the organization's policies or a built-in one.
func (s *IAM) policyOf(ctx context.Context, a *core.Actor, id uuid.UUID) (db.Policy, error) {
	orgID, err := a.Org()
	if err != nil {
		return db.Policy{}, err
	}
	row, err := s.core.Q.GetPolicy(ctx, db.GetPolicyParams{ID: id, OrganizationID: orgID})
	return row, core.Translate(err)
}

// ListPolicies pages the built-in policies and the organization's, built-ins
// first, then by name; Search is part of the name.
func (s *IAM) ListPolicies(ctx context.Context, a *core.Actor, f IAMFilter) (core.Paged[Policy], error) {
	return listIAM(a, f, "name", nil, func(orgID uuid.UUID, name string, f IAMFilter) (core.Paged[Policy], error) {
		rows, err := s.core.Q.ListPolicies(ctx, db.ListPoliciesParams{OrganizationID: orgID, Name: name,
			PageSize: f.Page.Limit(), PageOffset: f.Page.Offset()})
		return core.PageOfChecked(rows, err, policy, func() (int64, error) {
			return s.core.Q.CountPolicies(ctx, db.CountPoliciesParams{OrganizationID: orgID, Name: name})
		})
	})
}

// GetPolicy returns one of the organization's policies or a built-in one.
func (s *IAM) GetPolicy(ctx context.Context, a *core.Actor, id uuid.UUID) (Policy, error) {
	row, err := s.policyOf(ctx, a, id)
	if err != nil {
		return Policy{}, err
	}
	if err := a.RequireIAM(); err != nil {
		return Policy{}, err
	}
	return policy(row)
}

// IsPolicyKeyUsed tells whether a policy key is taken in the organization,
// case-insensitively, built-in keys included.
func (s *IAM) IsPolicyKeyUsed(ctx context.Context, a *core.Actor, key string) (bool, error) {
	var v core.Validator
	v.Required("key", key, core.MaxKeyLen)
	orgID, err := a.IAMOrg(&v)
	if err != nil {
		return false, err
	}
	used, err := s.core.Q.IsPolicyKeyUsed(ctx, db.IsPolicyKeyUsedParams{Key: key, OrganizationID: orgID})
	return used, core.Translate(err)
}

// CreatePolicy creates a CustomerManaged policy without statements.
func (s *IAM) CreatePolicy(ctx context.Context, a *core.Actor, in PolicyInput) (Policy, error) {
	var v core.Validator
	in.check(&v)
	orgID, err := a.IAMOrg(&v)
	if err != nil {
		return Policy{}, err
	}
	return s.insertPolicy(ctx, a, orgID, in, json.RawMessage(`[]`))
}

// ClonePolicy creates a CustomerManaged policy with the statements, ids
// included, of the organization's or the built-in policy whose key is
// exactly key. Members and groups of the original are not carried over.
func (s *IAM) ClonePolicy(ctx context.Context, a *core.Actor, key string, in PolicyInput) (Policy, error) {
	orgID, err := a.Org()
	if err != nil {
		return Policy{}, err
	}
	source, err := s.core.Q.GetPolicyByKey(ctx, db.GetPolicyByKeyParams{Key: key, OrganizationID: orgID})
	if err != nil {
		return Policy{}, core.Translate(err)
	}
	var v core.Validator
	in.check(&v)
	if _, err := a.IAMOrg(&v); err != nil {
		return Policy{}, err
	}
	return s.insertPolicy(ctx, a, orgID, in, source.Statements)
}

// insertPolicy creates an organization's policy. Its key must differ from
// the built-in keys too, so a key names one policy when cloning.
func (s *IAM) insertPolicy(ctx context.Context, a *core.Actor, orgID uuid.UUID, in PolicyInput, statements json.RawMessage) (Policy, error) {
	var out Policy
	err := s.core.InTx(ctx, func(q *db.Queries) error {
		used, err := q.IsPolicyKeyUsed(ctx, db.IsPolicyKeyUsedParams{Key: in.Key, OrganizationID: orgID})
		if err != nil {
			return err
		}
		if used {
			return core.ErrKeyUsed
		}
		row, err := q.CreatePolicy(ctx, db.CreatePolicyParams{ID: uuid.New(), OrganizationID: &orgID,
			Name: strings.TrimSpace(in.Name), Key: in.Key, Description: in.Description,
			Type: PolicyCustomerManaged, Statements: statements})
		if err != nil {
			return err
		}
		if out, err = policy(row); err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Policy", RefID: row.ID.String(), Keyword: row.Key,
			Operation: core.OpCreate, Current: out})
	})
	return out, err
}

// editablePolicy loads a policy for a change: the organization's own, not a built-in.
func (s *IAM) editablePolicy(ctx context.Context, a *core.Actor, id uuid.UUID, v *core.Validator) (Policy, error) {
	row, err := s.policyOf(ctx, a, id)
	if err != nil {
		return Policy{}, err
	}
	if _, err := a.IAMOrg(v); err != nil {
		return Policy{}, err
	}
	if row.Type == PolicySysManaged {
		return Policy{}, core.ErrSysManagedPolicy
	}
	return policy(row)
}

// UpdatePolicySettings renames and describes one of the organization's policies.
func (s *IAM) UpdatePolicySettings(ctx context.Context, a *core.Actor, id uuid.UUID, in PolicySettingsInput) (Policy, error) {
	var v core.Validator
	v.Required("name", in.Name, core.MaxNameLen)
	v.Text("description", in.Description, core.MaxDescriptionLen)
	before, err := s.editablePolicy(ctx, a, id, &v)
	if err != nil {
		return Policy{}, err
	}
	var out Policy
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		row, err := q.UpdatePolicySettings(ctx, db.UpdatePolicySettingsParams{ID: id, OrganizationID: a.OrgID,
			Name: strings.TrimSpace(in.Name), Description: in.Description})
		if err != nil {
			return err
		}
		if out, err = policy(row); err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Policy", RefID: id.String(), Keyword: row.Key,
			Operation: core.OpUpdate, Previous: before, Current: out})
	})
	return out, err
}

// UpdatePolicyStatements replaces the statements of one of the
// organization's policies. A statement without an id gets one.
func (s *IAM) UpdatePolicyStatements(ctx context.Context, a *core.Actor, id uuid.UUID, statements []access.Statement) (Policy, error) {
	var v core.Validator
	switch {
	case statements == nil:
		v.Add("statements", "required")
	case !access.ValidStatements(statements):
		v.Add("statements", "invalid")
	default:
		for i := range statements {
			if len(statements[i].ID) > maxStatementIDLen {
				v.Add("statements", "invalid")
				break
			}
			if statements[i].ID == "" {
				statements[i].ID = uuid.NewString()
			}
		}
	}
	before, err := s.editablePolicy(ctx, a, id, &v)
	if err != nil {
		return Policy{}, err
	}
	raw, err := json.Marshal(statements)
	if err != nil {
		return Policy{}, err
	}
	var out Policy
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		row, err := q.UpdatePolicyStatements(ctx, db.UpdatePolicyStatementsParams{ID: id, OrganizationID: a.OrgID, Statements: raw})
		if err != nil {
			return err
		}
		if out, err = policy(row); err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Policy", RefID: id.String(), Keyword: row.Key,
			Operation: core.OpUpdate, Previous: before, Current: out})
	})
	return out, err
}

// DeletePolicy removes one of the organization's policies with its
// attachments, and drops it from the default permissions of new members.
func (s *IAM) DeletePolicy(ctx context.Context, a *core.Actor, id uuid.UUID) error {
	before, err := s.editablePolicy(ctx, a, id, &core.Validator{})
	if err != nil {
		return err
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		// Only the built-in Owner policy makes owners, and it cannot be
		// deleted; the guard keeps that true should the rule ever widen.
		err := keepOwner(ctx, q, a.OrgID, func() error {
			if n, err := q.DeletePolicy(ctx, db.DeletePolicyParams{ID: id, OrganizationID: a.OrgID}); err != nil || n == 0 {
				return core.OrNotFound(err)
			}
			return q.RemoveDefaultPolicy(ctx, db.RemoveDefaultPolicyParams{ID: a.OrgID, PolicyID: id})
		})
		if err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Policy", RefID: id.String(), Keyword: before.Key,
			Operation: core.OpRemove, Previous: before})
	})
}

// ListPolicyMembers pages the organization's members who hold a policy
// directly (not through a group), or with All every member, each marked;
// Search is part of the email.
func (s *IAM) ListPolicyMembers(ctx context.Context, a *core.Actor, policyID uuid.UUID, f IAMFilter) (core.Paged[PolicyMember], error) {
	var v core.Validator
	f.check(&v, "searchText")
	orgID, err := a.IAMOrg(&v)
	if err != nil {
		// An unknown policy is not found, whatever else is wrong.
		if _, missing := s.policyOf(ctx, a, policyID); missing != nil {
			return core.Paged[PolicyMember]{}, missing
		}
		return core.Paged[PolicyMember]{}, err
	}
	limit, offset := f.Page.Limit(), f.Page.Offset()
	if f.Search != "" {
		return s.searchPolicyMembers(ctx, a, orgID, policyID, f.All, core.EscapeLike(f.Search), limit, offset)
	}
	if _, err := s.policyOf(ctx, a, policyID); err != nil {
		return core.Paged[PolicyMember]{}, err
	}
	switch {
	case f.All:
		rows, err := s.core.Q.ListAllMembersForPolicy(ctx, db.ListAllMembersForPolicyParams{OrganizationID: orgID, PolicyID: policyID,
			PageSize: limit, PageOffset: offset})
		return core.PageOf(rows, err, func(r db.ListAllMembersForPolicyRow) PolicyMember { return PolicyMember(r) }, func() (int64, error) {
			return s.core.Q.CountMembers(ctx, orgID)
		})
	default:
		rows, err := s.core.Q.ListPolicyMembers(ctx, db.ListPolicyMembersParams{OrganizationID: orgID, PolicyID: policyID,
			PageSize: limit, PageOffset: offset})
		return core.PageOf(rows, err, func(r db.ListPolicyMembersRow) PolicyMember {
			return PolicyMember{ID: r.ID, Name: r.Name, Email: r.Email, IsPolicyMember: true}
		}, func() (int64, error) {
			return s.core.Q.CountPolicyMembers(ctx, db.CountPolicyMembersParams{OrganizationID: orgID, PolicyID: policyID})
		})
	}
}

// maxEmailMatches is how many users a search by part of an email takes in
// its first step; a text more of them share is searched in one statement.
const maxEmailMatches = 1000

// searchPolicyMembers pages the members whose email contains search. A
// statement with a pattern is planned on every call (searchPlans), and
// planning joins costs the database more than running them: so the users
// matching are found first, on one table, and the policy's members among
// them paged by a statement that keeps its plan (finding the policy, the page
// and the count at once). A text too many users share is searched by
// SearchPolicyMembers alone. When a page finds nobody, whether the policy
// exists and, past the first page, how many there are is asked apart.
func (s *IAM) searchPolicyMembers(ctx context.Context, a *core.Actor, orgID, policyID uuid.UUID, all bool, search string, limit, offset int32) (core.Paged[PolicyMember], error) {
	count := func() (int64, error) {
		if _, err := s.policyOf(ctx, a, policyID); err != nil || offset == 0 {
			return 0, err
		}
		return s.core.Q.CountSearchPolicyMembers(ctx, db.CountSearchPolicyMembersParams{OrganizationID: orgID,
			PolicyID: policyID, Search: search, GetAll: all})
	}
	ids, err := s.core.Q.UsersByEmailPart(ctx, db.UsersByEmailPartParams{Search: search, Max: maxEmailMatches + 1})
	if err != nil {
		return core.Paged[PolicyMember]{}, core.Translate(err)
	}
	if len(ids) <= maxEmailMatches {
		rows, err := s.core.Q.PolicyMembersAmong(ctx, db.PolicyMembersAmongParams{OrganizationID: orgID, PolicyID: policyID,
			Ids: ids, GetAll: all, PageSize: limit, PageOffset: offset})
		return core.PageOfCounted(rows, err, func(r db.PolicyMembersAmongRow) (PolicyMember, int64) {
			return policyMemberOf(db.SearchPolicyMembersRow(r))
		}, count)
	}
	rows, err := s.core.Q.SearchPolicyMembers(ctx, db.SearchPolicyMembersParams{OrganizationID: orgID, PolicyID: policyID,
		Search: search, GetAll: all, PageSize: limit, PageOffset: offset})
	return core.PageOfCounted(rows, err, policyMemberOf, count)
}

// policyMemberOf is a row of a search of a policy's members, with the count
// of all it matches.
func policyMemberOf(r db.SearchPolicyMembersRow) (PolicyMember, int64) {
	return PolicyMember{ID: r.ID, Name: r.Name, Email: r.Email, IsPolicyMember: r.IsPolicyMember}, r.Total
}

// ListPolicyGroups pages the organization's groups a policy is attached to,
// or with All every group, each marked; Search is part of the group name.
func (s *IAM) ListPolicyGroups(ctx context.Context, a *core.Actor, policyID uuid.UUID, f IAMFilter) (core.Paged[PolicyGroup], error) {
	return listIAM(a, f, "name", func() error { _, err := s.policyOf(ctx, a, policyID); return err },
		func(orgID uuid.UUID, name string, f IAMFilter) (core.Paged[PolicyGroup], error) {
			limit, offset := f.Page.Limit(), f.Page.Offset()
			switch {
			case f.Search != "":
				rows, err := s.core.Q.SearchPolicyGroups(ctx, db.SearchPolicyGroupsParams{OrganizationID: orgID, PolicyID: policyID,
					Name: name, GetAll: f.All, PageSize: limit, PageOffset: offset})
				return core.PageOf(rows, err, func(r db.SearchPolicyGroupsRow) PolicyGroup { return PolicyGroup(r) }, func() (int64, error) {
					return s.core.Q.CountSearchPolicyGroups(ctx, db.CountSearchPolicyGroupsParams{OrganizationID: orgID,
						PolicyID: policyID, Name: name, GetAll: f.All})
				})
			case f.All:
				rows, err := s.core.Q.ListAllGroupsForPolicy(ctx, db.ListAllGroupsForPolicyParams{OrganizationID: orgID, PolicyID: policyID,
					PageSize: limit, PageOffset: offset})
				return core.PageOf(rows, err, func(r db.ListAllGroupsForPolicyRow) PolicyGroup { return PolicyGroup(r) }, func() (int64, error) {
					return s.core.Q.CountGroups(ctx, orgID)
				})
			default:
				rows, err := s.core.Q.ListPolicyGroups(ctx, db.ListPolicyGroupsParams{OrganizationID: orgID, PolicyID: policyID,
					PageSize: limit, PageOffset: offset})
				return core.PageOf(rows, err, func(r db.ListPolicyGroupsRow) PolicyGroup {
					return PolicyGroup{ID: r.ID, Name: r.Name, Description: r.Description, IsPolicyGroup: true}
				}, func() (int64, error) {
					return s.core.Q.CountPolicyGroups(ctx, db.CountPolicyGroupsParams{OrganizationID: orgID, PolicyID: policyID})
				})
			}
		})
}
