package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/feed/feedtest"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/web/httpx/httpxtest"
	"github.com/bunting-flags/bunting/web/sdk"
)

const (
	ownerEmail    = "owner@example.com"
	ownerPassword = "owner-password"
)

// site is a store over a fresh database, with its owner signed in, for
// handlers assembled as Serve assembles them.
type site struct {
	t       *testing.T
	st      *store.Store
	owner   string // the owner's Authorization header value
	ownerID uuid.UUID
}

func newSite(t *testing.T) *site {
	t.Helper()
	return newSiteOver(t, dbtest.New(t, core.ConfigurePool))
}

// newSiteOver is a site over pool, a fresh database's (dbtest.New).
func newSiteOver(t *testing.T, pool *pgxpool.Pool) *site {
	t.Helper()
	return newSiteWith(t, pool, core.Options{})
}

// newSiteWith is a site over pool whose store has opts (bcrypt's cheapest
// cost always).
func newSiteWith(t *testing.T, pool *pgxpool.Pool, opts core.Options) *site {
	t.Helper()
	ctx := context.Background()
	keys, err := core.DeriveKeys(strings.Repeat("test-secret-", 4))
	must(t, err)
	opts.PasswordCost = bcrypt.MinCost
	st := store.New(pool, keys, slog.New(slog.DiscardHandler), opts)
	_, err = st.IAM().Bootstrap(ctx, iam.Owner{Email: ownerEmail, Password: ownerPassword})
	must(t, err)
	session, err := st.IAM().Login(ctx, iam.LoginInput{Email: ownerEmail, Password: ownerPassword}, "192.0.2.1")
	must(t, err)
	return &site{t: t, st: st, owner: "Bearer " + session.Token, ownerID: session.UserID}
}

// handler assembles the whole server over the site's store: cfg's BaseURL
// is http://bunting.test unless set.
func (s *site) handler(cfg server.Config, log *slog.Logger) *echo.Echo {
	s.t.Helper()
	if cfg.BaseURL == nil {
		cfg.BaseURL, _ = url.Parse("http://bunting.test")
	}
	e, _ := server.NewHandler(cfg, s.st, log, sdk.Options{})
	return e
}

// listen runs the store's change listener, as Serve does, until the test
// ends, and returns once it listens.
func (s *site) listen() {
	s.t.Helper()
	feedtest.Run(s.t, s.st.Projects().Feed())
}

// ownerActor is the owner as the store sees them, to set up data directly.
func (s *site) ownerActor() *core.Actor {
	s.t.Helper()
	owner, err := s.st.IAM().Authenticate(context.Background(), iam.Credentials{Authorization: s.owner})
	must(s.t, err)
	return owner
}

// project creates a project as the owner and returns its first
// environment, with its secrets.
func (s *site) project(key string) core.Environment {
	s.t.Helper()
	p, err := s.st.Projects().CreateProject(context.Background(), s.ownerActor(), core.ProjectInput{Name: key, Key: key})
	must(s.t, err)
	return p.Environments[0]
}

// secret is an environment's secret of a type (store.SecretServer or
// store.SecretClient).
func secret(env core.Environment, typ string) string {
	for _, s := range env.Secrets {
		if s.Type == typ {
			return s.Value
		}
	}
	panic("no " + typ + " secret")
}

// send serves one request; headers are name, value pairs.
func send(h http.Handler, method, path, body string, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	h := newSite(t).handler(server.Config{}, slog.New(slog.DiscardHandler))
	for _, path := range []string{"/health/liveness", "/health/readiness"} {
		rec := send(h, "GET", path, "")
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"ok"`) {
			t.Errorf("%s: got %d %s, want 200 ok", path, rec.Code, rec.Body)
		}
	}
}

// TestErrorsAnswerInTheirSurfacesForm: one error handler serves every
// surface; the API keeps its JSON envelope, without the pages' headers,
// for the situations the pages answer with an HTML page.
func TestErrorsAnswerInTheirSurfacesForm(t *testing.T) {
	t.Parallel()
	h := newSite(t).handler(server.Config{}, slog.New(slog.DiscardHandler))
	p := send(h, "GET", "/no-such-page", "")
	if p.Code != http.StatusNotFound || !strings.HasPrefix(p.Header().Get("Content-Type"), "text/html") ||
		p.Header().Get("Content-Security-Policy") == "" {
		t.Errorf("page 404: %d %v", p.Code, p.Header())
	}
	p = send(h, "GET", "/api/v1/no-such-route", "")
	if p.Code != http.StatusNotFound || !strings.HasPrefix(p.Header().Get("Content-Type"), "application/json") ||
		!strings.Contains(p.Body.String(), `"ResourceNotFound"`) {
		t.Errorf("API 404: %d %s", p.Code, p.Body)
	}
	if p.Header().Get("Content-Security-Policy") != "" {
		t.Errorf("API answers carry page headers")
	}
}

// TestCORS: a page on a listed origin may call the management API with
// credentials (its origin echoed, never "*"); other origins, and every origin
// when none is configured, get no CORS headers.
func TestCORS(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	const allowed = "https://flags.example.com"
	withCORS := s.handler(server.Config{CORSOrigins: []string{allowed}}, slog.New(slog.DiscardHandler))
	without := s.handler(server.Config{}, slog.New(slog.DiscardHandler))
	call := func(h http.Handler, method, path, origin string, headers ...string) *httptest.ResponseRecorder {
		return send(h, method, path, "", append([]string{"Origin", origin}, headers...)...)
	}

	rec := call(withCORS, "GET", "/api/v1/user/profile", allowed, "Authorization", s.owner)
	if rec.Code != http.StatusOK || rec.Header().Get("Access-Control-Allow-Origin") != allowed ||
		rec.Header().Get("Access-Control-Allow-Credentials") != "true" {
		t.Fatalf("allowed origin: %d %v", rec.Code, rec.Header())
	}
	rec = call(withCORS, "GET", "/api/v2/resources?spaceLevel=organization&types=env", allowed, "Authorization", s.owner)
	if rec.Code != http.StatusOK || rec.Header().Get("Access-Control-Allow-Origin") != allowed {
		t.Fatalf("v2 from the allowed origin: %d %v", rec.Code, rec.Header())
	}
	// A failure still carries the headers, so the page can read the envelope.
	rec = call(withCORS, "GET", "/api/v1/projects", allowed)
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("Access-Control-Allow-Origin") != allowed {
		t.Fatalf("401 to the allowed origin: %d %v", rec.Code, rec.Header())
	}

	pre := call(withCORS, "OPTIONS", "/api/v1/projects", allowed,
		"Access-Control-Request-Method", "PUT", "Access-Control-Request-Headers", "authorization,organization,content-type")
	if pre.Code != http.StatusNoContent || pre.Header().Get("Access-Control-Allow-Origin") != allowed ||
		pre.Header().Get("Access-Control-Allow-Credentials") != "true" ||
		!strings.Contains(pre.Header().Get("Access-Control-Allow-Methods"), "PUT") ||
		!strings.Contains(pre.Header().Get("Access-Control-Allow-Headers"), "Organization") {
		t.Fatalf("preflight from the allowed origin: %d %v", pre.Code, pre.Header())
	}

	for name, rec := range map[string]*httptest.ResponseRecorder{
		"other origin":              call(withCORS, "GET", "/api/v1/user/profile", "https://evil.example.com", "Authorization", s.owner),
		"other origin's preflight":  call(withCORS, "OPTIONS", "/api/v1/projects", "https://evil.example.com", "Access-Control-Request-Method", "DELETE"),
		"look-alike origin":         call(withCORS, "GET", "/api/v1/user/profile", allowed+".evil.com", "Authorization", s.owner),
		"admin pages":               call(withCORS, "GET", "/login", allowed),
		"not configured":            call(without, "GET", "/api/v1/user/profile", allowed, "Authorization", s.owner),
		"not configured, preflight": call(without, "OPTIONS", "/api/v1/projects", allowed, "Access-Control-Request-Method", "PUT"),
	} {
		if got := rec.Header().Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("%s: Access-Control-Allow-Origin %q, want none", name, got)
		}
		if got := rec.Header().Get("Access-Control-Allow-Credentials"); got != "" {
			t.Errorf("%s: Access-Control-Allow-Credentials %q, want none", name, got)
		}
	}
	// The SDK endpoints keep their own policy: any origin, without credentials.
	rec = call(withCORS, "OPTIONS", "/api/public/sdk/server/latest-all", "https://evil.example.com", "Access-Control-Request-Method", "GET")
	if rec.Header().Get("Access-Control-Allow-Credentials") == "true" {
		t.Errorf("SDK preflight allows credentials: %v", rec.Header())
	}
}

// TestCancelledRequestsAreNotErrors: a request whose client went away is
// logged as 499 at info, never as a server error, whichever surface it
// reached.
func TestCancelledRequestsAreNotErrors(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	prod := s.project("web")
	var logs httpxtest.LogBuffer
	h := s.handler(server.Config{}, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	for _, r := range []struct{ method, path, auth, body string }{
		{"GET", "/api/v1/projects/" + prod.ProjectID.String(), s.owner, ""},
		{"GET", "/api/public/sdk/server/latest-all?timestamp=0", secret(prod, core.SecretServer), ""},
		{"POST", "/ofrep/v1/evaluate/flags/ft-bool", secret(prod, core.SecretServer), `{"context":{"targetingKey":"u1"}}`},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the client has gone
		req := httptest.NewRequestWithContext(ctx, r.method, r.path, strings.NewReader(r.body))
		req.Header.Set("Authorization", r.auth)
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	out := logs.String()
	if strings.Contains(out, "level=ERROR") || strings.Contains(out, "status=500") || strings.Contains(out, "status=503") {
		t.Errorf("a cancelled request was logged as a server error:\n%s", out)
	}
	if n := strings.Count(out, "status=499"); n != 3 {
		t.Errorf("%d requests logged as 499 (client closed request), want 3:\n%s", n, out)
	}
}
