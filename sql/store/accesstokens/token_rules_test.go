package accesstokens

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
)

func statement(rtype, effect, action, resource string) access.Statement {
	return access.Statement{ResourceType: rtype, Effect: effect, Actions: []string{action}, Resources: []string{resource}}
}

var (
	manageIAM      = statement("iam", "allow", "CanManageIAM", "iam/*")
	managePersonal = statement("access-token", "allow", "ManagePersonalAccessTokens", "access-token/*")
	manageService  = statement("access-token", "allow", "ManageServiceAccessTokens", "access-token/*")
)

func TestRulesTokenAction(t *testing.T) {
	tests := []struct {
		typ  string
		want access.Action
	}{
		{"Service", "ManageServiceAccessTokens"},
		{"Personal", "ManagePersonalAccessTokens"},
		{"", "ManagePersonalAccessTokens"},
	}
	for _, tt := range tests {
		if got := TokenAction(tt.typ); got != tt.want {
			t.Errorf("TokenAction(%q) = %s, want %s", tt.typ, got, tt.want)
		}
	}
}

// What a person may do with one access token: a Service token is the
// organization's, a Personal token its creator's; CanManageIAM may only turn
// someone else's Personal token off.
func TestRulesAccessTokenAccess(t *testing.T) {
	ann, bob := uuid.New(), uuid.New()
	personal := func(creator uuid.UUID) AccessToken {
		return AccessToken{Type: "Personal", Creator: core.TokenCreator{ID: creator}}
	}
	service := AccessToken{Type: "Service", Creator: core.TokenCreator{ID: bob}}
	as := func(user uuid.UUID, st ...access.Statement) *core.Actor {
		return &core.Actor{UserID: user, Granted: st}
	}
	viaService := &core.Actor{UserID: ann, TokenID: uuid.New(), ServiceToken: true, Granted: []access.Statement{managePersonal, manageService, manageIAM}}
	viaPersonal := &core.Actor{UserID: ann, TokenID: uuid.New(), Granted: []access.Statement{managePersonal}}
	all := TokenAccess{Edit: true, Disable: true, Enable: true, Delete: true}
	tests := []struct {
		name  string
		actor *core.Actor
		token AccessToken
		want  TokenAccess
	}{
		{"creator manages own Personal token", as(ann, managePersonal), personal(ann), all},
		{"creator through one of their Personal tokens", viaPersonal, personal(ann), all},
		{"creator not allowed ManagePersonalAccessTokens", as(ann), personal(ann), TokenAccess{}},
		{"someone else's Personal token", as(ann, managePersonal), personal(bob), TokenAccess{}},
		{"CanManageIAM may only turn it off", as(ann, managePersonal, manageIAM), personal(bob), TokenAccess{Disable: true}},
		{"CanManageIAM alone may turn it off", as(ann, manageIAM), personal(bob), TokenAccess{Disable: true}},
		{"a Service token made by the creator is not the creator", viaService, personal(ann), TokenAccess{Disable: true}},
		{"a denied ManagePersonalAccessTokens wins", as(ann, managePersonal, statement("*", "deny", "*", "access-token/*")), personal(ann), TokenAccess{}},
		{"Service token: whoever manages Service tokens", as(ann, manageService), service, all},
		{"Service token: its creator without the right", as(bob, managePersonal), service, TokenAccess{}},
		{"Service token: CanManageIAM is not enough", as(ann, manageIAM), service, TokenAccess{}},
	}
	for _, tt := range tests {
		if got := AccessTokenAccess(tt.actor, tt.token); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// Creating a Service token grants statements, so it needs CanManageIAM as
// well as ManageServiceAccessTokens.
func TestRulesAccessTokenRights(t *testing.T) {
	tests := []struct {
		name    string
		granted []access.Statement
		typ     string
		want    TokenRights
	}{
		{"nothing", nil, "Personal", TokenRights{}},
		{"Personal with its right", []access.Statement{managePersonal}, "Personal", TokenRights{Create: true}},
		{"Service right alone", []access.Statement{manageService}, "Service", TokenRights{}},
		{"Service right and IAM", []access.Statement{manageService, manageIAM}, "Service", TokenRights{Create: true, SetPermissions: true}},
		{"IAM alone sets permissions, creates nothing", []access.Statement{manageIAM}, "Service", TokenRights{SetPermissions: true}},
		{"Personal right does not make Service tokens", []access.Statement{managePersonal, manageIAM}, "Service", TokenRights{SetPermissions: true}},
	}
	for _, tt := range tests {
		if got := AccessTokenRights(&core.Actor{UserID: uuid.New(), Granted: tt.granted}, tt.typ); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// A Service token needs valid statements of its own; a Personal token acts
// with its creator's and takes none.
func TestRulesTokenPermissions(t *testing.T) {
	valid := []access.Statement{statement("flag", "allow", "ToggleFlag", "project/*:env/*:flag/*")}
	tests := []struct {
		name        string
		typ         string
		permissions []access.Statement
		want        []string
	}{
		{"Personal without statements", "Personal", nil, nil},
		{"Personal with statements", "Personal", valid, []string{"permissions_is_invalid"}},
		{"Service without statements", "Service", nil, []string{"permissions_is_invalid"}},
		{"Service with valid statements", "Service", valid, nil},
		{"Service with an unknown action", "Service", []access.Statement{statement("flag", "allow", "Fly", "project/*")}, []string{"permissions_is_invalid"}},
		{"Service with an action of another type", "Service", []access.Statement{statement("flag", "allow", "CanManageIAM", "iam/*")}, []string{"permissions_is_invalid"}},
		{"Service with a bad effect", "Service", []access.Statement{statement("flag", "permit", "ToggleFlag", "project/*")}, []string{"permissions_is_invalid"}},
	}
	for _, tt := range tests {
		var v core.Validator
		checkPermissions(&v, tt.typ, tt.permissions)
		var got []string
		if ve := (*core.ValidationError)(nil); errors.As(v.Err(), &ve) {
			got = ve.Codes
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A token in a list shows its first eight characters and nineteen asterisks.
func TestRulesMaskedToken(t *testing.T) {
	tests := []struct{ preview, want string }{
		{"api-abcd…wxyz", "api-abcd*******************"},
		{"api-abcd", "api-abcd*******************"},
		{"", "*******************"},
	}
	for _, tt := range tests {
		if got := maskedToken(tt.preview); got != tt.want {
			t.Errorf("maskedToken(%q) = %q, want %q", tt.preview, got, tt.want)
		}
	}
}
