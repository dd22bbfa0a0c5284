package iam

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Member is a user of the organization. InitialPassword is the generated
// first password, shown only to the member's inviter (see Store.member).
type Member struct {
	ID              uuid.UUID     `json:"id"`
	Email           string        `json:"email"`
	Name            string        `json:"name"`
	InvitorID       *uuid.UUID    `json:"invitorId"`
	InitialPassword *string       `json:"initialPassword"`
	Groups          []MemberGroup `json:"groups"`
	// AlreadyMember tells AddMember found the user a member already, and
	// changed nothing.
	AlreadyMember bool `json:"-"`
}

// MemberGroup is a group in a member's group list.
type MemberGroup struct {
	ID            uuid.UUID `json:"id"`
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	MemberID      uuid.UUID `json:"memberId"`
	IsGroupMember bool      `json:"isGroupMember"`
}

// MemberPolicy is a policy in a member's direct-policy page.
type MemberPolicy struct {
	ID             uuid.UUID `json:"id"`
	Name           string    `json:"name"`
	Type           string    `json:"type"`
	Description    string    `json:"description"`
	IsMemberPolicy bool      `json:"isMemberPolicy"`
}

// InheritedPolicy is a policy a member holds through a group (FeatBit's
// InheritedMemberPolicy, with the group's id besides its name).
type InheritedPolicy struct {
	ID          uuid.UUID `json:"id"`
	Name        string    `json:"name"`
	Type        string    `json:"type"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"createdAt"`
	GroupID     uuid.UUID `json:"groupId"`
	GroupName   string    `json:"groupName"`
}

func inheritedPolicy(r db.ListInheritedPoliciesRow) (InheritedPolicy, int64) {
	return InheritedPolicy{ID: r.ID, Name: r.Name, Type: r.Type, Description: r.Description, CreatedAt: r.CreatedAt.UTC(),
		GroupID: r.GroupID, GroupName: r.GroupName}, r.Total
}

// memberListCount is the size of a member's list whose page came back
// empty: 404 unless the user is a member of the organization (the lists
// find nothing for anyone else), else what count says; on the first page
// that is none, and count is not asked.
func (s *IAM) memberListCount(ctx context.Context, a *core.Actor, memberID uuid.UUID, f IAMFilter, count func() (int64, error)) func() (int64, error) {
	return func() (int64, error) {
		if _, err := s.memberOf(ctx, a, memberID); err != nil {
			return 0, err
		}
		if f.Page.Offset() == 0 {
			return 0, nil
		}
		return count()
	}
}

// MemberInput adds a user to the organization by email, with policies and
// groups; with neither, the organization's default permissions apply.
type MemberInput struct {
	Email     string      `json:"email"`
	PolicyIDs []uuid.UUID `json:"policyIds"`
	GroupIDs  []uuid.UUID `json:"groupIds"`
}

// initialPasswordLen is the length of a generated first password: 16
// characters of base32, 80 random bits.
const initialPasswordLen = 16

// maxEmailLen is the longest email address (RFC 5321).
const maxEmailLen = 254

// memberRow is a member as the member queries return it.
type memberRow db.GetMemberRow

// memberOf loads a member of the organization; other users are not found.
func (s *IAM) memberOf(ctx context.Context, a *core.Actor, id uuid.UUID) (memberRow, error) {
	orgID, err := a.Org()
	if err != nil {
		return memberRow{}, err
	}
	row, err := s.core.Q.GetMember(ctx, db.GetMemberParams{OrganizationID: orgID, UserID: id})
	return memberRow(row), core.Translate(err)
}

// member shapes a member for the caller. The initial password is shown only
// to the member's inviter, and only while the user belongs to this one
// organization: a user is global, so an inviter in another organization must
// not learn a password that also opens this one.
func (s *IAM) member(ctx context.Context, a *core.Actor, r memberRow, groups []MemberGroup) Member {
	m := Member{ID: r.ID, Email: r.Email, Name: r.Name, InvitorID: r.InvitorID, Groups: groups}
	if m.Groups == nil {
		m.Groups = []MemberGroup{}
	}
	if r.InitialPassword != nil && r.InvitorID != nil && *r.InvitorID == a.UserID && r.OrganizationCount == 1 {
		plain, err := s.core.ServerKeys.Open(*r.InitialPassword)
		if err != nil { // sealed under another server key: it cannot be shown, and nothing else depends on it
			s.core.Log.WarnContext(ctx, "initial password does not open", "user", r.ID, "err", err)
			return m
		}
		m.InitialPassword = &plain
	}
	return m
}

// members shapes member rows with their groups.
func (s *IAM) members(ctx context.Context, a *core.Actor, q *db.Queries, orgID uuid.UUID, rows []memberRow) ([]Member, error) {
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	groupRows, err := q.ListGroupsOfMembers(ctx, db.ListGroupsOfMembersParams{OrganizationID: orgID, UserIds: ids})
	if err != nil {
		return nil, core.Translate(err)
	}
	groups := map[uuid.UUID][]MemberGroup{}
	for _, g := range groupRows {
		groups[g.UserID] = append(groups[g.UserID], MemberGroup{ID: g.ID, Name: g.Name, Description: g.Description,
			MemberID: g.UserID, IsGroupMember: true})
	}
	out := make([]Member, len(rows))
	for i, r := range rows {
		out[i] = s.member(ctx, a, r, groups[r.ID])
	}
	return out, nil
}

// ListMembers pages the organization's members, newest first; Search is
// part of the email or name.
func (s *IAM) ListMembers(ctx context.Context, a *core.Actor, f IAMFilter) (core.Paged[Member], error) {
	return listIAM(a, f, "searchText", nil, func(orgID uuid.UUID, _ string, f IAMFilter) (core.Paged[Member], error) {
		return s.listMembers(ctx, a, orgID, f)
	})
}

// listMembers pages the members of an organization the caller may list.
func (s *IAM) listMembers(ctx context.Context, a *core.Actor, orgID uuid.UUID, f IAMFilter) (core.Paged[Member], error) {
	var rows []memberRow
	var total int64
	var err error
	if f.Search == "" {
		var found []db.ListMembersRow
		found, err = s.core.Q.ListMembers(ctx, db.ListMembersParams{OrganizationID: orgID, PageSize: f.Page.Limit(), PageOffset: f.Page.Offset()})
		for _, r := range found {
			rows = append(rows, memberRow(r))
		}
		if err == nil {
			total, err = s.core.Q.CountMembers(ctx, orgID)
		}
	} else {
		search := core.EscapeLike(f.Search)
		var found []db.SearchMembersRow
		found, err = s.core.Q.SearchMembers(ctx, db.SearchMembersParams{OrganizationID: orgID, Search: search,
			PageSize: f.Page.Limit(), PageOffset: f.Page.Offset()})
		for _, r := range found {
			rows = append(rows, memberRow(r))
		}
		if err == nil {
			total, err = s.core.Q.CountSearchMembers(ctx, db.CountSearchMembersParams{OrganizationID: orgID, Search: search})
		}
	}
	if err != nil {
		return core.Paged[Member]{}, core.Translate(err)
	}
	items, err := s.members(ctx, a, s.core.Q, orgID, rows)
	return core.Paged[Member]{TotalCount: total, Items: items}, err
}

// GetMember returns a member of the organization with their groups.
func (s *IAM) GetMember(ctx context.Context, a *core.Actor, id uuid.UUID) (Member, error) {
	r, err := s.memberOf(ctx, a, id)
	if err != nil {
		return Member{}, err
	}
	if err := a.RequireIAM(); err != nil {
		return Member{}, err
	}
	ms, err := s.members(ctx, a, s.core.Q, a.OrgID, []memberRow{r})
	if err != nil {
		return Member{}, err
	}
	return ms[0], nil
}

// MemberName is a member's name and email, as GetMember has them, without
// their groups: for a page that shows its lists apart.
func (s *IAM) MemberName(ctx context.Context, a *core.Actor, id uuid.UUID) (name, email string, err error) {
	r, err := s.memberOf(ctx, a, id)
	if err != nil {
		return "", "", err
	}
	if err := a.RequireIAM(); err != nil {
		return "", "", err
	}
	return r.Name, r.Email, nil
}

// checkEmail checks a required email address without a display name.
func checkEmail(v *core.Validator, field, email string) {
	if email == "" {
		v.Add(field, "required")
		return
	}
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != email || len(email) > maxEmailLen {
		v.Add(field, "invalid")
	}
}

// checkGrants reports whether policyIDs are all the organization's or
// built-in policies, and groupIDs all the organization's groups.
func checkGrants(ctx context.Context, q *db.Queries, orgID uuid.UUID, policyIDs, groupIDs []uuid.UUID) (policiesOK, groupsOK bool, err error) {
	n, err := q.CountUsablePolicies(ctx, db.CountUsablePoliciesParams{Ids: policyIDs, OrganizationID: orgID})
	if err != nil {
		return false, false, err
	}
	m, err := q.CountOrganizationGroups(ctx, db.CountOrganizationGroupsParams{Ids: groupIDs, OrganizationID: orgID})
	return n == int64(len(policyIDs)), m == int64(len(groupIDs)), err
}

// grantProblems adds to v what is wrong with the policies and groups a new
// member is to get: some are not the organization's.
func grantProblems(ctx context.Context, q *db.Queries, v *core.Validator, orgID uuid.UUID, policyIDs, groupIDs []uuid.UUID) error {
	policiesOK, groupsOK, err := checkGrants(ctx, q, orgID, policyIDs, groupIDs)
	if err != nil {
		return err
	}
	if !policiesOK {
		v.Add("policyIds", "invalid")
	}
	if !groupsOK {
		v.Add("groupIds", "invalid")
	}
	return nil
}

// AddMember adds a user to the organization and the current workspace with
// the given policies and groups, or the organization's default permissions
// when both are empty. An unknown email becomes a new user with a generated
// initial password, stored bcrypt-hashed and, sealed, for the inviter to
// read. Adding a user who already is a member changes nothing.
func (s *IAM) AddMember(ctx context.Context, a *core.Actor, in MemberInput) (Member, error) {
	var v core.Validator
	email := strings.TrimSpace(in.Email)
	checkEmail(&v, "email", email)
	policyIDs, groupIDs := distinct(in.PolicyIDs), distinct(in.GroupIDs)
	if v.Err() != nil && len(policyIDs)+len(groupIDs) > 0 && a.RequireIAM() == nil {
		// Say what is wrong with the grants too, so that the form marks
		// every problem at once; the transaction checks them again.
		if err := grantProblems(ctx, s.core.Q, &v, a.OrgID, policyIDs, groupIDs); err != nil {
			return Member{}, err
		}
	}
	orgID, err := a.IAMOrg(&v)
	if err != nil {
		return Member{}, err
	}
	wsID, err := a.Workspace()
	if err != nil {
		return Member{}, err
	}

	// bcrypt is slow on purpose: hash before the transaction, and only for a new user.
	var password, hash string
	if _, err := s.core.Q.GetUserByEmail(ctx, email); errors.Is(core.Translate(err), core.ErrNotFound) {
		password = rand.Text()[:initialPasswordLen]
		if hash, err = s.hashPassword(password); err != nil {
			return Member{}, err
		}
	} else if err != nil {
		return Member{}, core.Translate(err)
	}

	var row memberRow
	var already bool
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		if len(policyIDs) == 0 && len(groupIDs) == 0 {
			org, err := q.GetOrganization(ctx, orgID)
			if err != nil {
				return err
			}
			policyIDs, groupIDs = org.DefaultPolicyIds, org.DefaultGroupIds
		} else {
			var v core.Validator
			if err := grantProblems(ctx, q, &v, orgID, policyIDs, groupIDs); err != nil {
				return err
			}
			if err := v.Err(); err != nil {
				return err
			}
		}
		user, err := q.GetUserByEmail(ctx, email)
		if errors.Is(core.Translate(err), core.ErrNotFound) {
			if hash == "" { // the user we saw a moment ago is gone
				return core.ErrConflict
			}
			sealed := s.core.ServerKeys.Seal(password)
			user, err = q.CreateUser(ctx, db.CreateUserParams{Email: email, Name: emailName(email),
				PasswordHash: &hash, InitialPassword: &sealed})
		}
		if err != nil {
			return err
		}
		if err := q.AddWorkspaceUser(ctx, db.AddWorkspaceUserParams{WorkspaceID: wsID, UserID: user.ID}); err != nil {
			return err
		}
		added, err := q.AddOrganizationUser(ctx, db.AddOrganizationUserParams{OrganizationID: orgID, UserID: user.ID, InvitorID: &a.UserID})
		if err != nil {
			return err
		}
		if added > 0 {
			if err := q.AddMemberPolicies(ctx, db.AddMemberPoliciesParams{OrganizationID: orgID, UserID: user.ID, Ids: policyIDs}); err != nil {
				return err
			}
			if err := q.AddMemberGroups(ctx, db.AddMemberGroupsParams{OrganizationID: orgID, UserID: user.ID, Ids: groupIDs}); err != nil {
				return err
			}
		}
		r, err := q.GetMember(ctx, db.GetMemberParams{OrganizationID: orgID, UserID: user.ID})
		if err != nil {
			return err
		}
		row = memberRow(r)
		if added == 0 { // already a member: nothing changes, nothing to record
			already = true
			return nil
		}
		access, err := accessOf(ctx, q, orgID, row)
		if err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Member", RefID: row.ID.String(), Keyword: row.Email,
			Operation: core.OpCreate, Current: access})
	})
	if err != nil {
		return Member{}, err
	}
	ms, err := s.members(ctx, a, s.core.Q, orgID, []memberRow{row})
	if err != nil {
		return Member{}, err
	}
	ms[0].AlreadyMember = already
	return ms[0], nil
}

// removable finds a member to remove, for someone allowed CanManageIAM in
// a workspace: the member and the workspace.
func (s *IAM) removable(ctx context.Context, a *core.Actor, id uuid.UUID) (memberRow, uuid.UUID, error) {
	m, err := s.memberOf(ctx, a, id)
	if err != nil {
		return memberRow{}, uuid.Nil, err
	}
	if err := a.RequireIAM(); err != nil {
		return memberRow{}, uuid.Nil, err
	}
	wsID, err := a.Workspace()
	return m, wsID, err
}

// RemoveMember takes a user out of the organization with their policies and
// group memberships there, and out of the workspace when it was their last
// organization in it; refused when it removes the last owner. The user
// record stays: users are global and may belong elsewhere.
func (s *IAM) RemoveMember(ctx context.Context, a *core.Actor, id uuid.UUID) error {
	m, wsID, err := s.removable(ctx, a, id)
	if err != nil {
		return err
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		var before memberAccess
		err := keepOwner(ctx, q, a.OrgID, func() error {
			var err error
			if before, err = accessOf(ctx, q, a.OrgID, m); err != nil {
				return err
			}
			if n, err := q.RemoveOrganizationUser(ctx, db.RemoveOrganizationUserParams{OrganizationID: a.OrgID, UserID: id}); err != nil || n == 0 {
				return core.OrNotFound(err)
			}
			return q.RemoveWorkspaceUserWithoutOrganizations(ctx, db.RemoveWorkspaceUserWithoutOrganizationsParams{WorkspaceID: wsID, UserID: id})
		})
		if err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Member", RefID: id.String(), Keyword: m.Email,
			Operation: core.OpRemove, Previous: before})
	})
}

// ListMemberGroups pages the groups a member belongs to, or with All every
// group of the organization, each marked; Search is part of the group name.
//
// Its one statement finds the member too: only an empty page asks again.
func (s *IAM) ListMemberGroups(ctx context.Context, a *core.Actor, memberID uuid.UUID, f IAMFilter) (core.Paged[MemberGroup], error) {
	return listIAM(a, f, "name", nil, func(orgID uuid.UUID, name string, f IAMFilter) (core.Paged[MemberGroup], error) {
		rows, err := s.core.Q.ListMemberGroups(ctx, db.ListMemberGroupsParams{OrganizationID: orgID, UserID: memberID,
			Name: name, GetAll: f.All, PageSize: f.Page.Limit(), PageOffset: f.Page.Offset()})
		return core.PageOfCounted(rows, err, func(r db.ListMemberGroupsRow) (MemberGroup, int64) {
			return MemberGroup{ID: r.ID, Name: r.Name, Description: r.Description, MemberID: memberID, IsGroupMember: r.IsGroupMember}, r.Total
		}, s.memberListCount(ctx, a, memberID, f, func() (int64, error) {
			return s.core.Q.CountMemberGroups(ctx, db.CountMemberGroupsParams{OrganizationID: orgID, UserID: memberID, Name: name, GetAll: f.All})
		}))
	})
}

// ListMemberDirectPolicies pages the policies a member holds directly, or
// with All every policy usable in the organization, each marked; Search is
// part of the policy name.
func (s *IAM) ListMemberDirectPolicies(ctx context.Context, a *core.Actor, memberID uuid.UUID, f IAMFilter) (core.Paged[MemberPolicy], error) {
	return listIAM(a, f, "name", nil, func(orgID uuid.UUID, name string, f IAMFilter) (core.Paged[MemberPolicy], error) {
		rows, err := s.core.Q.ListMemberPolicies(ctx, db.ListMemberPoliciesParams{OrganizationID: orgID, UserID: memberID,
			Name: name, GetAll: f.All, PageSize: f.Page.Limit(), PageOffset: f.Page.Offset()})
		return core.PageOfCounted(rows, err, func(r db.ListMemberPoliciesRow) (MemberPolicy, int64) {
			return MemberPolicy{ID: r.ID, Name: r.Name, Type: r.Type, Description: r.Description, IsMemberPolicy: r.IsMemberPolicy}, r.Total
		}, s.memberListCount(ctx, a, memberID, f, func() (int64, error) {
			return s.core.Q.CountMemberPolicies(ctx, db.CountMemberPoliciesParams{OrganizationID: orgID, UserID: memberID, Name: name, GetAll: f.All})
		}))
	})
}

// ListMemberInheritedPolicies pages the policies a member holds through
// groups, each with the group it comes from; Search is part of the policy name.
func (s *IAM) ListMemberInheritedPolicies(ctx context.Context, a *core.Actor, memberID uuid.UUID, f IAMFilter) (core.Paged[InheritedPolicy], error) {
	return listIAM(a, f, "name", nil, func(orgID uuid.UUID, name string, f IAMFilter) (core.Paged[InheritedPolicy], error) {
		rows, err := s.core.Q.ListInheritedPolicies(ctx, db.ListInheritedPoliciesParams{OrganizationID: orgID, UserID: memberID,
			Name: name, PageSize: f.Page.Limit(), PageOffset: f.Page.Offset()})
		if len(rows) == 1 && rows[0].Total == 0 { // a member who has none: the one row says so
			return core.Paged[InheritedPolicy]{Items: []InheritedPolicy{}}, nil
		}
		return core.PageOfCounted(rows, err, inheritedPolicy, s.memberListCount(ctx, a, memberID, f, func() (int64, error) {
			return s.core.Q.CountInheritedPolicies(ctx, db.CountInheritedPoliciesParams{OrganizationID: orgID, UserID: memberID, Name: name})
		}))
	})
}

// AddMemberPolicy gives a member a policy directly; giving it twice changes nothing.
func (s *IAM) AddMemberPolicy(ctx context.Context, a *core.Actor, memberID, policyID uuid.UUID) error {
	m, err := s.memberAndPolicy(ctx, a, memberID, policyID)
	if err != nil {
		return err
	}
	return s.changeMemberAccess(ctx, a, m, false, func(q *db.Queries) error {
		return q.AddMemberPolicy(ctx, db.AddMemberPolicyParams{OrganizationID: a.OrgID, UserID: m.ID, PolicyID: policyID})
	})
}

// RemoveMemberPolicy takes a directly held policy from a member, unless that
// removes the organization's last owner; removing twice changes nothing.
func (s *IAM) RemoveMemberPolicy(ctx context.Context, a *core.Actor, memberID, policyID uuid.UUID) error {
	m, err := s.memberAndPolicy(ctx, a, memberID, policyID)
	if err != nil {
		return err
	}
	return s.changeMemberAccess(ctx, a, m, true, func(q *db.Queries) error {
		return q.RemoveMemberPolicy(ctx, db.RemoveMemberPolicyParams{OrganizationID: a.OrgID, UserID: m.ID, PolicyID: policyID})
	})
}

func (s *IAM) memberAndPolicy(ctx context.Context, a *core.Actor, memberID, policyID uuid.UUID) (memberRow, error) {
	m, err := s.memberOf(ctx, a, memberID)
	if err != nil {
		return memberRow{}, err
	}
	if _, err := s.policyOf(ctx, a, policyID); err != nil {
		return memberRow{}, err
	}
	return m, a.RequireIAM()
}

// MemberPolicies returns every policy a member holds in the organization,
// directly or through a group, each once (FeatBit's GetMemberPolicy).
func (s *IAM) MemberPolicies(ctx context.Context, a *core.Actor, memberID uuid.UUID) ([]Policy, error) {
	if _, err := s.memberOf(ctx, a, memberID); err != nil {
		return nil, err
	}
	if err := a.RequireIAM(); err != nil {
		return nil, err
	}
	return s.heldPolicies(ctx, a.OrgID, memberID)
}

// UserPolicies returns the policies the caller holds in the organization,
// which every signed-in caller may read. A Personal token answers its
// creator's; a Service token holds no policy (it carries its own
// statements, which GET /access-tokens shows), so it answers none.
func (s *IAM) UserPolicies(ctx context.Context, a *core.Actor) ([]Policy, error) {
	orgID, err := a.Org()
	if err != nil {
		return nil, err
	}
	if a.IsToken() {
		t, err := s.core.Q.GetAccessToken(ctx, db.GetAccessTokenParams{ID: a.TokenID, OrganizationID: orgID})
		if err != nil {
			return nil, core.Translate(err)
		}
		if t.AccessToken.Type == core.TokenService {
			return []Policy{}, nil
		}
	}
	return s.heldPolicies(ctx, orgID, a.UserID)
}

func (s *IAM) heldPolicies(ctx context.Context, orgID, userID uuid.UUID) ([]Policy, error) {
	rows, err := s.core.Q.ListHeldPolicies(ctx, db.ListHeldPoliciesParams{OrganizationID: orgID, UserID: userID})
	if err != nil {
		return nil, core.Translate(err)
	}
	out := make([]Policy, len(rows))
	for i, r := range rows {
		if out[i], err = policy(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RemoveFromWorkspace takes a member of the organization out of every
// organization of the workspace and out of the workspace (FeatBit's
// remove-from-workspace). The caller must be allowed to manage IAM in each of
// those organizations, not only the current one: an access token acts in its
// own organization only, so it may remove only a user who belongs to no
// other. Refused as a whole when it removes an organization's last owner.
// The user record stays, as with RemoveMember.
func (s *IAM) RemoveFromWorkspace(ctx context.Context, a *core.Actor, id uuid.UUID) error {
	m, wsID, err := s.removable(ctx, a, id)
	if err != nil {
		return err
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		orgs, err := q.ListUserOrganizations(ctx, db.ListUserOrganizationsParams{WorkspaceID: wsID, UserID: id})
		if err != nil {
			return err
		}
		// Lock in one order, so two removals never wait on each other.
		slices.SortFunc(orgs, func(x, y db.Organization) int { return bytes.Compare(x.ID[:], y.ID[:]) })
		keys := make([]string, 0, len(orgs))
		for _, o := range orgs {
			if o.ID != a.OrgID {
				if a.IsToken() {
					return core.ErrForbidden
				}
				sts, err := s.core.MemberStatements(ctx, q, o.ID, a.UserID)
				if err != nil {
					return err
				}
				if !access.Allows(sts, access.CanManageIAM, core.IAMRN) {
					return core.ErrForbidden
				}
			}
			err := keepOwner(ctx, q, o.ID, func() error {
				_, err := q.RemoveOrganizationUser(ctx, db.RemoveOrganizationUserParams{OrganizationID: o.ID, UserID: id})
				return err
			})
			if err != nil {
				return err
			}
			keys = append(keys, o.Key)
		}
		if err := q.RemoveWorkspaceUserWithoutOrganizations(ctx, db.RemoveWorkspaceUserWithoutOrganizationsParams{WorkspaceID: wsID, UserID: id}); err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Member", RefID: id.String(), Keyword: m.Email, Operation: core.OpRemove,
			Previous: map[string]any{"id": m.ID, "email": m.Email, "name": m.Name, "organizations": keys}})
	})
}
