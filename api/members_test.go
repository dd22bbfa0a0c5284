package api_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// addByEmail adds a member as FeatBit's clients do: the answer is true, and
// the member (with the initial password, for the inviter) is read back.
func (s *server) addByEmail(body map[string]any) iam.Member {
	s.t.Helper()
	if r := s.do("POST", "/api/v1/members/add", s.owner, body).ok(s.t); string(r.Data) != "true" {
		s.t.Fatalf("members/add answered %s, want true", r.Data)
	}
	return s.memberByEmail(strings.TrimSpace(body["email"].(string)))
}

// memberByEmail finds a member of the owner's organization.
func (s *server) memberByEmail(email string) iam.Member {
	s.t.Helper()
	found := decode[core.Paged[iam.Member]](s.t, s.do("GET", "/api/v1/members?searchText="+url.QueryEscape(email), s.owner, nil).ok(s.t))
	for _, m := range found.Items {
		if strings.EqualFold(m.Email, email) {
			return decode[iam.Member](s.t, s.do("GET", "/api/v1/members/"+m.ID.String(), s.owner, nil).ok(s.t))
		}
	}
	s.t.Fatalf("no member %s in %+v", email, found.Items)
	return iam.Member{}
}

func policyIDsOf(t *testing.T, s *server, memberID uuid.UUID) []uuid.UUID {
	t.Helper()
	var ids []uuid.UUID
	for _, p := range decode[core.Paged[iam.MemberPolicy]](t, s.do("GET", "/api/v1/members/"+memberID.String()+"/direct-policies", s.owner, nil).ok(t)).Items {
		ids = append(ids, p.ID)
	}
	return ids
}

func TestAddMemberWithDefaultPermissions(t *testing.T) {
	s := newServer(t)
	project := "/api/v1/projects/" + s.createProject("Web", "web").ID.String()
	m := s.addByEmail(map[string]any{"email": " new.person@example.com ", "policyIds": []string{}, "groupIds": nil})
	if m.Email != "new.person@example.com" || m.Name != "new.person" || m.InvitorID == nil || *m.InvitorID != s.ownerID() ||
		m.InitialPassword == nil || len(*m.InitialPassword) < 12 || m.Groups == nil || len(m.Groups) != 0 {
		t.Fatalf("added %+v", m)
	}
	password := *m.InitialPassword
	if n := s.count(`SELECT count(*) FROM users WHERE id = $1 AND password_hash LIKE '$2%' AND initial_password IS NOT NULL
		AND position($2 in initial_password) = 0 AND position($2 in password_hash) = 0`, m.ID, password); n != 1 {
		t.Fatal("the initial password is not stored hashed and sealed")
	}
	if n := s.count(`SELECT count(*) FROM workspace_users WHERE user_id = $1 AND workspace_id = $2`, m.ID, s.wsID); n != 1 {
		t.Fatal("the member was not added to the workspace")
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'Member' AND operation = 'Create' AND ref_id = $1
		AND current->'policyIds' = $2::jsonb AND position($3 in current::text) = 0`, m.ID.String(), `["`+core.DeveloperPolicyID.String()+`"]`, password); n != 1 {
		t.Fatal("the addition is not recorded with the default policy, or the record holds the password")
	}

	// The new member signs in with it and has exactly the Developer policy's powers.
	token := s.login("new.person@example.com", password)
	s.do("GET", project, token, nil).ok(t)
	s.do("POST", "/api/v1/projects", token, map[string]string{"name": "No", "key": "no"}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("GET", "/api/v1/members", token, nil).fails(t, http.StatusForbidden, "Forbidden")
	// GET /user/policies answers FeatBit's PolicyVm[]: the policies held.
	held := decode[[]iam.Policy](t, s.do("GET", "/api/v1/user/policies", token, nil).ok(t))
	if len(held) != 1 || held[0].ID != core.DeveloperPolicyID || held[0].Key != "developer" || held[0].Type != "SysManaged" ||
		len(held[0].Statements) != 6 || held[0].Statements[0].ID != "developer-access-token" {
		t.Fatalf("user policies %+v, want the Developer policy with its statements", held)
	}
	if got := policyIDsOf(t, s, m.ID); !slices.Equal(got, []uuid.UUID{core.DeveloperPolicyID}) {
		t.Fatalf("direct policies %v, want Developer", got)
	}

	// Only the inviter is shown the initial password.
	path := "/api/v1/members/" + m.ID.String()
	if got := decode[iam.Member](t, s.do("GET", path, s.owner, nil).ok(t)); got.InitialPassword == nil || *got.InitialPassword != password {
		t.Fatalf("inviter sees %+v", got)
	}
	admin, _ := s.addMember("admin@example.com", core.AdministratorPolicyID)
	if got := s.do("GET", path, admin, nil).ok(t); !strings.Contains(got.raw, `"initialPassword":null`) {
		t.Fatalf("another administrator sees %s", got.raw)
	}
	list := decode[core.Paged[iam.Member]](t, s.do("GET", "/api/v1/members?searchText=new.person", s.owner, nil).ok(t))
	if list.TotalCount != 1 || list.Items[0].InitialPassword == nil {
		t.Fatalf("inviter's member list %+v", list)
	}

	// Setting a password clears it.
	s.do("PUT", "/api/v1/identity/reset-password", token, map[string]string{"currentPassword": password, "newPassword": "a-new-password"}).ok(t)
	if got := decode[iam.Member](t, s.do("GET", path, s.owner, nil).ok(t)); got.InitialPassword != nil {
		t.Fatalf("initial password %q still shown after a password change", *got.InitialPassword)
	}
}

func TestAddMemberWithPoliciesAndGroups(t *testing.T) {
	s := newServer(t)
	p := s.createPolicy("Testers", "testers")
	g := s.createGroup("QA")
	theirs := s.otherOrganizationIAM()
	users := s.count(`SELECT count(*) FROM users`)

	s.do("POST", "/api/v1/members/add", s.owner, map[string]any{}).fails(t, http.StatusBadRequest, "email_is_required")
	for _, bad := range []string{"not-an-email", "Ann <ann@example.com>", "ann@", strings.Repeat("a", 250) + "@example.com"} {
		s.do("POST", "/api/v1/members/add", s.owner, map[string]any{"email": bad}).fails(t, http.StatusBadRequest, "email_is_invalid")
	}
	s.do("POST", "/api/v1/members/add", s.owner, map[string]any{"email": "ann@example.com",
		"policyIds": []uuid.UUID{p.ID, uuid.New()}, "groupIds": []uuid.UUID{theirs.group}}).
		fails(t, http.StatusBadRequest, "policyIds_is_invalid", "groupIds_is_invalid")
	s.do("POST", "/api/v1/members/add", s.owner, map[string]any{"email": "ann@example.com", "policyIds": []uuid.UUID{theirs.policy}}).
		fails(t, http.StatusBadRequest, "policyIds_is_invalid")
	s.do("POST", "/api/v1/members/add", s.owner, map[string]any{"email": "ann@example.com", "policyIds": []string{"nope"}}).
		fails(t, http.StatusBadRequest, "body_is_invalid")
	if n := s.count(`SELECT count(*) FROM users`); n != users {
		t.Fatalf("%d users after refused additions, want %d", n, users)
	}

	m := s.addByEmail(map[string]any{"email": "ann@example.com", "policyIds": []uuid.UUID{p.ID, p.ID}, "groupIds": []uuid.UUID{g.ID}})
	if len(m.Groups) != 1 || m.Groups[0] != (iam.MemberGroup{ID: g.ID, Name: "QA", MemberID: m.ID, IsGroupMember: true}) {
		t.Fatalf("groups %+v", m.Groups)
	}
	if got := policyIDsOf(t, s, m.ID); !slices.Equal(got, []uuid.UUID{p.ID}) {
		t.Fatalf("direct policies %v, want only the given one", got)
	}
	audits := s.audits("Member")

	// Adding an existing member again, in any case, changes nothing.
	again := s.addByEmail(map[string]any{"email": "ANN@example.com", "policyIds": []uuid.UUID{core.OwnerPolicyID}})
	if again.ID != m.ID || len(again.Groups) != 1 {
		t.Fatalf("re-added %+v", again)
	}
	if got := policyIDsOf(t, s, m.ID); !slices.Equal(got, []uuid.UUID{p.ID}) || s.audits("Member") != audits {
		t.Fatalf("re-adding changed the member: policies %v", got)
	}

	// A user of another organization joins with the given access; no password is made or shown.
	stranger := s.addByEmail(map[string]any{"email": "stranger@example.com", "groupIds": []uuid.UUID{g.ID}})
	if stranger.ID != theirs.member || stranger.InitialPassword != nil || len(stranger.Groups) != 1 {
		t.Fatalf("stranger %+v", stranger)
	}
	if got := policyIDsOf(t, s, stranger.ID); len(got) != 0 {
		t.Fatalf("stranger's direct policies %v, want none (groups were given)", got)
	}

	// Once a user also belongs to another organization, no inviter sees the initial password.
	bob := s.addByEmail(map[string]any{"email": "bob@example.com"})
	if bob.InitialPassword == nil {
		t.Fatal("no initial password for a new user")
	}
	_, err := s.pool.Exec(context.Background(), `INSERT INTO organization_users (organization_id, user_id)
		SELECT id, $1 FROM organizations WHERE key = 'other'`, bob.ID)
	must(t, err)
	if got := decode[iam.Member](t, s.do("GET", "/api/v1/members/"+bob.ID.String(), s.owner, nil).ok(t)); got.InitialPassword != nil {
		t.Fatal("the initial password of a user in two organizations is shown")
	}
}

func TestMemberLists(t *testing.T) {
	s := newServer(t)
	qa, ops := s.createGroup("QA"), s.createGroup("Ops")
	ann := s.addByEmail(map[string]any{"email": "ann@example.com", "groupIds": []uuid.UUID{qa.ID, ops.ID}})
	s.addByEmail(map[string]any{"email": "bob@example.org", "groupIds": []uuid.UUID{qa.ID}})
	_, err := s.pool.Exec(context.Background(), `UPDATE users SET name = 'Annabel' WHERE email = 'bob@example.org'`)
	must(t, err)

	tests := []struct {
		query string
		total int64
		want  []string
	}{
		{"", 3, []string{"bob@example.org", "ann@example.com", ownerEmail}},
		{"?SearchText=EXAMPLE.COM", 2, []string{"ann@example.com", ownerEmail}},
		{"?searchtext=anna", 1, []string{"bob@example.org"}}, // by name
		{"?searchText=ann", 2, []string{"bob@example.org", "ann@example.com"}},
		{"?pageIndex=1&pageSize=2", 3, []string{ownerEmail}},
		{"?searchText=%5C", 0, nil},
	}
	for _, tt := range tests {
		got := decode[core.Paged[iam.Member]](t, s.do("GET", "/api/v1/members"+tt.query, s.owner, nil).ok(t))
		var emails []string
		for _, m := range got.Items {
			emails = append(emails, m.Email)
		}
		if got.TotalCount != tt.total || !slices.Equal(emails, tt.want) {
			t.Errorf("%s: got %d %v, want %d %v", tt.query, got.TotalCount, emails, tt.total, tt.want)
		}
	}
	list := decode[core.Paged[iam.Member]](t, s.do("GET", "/api/v1/members?searchText=ann@", s.owner, nil).ok(t))
	if len(list.Items) != 1 || len(list.Items[0].Groups) != 2 || list.Items[0].Groups[0].Name != "Ops" {
		t.Errorf("listed member groups %+v, want Ops and QA", list.Items)
	}
	owner := decode[iam.Member](t, s.do("GET", "/api/v1/members/"+s.ownerID().String(), s.owner, nil).ok(t))
	if owner.InvitorID != nil || owner.InitialPassword != nil || owner.Name != "owner" || owner.Groups == nil {
		t.Errorf("owner %+v", owner)
	}

	groups := "/api/v1/members/" + ann.ID.String() + "/groups"
	s.do("PUT", "/api/v1/groups/"+ops.ID.String()+"/remove-member/"+ann.ID.String(), s.owner, nil).ok(t)
	s.createGroup("Quality")
	groupTests := []struct {
		query string
		total int64
		want  []string
		flags []bool
	}{
		{"", 1, []string{"QA"}, []bool{true}},
		{"?getAllGroups=true", 3, []string{"Ops", "QA", "Quality"}, []bool{false, true, false}},
		{"?GetAllGroups=true&Name=Q", 2, []string{"QA", "Quality"}, []bool{true, false}},
		{"?getAllGroups=true&pageIndex=2&pageSize=1", 3, []string{"Quality"}, []bool{false}},
	}
	for _, tt := range groupTests {
		got := decode[core.Paged[iam.MemberGroup]](t, s.do("GET", groups+tt.query, s.owner, nil).ok(t))
		var names []string
		var flags []bool
		for _, g := range got.Items {
			names = append(names, g.Name)
			flags = append(flags, g.IsGroupMember)
			if g.MemberID != ann.ID {
				t.Errorf("group item %+v lacks the member id", g)
			}
		}
		if got.TotalCount != tt.total || !slices.Equal(names, tt.want) || !slices.Equal(flags, tt.flags) {
			t.Errorf("%s: got %d %v %v, want %d %v %v", tt.query, got.TotalCount, names, flags, tt.total, tt.want, tt.flags)
		}
	}

	direct := decode[core.Paged[iam.MemberPolicy]](t, s.do("GET", "/api/v1/members/"+ann.ID.String()+"/direct-policies?getAllPolicies=true&name=o", s.owner, nil).ok(t))
	var names []string
	for _, p := range direct.Items {
		names = append(names, p.Name)
		if p.IsMemberPolicy {
			t.Errorf("%s marked as held; ann has no direct policy", p.Name)
		}
	}
	if direct.TotalCount != 3 || !slices.Equal(names, []string{"Administrator", "Developer", "Owner"}) {
		t.Errorf("all policies with 'o': %d %v", direct.TotalCount, names)
	}
	s.do("GET", "/api/v1/members/"+ann.ID.String()+"/direct-policies?getAllPolicies=x", s.owner, nil).fails(t, http.StatusBadRequest, "getAllPolicies_is_invalid")
	s.do("GET", "/api/v1/members?pageSize=0", s.owner, nil).fails(t, http.StatusBadRequest, "pageSize_is_invalid")
}

func TestMembersOfOtherOrganizationsAreNotFound(t *testing.T) {
	s := newServer(t)
	theirs := s.otherOrganizationIAM()
	p := s.createPolicy("Mine", "mine")
	for _, id := range []string{theirs.member.String(), uuid.NewString(), "not-a-uuid"} {
		base := "/api/v1/members/" + id
		for _, path := range []string{base, base + "/groups", base + "/direct-policies", base + "/inherited-policies"} {
			s.do("GET", path, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
		}
		s.do("PUT", base+"/add-policy/"+p.ID.String(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
		s.do("PUT", base+"/remove-policy/"+p.ID.String(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
		s.do("DELETE", "/api/v1/members/remove-from-org/"+id, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	}
	if n := s.count(`SELECT count(*) FROM organization_users WHERE user_id = $1`, theirs.member); n != 1 {
		t.Error("the other organization's member was touched")
	}
	// Nor are they listed.
	for _, m := range decode[core.Paged[iam.Member]](t, s.do("GET", "/api/v1/members?pageSize=100", s.owner, nil).ok(t)).Items {
		if m.ID == theirs.member {
			t.Error("another organization's member is listed")
		}
	}
}

func TestMemberPolicies(t *testing.T) {
	s := newServer(t)
	project := "/api/v1/projects/" + s.createProject("Web", "web").ID.String()
	token, id := s.addMember("ann@example.com")
	path := "/api/v1/members/" + id.String()
	s.do("GET", project, token, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", path+"/add-policy/"+core.DeveloperPolicyID.String(), s.owner, nil).ok(t)
	s.do("PUT", path+"/add-policy/"+core.DeveloperPolicyID.String(), s.owner, nil).ok(t)
	s.do("GET", project, token, nil).ok(t)
	direct := decode[core.Paged[iam.MemberPolicy]](t, s.do("GET", path+"/direct-policies", s.owner, nil).ok(t))
	if direct.TotalCount != 1 || direct.Items[0] != (iam.MemberPolicy{ID: core.DeveloperPolicyID, Name: "Developer", Type: "SysManaged",
		Description: direct.Items[0].Description, IsMemberPolicy: true}) {
		t.Fatalf("direct policies %+v", direct)
	}
	s.do("PUT", path+"/remove-policy/"+core.DeveloperPolicyID.String(), s.owner, nil).ok(t)
	s.do("PUT", path+"/remove-policy/"+core.DeveloperPolicyID.String(), s.owner, nil).ok(t)
	s.do("GET", project, token, nil).fails(t, http.StatusForbidden, "Forbidden")
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'Member' AND operation = 'Update' AND ref_id = $1`, id.String()); n != 2 {
		t.Errorf("%d member updates recorded, want 2 (one add, one remove)", n)
	}
	theirs := s.otherOrganizationIAM()
	for _, p := range []string{theirs.policy.String(), uuid.NewString(), "x"} {
		s.do("PUT", path+"/add-policy/"+p, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	}
}

func TestRemoveMemberFromOrganization(t *testing.T) {
	s := newServer(t)
	g := s.createGroup("QA")
	m := s.addByEmail(map[string]any{"email": "ann@example.com", "policyIds": []uuid.UUID{core.DeveloperPolicyID}, "groupIds": []uuid.UUID{g.ID}})
	token := s.login("ann@example.com", *m.InitialPassword)
	tok := decode[iam.AccessToken](t, s.do("POST", "/api/v1/access-tokens", token, map[string]string{"name": "mine", "type": "Personal"}).ok(t))

	s.do("DELETE", "/api/v1/members/remove-from-org/"+m.ID.String(), s.owner, nil).ok(t)
	s.do("GET", "/api/v1/members/"+m.ID.String(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("DELETE", "/api/v1/members/remove-from-org/"+m.ID.String(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	for _, table := range []string{"organization_users", "member_policies", "group_members", "workspace_users"} {
		if n := s.count(`SELECT count(*) FROM `+table+` WHERE user_id = $1`, m.ID); n != 0 {
			t.Errorf("%d rows left in %s", n, table)
		}
	}
	if n := s.count(`SELECT count(*) FROM users WHERE id = $1`, m.ID); n != 1 {
		t.Error("the user record was deleted")
	}
	s.do("GET", "/api/v1/projects", tok.Token, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
	if r := s.do("GET", "/api/v1/groups", token, nil); r.Status == http.StatusOK {
		t.Errorf("a removed member still reaches the organization: %s", r.raw)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'Member' AND operation = 'Remove' AND ref_id = $1
		AND previous->'groupIds' = $2::jsonb`, m.ID.String(), `["`+g.ID.String()+`"]`); n != 1 {
		t.Error("the removal is not recorded with the member's access")
	}
}

func TestLastOwnerCannotBeRemoved(t *testing.T) {
	s := newServer(t)
	me := s.ownerID()
	refuse := func(method, path string) {
		t.Helper()
		s.do(method, path, s.owner, nil).fails(t, http.StatusUnprocessableEntity, "CannotRemoveLastOwner")
	}
	refuse("DELETE", "/api/v1/members/remove-from-org/"+me.String())
	refuse("PUT", "/api/v1/members/"+me.String()+"/remove-policy/"+core.OwnerPolicyID.String())

	// Owner through a group only.
	g := s.createGroup("Owners")
	s.do("PUT", "/api/v1/groups/"+g.ID.String()+"/add-policy/"+core.OwnerPolicyID.String(), s.owner, nil).ok(t)
	s.do("PUT", "/api/v1/groups/"+g.ID.String()+"/add-member/"+me.String(), s.owner, nil).ok(t)
	s.do("PUT", "/api/v1/members/"+me.String()+"/remove-policy/"+core.OwnerPolicyID.String(), s.owner, nil).ok(t)
	refuse("PUT", "/api/v1/groups/"+g.ID.String()+"/remove-member/"+me.String())
	refuse("PUT", "/api/v1/groups/"+g.ID.String()+"/remove-policy/"+core.OwnerPolicyID.String())
	refuse("DELETE", "/api/v1/groups/"+g.ID.String())
	refuse("DELETE", "/api/v1/members/remove-from-org/"+me.String())
	audits := s.count(`SELECT count(*) FROM audit_logs`)

	// Nothing changed: still an owner through the group, who may act.
	if n := s.count(`SELECT count(*) FROM group_members WHERE group_id = $1`, g.ID) + s.count(`SELECT count(*) FROM group_policies WHERE group_id = $1`, g.ID); n != 2 {
		t.Fatalf("%d group links left, want 2", n)
	}
	s.createProject("Still mine", "still-mine")

	// Removing what does not make an owner is fine.
	devToken, dev := s.addMember("dev@example.com", core.DeveloperPolicyID)
	s.do("PUT", "/api/v1/groups/"+g.ID.String()+"/add-member/"+dev.String(), s.owner, nil).ok(t)
	s.do("PUT", "/api/v1/groups/"+g.ID.String()+"/remove-member/"+dev.String(), s.owner, nil).ok(t)
	if n := s.count(`SELECT count(*) FROM audit_logs`); n != audits+3 {
		t.Errorf("%d audit entries, want %d: refusals record nothing", n, audits+3)
	}

	// With a second owner, the first may go.
	s.do("PUT", "/api/v1/members/"+dev.String()+"/add-policy/"+core.OwnerPolicyID.String(), s.owner, nil).ok(t)
	s.do("DELETE", "/api/v1/groups/"+g.ID.String(), s.owner, nil).ok(t)
	s.do("DELETE", "/api/v1/members/remove-from-org/"+me.String(), devToken, nil).ok(t)
	s.do("DELETE", "/api/v1/members/remove-from-org/"+dev.String(), devToken, nil).fails(t, http.StatusUnprocessableEntity, "CannotRemoveLastOwner")
}
