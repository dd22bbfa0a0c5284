package access

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// Every action the server checks belongs to one resource type, as FeatBit
// names them (written out from FeatBit's action catalogue, plus Bunting's
// DeleteOrg).
func TestCatalogue(t *testing.T) {
	want := map[string][]string{
		"workspace":    {"UpdateWorkspaceGeneralSettings", "UpdateWorkspaceLicense", "UpdateWorkspaceSSOSettings"},
		"organization": {"UpdateOrgName", "UpdateOrgDefaultUserPermissions", "UpdateOrgSortFlagsBy", "CreateOrg", "DeleteOrg"},
		"iam":          {"CanManageIAM"},
		"access-token": {"ListAccessTokens", "ManagePersonalAccessTokens", "ManageServiceAccessTokens"},
		"relay-proxy":  {"ListRelayProxies", "ManageRelayProxies"},
		"project":      {"CanAccessProject", "CreateProject", "DeleteProject", "UpdateProjectSettings", "CreateEnv"},
		"env":          {"CanAccessEnv", "DeleteEnv", "UpdateEnvSettings", "CreateEnvSecret", "UpdateEnvSecret", "DeleteEnvSecret"},
		"flag": {"CreateFlag", "ArchiveFlag", "RestoreFlag", "DeleteFlag", "CloneFlag", "CopyFlagTo", "ToggleFlag", "UpdateFlagName",
			"UpdateFlagDescription", "UpdateFlagOffVariation", "UpdateFlagVariations", "UpdateFlagTags", "UpdateFlagDefaultRule",
			"UpdateFlagIndividualTargeting", "UpdateFlagTargetingRules"},
		"segment": {"CreateSegment", "ArchiveSegment", "RestoreSegment", "DeleteSegment", "UpdateSegmentName", "UpdateSegmentDescription",
			"UpdateSegmentTags", "UpdateSegmentTargetingUsers", "UpdateSegmentRules"},
	}
	got := map[string][]string{}
	for _, g := range Catalogue {
		for _, a := range g.Actions {
			got[g.ResourceType] = append(got[g.ResourceType], string(a))
		}
	}
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
		t.Fatalf("resource types %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	for typ, actions := range want {
		if !slices.Equal(got[typ], actions) {
			t.Errorf("%s: %v, want %v", typ, got[typ], actions)
		}
	}
}

// Decide names the statement that decided: the first deny, else the first
// allow; -1 when none speaks about the action on the resource.
func TestDecide(t *testing.T) {
	allowDev := Statement{ResourceType: TypeEnv, Effect: "allow", Actions: []string{"CanAccessEnv"}, Resources: []string{"project/*:env/dev"}}
	allowAll := Statement{ResourceType: TypeAll, Effect: "allow", Actions: []string{"*"}, Resources: []string{"*"}}
	denyProd := Statement{ResourceType: TypeEnv, Effect: "deny", Actions: []string{"*"}, Resources: []string{"project/*:env/prod"}}
	denyAny := Statement{ResourceType: TypeAll, Effect: "deny", Actions: []string{"CanAccessEnv"}, Resources: []string{"project/web"}}
	odd := Statement{ResourceType: TypeEnv, Effect: "perhaps", Actions: []string{"*"}, Resources: []string{"*"}}
	tests := []struct {
		name       string
		statements []Statement
		action     Action
		rn         string
		allowed    bool
		by         int
	}{
		{"none", nil, CanAccessEnv, "project/web:env/dev", false, -1},
		{"first allow", []Statement{denyProd, allowDev, allowAll}, CanAccessEnv, "project/web:env/dev", true, 1},
		{"deny after allows", []Statement{allowAll, allowDev, denyProd}, CanAccessEnv, "project/web:env/prod", false, 2},
		{"the first deny", []Statement{allowAll, denyAny, denyProd}, CanAccessEnv, "project/web:env/prod", false, 1},
		{"a deny on a project covers its environments", []Statement{allowAll, denyAny}, CanAccessEnv, "project/web:env/dev", false, 1},
		{"a deny of another project", []Statement{allowAll, denyAny}, CanAccessEnv, "project/api:env/dev", true, 0},
		{"type mismatch speaks not", []Statement{allowDev}, CreateFlag, "project/web:env/dev:flag/a", false, -1},
		{"an effect other than allow denies", []Statement{allowAll, odd}, DeleteEnv, "project/web:env/dev", false, 1},
	}
	for _, tt := range tests {
		allowed, by := Decide(tt.statements, tt.action, tt.rn)
		if allowed != tt.allowed || by != tt.by {
			t.Errorf("%s: Decide = %v, %d; want %v, %d", tt.name, allowed, by, tt.allowed, tt.by)
		}
	}
}

// StatementProblems names every wrong field of every wrong statement, in
// the order effect, resourceType, actions, resources.
func TestStatementProblems(t *testing.T) {
	ok := Statement{ResourceType: TypeFlag, Effect: "allow", Actions: []string{"ToggleFlag"}, Resources: []string{"project/*:env/*:flag/*"}}
	tests := []struct {
		name string
		st   Statement
		want []string
	}{
		{"valid", ok, nil},
		{"everything wrong", Statement{ResourceType: "relay", Effect: "", Actions: nil, Resources: nil}, []string{"effect", "resourceType", "actions", "resources"}},
		{"unknown type: actions judged only by their absence", Statement{ResourceType: "relay", Effect: "allow", Actions: []string{"Anything"}, Resources: []string{"*"}}, []string{"resourceType"}},
		{"* type takes any known action", Statement{ResourceType: "*", Effect: "allow", Actions: []string{"ToggleFlag", "CanManageIAM"}, Resources: []string{"*"}}, nil},
		{"* type refuses an unknown action", Statement{ResourceType: "*", Effect: "allow", Actions: []string{"Fly"}, Resources: []string{"*"}}, []string{"actions"}},
		{"effect is case-sensitive", Statement{ResourceType: TypeFlag, Effect: "Allow", Actions: []string{"*"}, Resources: []string{"*"}}, []string{"effect"}},
		{"resource without a key", Statement{ResourceType: TypeFlag, Effect: "deny", Actions: []string{"*"}, Resources: []string{"project/"}}, []string{"resources"}},
		{"resource part without a type", Statement{ResourceType: TypeFlag, Effect: "deny", Actions: []string{"*"}, Resources: []string{"project/a:/b"}}, []string{"resources"}},
		{"resource with two tag lists", Statement{ResourceType: TypeFlag, Effect: "deny", Actions: []string{"*"}, Resources: []string{"project/a;x;y"}}, []string{"resources"}},
		{"resource with a control character", Statement{ResourceType: TypeFlag, Effect: "deny", Actions: []string{"*"}, Resources: []string{"project/a\tb"}}, []string{"resources"}},
		{"one bad resource among good", Statement{ResourceType: TypeFlag, Effect: "deny", Actions: []string{"*"}, Resources: []string{"*", ""}}, []string{"resources"}},
		{"resource of 1,025 characters", Statement{ResourceType: TypeFlag, Effect: "deny", Actions: []string{"*"}, Resources: []string{"project/" + strings.Repeat("k", 1017)}}, []string{"resources"}},
		{"resource of 1,024 characters", Statement{ResourceType: TypeFlag, Effect: "deny", Actions: []string{"*"}, Resources: []string{"project/" + strings.Repeat("k", 1016)}}, nil},
		{"tagged resource", Statement{ResourceType: TypeSegment, Effect: "allow", Actions: []string{"UpdateSegmentRules"}, Resources: []string{"project/web:env/*:segment/*;team-a,beta"}}, nil},
	}
	for _, tt := range tests {
		got := StatementProblems([]Statement{ok, tt.st})
		if _, bad := got[0]; bad {
			t.Errorf("%s: the valid statement is reported: %v", tt.name, got)
		}
		if !slices.Equal(got[1], tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got[1], tt.want)
		}
		if ValidStatements([]Statement{tt.st}) != (tt.want == nil) {
			t.Errorf("%s: ValidStatements = %v, want %v", tt.name, !(tt.want == nil), tt.want == nil)
		}
	}
}

// Patterns' "*" is any run of characters, in keys and in tags, anywhere in a part.
func TestMatchResourceWildcards(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"project/*eb", "project/web", true},
		{"project/w*b", "project/web", true},
		{"project/w*b", "project/wb", true},
		{"project/w*b", "project/webs", false},
		{"project/**", "project/web", true},
		{"*/web", "project/web", true},
		{"project/*:*", "project/web:env/prod:flag/a", true},
		{"project/*:env/*:flag/*;*", "project/web:env/prod:flag/a;x", true},
		{"project/*:env/*:flag/*;*", "project/web:env/prod:flag/a", false}, // a tag pattern needs a tag
		{"project/*:env/*:flag/*;", "project/web:env/prod:flag/a;x", false},
		{"project/web;x", "project/web;y,x", true},
		{"env/prod", "project/web:env/prod", false}, // parts match by place
	}
	for _, tt := range tests {
		if got := MatchResource(tt.pattern, tt.name); got != tt.want {
			t.Errorf("MatchResource(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}
