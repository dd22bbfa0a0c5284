package api_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

func (s *server) createPolicy(name, key string) iam.Policy {
	s.t.Helper()
	return decode[iam.Policy](s.t, s.do("POST", "/api/v1/policies", s.owner, map[string]string{"name": name, "key": key}).ok(s.t))
}

func (s *server) createGroup(name string) iam.Group {
	s.t.Helper()
	return decode[iam.Group](s.t, s.do("POST", "/api/v1/groups", s.owner, map[string]string{"name": name}).ok(s.t))
}

// ownerID is the id of the bootstrapped owner.
func (s *server) ownerID() uuid.UUID {
	s.t.Helper()
	return decode[iam.Profile](s.t, s.do("GET", "/api/v1/user/profile", s.owner, nil).ok(s.t)).ID
}

// foreign holds ids that exist in another organization of the workspace.
type foreign struct{ policy, group, member uuid.UUID }

// otherOrganizationIAM makes a second organization with a policy, a group
// and a member of its own.
func (s *server) otherOrganizationIAM() foreign {
	s.t.Helper()
	ctx := context.Background()
	s.otherOrganization()
	var orgID uuid.UUID
	must(s.t, s.pool.QueryRow(ctx, `SELECT id FROM organizations WHERE key = 'other'`).Scan(&orgID))
	p, err := s.q.CreatePolicy(ctx, db.CreatePolicyParams{ID: uuid.New(), OrganizationID: &orgID, Name: "Theirs", Key: "theirs",
		Type: iam.PolicyCustomerManaged, Statements: []byte(`[]`)})
	must(s.t, err)
	g, err := s.q.CreateGroup(ctx, db.CreateGroupParams{OrganizationID: orgID, Name: "Theirs"})
	must(s.t, err)
	u, err := s.q.CreateUser(ctx, db.CreateUserParams{Email: "stranger@example.com", Name: "stranger"})
	must(s.t, err)
	_, err = s.q.AddOrganizationUser(ctx, db.AddOrganizationUserParams{OrganizationID: orgID, UserID: u.ID})
	must(s.t, err)
	return foreign{policy: p.ID, group: g.ID, member: u.ID}
}

func (s *server) audits(refType string) int {
	s.t.Helper()
	return s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = $1`, refType)
}

var flagStatement = access.Statement{ID: "s1", ResourceType: "flag", Effect: "allow", Actions: []string{"CreateFlag"},
	Resources: []string{"project/*:env/*:flag/*"}}

func TestPolicyLifecycle(t *testing.T) {
	s := newServer(t)
	created := decode[iam.Policy](t, s.do("POST", "/api/v1/policies", s.owner,
		map[string]string{"name": " Release managers ", "key": "release-managers", "description": "ship it"}).ok(t))
	if created.Name != "Release managers" || created.Key != "release-managers" || created.Type != "CustomerManaged" ||
		created.Description != "ship it" || created.Statements == nil || len(created.Statements) != 0 || created.UpdatedAt.Location().String() != "UTC" {
		t.Fatalf("created %+v", created)
	}
	path := "/api/v1/policies/" + created.ID.String()
	if got := decode[iam.Policy](t, s.do("GET", path, s.owner, nil).ok(t)); got.ID != created.ID || got.Key != created.Key {
		t.Fatalf("got %+v, want %+v", got, created)
	}

	renamed := decode[iam.Policy](t, s.do("PUT", path+"/settings", s.owner, map[string]string{"name": "Releasers", "description": ""}).ok(t))
	if renamed.Name != "Releasers" || renamed.Description != "" || renamed.Key != "release-managers" {
		t.Fatalf("renamed %+v", renamed)
	}

	st := []map[string]any{{"resourceType": "flag", "effect": "allow", "actions": []string{"CreateFlag"}, "resources": []string{"project/*:env/*:flag/*"}},
		{"id": "keep-me", "resourceType": "project", "effect": "deny", "actions": []string{"*"}, "resources": []string{"project/secret"}}}
	updated := decode[iam.Policy](t, s.do("PUT", path+"/statements", s.owner, st).ok(t))
	if len(updated.Statements) != 2 || updated.Statements[0].ID == "" || updated.Statements[1].ID != "keep-me" || updated.Statements[1].Effect != "deny" {
		t.Fatalf("statements %+v, want two, the first given an id", updated.Statements)
	}
	cleared := decode[iam.Policy](t, s.do("PUT", path+"/statements", s.owner, []any{}).ok(t))
	if len(cleared.Statements) != 0 {
		t.Fatalf("statements %+v after setting none", cleared.Statements)
	}

	for key, want := range map[string]bool{"release-managers": true, "RELEASE-MANAGERS": true, "owner": true, "Developer": true, "nobody": false} {
		if got := decode[bool](t, s.do("GET", "/api/v1/policies/is-key-used?KEY="+key, s.owner, nil).ok(t)); got != want {
			t.Errorf("is-key-used %s = %v, want %v", key, got, want)
		}
	}
	s.do("GET", "/api/v1/policies/is-key-used", s.owner, nil).fails(t, http.StatusBadRequest, "key_is_required")

	s.do("DELETE", path, s.owner, nil).ok(t)
	s.do("GET", path, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("DELETE", path, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	if n := s.audits("Policy"); n != 5 {
		t.Errorf("%d policy audit entries, want 5 (create, settings, 2 statements, delete)", n)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'Policy' AND operation = 'Remove'
		AND ref_id = $1 AND previous->>'key' = 'release-managers' AND current IS NULL`, created.ID.String()); n != 1 {
		t.Errorf("the removal is not recorded with the policy as it was")
	}
}

func TestPolicyListing(t *testing.T) {
	s := newServer(t)
	for _, p := range []struct{ name, key string }{{"Zeta", "zeta"}, {"alpha testers", "alpha"}, {"Beta testers", "beta"}} {
		s.createPolicy(p.name, p.key)
	}
	all := decode[core.Paged[iam.Policy]](t, s.do("GET", "/api/v1/policies?pageSize=100", s.owner, nil).ok(t))
	var names []string
	for _, p := range all.Items {
		names = append(names, p.Name)
	}
	want := []string{"Administrator", "Developer", "Owner", "alpha testers", "Beta testers", "Zeta"}
	if all.TotalCount != 6 || !slices.Equal(names, want) {
		t.Fatalf("policies %v (total %d), want %v: built-ins first, then by name", names, all.TotalCount, want)
	}
	if all.Items[0].Type != "SysManaged" || len(all.Items[2].Statements) != 1 {
		t.Fatalf("built-in %+v", all.Items[0])
	}
	found := decode[core.Paged[iam.Policy]](t, s.do("GET", "/api/v1/policies?NAME=TESTERS&pageIndex=1&pagesize=1", s.owner, nil).ok(t))
	if found.TotalCount != 2 || len(found.Items) != 1 || found.Items[0].Name != "Beta testers" {
		t.Fatalf("second page of 'testers' = %+v", found)
	}
	if none := decode[core.Paged[iam.Policy]](t, s.do("GET", "/api/v1/policies?name=_", s.owner, nil).ok(t)); none.TotalCount != 0 {
		t.Fatalf("'_' matched %d policies; it must be literal", none.TotalCount)
	}
	s.do("GET", "/api/v1/policies?PageSize=0&PageIndex=x", s.owner, nil).fails(t, http.StatusBadRequest, "pageIndex_is_invalid", "pageSize_is_invalid")
}

func TestPolicyValidation(t *testing.T) {
	s := newServer(t)
	p := s.createPolicy("Mine", "mine")
	post := func(body any) *reply { return s.do("POST", "/api/v1/policies", s.owner, body) }
	tests := []struct {
		name   string
		body   any
		status int
		codes  []string
	}{
		{"empty", map[string]string{}, 400, []string{"name_is_required", "key_is_required"}},
		{"blank name, bad key", map[string]string{"name": "  ", "key": "no spaces"}, 400, []string{"name_is_required", "key_is_invalid"}},
		{"long description", map[string]string{"name": "x", "key": "x", "description": strings.Repeat("d", 513)}, 400, []string{"description_is_invalid"}},
		{"long name", map[string]string{"name": strings.Repeat("n", 129), "key": "x"}, 400, []string{"name_is_invalid"}},
		{"not an object", `["x"]`, 400, []string{"body_is_invalid"}},
		{"key taken", map[string]string{"name": "x", "key": "MINE"}, 422, []string{"KeyHasBeenUsed"}},
		{"built-in key", map[string]string{"name": "x", "key": "owner"}, 422, []string{"KeyHasBeenUsed"}},
	}
	for _, tt := range tests {
		post(tt.body).fails(t, tt.status, tt.codes...)
	}

	path := "/api/v1/policies/" + p.ID.String()
	statements := []struct {
		name string
		body any
		code string
	}{
		{"no body", nil, "statements_is_required"},
		{"null", "null", "statements_is_required"},
		{"bad effect", []map[string]any{{"resourceType": "flag", "effect": "maybe", "actions": []string{"*"}, "resources": []string{"*"}}}, "statements_is_invalid"},
		{"unknown type", []map[string]any{{"resourceType": "moon", "effect": "allow", "actions": []string{"*"}, "resources": []string{"*"}}}, "statements_is_invalid"},
		{"action of another type", []map[string]any{{"resourceType": "flag", "effect": "allow", "actions": []string{"CreateProject"}, "resources": []string{"*"}}}, "statements_is_invalid"},
		{"no actions", []map[string]any{{"resourceType": "flag", "effect": "allow", "actions": []string{}, "resources": []string{"*"}}}, "statements_is_invalid"},
		{"no resources", []map[string]any{{"resourceType": "flag", "effect": "allow", "actions": []string{"*"}, "resources": []string{}}}, "statements_is_invalid"},
		{"malformed resource", []map[string]any{{"resourceType": "flag", "effect": "allow", "actions": []string{"*"}, "resources": []string{"project"}}}, "statements_is_invalid"},
		{"long id", []map[string]any{{"id": strings.Repeat("i", 129), "resourceType": "flag", "effect": "allow", "actions": []string{"*"}, "resources": []string{"*"}}}, "statements_is_invalid"},
	}
	for _, tt := range statements {
		r := s.do("PUT", path+"/statements", s.owner, tt.body)
		if r.Status != 400 || !slices.Equal(r.Errors, []string{tt.code}) {
			t.Errorf("%s: got %d %v, want 400 %s", tt.name, r.Status, r.Errors, tt.code)
		}
	}
	s.do("PUT", path+"/statements", s.owner, `{"id":"x"}`).fails(t, http.StatusBadRequest, "body_is_invalid")
	s.do("PUT", path+"/settings", s.owner, map[string]string{}).fails(t, http.StatusBadRequest, "name_is_required")

	if n := s.count(`SELECT count(*) FROM policies WHERE organization_id IS NOT NULL`); n != 1 {
		t.Errorf("%d organization policies stored, want 1: refusals store nothing", n)
	}
	if got := decode[iam.Policy](t, s.do("GET", path, s.owner, nil).ok(t)); len(got.Statements) != 0 || got.Name != "Mine" {
		t.Errorf("policy changed by refused requests: %+v", got)
	}
	if n := s.audits("Policy"); n != 1 {
		t.Errorf("%d policy audit entries, want 1", n)
	}
}

func TestBuiltinPoliciesCannotBeModified(t *testing.T) {
	s := newServer(t)
	for _, id := range []uuid.UUID{core.OwnerPolicyID, core.AdministratorPolicyID, core.DeveloperPolicyID} {
		path := "/api/v1/policies/" + id.String()
		s.do("PUT", path+"/settings", s.owner, map[string]string{"name": "Mine now"}).fails(t, http.StatusUnprocessableEntity, "CannotModifySysManagedPolicy")
		s.do("PUT", path+"/statements", s.owner, []access.Statement{flagStatement}).fails(t, http.StatusUnprocessableEntity, "CannotModifySysManagedPolicy")
		s.do("DELETE", path, s.owner, nil).fails(t, http.StatusUnprocessableEntity, "CannotModifySysManagedPolicy")
		if got := decode[iam.Policy](t, s.do("GET", path, s.owner, nil).ok(t)); got.Type != "SysManaged" || got.Name == "Mine now" {
			t.Errorf("built-in %+v", got)
		}
	}
	// A refused change is still checked for validity first, and for permission.
	s.do("PUT", "/api/v1/policies/"+core.OwnerPolicyID.String()+"/settings", s.owner, map[string]string{}).fails(t, http.StatusBadRequest, "name_is_required")
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	s.do("DELETE", "/api/v1/policies/"+core.OwnerPolicyID.String(), dev, nil).fails(t, http.StatusForbidden, "Forbidden")
	if n := s.audits("Policy"); n != 0 {
		t.Errorf("%d policy audit entries, want 0", n)
	}
}

func TestClonePolicy(t *testing.T) {
	s := newServer(t)
	clone := decode[iam.Policy](t, s.do("POST", "/api/v1/policies/clone/developer", s.owner,
		map[string]string{"name": "Developers plus", "key": "developers-plus", "description": "more"}).ok(t))
	var developer iam.Policy
	for _, p := range decode[core.Paged[iam.Policy]](t, s.do("GET", "/api/v1/policies", s.owner, nil).ok(t)).Items {
		if p.ID == core.DeveloperPolicyID {
			developer = p
		}
	}
	if clone.Type != "CustomerManaged" || clone.ID == core.DeveloperPolicyID || clone.Key != "developers-plus" || clone.Description != "more" ||
		!slices.EqualFunc(clone.Statements, developer.Statements, func(a, b access.Statement) bool {
			return a.ID == b.ID && a.ResourceType == b.ResourceType && slices.Equal(a.Actions, b.Actions) && slices.Equal(a.Resources, b.Resources)
		}) {
		t.Fatalf("clone %+v of %+v", clone, developer)
	}

	// The organization's own policies clone by their exact key, without their members.
	mine := s.createPolicy("Mine", "Mine")
	s.do("PUT", "/api/v1/policies/"+mine.ID.String()+"/statements", s.owner, []access.Statement{flagStatement}).ok(t)
	_, devID := s.addMember("dev@example.com")
	s.do("PUT", "/api/v1/members/"+devID.String()+"/add-policy/"+mine.ID.String(), s.owner, nil).ok(t)
	again := decode[iam.Policy](t, s.do("POST", "/api/v1/policies/clone/Mine", s.owner, map[string]string{"name": "Mine 2", "key": "mine-2"}).ok(t))
	if len(again.Statements) != 1 || again.Statements[0].ID != "s1" || again.Description != "" {
		t.Fatalf("clone of mine %+v", again)
	}
	if got := decode[core.Paged[iam.PolicyMember]](t, s.do("GET", "/api/v1/policies/"+again.ID.String()+"/members", s.owner, nil).ok(t)); got.TotalCount != 0 {
		t.Fatalf("the clone has members %+v", got)
	}

	s.do("POST", "/api/v1/policies/clone/mine", s.owner, map[string]string{"name": "x", "key": "x"}).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("POST", "/api/v1/policies/clone/Developer", s.owner, map[string]string{"name": "x", "key": "x"}).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("POST", "/api/v1/policies/clone/developer", s.owner, map[string]string{"key": "bad key"}).fails(t, http.StatusBadRequest, "name_is_required", "key_is_invalid")
	s.do("POST", "/api/v1/policies/clone/developer", s.owner, map[string]string{"name": "x", "key": "MINE-2"}).fails(t, http.StatusUnprocessableEntity, "KeyHasBeenUsed")
	s.otherOrganizationIAM()
	s.do("POST", "/api/v1/policies/clone/theirs", s.owner, map[string]string{"name": "x", "key": "x"}).fails(t, http.StatusNotFound, "ResourceNotFound")
	if n := s.count(`SELECT count(*) FROM policies WHERE organization_id = $1`, s.orgID); n != 3 {
		t.Errorf("%d policies, want 3", n)
	}
}

// setupPolicyHolders makes a policy held directly by ann and bob, and by cat
// only through a group; dan holds nothing.
func setupPolicyHolders(s *server) (iam.Policy, iam.Group) {
	s.t.Helper()
	p := s.createPolicy("Testers", "testers")
	g := s.createGroup("QA")
	for _, email := range []string{"ann@example.com", "bob@Example.com", "cat@example.com", "dan@other.org"} {
		_, id := s.addMember(email)
		switch email[:3] {
		case "ann", "bob":
			s.do("PUT", "/api/v1/members/"+id.String()+"/add-policy/"+p.ID.String(), s.owner, nil).ok(s.t)
		case "cat":
			s.do("PUT", "/api/v1/groups/"+g.ID.String()+"/add-member/"+id.String(), s.owner, nil).ok(s.t)
		}
	}
	s.do("PUT", "/api/v1/groups/"+g.ID.String()+"/add-policy/"+p.ID.String(), s.owner, nil).ok(s.t)
	s.createGroup("Ops")
	s.createGroup("QA leads")
	return p, g
}

func TestPolicyMembers(t *testing.T) {
	s := newServer(t)
	p, _ := setupPolicyHolders(s)
	path := "/api/v1/policies/" + p.ID.String() + "/members"
	tests := []struct {
		query string
		total int64
		want  []string // emails, newest member first
		flags []bool
	}{
		{"", 2, []string{"bob@Example.com", "ann@example.com"}, []bool{true, true}},
		{"?GetAllMembers=true", 5, []string{"dan@other.org", "cat@example.com", "bob@Example.com", "ann@example.com", ownerEmail}, []bool{false, false, true, true, false}},
		{"?getallmembers=TRUE&PageIndex=1&PageSize=2", 5, []string{"bob@Example.com", "ann@example.com"}, []bool{true, true}},
		{"?SearchText=EXAMPLE.COM", 2, []string{"bob@Example.com", "ann@example.com"}, []bool{true, true}},
		{"?searchText=example.COM&getAllMembers=true", 4, []string{"cat@example.com", "bob@Example.com", "ann@example.com", ownerEmail}, []bool{false, true, true, false}},
		{"?SearchText=an&GetAllMembers=true", 2, []string{"dan@other.org", "ann@example.com"}, []bool{false, true}},
		{"?SearchText=%25", 0, nil, nil},
		{"?SearchText=cat", 0, nil, nil}, // through a group only: not a policy member
		{"?GetAllMembers=false&PageIndex=1", 2, nil, nil},
		{"?SearchText=example.com&PageIndex=1&PageSize=1", 2, []string{"ann@example.com"}, []bool{true}},
		{"?SearchText=example.com&PageIndex=3", 2, nil, nil}, // past the last match, still counted
	}
	for _, tt := range tests {
		got := decode[core.Paged[iam.PolicyMember]](t, s.do("GET", path+tt.query, s.owner, nil).ok(t))
		var emails []string
		var flags []bool
		for _, m := range got.Items {
			emails = append(emails, m.Email)
			flags = append(flags, m.IsPolicyMember)
			if m.ID == uuid.Nil || m.Name == "" {
				t.Errorf("%s: item %+v lacks id or name", tt.query, m)
			}
		}
		if got.TotalCount != tt.total || !slices.Equal(emails, tt.want) || !slices.Equal(flags, tt.flags) || got.Items == nil {
			t.Errorf("%s: got %d %v %v, want %d %v %v", tt.query, got.TotalCount, emails, flags, tt.total, tt.want, tt.flags)
		}
	}
	s.do("GET", path+"?GetAllMembers=maybe&PageSize=1000", s.owner, nil).fails(t, http.StatusBadRequest, "getAllMembers_is_invalid")
	s.do("GET", path+"?PageSize=1000", s.owner, nil).fails(t, http.StatusBadRequest, "pageSize_is_invalid")
	s.do("GET", path+"?SearchText=%00", s.owner, nil).fails(t, http.StatusBadRequest, "searchText_is_invalid")

	// A built-in policy lists its direct holders too.
	owners := decode[core.Paged[iam.PolicyMember]](t, s.do("GET", "/api/v1/policies/"+core.OwnerPolicyID.String()+"/members", s.owner, nil).ok(t))
	if owners.TotalCount != 1 || owners.Items[0].Email != ownerEmail {
		t.Errorf("owners %+v", owners)
	}
}

func TestPolicyGroups(t *testing.T) {
	s := newServer(t)
	p, _ := setupPolicyHolders(s)
	path := "/api/v1/policies/" + p.ID.String() + "/groups"
	tests := []struct {
		query string
		total int64
		want  []string
		flags []bool
	}{
		{"", 1, []string{"QA"}, []bool{true}},
		{"?GetAllGroups=true", 3, []string{"Ops", "QA", "QA leads"}, []bool{false, true, false}},
		{"?getAllGroups=true&pageIndex=1&pageSize=2", 3, []string{"QA leads"}, []bool{false}},
		{"?Name=qa&GetAllGroups=true", 2, []string{"QA", "QA leads"}, []bool{true, false}},
		{"?NAME=LEADS", 0, nil, nil},
		{"?name=a", 1, []string{"QA"}, []bool{true}},
	}
	for _, tt := range tests {
		got := decode[core.Paged[iam.PolicyGroup]](t, s.do("GET", path+tt.query, s.owner, nil).ok(t))
		var names []string
		var flags []bool
		for _, g := range got.Items {
			names = append(names, g.Name)
			flags = append(flags, g.IsPolicyGroup)
		}
		if got.TotalCount != tt.total || !slices.Equal(names, tt.want) || !slices.Equal(flags, tt.flags) || got.Items == nil {
			t.Errorf("%s: got %d %v %v, want %d %v %v", tt.query, got.TotalCount, names, flags, tt.total, tt.want, tt.flags)
		}
	}
	s.do("GET", path+"?GetAllGroups=2", s.owner, nil).fails(t, http.StatusBadRequest, "getAllGroups_is_invalid")
	s.do("GET", path+"?PageIndex=-1", s.owner, nil).fails(t, http.StatusBadRequest, "pageIndex_is_invalid")
}

func TestPolicyPagesOfUnknownPolicies(t *testing.T) {
	s := newServer(t)
	theirs := s.otherOrganizationIAM()
	for _, id := range []string{uuid.NewString(), theirs.policy.String(), "not-a-uuid"} {
		for _, sub := range []string{"", "/members", "/members?SearchText=example", "/groups"} {
			s.do("GET", "/api/v1/policies/"+id+sub, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
		}
		s.do("PUT", "/api/v1/policies/"+id+"/settings", s.owner, map[string]string{"name": "x"}).fails(t, http.StatusNotFound, "ResourceNotFound")
		s.do("PUT", "/api/v1/policies/"+id+"/statements", s.owner, []any{}).fails(t, http.StatusNotFound, "ResourceNotFound")
		s.do("DELETE", "/api/v1/policies/"+id, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	}
	// Another organization's policies are neither listed nor their keys taken.
	for _, p := range decode[core.Paged[iam.Policy]](t, s.do("GET", "/api/v1/policies", s.owner, nil).ok(t)).Items {
		if p.ID == theirs.policy {
			t.Fatal("another organization's policy is listed")
		}
	}
	if decode[bool](t, s.do("GET", "/api/v1/policies/is-key-used?key=theirs", s.owner, nil).ok(t)) {
		t.Error("another organization's key counts as used")
	}
	s.createPolicy("Ours", "theirs")
}

func TestUserPoliciesAndActions(t *testing.T) {
	s := newServer(t)
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	// FeatBit's PolicyVm[]: the policies held, with their statements.
	held := decode[[]iam.Policy](t, s.do("GET", "/api/v1/user/policies", dev, nil).ok(t))
	var ids []string
	for _, p := range held {
		for _, st := range p.Statements {
			ids = append(ids, st.ID)
		}
	}
	if len(held) != 1 || held[0].ID != core.DeveloperPolicyID ||
		!slices.Equal(ids, []string{"developer-access-token", "developer-relay-proxy", "developer-project", "developer-env", "developer-flag", "developer-segment"}) {
		t.Errorf("developer policies %+v", held)
	}
	if owner := decode[[]iam.Policy](t, s.do("GET", "/api/v1/user/policies", s.owner, nil).ok(t)); len(owner) != 1 || owner[0].ID != core.OwnerPolicyID ||
		len(owner[0].Statements) != 1 || owner[0].Statements[0].ResourceType != "*" {
		t.Errorf("owner policies %+v", owner)
	}
	nobody, _ := s.addMember("nobody@example.com")
	none := s.do("GET", "/api/v1/user/policies", nobody, nil).ok(t)
	if string(none.Data) != "[]" {
		t.Errorf("policies of a member without any: %s, want []", none.Data)
	}

	actions := decode[[]access.ActionGroup](t, s.do("GET", "/api/v1/iam/actions", dev, nil).ok(t))
	if len(actions) != len(access.Catalogue) || actions[2].ResourceType != "iam" || actions[2].Actions[0] != "CanManageIAM" {
		t.Errorf("actions %+v", actions)
	}
	s.do("GET", "/api/v1/iam/actions", "", nil).fails(t, http.StatusUnauthorized, "Unauthorized")
}
