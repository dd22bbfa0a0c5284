package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/net/html"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/web"
	"github.com/bunting-flags/bunting/web/httpx"
)

const (
	ownerEmail     = "owner@example.com"
	ownerPassword  = "owner-password"
	memberPassword = "member-password"
)

// app is a Bunting instance over a fresh database, served on loopback
// through its real handler.
type app struct {
	t     *testing.T
	srv   *httptest.Server
	st    *store.Store
	pool  *pgxpool.Pool
	q     *db.Queries
	owner uuid.UUID
	orgID uuid.UUID
	wsID  uuid.UUID
	// skew moves the store's clock ahead (single sign-on apps only).
	skew *atomic.Int64
}

// newApp starts Bunting's pages on a fresh database with its owner.
func newApp(t *testing.T) *app {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.New(t, core.ConfigurePool)
	keys, err := core.DeriveKeys(strings.Repeat("test-secret-", 4))
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(pool, keys, slog.New(slog.DiscardHandler), core.Options{PasswordCost: bcrypt.MinCost, LoginDelayStep: time.Millisecond})
	if _, err := st.IAM().Bootstrap(ctx, iam.Owner{Email: ownerEmail, Password: ownerPassword}); err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("http://bunting.test")
	srv := httptest.NewServer(newHandler(base, st, slog.New(slog.DiscardHandler)))
	t.Cleanup(srv.Close)
	a := &app{t: t, srv: srv, st: st, pool: pool, q: db.New(pool)}
	u, err := a.q.GetUserByEmail(ctx, ownerEmail)
	if err != nil {
		t.Fatal(err)
	}
	uc, err := st.IAM().UserContext(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	a.owner, a.orgID, a.wsID = u.ID, uc.OrganizationID, uc.WorkspaceID
	return a
}

// newHandler serves the pages alone, as the server mounts them: on the
// Echo every surface shares, with their security headers and their error
// writer for every failure. Only the API's document is served beside them.
func newHandler(base *url.URL, st *store.Store, log *slog.Logger) *echo.Echo {
	e := httpx.New(log, httpx.Options{})
	pages := web.New(web.Config{BaseURL: base}, st, log)
	e.HTTPErrorHandler = func(err error, c echo.Context) { pages.WriteError(c, err) }
	e.Use(web.SecurityHeaders(base.Scheme == "https"))
	pages.Register(e)
	// /docs renders the API's document, which the API serves beside the pages.
	e.GET("/api/v1/openapi.json", func(c echo.Context) error {
		doc, err := apiDocument()
		if err != nil {
			return err
		}
		return c.JSONBlob(http.StatusOK, doc)
	})
	return e
}

// apiDocument is the API's OpenAPI document, converted from
// api/openapi.yaml to JSON as the API converts it.
var apiDocument = sync.OnceValues(func() ([]byte, error) {
	y, err := os.ReadFile(filepath.Join("..", "api", "openapi.yaml"))
	if err != nil {
		return nil, err
	}
	var doc any
	if err := yaml.Unmarshal(y, &doc); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
})

// addMember creates a user in the owner's organization holding the given policies.
func (a *app) addMember(email string, policies ...uuid.UUID) uuid.UUID {
	a.t.Helper()
	ctx := context.Background()
	hash, _ := bcrypt.GenerateFromPassword([]byte(memberPassword), bcrypt.MinCost)
	h := string(hash)
	u, err := a.q.CreateUser(ctx, db.CreateUserParams{Email: email, Name: email, PasswordHash: &h})
	must(a.t, err)
	must(a.t, a.q.AddWorkspaceUser(ctx, db.AddWorkspaceUserParams{WorkspaceID: a.wsID, UserID: u.ID}))
	_, err = a.q.AddOrganizationUser(ctx, db.AddOrganizationUserParams{OrganizationID: a.orgID, UserID: u.ID})
	must(a.t, err)
	for _, p := range policies {
		must(a.t, a.q.AddMemberPolicy(ctx, db.AddMemberPolicyParams{OrganizationID: a.orgID, UserID: u.ID, PolicyID: p}))
	}
	return u.ID
}

// createOrganization adds an organization to the workspace, with the owner
// as its Owner when member is set.
func createOrganization(t *testing.T, a *app, name, key string, member bool) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	org, err := a.q.CreateOrganization(ctx, db.CreateOrganizationParams{WorkspaceID: a.wsID, Name: name, Key: key,
		DefaultPolicyIds: []uuid.UUID{}, DefaultGroupIds: []uuid.UUID{}})
	must(t, err)
	if member {
		_, err = a.q.AddOrganizationUser(ctx, db.AddOrganizationUserParams{OrganizationID: org.ID, UserID: a.owner})
		must(t, err)
		must(t, a.q.AddMemberPolicy(ctx, db.AddMemberPolicyParams{OrganizationID: org.ID, UserID: a.owner, PolicyID: core.OwnerPolicyID}))
	}
	return org.ID
}

// ownerActor is the owner as the store sees them, to set up data directly.
func (a *app) ownerActor() *core.Actor {
	a.t.Helper()
	act, err := a.st.IAM().UserActor(context.Background(), a.owner, a.wsID.String(), a.orgID.String())
	must(a.t, err)
	return act
}

// needApproval makes env's changes need one approval, from any of approvers.
func (a *app) needApproval(env core.Environment, approvers ...uuid.UUID) {
	a.t.Helper()
	_, err := a.st.Projects().UpdateEnvironment(context.Background(), a.ownerActor(), env.ProjectID, env.ID, core.EnvironmentInput{Name: env.Name,
		Settings: &core.EnvSettings{ChangeRequest: &core.ChangeRequestSettings{IsEnabled: true, ApprovalsRequired: 1, ApproverMemberIDs: approvers}}})
	must(a.t, err)
}

// sdkRequest records an SDK's request with secret as the SDK endpoints do
// (which these tests do not serve): the first-run guide's live check sees it.
func (a *app) sdkRequest(secret string) {
	a.t.Helper()
	env, err := a.st.SDK().SDKEnvBySecret(context.Background(), secret)
	must(a.t, err)
	must(a.t, a.st.SDK().RecordSDKSeen(context.Background(), env, time.Now()))
}

// browser is one person's browser: a cookie jar and the last page it showed,
// whose CSRF token its next form post carries, as a real form would.
type browser struct {
	t      *testing.T
	app    *app
	client *http.Client
	last   *page
}

func (a *app) browser() *browser {
	jar, err := cookiejar.New(nil)
	must(a.t, err)
	return &browser{t: a.t, app: a, client: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
}

// signedIn is a browser of someone who has just signed in.
func (a *app) signedIn(email, password string) *browser {
	a.t.Helper()
	b := a.browser()
	b.login(email, password).status(http.StatusOK)
	if b.last.url.Path == "/login" {
		a.t.Fatalf("sign-in as %s failed: %s", email, b.last.text("form-error"))
	}
	return b
}

// page is a loaded answer with its parsed HTML.
type page struct {
	t      *testing.T
	code   int
	url    *url.URL
	header http.Header
	body   string
	doc    *html.Node
}

func (b *browser) do(req *http.Request) *page {
	b.t.Helper()
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	p := &page{t: b.t, code: resp.StatusCode, url: resp.Request.URL, header: resp.Header, body: string(body)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		if p.doc, err = html.Parse(strings.NewReader(p.body)); err != nil {
			b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
		}
		if resp.Header.Get("HX-Reswap") == "" && p.find("flash-error") == nil && resp.Request.Header.Get("HX-Request") == "" {
			b.last = p
		}
	}
	return p
}

// get loads a page.
func (b *browser) get(path string) *page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.app.srv.URL+path, nil)
	must(b.t, err)
	return b.do(req)
}

// post submits a form from the last page, with its CSRF token.
func (b *browser) post(path string, form url.Values) *page {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if form.Get("_csrf") == "" && b.last != nil {
		form.Set("_csrf", b.last.csrf())
	}
	return b.send(path, form, nil)
}

// htmx submits a form as htmx does from the last page: the token in a header,
// asking for regions rather than a page.
func (b *browser) htmx(path string, form url.Values) *page {
	b.t.Helper()
	return b.send(path, form, http.Header{"Hx-Request": {"true"}, "X-Csrf-Token": {b.last.csrf()}})
}

func (b *browser) send(path string, form url.Values, header http.Header) *page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.app.srv.URL+path, strings.NewReader(form.Encode()))
	must(b.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, vs := range header {
		req.Header[k] = vs
	}
	return b.do(req)
}

// login signs in through the sign-in page.
func (b *browser) login(email, password string) *page {
	b.t.Helper()
	b.get("/login")
	return b.post("/login", url.Values{"email": {email}, "password": {password}})
}

// status asserts the answer's status.
func (p *page) status(want int) *page {
	p.t.Helper()
	if p.code != want {
		p.t.Fatalf("%s: got status %d, want %d; body:\n%s", p.url, p.code, want, p.body)
	}
	return p
}

// at asserts where the browser ended up after redirects.
func (p *page) at(path string) *page {
	p.t.Helper()
	if got := p.url.RequestURI(); got != path {
		p.t.Fatalf("got page %s, want %s", got, path)
	}
	return p
}

// csrf is the page's anti-forgery token.
func (p *page) csrf() string {
	p.t.Helper()
	for n := range p.doc.Descendants() {
		if n.Type == html.ElementNode && n.Data == "meta" && attr(n, "name") == "csrf-token" {
			return attr(n, "content")
		}
	}
	for n := range p.doc.Descendants() {
		if n.Type == html.ElementNode && n.Data == "input" && attr(n, "name") == "_csrf" {
			return attr(n, "value")
		}
	}
	p.t.Fatalf("%s has no CSRF token", p.url)
	return ""
}

// find returns the first element marked data-testid=id, or nil.
func (p *page) find(id string) *html.Node { return find(p.doc, id) }

func find(root *html.Node, id string) *html.Node {
	all := findAll(root, id)
	if len(all) == 0 {
		return nil
	}
	return all[0]
}

// findAll returns every element marked data-testid=id.
func (p *page) findAll(id string) []*html.Node { return findAll(p.doc, id) }

func findAll(root *html.Node, id string) []*html.Node {
	var out []*html.Node
	if root == nil {
		return nil
	}
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && attr(n, "data-testid") == id {
			out = append(out, n)
		}
	}
	return out
}

// must returns the element marked id, failing the test when there is none.
func (p *page) must(id string) *html.Node {
	p.t.Helper()
	n := p.find(id)
	if n == nil {
		p.t.Fatalf("%s has no data-testid=%q; body:\n%s", p.url, id, p.body)
	}
	return n
}

// has tells whether an element marked id is on the page.
func (p *page) has(id string) bool { return p.find(id) != nil }

// text is the text of the element marked id, whitespace collapsed.
func (p *page) text(id string) string { return text(p.find(id)) }

// row returns the element marked id whose attribute attrName is value.
func (p *page) row(id, attrName, value string) *html.Node {
	for _, n := range p.findAll(id) {
		if attr(n, attrName) == value {
			return n
		}
	}
	return nil
}

func text(n *html.Node) string {
	if n == nil {
		return ""
	}
	var sb strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			sb.WriteString(d.Data)
			sb.WriteByte(' ')
		}
	}
	return strings.Join(strings.Fields(sb.String()), " ")
}

func attr(n *html.Node, name string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

// hasAttr tells whether the element carries the attribute at all.
func hasAttr(n *html.Node, name string) bool {
	for _, a := range n.Attr {
		if a.Key == name {
			return true
		}
	}
	return false
}

// formAction returns the action of the first form inside the element marked id.
func (p *page) formAction(id string) string {
	p.t.Helper()
	root := p.must(id)
	if root.Data == "form" {
		return attr(root, "action")
	}
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && n.Data == "form" {
			return attr(n, "action")
		}
	}
	p.t.Fatalf("no form in data-testid=%q", id)
	return ""
}

// input returns the input named name inside root.
func input(root *html.Node, name string) *html.Node {
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && (n.Data == "input" || n.Data == "textarea" || n.Data == "select") && attr(n, "name") == name {
			return n
		}
	}
	return nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func parse(t *testing.T, body string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	must(t, err)
	return doc
}
