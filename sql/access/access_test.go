package access

import "testing"

func TestMatchResource(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*", "project/web", true},
		{"*", "project/web:env/prod:flag/checkout", true},
		{"project/*", "project/web:env/prod:flag/checkout", true},
		{"project/web", "project/web:env/prod", true},
		{"project/web", "project/webshop", false},
		{"project/web*", "project/webshop", true},
		{"project/*:env/prod", "project/web:env/prod:flag/a", true},
		{"project/*:env/prod", "project/web:env/dev:flag/a", false},
		{"project/*:env/*:flag/pay-*", "project/web:env/dev:flag/pay-v2", true},
		{"project/*:env/*:flag/pay-*", "project/web:env/dev:flag/checkout", false},
		{"project/web:env/prod:flag/a", "project/web:env/prod", false}, // more parts than the name
		{"project/Web", "project/web", false},                          // case-sensitive
		{"project/*:env/*:flag/*;beta", "project/web:env/prod:flag/a;beta,ui", true},
		{"project/*:env/*:flag/*;beta", "project/web:env/prod:flag/a;ui", false},
		{"project/*:env/*:flag/*;beta", "project/web:env/prod:flag/a", false},
		{"project/*:env/*:flag/*;be*", "project/web:env/prod:flag/a;beta", true},
		{"project/*:env/*:flag/*", "project/web:env/prod:flag/a;beta", true}, // no tags in pattern: tags ignored
		{"project/*:env/*:flag/*;x,beta", "project/web:env/prod:flag/a;beta", true},
		{"", "project/web", false},
		{"project/*", "", false},
		{"workspace/*", "workspace/default-workspace", true},
		{"iam/*", "iam/*", true},
		{"a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
	}
	for _, tt := range tests {
		if got := MatchResource(tt.pattern, tt.name); got != tt.want {
			t.Errorf("MatchResource(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestAllows(t *testing.T) {
	flagAllow := Statement{ResourceType: TypeFlag, Effect: "allow", Actions: []string{"*"}, Resources: []string{"project/*:env/*:flag/*"}}
	denyProd := Statement{ResourceType: TypeFlag, Effect: "deny", Actions: []string{string(ToggleFlag)}, Resources: []string{"project/*:env/prod:flag/*"}}
	denyAll := Statement{ResourceType: TypeAll, Effect: "deny", Actions: []string{string(DeleteProject)}, Resources: []string{"*"}}
	// owner is the built-in Owner policy's one statement.
	owner := []Statement{{ID: "owner-all", ResourceType: TypeAll, Effect: "allow", Actions: []string{"*"}, Resources: []string{"*"}}}
	tests := []struct {
		name       string
		statements []Statement
		action     Action
		rn         string
		want       bool
	}{
		{"no statements", nil, ToggleFlag, "project/web:env/dev:flag/a", false},
		{"allowed", []Statement{flagAllow}, ToggleFlag, "project/web:env/dev:flag/a", true},
		{"deny wins", []Statement{flagAllow, denyProd}, ToggleFlag, "project/web:env/prod:flag/a", false},
		{"deny elsewhere", []Statement{flagAllow, denyProd}, ToggleFlag, "project/web:env/dev:flag/a", true},
		{"deny other action", []Statement{flagAllow, denyProd}, ArchiveFlag, "project/web:env/prod:flag/a", true},
		{"wrong resource type", []Statement{flagAllow}, CreateSegment, "project/web:env/dev:segment/*", false},
		{"owner", owner, DeleteProject, "project/web", true},
		{"owner denied", append(owner, denyAll), DeleteProject, "project/web", false},
		{"owner denied other action", append(owner, denyAll), CreateProject, "project/*", true},
		{"unknown action", owner[:0], "NoSuchAction", "project/web", false},
	}
	for _, tt := range tests {
		if got := Allows(tt.statements, tt.action, tt.rn); got != tt.want {
			t.Errorf("%s: Allows(%s, %s) = %v, want %v", tt.name, tt.action, tt.rn, got, tt.want)
		}
	}
}

func TestValidateStatements(t *testing.T) {
	ok := Statement{ResourceType: TypeFlag, Effect: "allow", Actions: []string{string(ToggleFlag)}, Resources: []string{"project/*:env/*:flag/*;beta"}}
	tests := []struct {
		name string
		st   Statement
		want bool
	}{
		{"valid", ok, true},
		{"any type any action", Statement{ResourceType: "*", Effect: "deny", Actions: []string{"*"}, Resources: []string{"*"}}, true},
		{"unknown type", Statement{ResourceType: "relay", Effect: "allow", Actions: []string{"*"}, Resources: []string{"*"}}, false},
		{"unknown effect", Statement{ResourceType: TypeFlag, Effect: "maybe", Actions: []string{"*"}, Resources: []string{"*"}}, false},
		{"no actions", Statement{ResourceType: TypeFlag, Effect: "allow", Resources: []string{"*"}}, false},
		{"action of another type", Statement{ResourceType: TypeFlag, Effect: "allow", Actions: []string{string(CreateSegment)}, Resources: []string{"*"}}, false},
		{"no resources", Statement{ResourceType: TypeFlag, Effect: "allow", Actions: []string{"*"}}, false},
		{"malformed resource", Statement{ResourceType: TypeFlag, Effect: "allow", Actions: []string{"*"}, Resources: []string{"project"}}, false},
		{"resource with space", Statement{ResourceType: TypeFlag, Effect: "allow", Actions: []string{"*"}, Resources: []string{"project/a b"}}, false},
	}
	for _, tt := range tests {
		if got := ValidStatements([]Statement{tt.st}); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestStatementsHoldWhatAPolicyMay: a policy (or a Service token) holds
// at most MaxStatements statements, each naming at most MaxActions actions.
func TestStatementsHoldWhatAPolicyMay(t *testing.T) {
	st := Statement{ResourceType: TypeFlag, Effect: "allow", Actions: []string{string(CreateFlag)}, Resources: []string{"*"}}
	many := make([]Statement, MaxStatements)
	for i := range many {
		many[i] = st
	}
	if !ValidStatements(many) {
		t.Errorf("%d statements refused, want them taken", MaxStatements)
	}
	if ValidStatements(append(many, st)) {
		t.Errorf("%d statements taken, want them refused", MaxStatements+1)
	}
	all := Statement{ResourceType: TypeAll, Effect: "allow", Actions: []string{"*"}, Resources: []string{"*"}}
	for _, g := range Catalogue {
		for _, a := range g.Actions {
			all.Actions = append(all.Actions, string(a))
		}
	}
	if len(all.Actions) != MaxActions || !ValidStatements([]Statement{all}) {
		t.Errorf("every action once and * (%d) refused, want it taken (MaxActions %d)", len(all.Actions), MaxActions)
	}
	all.Actions = append(all.Actions, "*")
	if ValidStatements([]Statement{all}) {
		t.Errorf("%d actions taken, want them refused", len(all.Actions))
	}
}
