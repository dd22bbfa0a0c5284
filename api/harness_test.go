package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/api"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/feed/feedtest"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/web/httpx"
)

const (
	ownerEmail    = "owner@example.com"
	ownerPassword = "owner-password"
)

// server is a Bunting instance over a fresh database, driven through its real
// Echo handler.
type server struct {
	t     *testing.T
	e     *echo.Echo
	st    *store.Store
	pool  *pgxpool.Pool
	q     *db.Queries
	owner string // the owner's session token
	orgID uuid.UUID
	wsID  uuid.UUID
	// hostile requests are odd on purpose, and some the server rightly
	// accepts (a body where none is read): only their answers must match
	// the OpenAPI document.
	hostile bool
}

func newServer(t *testing.T) *server {
	t.Helper()
	return newServerWith(t, core.Options{})
}

// newServerWith is newServer with the store's options as given (the test's
// password cost and sign-in delay are set here).
func newServerWith(t *testing.T, opts core.Options) *server {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.New(t, core.ConfigurePool)
	keys, err := core.DeriveKeys(strings.Repeat("test-secret-", 4))
	if err != nil {
		t.Fatal(err)
	}
	opts.PasswordCost, opts.LoginDelayStep = bcrypt.MinCost, time.Millisecond
	st := store.New(pool, keys, slog.New(slog.DiscardHandler), opts)
	if _, err := st.IAM().Bootstrap(ctx, iam.Owner{Email: ownerEmail, Password: ownerPassword}); err != nil {
		t.Fatal(err)
	}
	// Authorize from the cache as the server does, so every test runs through it.
	feedtest.Run(t, st.Projects().Feed())
	s := &server{t: t, st: st, pool: pool, q: db.New(pool), e: newHandler(st, slog.New(slog.DiscardHandler))}
	s.owner = s.login(ownerEmail, ownerPassword)
	org := decode[[]iam.Organization](t, s.do("GET", "/api/v1/organizations", s.owner, nil).ok(t))
	s.orgID, s.wsID = org[0].ID, org[0].WorkspaceID
	return s
}

// newHandler serves the API alone, as the server mounts it: on the Echo
// every surface shares, with the envelope for every failure.
func newHandler(st *store.Store, log *slog.Logger) *echo.Echo {
	e := httpx.New(log, httpx.Options{})
	e.HTTPErrorHandler = func(err error, c echo.Context) { api.WriteError(c, log, err) }
	api.New(st, log, api.Shared{}).Register(e)
	return e
}

// reply is a decoded answer.
type reply struct {
	t       *testing.T
	Status  int
	Header  http.Header
	Success bool                `json:"success"`
	Errors  []string            `json:"errors"`
	Data    json.RawMessage     `json:"data"`
	Details []core.FieldProblem `json:"details"`
	raw     string
}

// remoteAddr, given as a header name to do, sets the client's address instead.
const remoteAddr = "Remote-Addr"

// do sends a request. body is nil (none), a string (sent as is) or a value
// encoded as JSON; headers are name, value pairs.
func (s *server) do(method, path, token string, body any, headers ...string) *reply {
	s.t.Helper()
	var r io.Reader
	var raw []byte // kept to validate the request against the OpenAPI document
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		raw = j
	}
	if body != nil {
		r = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, r)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == remoteAddr {
			req.RemoteAddr = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	sent := req.Header.Clone()
	rec := httptest.NewRecorder()
	s.e.ServeHTTP(rec, req)
	s.validate(method, path, sent, raw, rec) // every exchange must match api/openapi.yaml
	out := &reply{t: s.t, Status: rec.Code, Header: rec.Header(), raw: rec.Body.String()}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		s.t.Fatalf("%s %s: Content-Type %q, want application/json; body %s", method, path, ct, out.raw)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
		s.t.Fatalf("%s %s: body is not an envelope: %v: %s", method, path, err, out.raw)
	}
	if out.Errors == nil {
		s.t.Fatalf("%s %s: envelope errors is not an array: %s", method, path, out.raw)
	}
	return out
}

// bearer is a session token as an Authorization header value.
func bearer(token string) string { return "Bearer " + token }

// ok asserts a successful answer and returns it.
func (r *reply) ok(t *testing.T) *reply {
	t.Helper()
	if r.Status != http.StatusOK || !r.Success || len(r.Errors) != 0 {
		t.Fatalf("got %d %s, want 200 success", r.Status, r.raw)
	}
	return r
}

// fails asserts a failed answer with status and exactly these error codes.
func (r *reply) fails(t *testing.T, status int, codes ...string) {
	t.Helper()
	if r.Status != status || r.Success || string(r.Data) != "null" || !slices.Equal(r.Errors, codes) {
		t.Fatalf("got %d %s, want %d with errors %v and data null", r.Status, r.raw, status, codes)
	}
	if status == http.StatusUnauthorized && r.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Fatalf("401 without WWW-Authenticate: Bearer")
	}
}

func decode[T any](t *testing.T, r *reply) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.Data, &v); err != nil {
		t.Fatalf("decode data %s: %v", r.Data, err)
	}
	return v
}

// login signs in and returns the Authorization header value.
func (s *server) login(email, password string) string {
	s.t.Helper()
	r := s.do("POST", "/api/v1/identity/login-by-email", "", map[string]string{"email": email, "password": password}).ok(s.t)
	return bearer(decode[iam.Session](s.t, r).Token)
}

// addMember creates a user in the owner's organization holding the given
// policies and returns the user's Authorization header value.
func (s *server) addMember(email string, policies ...uuid.UUID) (string, uuid.UUID) {
	s.t.Helper()
	ctx := context.Background()
	hash, _ := bcrypt.GenerateFromPassword([]byte("member-password"), bcrypt.MinCost)
	h := string(hash)
	u, err := s.q.CreateUser(ctx, db.CreateUserParams{Email: email, Name: email, PasswordHash: &h})
	if err != nil {
		s.t.Fatal(err)
	}
	must(s.t, s.q.AddWorkspaceUser(ctx, db.AddWorkspaceUserParams{WorkspaceID: s.wsID, UserID: u.ID}))
	if _, err := s.q.AddOrganizationUser(ctx, db.AddOrganizationUserParams{OrganizationID: s.orgID, UserID: u.ID}); err != nil {
		s.t.Fatal(err)
	}
	for _, p := range policies {
		must(s.t, s.q.AddMemberPolicy(ctx, db.AddMemberPolicyParams{OrganizationID: s.orgID, UserID: u.ID, PolicyID: p}))
	}
	return s.login(email, "member-password"), u.ID
}

// otherOrganization makes a second organization in the workspace with a
// project, and returns the project's id.
func (s *server) otherOrganization() uuid.UUID {
	s.t.Helper()
	ctx := context.Background()
	org, err := s.q.CreateOrganization(ctx, db.CreateOrganizationParams{WorkspaceID: s.wsID, Name: "Other", Key: "other",
		DefaultPolicyIds: []uuid.UUID{}, DefaultGroupIds: []uuid.UUID{}})
	if err != nil {
		s.t.Fatal(err)
	}
	p, err := s.q.CreateProject(ctx, db.CreateProjectParams{OrganizationID: org.ID, Name: "Secret", Key: "secret"})
	if err != nil {
		s.t.Fatal(err)
	}
	return p.ID
}

// changeAccess runs SQL that changes access behind the store's back, then
// waits until the database's notification has moved the store's access
// version, which empties the actor cache.
func (s *server) changeAccess(sql string, args ...any) {
	s.t.Helper()
	version := func() int64 { v, _ := s.st.Projects().AccessVersion(); return v }
	before := version()
	if _, err := s.pool.Exec(context.Background(), sql, args...); err != nil {
		s.t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); version() == before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			s.t.Fatal("no access-change notification arrived within 5s")
		}
	}
}

// count returns the number of rows a query counts.
func (s *server) count(sql string, args ...any) int {
	s.t.Helper()
	var n int
	if err := s.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
