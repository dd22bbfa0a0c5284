package api_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
)

var tokenFormat = regexp.MustCompile(`^api-[A-Za-z0-9_-]{32,}$`)

func TestAccessTokenLifecycle(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	created := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]string{"name": "deploy", "type": "Personal"}).ok(t))
	if !tokenFormat.MatchString(created.Token) || created.Status != "Active" || created.Type != "Personal" || created.Creator.Email != ownerEmail {
		t.Fatalf("created %+v", created)
	}
	var stored int
	must(t, s.pool.QueryRow(context.Background(), `SELECT count(*) FROM access_tokens WHERE position($1 in preview) > 0 OR token_hash = convert_to($1, 'UTF8')`, created.Token).Scan(&stored))
	if stored != 0 {
		t.Fatal("the token is stored in the clear")
	}

	// The token authenticates bare and as a bearer, and ignores context headers.
	s.do("GET", "/api/v1/projects", created.Token, nil).ok(t)
	s.do("GET", "/api/v1/projects", "Bearer "+created.Token, nil, "Organization", uuid.NewString()).ok(t)
	s.do("POST", "/api/v1/projects", created.Token, map[string]string{"name": "Via token", "key": "via-token"}).ok(t)
	// It cannot mint tokens.
	s.do("POST", "/api/v1/access-tokens", created.Token, map[string]string{"name": "child", "type": "Personal"}).fails(t, http.StatusForbidden, "Forbidden")

	// Listed, the value is masked as FeatBit masks it: its start and asterisks.
	masked := created.Token[:8] + strings.Repeat("*", 19)
	list := decode[core.Paged[accesstokens.AccessToken]](t, s.do("GET", "/api/v1/access-tokens", s.owner, nil).ok(t))
	if list.TotalCount != 1 || len(list.Items) != 1 || list.Items[0].Token != masked || list.Items[0].Preview != created.Preview || list.Items[0].LastUsedAt == nil {
		t.Fatalf("list %+v, want the token masked, marked used", list)
	}

	path := "/api/v1/access-tokens/" + created.ID.String()
	renamed := decode[accesstokens.AccessToken](t, s.do("PUT", path, s.owner, map[string]string{"name": "release"}).ok(t))
	if renamed.Name != "release" || renamed.Token != masked {
		t.Fatalf("renamed %+v", renamed)
	}
	// Toggle and delete answer true, as FeatBit's ApiResponse<bool>.
	if r := s.do("PUT", path+"/toggle", s.owner, nil).ok(t); string(r.Data) != "true" {
		t.Fatalf("toggle answered %s, want true", r.Data)
	}
	if l := decode[core.Paged[accesstokens.AccessToken]](t, s.do("GET", "/api/v1/access-tokens", s.owner, nil).ok(t)); l.Items[0].Status != "Inactive" {
		t.Fatalf("toggled to %s, want Inactive", l.Items[0].Status)
	}
	s.do("GET", "/api/v1/projects", created.Token, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
	s.do("PUT", path+"/toggle", s.owner, nil).ok(t)
	s.do("GET", "/api/v1/projects", created.Token, nil).ok(t)

	if r := s.do("DELETE", path, s.owner, nil).ok(t); string(r.Data) != "true" {
		t.Fatalf("delete answered %s, want true", r.Data)
	}
	s.do("GET", "/api/v1/projects", created.Token, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
	s.do("DELETE", path, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'AccessToken'`); n != 5 {
		t.Errorf("%d token audit entries, want 5 (create, rename, 2 toggles, delete)", n)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE creator_kind = 'token' AND ref_type = 'Project'`); n != 1 {
		t.Errorf("the project created through the token is not attributed to it")
	}
}

func TestAccessTokenValidationAndPaging(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	post := func(body any) *reply { return s.do("POST", "/api/v1/access-tokens", s.owner, body) }
	post(map[string]string{}).fails(t, http.StatusBadRequest, "name_is_required", "type_is_required")
	post(map[string]string{"name": "x", "type": "Robot"}).fails(t, http.StatusBadRequest, "type_is_invalid")
	post(map[string]any{"name": "x", "type": "Service"}).fails(t, http.StatusBadRequest, "permissions_is_invalid")
	post(map[string]any{"name": "x", "type": "Service", "permissions": []map[string]any{{"resourceType": "flag", "effect": "allow", "actions": []string{"CreateProject"}, "resources": []string{"*"}}}}).
		fails(t, http.StatusBadRequest, "permissions_is_invalid")
	post(map[string]any{"name": "x", "type": "Personal", "permissions": []map[string]any{{"resourceType": "*", "effect": "allow", "actions": []string{"*"}, "resources": []string{"*"}}}}).
		fails(t, http.StatusBadRequest, "permissions_is_invalid")

	for _, name := range []string{"alpha", "beta", "gamma", "alphabet"} {
		post(map[string]string{"name": name, "type": "Personal"}).ok(t)
	}
	post(map[string]string{"name": "ALPHA", "type": "Personal"}).fails(t, http.StatusUnprocessableEntity, "NameHasBeenUsed")

	page := decode[core.Paged[accesstokens.AccessToken]](t, s.do("GET", "/api/v1/access-tokens?pageIndex=1&PAGESIZE=3", s.owner, nil).ok(t))
	if page.TotalCount != 4 || len(page.Items) != 1 || page.Items[0].Name != "alpha" {
		t.Fatalf("page 1 of 3 = %+v, want the oldest (alpha) of 4", page)
	}
	found := decode[core.Paged[accesstokens.AccessToken]](t, s.do("GET", "/api/v1/access-tokens?name=ALPH", s.owner, nil).ok(t))
	if found.TotalCount != 2 {
		t.Fatalf("search alph found %d, want 2", found.TotalCount)
	}
	if none := decode[core.Paged[accesstokens.AccessToken]](t, s.do("GET", "/api/v1/access-tokens?name=%25", s.owner, nil).ok(t)); none.TotalCount != 0 {
		t.Fatalf("a %% search matched %d tokens; it must be literal", none.TotalCount)
	}
	s.do("GET", "/api/v1/access-tokens?PageIndex=-1&PageSize=101", s.owner, nil).fails(t, http.StatusBadRequest, "pageIndex_is_invalid", "pageSize_is_invalid")
	s.do("GET", "/api/v1/access-tokens?PageSize=ten", s.owner, nil).fails(t, http.StatusBadRequest, "pageSize_is_invalid")
}

func TestServiceTokens(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	p := s.createProject("Web", "web")
	onlyRead := []access.Statement{
		{ID: "1", ResourceType: "project", Effect: "allow", Actions: []string{"CanAccessProject"}, Resources: []string{"project/*"}},
		{ID: "2", ResourceType: "env", Effect: "allow", Actions: []string{"CanAccessEnv"}, Resources: []string{"project/*:env/dev"}},
	}
	svc := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]any{"name": "reader", "type": "Service", "permissions": onlyRead}).ok(t))

	// The token acts with its own statements, not its creator's.
	got := decode[core.Project](t, s.do("GET", "/api/v1/projects/"+p.ID.String(), svc.Token, nil).ok(t))
	if len(got.Environments) != 1 || got.Environments[0].Key != "dev" {
		t.Fatalf("service token sees environments %+v, want only dev", got.Environments)
	}
	s.do("POST", "/api/v1/projects", svc.Token, map[string]string{"name": "No", "key": "no"}).fails(t, http.StatusForbidden, "Forbidden")

	// Only those who manage IAM hand out statements.
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	s.do("POST", "/api/v1/access-tokens", dev, map[string]any{"name": "mine", "type": "Service", "permissions": onlyRead}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", "/api/v1/access-tokens/"+svc.ID.String(), dev, map[string]any{"name": "reader", "permissions": []access.Statement{
		{ID: "x", ResourceType: "*", Effect: "allow", Actions: []string{"*"}, Resources: []string{"*"}}}}).fails(t, http.StatusForbidden, "Forbidden")
	// A developer may rename it (ManageServiceAccessTokens) without touching its statements.
	s.do("PUT", "/api/v1/access-tokens/"+svc.ID.String(), dev, map[string]any{"name": "reader-2"}).ok(t)

	updated := decode[accesstokens.AccessToken](t, s.do("PUT", "/api/v1/access-tokens/"+svc.ID.String(), s.owner, map[string]any{"name": "reader-2", "permissions": []access.Statement{
		{ID: "1", ResourceType: "project", Effect: "allow", Actions: []string{"CreateProject"}, Resources: []string{"project/*"}}}}).ok(t))
	if len(updated.Permissions) != 1 || updated.Permissions[0].Actions[0] != "CreateProject" {
		t.Fatalf("updated permissions %+v", updated.Permissions)
	}
	s.do("POST", "/api/v1/projects", svc.Token, map[string]string{"name": "Yes", "key": "yes"}).ok(t)
}

func TestPersonalTokenFollowsItsCreator(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	dev, devID := s.addMember("dev@example.com", core.DeveloperPolicyID)
	tok := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", dev, map[string]string{"name": "mine", "type": "Personal"}).ok(t))
	s.do("GET", "/api/v1/projects", tok.Token, nil).ok(t)
	s.do("POST", "/api/v1/projects", tok.Token, map[string]string{"name": "No", "key": "no"}).fails(t, http.StatusForbidden, "Forbidden")

	// Granting the creator more takes effect on the token's next request.
	s.changeAccess(`INSERT INTO member_policies (organization_id, user_id, policy_id) VALUES ($1, $2, $3)`, s.orgID, devID, core.OwnerPolicyID)
	s.do("POST", "/api/v1/projects", tok.Token, map[string]string{"name": "Yes", "key": "yes"}).ok(t)

	// A creator who leaves the organization takes the token's access along.
	s.changeAccess(`DELETE FROM organization_users WHERE user_id = $1`, devID)
	s.do("GET", "/api/v1/projects", tok.Token, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
}

func TestTokenCreationIsRateLimited(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	created := 0
	for i := range 12 {
		r := s.do("POST", "/api/v1/access-tokens", s.owner, map[string]string{"name": fmt.Sprintf("t%d", i), "type": "Personal"})
		if r.Status == http.StatusTooManyRequests {
			r.fails(t, http.StatusTooManyRequests, "TooManyRequests")
			break
		}
		r.ok(t)
		created++
	}
	if created != 10 {
		t.Fatalf("created %d tokens before 429, want 10", created)
	}
	// Another account from the same address is held back too (per address);
	// from another address it is not, and this account stays limited there (per account).
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	s.do("POST", "/api/v1/access-tokens", dev, map[string]string{"name": "mine", "type": "Personal"}).fails(t, http.StatusTooManyRequests, "TooManyRequests")
	s.do("POST", "/api/v1/access-tokens", dev, map[string]string{"name": "mine", "type": "Personal"}, remoteAddr, "198.51.100.7:4000").ok(t)
	s.do("POST", "/api/v1/access-tokens", s.owner, map[string]string{"name": "more", "type": "Personal"}, remoteAddr, "198.51.100.8:4000").
		fails(t, http.StatusTooManyRequests, "TooManyRequests")
}

// TestPersonalTokensAreTheirCreators: a Developer (allowed to manage
// Personal tokens) lists the owner's Personal token but may not turn it
// off, rename or delete it, and the owner's scripts keep working; an
// Administrator, who manages members, may turn it off but not on again,
// nor rename or delete it; a Service token the owner made is not the owner.
// The owner manages it all; Service tokens keep their rule.
func TestPersonalTokensAreTheirCreators(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	token := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]string{"name": "deploy", "type": "Personal"}).ok(t))
	path := "/api/v1/access-tokens/" + token.ID.String()
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	admin, _ := s.addMember("admin@example.com", core.AdministratorPolicyID)
	if l := decode[core.Paged[accesstokens.AccessToken]](t, s.do("GET", "/api/v1/access-tokens", dev, nil).ok(t)); l.TotalCount != 1 || l.Items[0].ID != token.ID {
		t.Fatalf("a Developer lists %+v, want the owner's token", l.Items)
	}
	s.do("PUT", path+"/toggle", dev, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", path, dev, map[string]string{"name": "mine now"}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("DELETE", path, dev, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("GET", "/api/v1/projects", token.Token, nil).ok(t)

	// A Service token the owner made, allowed to manage Personal tokens, acts
	// on its own statements: it is not the owner.
	manager := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]any{"name": "manager", "type": "Service",
		"permissions": []access.Statement{{ID: "m", ResourceType: access.TypeAccessToken, Effect: "allow",
			Actions: []string{string(access.ListAccessTokens), string(access.ManagePersonalAccessTokens)}, Resources: []string{core.AccessTokenRN}}}}).ok(t))
	s.do("DELETE", path, manager.Token, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", path+"/toggle", manager.Token, nil).fails(t, http.StatusForbidden, "Forbidden")

	// Who manages members may turn it off, and only off.
	s.do("PUT", path, admin, map[string]string{"name": "renamed"}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("DELETE", path, admin, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", path+"/toggle", admin, nil).ok(t)
	s.do("GET", "/api/v1/projects", token.Token, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
	s.do("PUT", path+"/toggle", admin, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", path+"/toggle", dev, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("GET", "/api/v1/projects", token.Token, nil).fails(t, http.StatusUnauthorized, "Unauthorized")
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'AccessToken' AND ref_id = $1`, token.ID.String()); n != 2 {
		t.Errorf("%d history entries of the token, want 2 (created, turned off)", n)
	}
	if s.count(`SELECT count(*) FROM access_tokens WHERE id = $1 AND name = 'deploy' AND status = 'Inactive'`, token.ID) != 1 {
		t.Error("the token is not the owner's deploy, turned off")
	}

	// Its creator turns it on again, renames and deletes it.
	s.do("PUT", path+"/toggle", s.owner, nil).ok(t)
	s.do("GET", "/api/v1/projects", token.Token, nil).ok(t)
	s.do("PUT", path, s.owner, map[string]string{"name": "release"}).ok(t)
	s.do("DELETE", path, s.owner, nil).ok(t)

	// Service tokens stay the organization's: a Developer manages the owner's.
	svc := "/api/v1/access-tokens/" + manager.ID.String()
	s.do("PUT", svc+"/toggle", dev, nil).ok(t)
	s.do("PUT", svc, dev, map[string]string{"name": "renamed"}).ok(t)
	s.do("DELETE", svc, dev, nil).ok(t)
}
