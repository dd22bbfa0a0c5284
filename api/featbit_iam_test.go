package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// policyVm is FeatBit's PolicyVm, decoded by its own field names.
type policyVm struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Key         string            `json:"key"`
	Type        string            `json:"type"`
	Description string            `json:"description"`
	Statements  []json.RawMessage `json:"statements"`
	UpdatedAt   *string           `json:"updatedAt"`
}

// TestMemberPoliciesAnswerPolicyVms: GET /members/{id}/policies and GET
// /user/policies answer FeatBit's PolicyVm[]: every policy held, directly or
// through a group, each once.
func TestMemberPoliciesAnswerPolicyVms(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	custom := s.createPolicy("Release managers", "release-managers")
	g := s.createGroup("Releasers")
	s.do("PUT", "/api/v1/groups/"+g.ID.String()+"/add-policy/"+custom.ID.String(), s.owner, nil).ok(t)
	s.do("PUT", "/api/v1/groups/"+g.ID.String()+"/add-policy/"+core.DeveloperPolicyID.String(), s.owner, nil).ok(t)
	m := s.addByEmail(map[string]any{"email": "dev@example.com", "policyIds": []uuid.UUID{core.DeveloperPolicyID}, "groupIds": []uuid.UUID{g.ID}})

	held := decode[[]policyVm](t, s.do("GET", "/api/v1/members/"+m.ID.String()+"/policies", s.owner, nil).ok(t))
	var keys []string
	for _, p := range held {
		keys = append(keys, p.Key)
		if p.ID == "" || p.Name == "" || p.Type == "" || p.Statements == nil || p.UpdatedAt == nil {
			t.Errorf("policy %+v lacks a PolicyVm field", p)
		}
	}
	if !slices.Equal(keys, []string{"developer", "release-managers"}) {
		t.Fatalf("member policies %v, want Developer (direct and through the group, once) and the group's custom one", keys)
	}
	s.do("GET", "/api/v1/members/"+uuid.NewString()+"/policies", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")

	// The owner's own policies; a Service token holds none.
	mine := decode[[]policyVm](t, s.do("GET", "/api/v1/user/policies", s.owner, nil).ok(t))
	if len(mine) != 1 || mine[0].ID != core.OwnerPolicyID.String() || mine[0].Key != "owner" {
		t.Fatalf("owner's policies %+v, want Owner", mine)
	}
	svc := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]any{"name": "svc", "type": "Service",
		"permissions": []map[string]any{{"resourceType": "project", "effect": "allow", "actions": []string{"CanAccessProject"}, "resources": []string{"project/*"}}}}).ok(t))
	if got := decode[[]policyVm](t, s.do("GET", "/api/v1/user/policies", svc.Token, nil).ok(t)); len(got) != 0 {
		t.Fatalf("a Service token's policies %+v, want none", got)
	}
}

// TestRemoveFromWorkspace: DELETE /members/remove-from-workspace/{id}
// answers true and takes the user out of every organization of the
// workspace and out of the workspace; it needs IAM rights in each of those
// organizations and never removes an organization's last owner.
func TestRemoveFromWorkspace(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	ctx := context.Background()
	second, err := s.q.CreateOrganization(ctx, db.CreateOrganizationParams{WorkspaceID: s.wsID, Name: "Second", Key: "second",
		DefaultPolicyIds: []uuid.UUID{}, DefaultGroupIds: []uuid.UUID{}})
	must(t, err)
	m := s.addByEmail(map[string]any{"email": "ann@example.com", "policyIds": []uuid.UUID{core.DeveloperPolicyID}})
	_, err = s.q.AddOrganizationUser(ctx, db.AddOrganizationUserParams{OrganizationID: second.ID, UserID: m.ID})
	must(t, err)
	orgsOf := func(id uuid.UUID) int {
		return s.count(`SELECT count(*) FROM organization_users WHERE user_id = $1`, id)
	}
	path := "/api/v1/members/remove-from-workspace/" + m.ID.String()

	// The owner manages IAM here but is no member of the second organization: refused, nothing changes.
	s.do("DELETE", path, s.owner, nil).fails(t, http.StatusForbidden, "Forbidden")
	if orgsOf(m.ID) != 2 {
		t.Fatalf("a refused removal changed memberships")
	}
	owner := s.ownerID()
	_, err = s.q.AddOrganizationUser(ctx, db.AddOrganizationUserParams{OrganizationID: second.ID, UserID: owner})
	must(t, err)
	s.changeAccess(`INSERT INTO member_policies (organization_id, user_id, policy_id) VALUES ($1, $2, $3)`, second.ID, owner, core.OwnerPolicyID)
	org := s.orgID.String() // the owner now belongs to two organizations

	if r := s.do("DELETE", path, s.owner, nil, "Organization", org).ok(t); string(r.Data) != "true" {
		t.Fatalf("remove-from-workspace answered %s, want true", r.Data)
	}
	if n := orgsOf(m.ID); n != 0 {
		t.Errorf("still in %d organizations", n)
	}
	if n := s.count(`SELECT count(*) FROM workspace_users WHERE user_id = $1`, m.ID); n != 0 {
		t.Errorf("still in the workspace")
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'Member' AND ref_id = $1 AND operation = 'Remove'`, m.ID.String()); n != 1 {
		t.Errorf("%d audit entries for the removal, want 1", n)
	}
	s.do("DELETE", path, s.owner, nil, "Organization", org).fails(t, http.StatusNotFound, "ResourceNotFound")

	// The last owner of an organization stays.
	s.do("DELETE", "/api/v1/members/remove-from-workspace/"+owner.String(), s.owner, nil, "Organization", org).
		fails(t, http.StatusUnprocessableEntity, "CannotRemoveLastOwner")
	if n := orgsOf(owner); n != 2 {
		t.Errorf("the refused removal of the last owner left them in %d organizations", n)
	}
}

// TestAccessTokenListFilters: GET /access-tokens honours FeatBit's
// AccessTokenFilter: name, type and creatorId.
func TestAccessTokenListFilters(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	dev, devID := s.addMember("dev@example.com", core.DeveloperPolicyID)
	create := func(token, name, typ string) {
		body := map[string]any{"name": name, "type": typ}
		if typ == "Service" {
			body["permissions"] = []map[string]any{{"resourceType": "project", "effect": "allow", "actions": []string{"CanAccessProject"}, "resources": []string{"project/*"}}}
		}
		s.do("POST", "/api/v1/access-tokens", token, body).ok(t)
	}
	create(s.owner, "deploy", "Personal")
	create(s.owner, "ci", "Service")
	create(dev, "laptop", "Personal")
	names := func(q string) []string {
		t.Helper()
		var out []string
		for _, tok := range decode[core.Paged[accesstokens.AccessToken]](t, s.do("GET", "/api/v1/access-tokens"+q, s.owner, nil).ok(t)).Items {
			out = append(out, tok.Name)
		}
		slices.Sort(out)
		return out
	}
	for q, want := range map[string][]string{
		"":                             {"ci", "deploy", "laptop"},
		"?type=Service":                {"ci"},
		"?type=Personal":               {"deploy", "laptop"},
		"?creatorId=" + devID.String(): {"laptop"},
		"?type=Service&creatorId=" + devID.String():        nil,
		"?creatorId=" + s.ownerID().String() + "&name=DEP": {"deploy"},
	} {
		if got := names(q); !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", q, got, want)
		}
	}
	s.do("GET", "/api/v1/access-tokens?type=Robot", s.owner, nil).fails(t, http.StatusBadRequest, "type_is_invalid")
	s.do("GET", "/api/v1/access-tokens?creatorId=me", s.owner, nil).fails(t, http.StatusBadRequest, "creatorId_is_invalid")
}

// auditLogVm is FeatBit's AuditLogVm as its clients read it.
type auditLogVm struct {
	ID         string `json:"id"`
	RefID      string `json:"refId"`
	RefType    string `json:"refType"`
	Operation  string `json:"operation"`
	DataChange struct {
		Previous string `json:"previous"`
		Current  string `json:"current"`
	} `json:"dataChange"`
	Comment      string `json:"comment"`
	CreatorID    string `json:"creatorId"`
	CreatorName  string `json:"creatorName"`
	CreatorEmail string `json:"creatorEmail"`
	CreatedAt    string `json:"createdAt"`
}

// TestAuditLogFeatBitFilters: the audit log honours FeatBit's creatorId and
// crossEnvironment, and its items carry FeatBit's dataChange (JSON text, ""
// for none) and creator fields.
func TestAuditLogFeatBitFilters(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	p := s.createProject("Web", "web")
	prod, dev := p.Environments[0], p.Environments[1]
	// A member who may read prod only.
	reader, readerID := s.addMember("reader@example.com")
	pol := s.createPolicy("Prod reader", "prod-reader")
	s.do("PUT", "/api/v1/policies/"+pol.ID.String()+"/statements", s.owner, []access.Statement{
		{ID: "r", ResourceType: "env", Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: []string{"project/web:env/" + prod.Key}},
		{ID: "f", ResourceType: "flag", Effect: "allow", Actions: []string{string(access.CreateFlag)}, Resources: []string{"project/web:env/" + prod.Key + ":flag/*"}},
	}).ok(t)
	s.do("PUT", "/api/v1/members/"+readerID.String()+"/add-policy/"+pol.ID.String(), s.owner, nil).ok(t)

	envFlags := func(envID uuid.UUID) string { return "/api/v1/envs/" + envID.String() + "/feature-flags" }
	s.do("POST", envFlags(prod.ID), s.owner, map[string]any{"name": "Pay", "key": "pay"}).ok(t)
	s.do("POST", envFlags(prod.ID), reader, map[string]any{"name": "Search", "key": "search"}).ok(t)
	devFlag := decode[flagstore.Flag](t, s.do("POST", envFlags(dev.ID), s.owner, map[string]any{"name": "Dark", "key": "dark"}).ok(t))

	list := func(token, q string) []auditLogVm {
		t.Helper()
		return decode[core.Paged[auditLogVm]](t, s.do("GET", "/api/v1/envs/"+prod.ID.String()+"/audit-logs"+q, token, nil).ok(t)).Items
	}
	all := list(s.owner, "")
	if len(all) != 2 {
		t.Fatalf("prod history has %d entries, want 2", len(all))
	}
	created := all[0]
	if created.DataChange.Previous != "" || created.Operation != "Create" {
		t.Fatalf("creation's dataChange.previous %q, want \"\"", created.DataChange.Previous)
	}
	var snapshot map[string]any
	if err := json.Unmarshal([]byte(created.DataChange.Current), &snapshot); err != nil || snapshot["key"] != "search" {
		t.Fatalf("dataChange.current %q is not the created flag as JSON text", created.DataChange.Current)
	}
	if created.CreatorID != readerID.String() || created.CreatorName == "" || created.CreatorEmail != "reader@example.com" {
		t.Fatalf("creator %q %q %q, want the reader", created.CreatorID, created.CreatorName, created.CreatorEmail)
	}

	byReader := list(s.owner, "?creatorId="+readerID.String())
	if len(byReader) != 1 || byReader[0].RefID != created.RefID {
		t.Errorf("creatorId filter: %+v, want the reader's one entry", byReader)
	}
	s.do("GET", "/api/v1/envs/"+prod.ID.String()+"/audit-logs?creatorId=x", s.owner, nil).fails(t, http.StatusBadRequest, "creatorId_is_invalid")
	s.do("GET", "/api/v1/envs/"+prod.ID.String()+"/audit-logs?crossEnvironment=maybe", s.owner, nil).fails(t, http.StatusBadRequest, "crossEnvironment_is_invalid")

	// Across environments: the dev flag's history is reached from prod, but
	// only by a caller who may read dev.
	if got := list(s.owner, "?refId="+devFlag.ID.String()); len(got) != 0 {
		t.Errorf("without crossEnvironment another environment's entries appear: %+v", got)
	}
	if got := list(s.owner, "?crossEnvironment=true&refId="+devFlag.ID.String()); len(got) != 1 || got[0].RefID != devFlag.ID.String() {
		t.Errorf("crossEnvironment: %+v, want the dev flag's creation", got)
	}
	if got := list(s.owner, "?crossEnvironment=true"); len(got) != 3 {
		t.Errorf("crossEnvironment: %d entries, want the 3 of prod and dev", len(got))
	}
	if got := list(reader, "?crossEnvironment=true"); len(got) != 2 {
		t.Errorf("crossEnvironment for a prod-only reader: %d entries, want prod's 2", len(got))
	}
}
