package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
)

// grant is one action on one resource name.
type grant struct {
	action access.Action
	rn     string
}

// call is one request a route case makes, with what it takes to be allowed.
type call struct {
	path string
	body any
	// grants are what the allowed caller holds; the first is also denied for
	// the caller whose deny must win.
	grants []grant
	// open routes need no statement: every signed-in caller succeeds.
	open bool
	// listed, for lists filtered by permission instead of refused, says
	// whether an answer shows the resource the grants are about.
	listed func(r *reply) bool
}

// matrix holds the callers and fixtures of TestEveryRouteIsPermissionChecked.
type matrix struct {
	s       *server
	n       int
	project core.Project
	env     core.Environment
	// nobody holds no statements; member holds the policy the test rewrites
	// before each call; otherOwner owns another organization.
	nobody, member, otherOwner string
	policyID                   uuid.UUID
	// memberID is the member's user id; qa is the environment whose
	// changes need approval, made on first use (approvalEnv).
	memberID uuid.UUID
	qa       core.Environment
}

const envRN = "project/web:env/prod"

// devRN is the project's other environment, the target of copies.
const devRN = "project/web:env/dev"

// dev is the project's other environment.
func (m *matrix) dev() core.Environment { return m.project.Environments[1] }

// flagID reads a flag's id by key.
func (m *matrix) flagID(key string) uuid.UUID {
	return decode[flagstore.Flag](m.s.t, m.owner("GET", m.flags()+"/"+key, nil)).ID
}

func (m *matrix) next() int { m.n++; return m.n }

func (m *matrix) owner(method, path string, body any) *reply {
	m.s.t.Helper()
	return m.s.do(method, path, m.s.owner, body).ok(m.s.t)
}

func (m *matrix) flags() string { return "/api/v1/envs/" + m.env.ID.String() + "/feature-flags" }
func (m *matrix) segs() string  { return "/api/v1/envs/" + m.env.ID.String() + "/segments" }

func (m *matrix) endUsers() string { return "/api/v1/envs/" + m.env.ID.String() + "/end-users" }

// endUser upserts an end user as the owner and returns its id.
func (m *matrix) endUser() string {
	key := fmt.Sprintf("u%d", m.next())
	u := decode[sdkdata.EndUser](m.s.t, m.owner("PUT", m.endUsers(), map[string]string{"keyId": key, "name": key}))
	return u.ID.String()
}

func (m *matrix) flag(archived bool) string {
	key := fmt.Sprintf("f%d", m.next())
	m.owner("POST", m.flags(), map[string]any{"name": key, "key": key})
	if archived {
		m.owner("PUT", m.flags()+"/"+key+"/archive", nil)
	}
	return key
}

// trigger makes a flag and a trigger on it, returning the flag's key and the trigger's id.
func (m *matrix) trigger() (string, string) {
	key := m.flag(false)
	f := decode[flagstore.Flag](m.s.t, m.owner("GET", m.flags()+"/"+key, nil))
	t := decode[governance.Trigger](m.s.t, m.owner("POST", "/api/v1/triggers",
		map[string]any{"targetId": f.ID, "type": "feature-flag-general", "action": "turn-off"}))
	return key, t.ID.String()
}

func (m *matrix) segment(archived bool) (string, string) {
	key := fmt.Sprintf("s%d", m.next())
	sg := decode[flagstore.Segment](m.s.t, m.owner("POST", m.segs(), map[string]any{"name": key, "key": key, "type": "environment-specific"}))
	if archived {
		m.owner("PUT", m.segs()+"/"+sg.ID.String()+"/archive", nil)
	}
	return sg.ID.String(), key
}

func (m *matrix) newProject() core.Project {
	key := fmt.Sprintf("p%d", m.next())
	return decode[core.Project](m.s.t, m.owner("POST", "/api/v1/projects", map[string]string{"name": key, "key": key}))
}

func (m *matrix) policy() iam.Policy {
	key := fmt.Sprintf("pol%d", m.next())
	return decode[iam.Policy](m.s.t, m.owner("POST", "/api/v1/policies", map[string]string{"name": key, "key": key}))
}

func (m *matrix) group() string {
	g := decode[iam.Group](m.s.t, m.owner("POST", "/api/v1/groups", map[string]string{"name": fmt.Sprintf("g%d", m.next())}))
	return g.ID.String()
}

func (m *matrix) newMember() string {
	email := fmt.Sprintf("m%d@example.com", m.next())
	return m.s.addByEmail(map[string]any{"email": email, "policyIds": []string{}, "groupIds": []string{}}).ID.String()
}

// token stores a Personal token of the member directly: fixtures need not go
// through the rate limit the hostile-input test exhausts on purpose. A
// Personal token is managed by its creator only, so it is the member's
// (TestPersonalTokensAreTheirCreators covers everyone else).
func (m *matrix) token() string {
	n := m.next()
	row, err := m.s.q.CreateAccessToken(context.Background(), db.CreateAccessTokenParams{OrganizationID: m.s.orgID, CreatorID: m.memberID,
		Name: fmt.Sprintf("t%d", n), Type: core.TokenPersonal, TokenHash: []byte(fmt.Sprintf("fixture-%d", n)), Preview: "api-…", Permissions: []byte("[]")})
	must(m.s.t, err)
	return row.ID.String()
}

// orgCall is a call that needs the organization-management permission,
// which webhooks ask for.
func orgCall(path string, body any) call {
	return call{path: path, body: body, grants: []grant{{core.WebhookAction, "organization/default-organization"}}}
}

// scopedCall is an orgCall about what a webhook's scopes name: making or
// changing one, or reading its log, also reads its environment.
func scopedCall(path string, body any) call {
	c := orgCall(path, body)
	c.grants = append(c.grants, grant{access.CanAccessEnv, envRN})
	return c
}

func (m *matrix) webhookBody() map[string]any {
	return map[string]any{"name": fmt.Sprintf("w%d", m.next()), "url": "https://hooks.example.com/x",
		"scopes": []string{m.project.ID.String() + "/" + m.env.ID.String()}, "events": []string{"feature_flag.toggled"}, "isActive": true}
}

func (m *matrix) webhook() string {
	return decode[webhooks.Webhook](m.s.t, m.owner("POST", "/api/v1/webhooks", m.webhookBody())).ID.String()
}

// relayCall needs one relay proxy action; relayScopedCall managing them
// and reading the environment a key reaches.
func relayCall(path string, body any, action access.Action) call {
	return call{path: path, body: body, grants: []grant{{action, core.RelayProxyRN}}}
}

func relayScopedCall(path string, body any) call {
	return call{path: path, body: body, grants: []grant{{access.ManageRelayProxies, core.RelayProxyRN}, {access.CanAccessEnv, envRN}}}
}

func (m *matrix) relayBody() map[string]any {
	return map[string]any{"name": fmt.Sprintf("rp%d", m.next()), "scopes": []string{m.env.ID.String()},
		"agents": []map[string]any{{"id": "a1", "name": "manual", "host": "http://127.0.0.1:9"}}}
}

// relayProxy makes a relay proxy of the environment with a manual agent a1.
func (m *matrix) relayProxy() string {
	return decode[struct {
		ID string `json:"id"`
	}](m.s.t, m.owner("POST", "/api/v1/relay-proxies", m.relayBody())).ID
}

func iamCall(path string, body any) call {
	return call{path: path, body: body, grants: []grant{{access.CanManageIAM, core.IAMRN}}}
}

// TestEveryRouteIsPermissionChecked walks every /api/ route the router has,
// so a new route cannot escape it, and calls each as a member with no
// statements (403), a member allowed exactly the route's action on exactly
// its resource but also denied it (403, deny wins), the same member without
// the deny (success), and the owner of another organization, who must not
// even see that the ids exist (404).
func TestEveryRouteIsPermissionChecked(t *testing.T) {
	t.Parallel()
	m := newMatrix(t)
	cases := m.allCases()
	routes := m.apiRoutes()
	for key := range cases {
		if !slices.Contains(routes, key) {
			t.Errorf("case %q names no registered route", key)
		}
	}
	for _, route := range routes {
		make, ok := cases[route]
		if !ok {
			t.Errorf("route %s has no permission case: add one to TestEveryRouteIsPermissionChecked", route)
			continue
		}
		if make == nil {
			continue // covered by the test named beside its case
		}
		method, _, _ := strings.Cut(route, " ")
		t.Run(route, func(t *testing.T) { m.check(t, method, make()) })
	}
}

// newMatrix makes a server with the callers and fixtures the route cases use.
func newMatrix(t *testing.T) *matrix {
	s := newServer(t)
	m := &matrix{s: s}
	m.project = s.createProject("Web", "web")
	m.env = m.project.Environments[0]
	m.nobody, _ = s.addMember("nobody@example.com")
	m.member, m.memberID = s.addMember("member@example.com")
	memberID := m.memberID
	ctx := context.Background()
	must(t, s.pool.QueryRow(ctx, `INSERT INTO policies (organization_id, name, key, type) VALUES ($1, 'Matrix', 'matrix', 'CustomerManaged') RETURNING id`, s.orgID).Scan(&m.policyID))
	must(t, s.q.AddMemberPolicy(ctx, db.AddMemberPolicyParams{OrganizationID: s.orgID, UserID: memberID, PolicyID: m.policyID}))
	m.otherOwner = m.otherOrganizationOwner()
	return m
}

// allCases is every route's case.
func (m *matrix) allCases() map[string]func() call {
	cases := m.cases()
	m.flagBodyCases(cases)
	m.changeRequestCases(cases)
	return cases
}

// apiRoutes lists the router's management API routes (/api/v1, and FeatBit's
// one /api/v2 route) as "METHOD
// path". The SDK routes under /api/public authenticate with environment
// secrets and are tested in web/sdk.
func (m *matrix) apiRoutes() []string {
	var routes []string
	for _, r := range m.s.e.Routes() {
		if (strings.HasPrefix(r.Path, "/api/v1/") || strings.HasPrefix(r.Path, "/api/v2/")) && r.Method != echo.RouteNotFound {
			routes = append(routes, r.Method+" "+r.Path)
		}
	}
	sort.Strings(routes)
	return slices.Compact(routes)
}

func (m *matrix) check(t *testing.T, method string, c call) {
	s := m.s
	if c.open {
		s.do(method, c.path, m.nobody, c.body).ok(t)
		return
	}
	allow, deny := statements(c.grants, "allow"), statements(c.grants[:1], "deny")
	if c.listed != nil {
		m.setStatements(allow)
		if r := s.do(method, c.path, m.member, c.body).ok(t); !c.listed(r) {
			t.Fatalf("allowed caller does not see the resource: %s", r.raw)
		}
		m.setStatements(append(allow, deny...))
		if r := s.do(method, c.path, m.member, c.body).ok(t); c.listed(r) {
			t.Fatalf("denied caller sees the resource: %s", r.raw)
		}
		if r := s.do(method, c.path, m.nobody, c.body).ok(t); c.listed(r) {
			t.Fatalf("caller without statements sees the resource: %s", r.raw)
		}
		return
	}
	s.do(method, c.path, m.nobody, c.body).fails(t, http.StatusForbidden, "Forbidden")
	m.setStatements(append(allow, deny...))
	s.do(method, c.path, m.member, c.body).fails(t, http.StatusForbidden, "Forbidden")
	if hasIDs(c.path) {
		s.do(method, c.path, m.otherOwner, c.body).fails(t, http.StatusNotFound, "ResourceNotFound")
	}
	m.setStatements(allow)
	s.do(method, c.path, m.member, c.body).ok(t)
}

// hasIDs reports whether a path names resources by id or key.
func hasIDs(path string) bool {
	for _, part := range strings.Split(strings.SplitN(path, "?", 2)[0], "/") {
		if _, err := uuid.Parse(part); err == nil {
			return true
		}
	}
	return strings.Contains(path, "/clone/")
}

func statements(grants []grant, effect string) []access.Statement {
	out := make([]access.Statement, len(grants))
	for i, g := range grants {
		out[i] = access.Statement{ID: effect + fmt.Sprint(i), ResourceType: resourceType(g.action), Effect: effect,
			Actions: []string{string(g.action)}, Resources: []string{g.rn}}
	}
	return out
}

func resourceType(action access.Action) string {
	for _, g := range access.Catalogue {
		if slices.Contains(g.Actions, action) {
			return g.ResourceType
		}
	}
	panic("unknown action " + string(action))
}

// setStatements replaces the member's policy's statements; the next request sees them.
func (m *matrix) setStatements(sts []access.Statement) {
	raw, _ := json.Marshal(sts)
	m.s.changeAccess(`UPDATE policies SET statements = $1 WHERE id = $2`, raw, m.policyID)
}

// otherOrganizationOwner makes a second organization with its own owner and
// returns the owner's Authorization header value.
func (m *matrix) otherOrganizationOwner() string {
	s, ctx := m.s, context.Background()
	m.s.otherOrganization()
	var orgID uuid.UUID
	must(s.t, s.pool.QueryRow(ctx, `SELECT id FROM organizations WHERE key = 'other'`).Scan(&orgID))
	hash, _ := bcrypt.GenerateFromPassword([]byte("other-password"), bcrypt.MinCost)
	h := string(hash)
	u, err := s.q.CreateUser(ctx, db.CreateUserParams{Email: "other@example.com", Name: "other", PasswordHash: &h})
	must(s.t, err)
	must(s.t, s.q.AddWorkspaceUser(ctx, db.AddWorkspaceUserParams{WorkspaceID: s.wsID, UserID: u.ID}))
	_, err = s.q.AddOrganizationUser(ctx, db.AddOrganizationUserParams{OrganizationID: orgID, UserID: u.ID})
	must(s.t, err)
	must(s.t, s.q.AddMemberPolicy(ctx, db.AddMemberPolicyParams{OrganizationID: orgID, UserID: u.ID, PolicyID: core.OwnerPolicyID}))
	return s.login("other@example.com", "other-password")
}
