package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// The screens FeatBit's admin UI shows once the licence grants them, driven
// with the bodies its services send (modules/front-end/src/app/core/services)
// and checked for the fields its components read.

// members reads the members of a JSON object, so a test can tell an absent
// field from a null one, as the UI's `!== null` does.
func members(t *testing.T, raw json.RawMessage) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s is not an object: %v", raw, err)
	}
	return m
}

// TestFeatBitWorkspaceScreen: the workspace page's general and SSO forms
// (workspace.service.ts update and updateOidcSetting) send the workspace's
// id beside their fields and store the answer as the current workspace, so
// it must keep the licence; the SSO form reads the seven OIDC fields.
func TestFeatBitWorkspaceScreen(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)

	w := decode[iam.Workspace](t, s.do("PUT", "/api/v1/workspaces", s.owner,
		map[string]any{"id": s.wsID, "name": "Acme", "key": "acme"}).ok(t))
	if w.Name != "Acme" || w.Key != "acme" || !isBuntingLicense(t, w.License, s.wsID) {
		t.Fatalf("general settings answered %+v, want the change and the licence", w)
	}
	oidc := map[string]any{"id": s.wsID, "clientId": "bunting", "clientSecret": "top-secret",
		"tokenEndpoint": "https://id.example.com/token", "clientAuthenticationMethod": "client_secret_post",
		"authorizationEndpoint": "https://id.example.com/authorize", "scope": "openid email", "userEmailClaim": "mail"}
	r := s.do("PUT", "/api/v1/workspaces/sso-oidc", s.owner, oidc).ok(t)
	got := members(t, members(t, members(t, r.Data)["sso"])["oidc"])
	want := map[string]string{"clientId": `"bunting"`, "clientSecret": `"********"`, "tokenEndpoint": `"https://id.example.com/token"`,
		"clientAuthenticationMethod": `"client_secret_post"`, "authorizationEndpoint": `"https://id.example.com/authorize"`,
		"scope": `"openid email"`, "userEmailClaim": `"mail"`}
	for k, v := range want {
		if string(got[k]) != v {
			t.Errorf("sso.oidc.%s = %s, want %s", k, got[k], v)
		}
	}
	if w := decode[iam.Workspace](t, r); !isBuntingLicense(t, w.License, s.wsID) {
		t.Errorf("SSO settings answered licence %q, want Bunting's", w.License)
	}
	// The form sends back the masked secret it was given: the secret stays.
	oidc["clientSecret"], oidc["scope"] = iam.MaskedSecret, "openid email profile"
	s.do("PUT", "/api/v1/workspaces/sso-oidc", s.owner, oidc).ok(t)
	if n := s.count(`SELECT count(*) FROM workspaces WHERE sso_oidc->>'clientSecret' NOT IN ('', '********', 'top-secret')`); n != 1 {
		t.Error("sending the mask back lost the stored (sealed) secret")
	}

	// A member without the workspace's actions, and bad input.
	s.do("PUT", "/api/v1/workspaces", dev, map[string]any{"id": s.wsID, "name": "Mine", "key": "mine"}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", "/api/v1/workspaces/sso-oidc", dev, oidc).fails(t, http.StatusForbidden, "Forbidden")
	oidc["clientAuthenticationMethod"] = "magic"
	s.do("PUT", "/api/v1/workspaces/sso-oidc", s.owner, oidc).fails(t, http.StatusBadRequest, "clientAuthenticationMethod_is_invalid")
}

// TestFeatBitOrganizationScreen: the organization page adds one
// (organization-drawer: {name, key}), keeps the answer as an organization
// it switches to (id, name, key, initialized, settings, defaultPermissions),
// lists them with ?isSsoFirstLogin=, and onboards the new one, which starts
// uninitialized.
func TestFeatBitOrganizationScreen(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)

	// The UI always names the current organization; once the owner is in
	// two, a request without it has no organization to act in.
	home := []string{"Organization", s.orgID.String()}
	r := s.do("POST", "/api/v1/organizations", s.owner, map[string]string{"name": "Second", "key": "second"}, home...).ok(t)
	org := members(t, r.Data)
	for _, k := range []string{"id", "name", "key", "initialized", "settings", "defaultPermissions"} {
		if _, ok := org[k]; !ok {
			t.Errorf("created organization %s lacks %q", r.Data, k)
		}
	}
	created := decode[iam.Organization](t, r)
	if created.Name != "Second" || created.Key != "second" || created.Initialized || created.Settings.FlagSortedBy == "" ||
		created.DefaultPermissions.PolicyIDs == nil || created.DefaultPermissions.GroupIDs == nil {
		t.Fatalf("created %+v", created)
	}
	orgs := decode[[]iam.Organization](t, s.do("GET", "/api/v1/organizations?isSsoFirstLogin=false", s.owner, nil, home...).ok(t))
	if len(orgs) != 2 {
		t.Fatalf("organizations %+v, want both", orgs)
	}
	// Switching is the Organization header; the new one is onboarded.
	in := []string{"Organization", created.ID.String()}
	if ps := decode[[]core.Project](t, s.do("GET", "/api/v1/projects", s.owner, nil, in...).ok(t)); len(ps) != 0 {
		t.Errorf("a new organization has projects %+v", ps)
	}
	s.do("POST", "/api/v1/organizations/onboarding", s.owner, map[string]any{"organizationName": "Second", "organizationKey": "second",
		"projectName": "Shop", "projectKey": "shop", "environments": []string{"Prod", "Dev"}}, in...).ok(t)
	if ps := decode[[]core.Project](t, s.do("GET", "/api/v1/projects", s.owner, nil, in...).ok(t)); len(ps) != 1 || len(ps[0].Environments) != 2 {
		t.Errorf("after onboarding: %+v, want the project with two environments", ps)
	}

	// A member not allowed CreateOrg, a key in use, bad input, an
	// organization the caller is not in (named in the header: 403).
	s.do("POST", "/api/v1/organizations", dev, map[string]string{"name": "Mine", "key": "mine"}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("POST", "/api/v1/organizations", s.owner, map[string]string{"name": "Again", "key": "second"}, home...).
		fails(t, http.StatusUnprocessableEntity, "KeyHasBeenUsed")
	s.do("POST", "/api/v1/organizations", s.owner, map[string]string{"name": "", "key": "no spaces"}, home...).
		fails(t, http.StatusBadRequest, "name_is_required", "key_is_invalid")
	s.do("GET", "/api/v1/projects", dev, nil, in...).fails(t, http.StatusForbidden, "Forbidden")
}

// TestFeatBitPendingChangesDrawer: the drawer tells a schedule waiting for a
// change request by changeRequestId !== null, so a plain schedule's is null
// (not absent); it removes a schedule with DELETE …/schedules/{id}.
func TestFeatBitPendingChangesDrawer(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	// targeting.component.ts onSave, scheduling without a change request.
	s.do("POST", e.flags+"/pay/schedules", s.owner, map[string]any{
		"targeting": map[string]any{"targetUsers": []map[string]any{{"variationId": f.Variations[0].ID, "keyIds": []string{"alice"}}},
			"rules": []any{}, "fallthrough": f.Fallthrough, "exptIncludeAllTargets": true},
		"revision": f.Revision, "scheduledTime": time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z"),
		"title": "Later", "reviewers": []any{}, "reason": "", "withChangeRequest": false}).ok(t)
	r := s.do("GET", e.flags+"/pay/pending-changes", s.owner, nil).ok(t)
	var items []map[string]json.RawMessage
	must(t, json.Unmarshal(r.Data, &items))
	if len(items) != 1 {
		t.Fatalf("pending changes %s", r.Data)
	}
	p := items[0]
	if string(p["changeRequestId"]) != "null" || string(p["type"]) != `"Schedule"` || string(p["status"]) != `"PendingExecution"` {
		t.Errorf("pending schedule %s: want changeRequestId null, type Schedule, status PendingExecution", r.Data)
	}
	for _, k := range []string{"id", "flagId", "creatorId", "creatorName", "createdAt", "dataChange", "instructions",
		"scheduleTitle", "scheduledTime", "changeRequestReason", "reviewers"} {
		if _, ok := p[k]; !ok {
			t.Errorf("pending schedule lacks %q, which the drawer reads", k)
		}
	}
	var id uuid.UUID
	must(t, json.Unmarshal(p["id"], &id))
	if r := s.do("DELETE", e.flags+"/schedules/"+id.String(), s.owner, nil).ok(t); string(r.Data) != "true" {
		t.Errorf("delete answered %s", r.Data)
	}
}

// TestFeatBitPolicyEditorFineGrainedActions: with fine-grained access
// licensed, FeatBit's policy editor offers every flag and segment action,
// CopyFlagTo among them; a statement naming it is stored, and it is what
// decides a copy (TestCompareAndCopyNeedBothEnvironments).
func TestFeatBitPolicyEditorFineGrainedActions(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	p := decode[iam.Policy](t, s.do("POST", "/api/v1/policies", s.owner, map[string]string{"name": "Copier", "key": "copier"}).ok(t))
	st := []access.Statement{{ID: "copy", ResourceType: access.TypeFlag, Effect: "allow",
		Actions: []string{"CopyFlagTo", "UpdateFlagName"}, Resources: []string{"project/*:env/*:flag/*"}}}
	got := decode[iam.Policy](t, s.do("PUT", "/api/v1/policies/"+p.ID.String()+"/statements", s.owner, st).ok(t))
	if len(got.Statements) != 1 || strings.Join(got.Statements[0].Actions, ",") != "CopyFlagTo,UpdateFlagName" {
		t.Errorf("statements %+v", got.Statements)
	}
	// An action FeatBit does not have is still refused.
	st[0].Actions = []string{"CopyFlagEverywhere"}
	s.do("PUT", "/api/v1/policies/"+p.ID.String()+"/statements", s.owner, st).fails(t, http.StatusBadRequest, "statements_is_invalid")
	// The catalogue the pages and GET /iam/actions offer lists it with the flag's actions.
	var listed bool
	for _, g := range decode[[]access.ActionGroup](t, s.do("GET", "/api/v1/iam/actions", s.owner, nil).ok(t)) {
		for _, a := range g.Actions {
			listed = listed || (a == access.CopyFlagTo && g.ResourceType == access.TypeFlag)
		}
	}
	if !listed {
		t.Error("GET /iam/actions does not list CopyFlagTo among the flag actions")
	}
}
