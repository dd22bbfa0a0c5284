package server_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/web/httpx"
	"github.com/bunting-flags/bunting/web/httpx/httpxtest"
)

// routeHeapLimit bounds how far the heap in use may rise while one route
// answers one of the worst bodies it allows from a caller without rights.
const routeHeapLimit = 48 << 20

// bodyIgnored are routes a member may call whose operation reads no body:
// a junk body changes nothing of what they do, so they succeed. They run
// last, as signing out ends the caller's session.
var bodyIgnored = []string{
	"POST /get-started/skip", // skipping the guide is all it does
	"POST /api/v1/identity/logout",
}

// TestEveryRouteRefusesTheLeastPrivileged takes every route the full
// server registers (API, SDK endpoints, pages) and, as the least privileged
// callers (nobody, a member of the organization without any policy, and a
// member of another organization), sends it the worst bodies it allows: a
// 1 MiB JSON array of empty objects and a form of 100,000 fields. Every
// answer is below 500, refusals are 4xx, a route needing credentials or a
// right reads no byte of a body from whoever lacks them, and the heap in
// use rises by at most routeHeapLimit for any one request. A route missing
// from the route table (routes_table_test.go) fails the test until it is
// classified there.
func TestEveryRouteRefusesTheLeastPrivileged(t *testing.T) {
	s := newSite(t)
	// A short grace for slow bodies, so that the slow sweep's run in seconds;
	// the bodies sent whole arrive at once and never meet it.
	e := s.handler(server.Config{BodyRate: httpx.BodyRate{Grace: slowGrace}}, slog.New(slog.DiscardHandler))
	classes := classify(t, e)

	env := s.project("web")
	plainMember := addPlainMember(t, s, s.ownerActor(), "plain@example.com")
	otherMember := otherOrgMember(t, s, "stranger@example.com")
	signInAll := func() []*caller {
		return []*caller{{name: "anonymous"},
			signInPages(t, s, e, plainMember, "plain@example.com"),
			signInPages(t, s, e, otherMember, "stranger@example.com")}
	}
	callers := signInAll()

	jsonBody := bytes.Repeat([]byte("{},"), (1<<20)/3)
	jsonBody[0], jsonBody[len(jsonBody)-1] = '[', ']'
	formFields := strings.Repeat("f=1&", 100_000)

	keys := make([]string, 0, len(classes))
	for k := range classes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	// Routes that end a session run last.
	slices.SortStableFunc(keys, func(a, b string) int {
		return boolInt(slices.Contains(bodyIgnored, a)) - boolInt(slices.Contains(bodyIgnored, b))
	})
	var worst uint64
	var worstRoute string
	for _, k := range keys {
		class := classes[k]
		method, pattern, _ := strings.Cut(k, " ")
		path := fillPath(pattern, env)
		for _, c := range callers {
			for _, kind := range []string{"json", "form"} {
				var body []byte
				contentType := echo.MIMEApplicationJSON
				if kind == "json" {
					body = jsonBody
				} else {
					contentType = echo.MIMEApplicationForm
					body = []byte(formFields + "_csrf=" + url.QueryEscape(c.csrf))
				}
				counted := httpxtest.NewCountedBody(bytes.NewReader(body))
				req := httptest.NewRequest(method, path, counted)
				req.ContentLength = int64(len(body))
				req.Header.Set(echo.HeaderContentType, contentType)
				c.authorize(req)
				rec := httptest.NewRecorder()
				rise := httpxtest.HeapRise(func() { e.ServeHTTP(rec, req) })
				if rise > worst {
					worst, worstRoute = rise, k+" as "+c.name+" with a "+kind+" body"
				}
				what := k + " as " + c.name + " with a " + kind + " body"
				if rise > routeHeapLimit {
					t.Errorf("%s: the heap in use rose by %d MB", what, rise>>20)
				}
				if problem := judge(class, k, c, rec, counted.Count()); problem != "" {
					t.Errorf("%s (%s): %s", what, class, problem)
				}
			}
		}
	}
	t.Logf("%d routes, %d callers, 2 bodies each: the heap in use rose by at most %.1f MB (%s)",
		len(keys), len(callers), float64(worst)/(1<<20), worstRoute)

	// The same routes and callers once more, each body now arriving slowly
	// over a real connection (signing out above ended the sessions).
	slowSweep(t, e, classes, keys, signInAll(), env)
}

// judge says what is wrong with an answer to a caller of a route of a
// class, or "".
func judge(class routeClass, route string, c *caller, rec *httptest.ResponseRecorder, read int64) string {
	method, path, _ := strings.Cut(route, " ")
	code := rec.Code
	switch {
	case code >= 500:
		return "answered " + http.StatusText(code)
	case class == fallback:
		if code != http.StatusNotFound {
			return "answered " + http.StatusText(code) + ", want 404"
		}
		return ""
	case class == sdkSecret:
		if code < 400 {
			return "answered " + http.StatusText(code) + " without an SDK secret"
		}
		return ""
	case class == anyone:
		if method != http.MethodGet && code < 400 {
			return "answered " + http.StatusText(code) + " to a junk body"
		}
		return ""
	}
	// Routes that need credentials: nobody is refused before a byte is read.
	if c.name == "anonymous" {
		if read > 0 {
			return "read " + strconv.FormatInt(read, 10) + " bytes of a stranger's body"
		}
		if strings.HasPrefix(path, "/api/") {
			if code != http.StatusUnauthorized {
				return "answered " + http.StatusText(code) + " to a stranger, want 401"
			}
		} else if code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/login") {
			return "answered " + http.StatusText(code) + " to a stranger, want 303 to sign in"
		}
		return ""
	}
	if !strings.HasPrefix(path, "/api/") && strings.HasPrefix(rec.Header().Get("Location"), "/login") {
		return "was sent to sign in: the member's session did not hold"
	}
	switch class {
	case needsRight:
		if code < 400 {
			return "answered " + http.StatusText(code) + " to a member without the right"
		}
		if read > 0 {
			return "read " + strconv.FormatInt(read, 10) + " bytes of the body of a member without the right"
		}
	case anyMember:
		if method != http.MethodGet && code < 400 && !slices.Contains(bodyIgnored, route) {
			return "answered " + http.StatusText(code) + " to a junk body"
		}
	}
	return ""
}

// classify reads the route table and checks it against the routes e
// registers, both ways.
func classify(t *testing.T, e *echo.Echo) map[string]routeClass {
	t.Helper()
	known := map[string]routeClass{}
	for class, lines := range routeTable {
		for line := range strings.Lines(lines) {
			if line = strings.TrimSpace(line); line != "" {
				if was, dup := known[line]; dup {
					t.Errorf("%s is in the route table twice (%s, %s)", line, was, class)
				}
				known[line] = class
			}
		}
	}
	registered := map[string]routeClass{}
	for _, r := range e.Routes() {
		k := r.Method + " " + r.Path
		class, ok := known[k]
		if !ok {
			t.Errorf("%s is not in the route table (routes_table_test.go): classify it", k)
			continue
		}
		registered[k] = class
	}
	for k := range known {
		if _, ok := registered[k]; !ok {
			t.Errorf("%s is in the route table but the server does not register it", k)
		}
	}
	return registered
}

// fillPath puts ids of the organization's project and environment where a
// path names them, so that rights on them are what is checked, and made-up
// ids and keys elsewhere.
func fillPath(pattern string, env core.Environment) string {
	parts := strings.Split(pattern, "/")
	for i, p := range parts {
		if !strings.HasPrefix(p, ":") && p != "*" {
			continue
		}
		switch {
		case p == ":envId":
			parts[i] = env.ID.String()
		case p == ":projectId", p == ":id" && i > 0 && parts[i-1] == "projects":
			parts[i] = env.ProjectID.String()
		case p == ":key" || p == ":name" || p == ":token" || p == "*":
			parts[i] = "made-up"
		default:
			parts[i] = uuid.NewString()
		}
	}
	return strings.Join(parts, "/")
}

// caller is someone calling the server: nobody, or a member signed in to
// the API (a bearer token) and to the pages (a session and a CSRF cookie,
// and the token of the pages' forms).
type caller struct {
	name    string
	bearer  string
	cookies []*http.Cookie
	csrf    string
}

func (c *caller) authorize(req *http.Request) {
	if c.bearer != "" {
		req.Header.Set(echo.HeaderAuthorization, c.bearer)
	}
	for _, ck := range c.cookies {
		req.AddCookie(ck)
	}
	if c.csrf != "" {
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
}

var csrfField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// signInPages signs a member in to the API and, through the sign-in page,
// to the pages.
func signInPages(t *testing.T, s *site, e *echo.Echo, m member, email string) *caller {
	t.Helper()
	session, err := s.st.IAM().Login(t.Context(), iam.LoginInput{Email: email, Password: m.password}, "192.0.2.9")
	must(t, err)
	c := &caller{name: email, bearer: "Bearer " + session.Token}
	rec := send(e, "GET", "/login", "")
	match := csrfField.FindStringSubmatch(rec.Body.String())
	if match == nil {
		t.Fatalf("the sign-in page has no form token (%d)", rec.Code)
	}
	c.csrf = strings.ReplaceAll(match[1], "&#43;", "+")
	c.cookies = rec.Result().Cookies()
	form := url.Values{"_csrf": {c.csrf}, "email": {email}, "password": {m.password}}.Encode()
	req := httptest.NewRequest("POST", "/login", strings.NewReader(form))
	req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
	for _, ck := range c.cookies {
		req.AddCookie(ck)
	}
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("signing %s in to the pages answered %d", email, rec.Code)
	}
	c.cookies = append(c.cookies, rec.Result().Cookies()...)
	return c
}

// member is a member's id and first password.
type member struct {
	id       uuid.UUID
	password string
}

// otherOrgMember adds a member without any policy to a second organization
// of the workspace, which they alone belong to (with the owner).
func otherOrgMember(t *testing.T, s *site, email string) member {
	t.Helper()
	ctx := t.Context()
	org, err := s.st.IAM().CreateOrganization(ctx, s.ownerActor(), iam.NewOrganizationInput{Name: "Other", Key: "other"})
	must(t, err)
	owner, err := s.st.IAM().UserActor(ctx, s.ownerID, org.WorkspaceID.String(), org.ID.String())
	must(t, err)
	return addPlainMember(t, s, owner, email)
}

// addPlainMember adds a member to the actor's organization and takes back
// the default policy it gives them.
func addPlainMember(t *testing.T, s *site, a *core.Actor, email string) member {
	t.Helper()
	m, err := s.st.IAM().AddMember(t.Context(), a, iam.MemberInput{Email: email})
	must(t, err)
	must(t, s.st.IAM().RemoveMemberPolicy(t.Context(), a, m.ID, core.DeveloperPolicyID))
	if m.InitialPassword == nil {
		t.Fatalf("%s was added without a first password", email)
	}
	return member{id: m.ID, password: *m.InitialPassword}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
