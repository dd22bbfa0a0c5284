package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

func TestGroupLifecycle(t *testing.T) {
	s := newServer(t)
	created := decode[iam.Group](t, s.do("POST", "/api/v1/groups", s.owner, map[string]string{"name": " Release team ", "description": "ships"}).ok(t))
	if created.Name != "Release team" || created.Description != "ships" || created.ID == uuid.Nil || created.UpdatedAt.IsZero() {
		t.Fatalf("created %+v", created)
	}
	path := "/api/v1/groups/" + created.ID.String()
	if got := decode[iam.Group](t, s.do("GET", path, s.owner, nil).ok(t)); got != created {
		t.Fatalf("got %+v, want %+v", got, created)
	}
	s.do("POST", "/api/v1/groups", s.owner, map[string]string{"name": "RELEASE TEAM"}).fails(t, http.StatusUnprocessableEntity, "NameHasBeenUsed")
	other := s.createGroup("Other")
	s.do("PUT", "/api/v1/groups/"+other.ID.String(), s.owner, map[string]string{"name": "release team"}).fails(t, http.StatusUnprocessableEntity, "NameHasBeenUsed")

	updated := decode[iam.Group](t, s.do("PUT", path, s.owner, map[string]string{"name": "Releasers"}).ok(t))
	if updated.Name != "Releasers" || updated.Description != "" || updated.ID != created.ID {
		t.Fatalf("updated %+v", updated)
	}
	// Renaming a group to its own name in another case is allowed.
	s.do("PUT", path, s.owner, map[string]string{"name": "RELEASERS"}).ok(t)

	s.do("DELETE", path, s.owner, nil).ok(t)
	s.do("GET", path, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("DELETE", path, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("PUT", path, s.owner, map[string]string{"name": "x"}).fails(t, http.StatusNotFound, "ResourceNotFound")
	if n := s.audits("Group"); n != 5 {
		t.Errorf("%d group audit entries, want 5 (2 creates, 2 updates, delete)", n)
	}
}

func TestGroupValidationAndListing(t *testing.T) {
	s := newServer(t)
	s.do("POST", "/api/v1/groups", s.owner, map[string]string{}).fails(t, http.StatusBadRequest, "name_is_required")
	s.do("POST", "/api/v1/groups", s.owner, map[string]string{"name": strings.Repeat("n", 129), "description": strings.Repeat("d", 513)}).
		fails(t, http.StatusBadRequest, "name_is_invalid", "description_is_invalid")
	s.do("POST", "/api/v1/groups", s.owner, `{"name": 1}`).fails(t, http.StatusBadRequest, "body_is_invalid")
	g := s.createGroup("Ops")
	s.do("PUT", "/api/v1/groups/"+g.ID.String(), s.owner, map[string]string{"name": ""}).fails(t, http.StatusBadRequest, "name_is_required")
	if n := s.count(`SELECT count(*) FROM groups`); n != 1 {
		t.Fatalf("%d groups stored, want 1", n)
	}

	for _, name := range []string{"beta", "Alpha", "alphabet", "gamma_1"} {
		s.createGroup(name)
	}
	tests := []struct {
		query string
		total int64
		want  []string
	}{
		{"", 5, []string{"Alpha", "alphabet", "beta", "gamma_1", "Ops"}},
		{"?NAME=ALPHA", 2, []string{"Alpha", "alphabet"}},
		{"?name=alpha&pageIndex=1&PAGESIZE=1", 2, []string{"alphabet"}},
		{"?name=_", 1, []string{"gamma_1"}},
		{"?name=%25", 0, nil},
		{"?name=+ops+", 1, []string{"Ops"}},
	}
	for _, tt := range tests {
		got := decode[core.Paged[iam.Group]](t, s.do("GET", "/api/v1/groups"+tt.query, s.owner, nil).ok(t))
		var names []string
		for _, g := range got.Items {
			names = append(names, g.Name)
		}
		if got.TotalCount != tt.total || !slices.Equal(names, tt.want) {
			t.Errorf("%s: got %d %v, want %d %v", tt.query, got.TotalCount, names, tt.total, tt.want)
		}
	}
	s.do("GET", "/api/v1/groups?pageSize=101", s.owner, nil).fails(t, http.StatusBadRequest, "pageSize_is_invalid")
}

func TestGroupMembers(t *testing.T) {
	s := newServer(t)
	g := s.createGroup("QA")
	path := "/api/v1/groups/" + g.ID.String()
	var ids []uuid.UUID
	for _, email := range []string{"ann@example.com", "bob@example.com", "cat@example.com"} {
		_, id := s.addMember(email)
		ids = append(ids, id)
	}
	s.do("PUT", path+"/add-member/"+ids[0].String(), s.owner, nil).ok(t)
	s.do("PUT", path+"/add-member/"+ids[1].String(), s.owner, nil).ok(t)
	s.do("PUT", path+"/add-member/"+ids[1].String(), s.owner, nil).ok(t) // idempotent
	if n := s.audits("Member"); n != 2 {
		t.Errorf("%d member audit entries after adding twice, want 2", n)
	}
	tests := []struct {
		query string
		total int64
		want  []string
		flags []bool
	}{
		{"", 2, []string{"bob@example.com", "ann@example.com"}, []bool{true, true}},
		{"?getAllMembers=true", 4, []string{"cat@example.com", "bob@example.com", "ann@example.com", ownerEmail}, []bool{false, true, true, false}},
		{"?searchText=ANN", 1, []string{"ann@example.com"}, []bool{true}},
		{"?SEARCHTEXT=cat&GetAllMembers=1", 1, []string{"cat@example.com"}, []bool{false}},
		{"?searchText=cat", 0, nil, nil},
		{"?pageIndex=1&pageSize=1", 2, []string{"ann@example.com"}, []bool{true}},
	}
	for _, tt := range tests {
		got := decode[core.Paged[iam.GroupMember]](t, s.do("GET", path+"/members"+tt.query, s.owner, nil).ok(t))
		var emails []string
		var flags []bool
		for _, m := range got.Items {
			emails = append(emails, m.Email)
			flags = append(flags, m.IsGroupMember)
		}
		if got.TotalCount != tt.total || !slices.Equal(emails, tt.want) || !slices.Equal(flags, tt.flags) {
			t.Errorf("%s: got %d %v %v, want %d %v %v", tt.query, got.TotalCount, emails, flags, tt.total, tt.want, tt.flags)
		}
	}
	s.do("GET", path+"/members?getAllMembers=yes", s.owner, nil).fails(t, http.StatusBadRequest, "getAllMembers_is_invalid")

	s.do("PUT", path+"/remove-member/"+ids[0].String(), s.owner, nil).ok(t)
	s.do("PUT", path+"/remove-member/"+ids[0].String(), s.owner, nil).ok(t) // idempotent
	s.do("PUT", path+"/remove-member/"+ids[2].String(), s.owner, nil).ok(t) // never was in it
	if got := decode[core.Paged[iam.GroupMember]](t, s.do("GET", path+"/members", s.owner, nil).ok(t)); got.TotalCount != 1 {
		t.Errorf("group has %d members after removal, want 1", got.TotalCount)
	}
	if n := s.audits("Member"); n != 3 {
		t.Errorf("%d member audit entries, want 3", n)
	}

	theirs := s.otherOrganizationIAM()
	for _, p := range []string{
		"/add-member/" + theirs.member.String(), "/remove-member/" + theirs.member.String(),
		"/add-member/" + uuid.NewString(), "/add-member/x",
	} {
		s.do("PUT", path+p, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	}
	for _, p := range []string{"/api/v1/groups/" + theirs.group.String(), "/api/v1/groups/" + uuid.NewString(), "/api/v1/groups/x"} {
		s.do("GET", p, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
		s.do("GET", p+"/members", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
		s.do("GET", p+"/policies", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
		s.do("PUT", p, s.owner, map[string]string{"name": "x"}).fails(t, http.StatusNotFound, "ResourceNotFound")
		s.do("DELETE", p, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
		s.do("PUT", p+"/add-member/"+ids[0].String(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
		s.do("PUT", p+"/add-policy/"+core.DeveloperPolicyID.String(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	}
	if n := s.count(`SELECT count(*) FROM group_members WHERE group_id = $1`, theirs.group); n != 0 {
		t.Errorf("another organization's group got %d members", n)
	}
}

func TestGroupPoliciesGrantPowers(t *testing.T) {
	s := newServer(t)
	g := s.createGroup("Devs")
	path := "/api/v1/groups/" + g.ID.String()
	mine := s.createPolicy("Flag creators", "flag-creators")
	project := "/api/v1/projects/" + s.createProject("Web", "web").ID.String()
	token, id := s.addMember("ann@example.com")
	s.do("PUT", path+"/add-member/"+id.String(), s.owner, nil).ok(t)
	s.do("GET", project, token, nil).fails(t, http.StatusForbidden, "Forbidden")

	s.do("PUT", path+"/add-policy/"+core.DeveloperPolicyID.String(), s.owner, nil).ok(t)
	s.do("PUT", path+"/add-policy/"+core.DeveloperPolicyID.String(), s.owner, nil).ok(t) // idempotent
	s.do("GET", project, token, nil).ok(t)
	s.do("POST", "/api/v1/projects", token, map[string]string{"name": "No", "key": "no"}).fails(t, http.StatusForbidden, "Forbidden")

	tests := []struct {
		query string
		total int64
		want  []string
		flags []bool
	}{
		{"", 1, []string{"Developer"}, []bool{true}},
		{"?getAllPolicies=true", 4, []string{"Administrator", "Developer", "Owner", "Flag creators"}, []bool{false, true, false, false}},
		{"?GETALLPOLICIES=true&name=CREAT", 1, []string{"Flag creators"}, []bool{false}},
		{"?name=creat", 0, nil, nil},
	}
	for _, tt := range tests {
		got := decode[core.Paged[iam.GroupPolicy]](t, s.do("GET", path+"/policies"+tt.query, s.owner, nil).ok(t))
		var names []string
		var flags []bool
		for _, p := range got.Items {
			names = append(names, p.Name)
			flags = append(flags, p.IsGroupPolicy)
		}
		if got.TotalCount != tt.total || !slices.Equal(names, tt.want) || !slices.Equal(flags, tt.flags) {
			t.Errorf("%s: got %d %v %v, want %d %v %v", tt.query, got.TotalCount, names, flags, tt.total, tt.want, tt.flags)
		}
	}
	if got := decode[core.Paged[iam.GroupPolicy]](t, s.do("GET", path+"/policies", s.owner, nil).ok(t)); got.Items[0].Type != "SysManaged" {
		t.Errorf("group policy %+v lacks its type", got.Items[0])
	}

	inherited := decode[core.Paged[iam.InheritedPolicy]](t, s.do("GET", "/api/v1/members/"+id.String()+"/inherited-policies", s.owner, nil).ok(t))
	if inherited.TotalCount != 1 || inherited.Items[0].ID != core.DeveloperPolicyID || inherited.Items[0].GroupName != "Devs" || inherited.Items[0].GroupID != g.ID {
		t.Errorf("inherited %+v", inherited)
	}

	s.do("PUT", path+"/remove-policy/"+core.DeveloperPolicyID.String(), s.owner, nil).ok(t)
	s.do("PUT", path+"/remove-policy/"+core.DeveloperPolicyID.String(), s.owner, nil).ok(t)
	s.do("PUT", path+"/remove-policy/"+mine.ID.String(), s.owner, nil).ok(t) // never attached
	s.do("GET", project, token, nil).fails(t, http.StatusForbidden, "Forbidden")
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'Group' AND operation = 'Update'`); n != 2 {
		t.Errorf("%d group updates recorded, want 2 (one add, one remove)", n)
	}

	theirs := s.otherOrganizationIAM()
	for _, p := range []string{theirs.policy.String(), uuid.NewString(), "x"} {
		s.do("PUT", path+"/add-policy/"+p, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
		s.do("PUT", path+"/remove-policy/"+p, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	}
}

func TestDeleteGroupRemovesItsLinks(t *testing.T) {
	s := newServer(t)
	g := s.createGroup("Devs")
	project := "/api/v1/projects/" + s.createProject("Web", "web").ID.String()
	token, id := s.addMember("ann@example.com")
	s.do("PUT", "/api/v1/groups/"+g.ID.String()+"/add-member/"+id.String(), s.owner, nil).ok(t)
	s.do("PUT", "/api/v1/groups/"+g.ID.String()+"/add-policy/"+core.DeveloperPolicyID.String(), s.owner, nil).ok(t)
	s.do("PUT", "/api/v1/organizations", s.owner, map[string]any{"name": "Default Organization",
		"defaultPermissions": map[string]any{"policyIds": []uuid.UUID{core.DeveloperPolicyID}, "groupIds": []uuid.UUID{g.ID}}}).ok(t)
	s.do("GET", project, token, nil).ok(t)

	s.do("DELETE", "/api/v1/groups/"+g.ID.String(), s.owner, nil).ok(t)
	s.do("GET", project, token, nil).fails(t, http.StatusForbidden, "Forbidden")
	if n := s.count(`SELECT count(*) FROM group_members WHERE group_id = $1`, g.ID) + s.count(`SELECT count(*) FROM group_policies WHERE group_id = $1`, g.ID); n != 0 {
		t.Errorf("%d links of the deleted group remain", n)
	}
	orgs := decode[[]iam.Organization](t, s.do("GET", "/api/v1/organizations", s.owner, nil).ok(t))
	if len(orgs[0].DefaultPermissions.GroupIDs) != 0 || len(orgs[0].DefaultPermissions.PolicyIDs) != 1 {
		t.Errorf("default permissions %+v still name the deleted group", orgs[0].DefaultPermissions)
	}
}
