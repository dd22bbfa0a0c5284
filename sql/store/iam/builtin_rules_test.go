package iam

// Tests of the IAM rules that are pure functions: they need no database and
// run in milliseconds (go test -run 'Rules' ./sql/store/iam/).

import (
	"testing"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// builtin returns the statements of the built-in policy with key.
func builtin(t *testing.T, key string) []access.Statement {
	t.Helper()
	for _, p := range core.BuiltinPolicies {
		if p.Key == key {
			return p.Statements
		}
	}
	t.Fatalf("no built-in policy %q", key)
	return nil
}

// The built-in policies are FeatBit's, statement by statement: the same ids
// as FeatBit's, and for each resource type the same actions on the same
// resources (written out here from FeatBit's seeds, not read from the code).
func TestRulesBuiltinPolicyStatements(t *testing.T) {
	type stmt struct {
		resourceType, resource string
		actions                []string
	}
	want := map[string][]stmt{
		"owner": {{"*", "*", []string{"*"}}},
		"administrator": {
			{"organization", "organization/*", []string{"UpdateOrgSortFlagsBy", "UpdateOrgName", "UpdateOrgDefaultUserPermissions", "CreateOrg"}},
			{"iam", "iam/*", []string{"CanManageIAM"}},
			{"access-token", "access-token/*", []string{"ManageServiceAccessTokens", "ManagePersonalAccessTokens", "ListAccessTokens"}},
			{"relay-proxy", "relay-proxy/*", []string{"ManageRelayProxies", "ListRelayProxies"}},
			{"project", "project/*", []string{"CanAccessProject", "CreateProject", "DeleteProject", "UpdateProjectSettings", "CreateEnv"}},
			{"env", "project/*:env/*", []string{"CanAccessEnv", "DeleteEnv", "UpdateEnvSettings", "CreateEnvSecret", "DeleteEnvSecret", "UpdateEnvSecret"}},
			{"workspace", "workspace/*", []string{"UpdateWorkspaceGeneralSettings", "UpdateWorkspaceLicense", "UpdateWorkspaceSSOSettings"}},
			{"flag", "project/*:env/*:flag/*", []string{"*"}},
			{"segment", "project/*:env/*:segment/*", []string{"*"}},
		},
		"developer": {
			{"access-token", "access-token/*", []string{"ManageServiceAccessTokens", "ManagePersonalAccessTokens", "ListAccessTokens"}},
			{"relay-proxy", "relay-proxy/*", []string{"ManageRelayProxies", "ListRelayProxies"}},
			{"project", "project/*", []string{"CanAccessProject"}},
			{"env", "project/*:env/*", []string{"CanAccessEnv"}},
			{"flag", "project/*:env/*:flag/*", []string{"*"}},
			{"segment", "project/*:env/*:segment/*", []string{"*"}},
		},
	}
	ids := map[string]string{
		"owner":         "98881f6a-5c6c-4277-bcf7-fda94c538785",
		"administrator": "3e961f0f-6fd4-4cf4-910f-52d356f8cc08",
		"developer":     "66f3687f-939d-4257-bd3f-c3553d39e1b6",
	}
	if len(core.BuiltinPolicies) != 3 {
		t.Fatalf("%d built-in policies, want 3 (owner, administrator, developer)", len(core.BuiltinPolicies))
	}
	for _, p := range core.BuiltinPolicies {
		if p.ID.String() != ids[p.Key] {
			t.Errorf("%s: id %s, want FeatBit's %s", p.Key, p.ID, ids[p.Key])
		}
		got := p.Statements
		if len(got) != len(want[p.Key]) {
			t.Errorf("%s: %d statements, want %d", p.Key, len(got), len(want[p.Key]))
			continue
		}
		for i, w := range want[p.Key] {
			g := got[i]
			if g.ResourceType != w.resourceType || g.Effect != "allow" || !sameSet(g.Resources, []string{w.resource}) || !sameSet(g.Actions, w.actions) {
				t.Errorf("%s statement %d: got %s %s %v on %v, want %s allow %v on %s", p.Key, i, g.ResourceType, g.Effect, g.Actions, g.Resources, w.resourceType, w.actions, w.resource)
			}
		}
	}
}

// What each built-in policy lets its holder do, as a member would check it.
func TestRulesBuiltinPolicyGrants(t *testing.T) {
	const (
		org     = "organization/acme"
		ws      = "workspace/default-workspace"
		project = "project/web"
		env     = "project/web:env/prod"
		flag    = "project/web:env/prod:flag/checkout;beta"
		segment = "project/web:env/prod:segment/testers"
	)
	tests := []struct {
		action                    access.Action
		rn                        string
		owner, administrator, dev bool
	}{
		{access.DeleteOrg, org, true, false, false}, // Bunting's own action: only Owner's "*"
		{access.UpdateOrgName, org, true, true, false},
		{access.UpdateOrgDefaultUserPermissions, org, true, true, false},
		{access.UpdateOrgSortFlagsBy, org, true, true, false},
		{access.CreateOrg, "organization/*", true, true, false},
		{access.UpdateWorkspaceGeneralSettings, ws, true, true, false},
		{access.UpdateWorkspaceLicense, ws, true, true, false},
		{access.UpdateWorkspaceSSOSettings, ws, true, true, false},
		{access.CanManageIAM, "iam/*", true, true, false},
		{access.ListAccessTokens, "access-token/*", true, true, true},
		{access.ManagePersonalAccessTokens, "access-token/*", true, true, true},
		{access.ManageServiceAccessTokens, "access-token/*", true, true, true},
		{access.ListRelayProxies, "relay-proxy/*", true, true, true},
		{access.ManageRelayProxies, "relay-proxy/*", true, true, true},
		{access.CanAccessProject, project, true, true, true},
		{access.CreateProject, project, true, true, false},
		{access.DeleteProject, project, true, true, false},
		{access.UpdateProjectSettings, project, true, true, false},
		{access.CreateEnv, "project/web:env/*", true, true, false},
		{access.CanAccessEnv, env, true, true, true},
		{access.DeleteEnv, env, true, true, false},
		{access.UpdateEnvSettings, env, true, true, false},
		{access.CreateEnvSecret, env, true, true, false},
		{access.UpdateEnvSecret, env, true, true, false},
		{access.DeleteEnvSecret, env, true, true, false},
		{access.CreateFlag, "project/web:env/prod:flag/*", true, true, true},
		{access.ToggleFlag, flag, true, true, true},
		{access.DeleteFlag, flag, true, true, true},
		{access.UpdateFlagTargetingRules, flag, true, true, true},
		{access.CreateSegment, "project/web:env/prod:segment/*", true, true, true},
		{access.UpdateSegmentRules, segment, true, true, true},
		{access.DeleteSegment, segment, true, true, true},
		// A flag action on a segment's name is nobody's but Owner's, whose
		// statement covers every type.
		{access.ToggleFlag, segment, true, false, false},
	}
	owner, admin, dev := builtin(t, "owner"), builtin(t, "administrator"), builtin(t, "developer")
	for _, tt := range tests {
		for _, c := range []struct {
			name string
			st   []access.Statement
			want bool
		}{{"owner", owner, tt.owner}, {"administrator", admin, tt.administrator}, {"developer", dev, tt.dev}} {
			if got := access.Allows(c.st, tt.action, tt.rn); got != c.want {
				t.Errorf("%s: %s on %s = %v, want %v", c.name, tt.action, tt.rn, got, c.want)
			}
		}
	}
}

// Resource names the store checks permissions on, as statements name them.
func TestRulesResourceNames(t *testing.T) {
	tests := []struct{ got, want string }{
		{core.WorkspaceRN("default-workspace"), "workspace/default-workspace"},
		{core.OrganizationRN("acme"), "organization/acme"},
		{core.OrganizationRN("*"), "organization/*"},
		{core.ProjectRN("web"), "project/web"},
		{core.ProjectRN("*"), "project/*"},
		{core.EnvRN("web", "prod"), "project/web:env/prod"},
		{core.EnvRN("web", "*"), "project/web:env/*"},
		{core.IAMRN, "iam/*"},
		{core.AccessTokenRN, "access-token/*"},
		{core.RelayProxyRN, "relay-proxy/*"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// Two lists of statements say the same when each statement has the same
// type and effect and the same actions and resources in any order; ids and
// repeats do not count, the order of statements does.
func TestRulesSameStatements(t *testing.T) {
	a := access.Statement{ID: "1", ResourceType: "flag", Effect: "allow", Actions: []string{"ToggleFlag", "UpdateFlagName"}, Resources: []string{"project/*:env/*:flag/*"}}
	b := access.Statement{ID: "2", ResourceType: "segment", Effect: "deny", Actions: []string{"*"}, Resources: []string{"project/*:env/prod:segment/*", "project/x"}}
	reordered := a
	reordered.ID = ""
	reordered.Actions = []string{"UpdateFlagName", "ToggleFlag", "ToggleFlag"}
	denied := a
	denied.Effect = "deny"
	otherType := a
	otherType.ResourceType = "*"
	fewer := a
	fewer.Actions = []string{"ToggleFlag"}
	otherResource := b
	otherResource.Resources = []string{"project/*:env/prod:segment/*"}
	tests := []struct {
		name string
		x, y []access.Statement
		want bool
	}{
		{"both empty", nil, []access.Statement{}, true},
		{"same", []access.Statement{a, b}, []access.Statement{a, b}, true},
		{"ids and action order aside", []access.Statement{reordered, b}, []access.Statement{a, b}, true},
		{"statement order counts", []access.Statement{b, a}, []access.Statement{a, b}, false},
		{"effect", []access.Statement{denied}, []access.Statement{a}, false},
		{"resource type", []access.Statement{otherType}, []access.Statement{a}, false},
		{"an action fewer", []access.Statement{fewer}, []access.Statement{a}, false},
		{"a resource fewer", []access.Statement{otherResource}, []access.Statement{b}, false},
		{"a statement more", []access.Statement{a, b}, []access.Statement{a}, false},
	}
	for _, tt := range tests {
		if got := sameStatements(tt.x, tt.y); got != tt.want {
			t.Errorf("%s: sameStatements = %v, want %v", tt.name, got, tt.want)
		}
		if got := sameStatements(tt.y, tt.x); got != tt.want {
			t.Errorf("%s: not symmetric", tt.name)
		}
	}
}
