package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/seed"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// Scale of the organization the IAM pages must serve quickly.
const (
	benchMembers = 50_000
	benchGroups  = 2_000
)

// BenchmarkIAMPages measures the policy member and group pages, and the
// member and group lists, in an organization of 50,000 members and 2,000
// groups (next to a neighbour organization of the same size). Before
// measuring a page it logs the plans of the queries the page runs, both the
// one PostgreSQL picks for these values (custom) and the one a prepared
// statement may switch to when it costs no more (generic), and fails if the
// custom plan of a page query reads a whole large table. Counts are not held
// to that: counting every member of an organization reads all its rows in
// any plan, and the planner rightly scans when the organization is half the
// table.
//
//	go test -run xxx -bench IAMPages -benchtime 200x -v ./api/
func BenchmarkIAMPages(b *testing.B) {
	e := newBenchEnv(b)
	p := e.policyID.String()
	pages := []struct{ name, path string }{
		{"PolicyMembers/search", "/api/v1/policies/" + p + "/members?SearchText=.0421"},
		{"PolicyMembers/searchAll", "/api/v1/policies/" + p + "/members?SearchText=.0421&GetAllMembers=true"},
		{"PolicyMembers/direct", "/api/v1/policies/" + p + "/members"},
		{"PolicyMembers/direct-page50", "/api/v1/policies/" + p + "/members?PageIndex=50"},
		{"PolicyMembers/all", "/api/v1/policies/" + p + "/members?GetAllMembers=true"},
		{"PolicyMembers/all-page50", "/api/v1/policies/" + p + "/members?GetAllMembers=true&PageIndex=50"},
		{"PolicyGroups/search", "/api/v1/policies/" + p + "/groups?Name=0420"},
		{"PolicyGroups/searchAll", "/api/v1/policies/" + p + "/groups?Name=crimson&GetAllGroups=true"},
		{"PolicyGroups/direct", "/api/v1/policies/" + p + "/groups"},
		{"PolicyGroups/all-page20", "/api/v1/policies/" + p + "/groups?GetAllGroups=true&PageIndex=20"},
		{"Groups/search", "/api/v1/groups?name=0420"},
		{"Members/search", "/api/v1/members?searchText=.0421"},
	}
	for _, pg := range pages {
		b.Run(pg.name, func(b *testing.B) {
			e.explain(b, pg.path)
			for b.Loop() {
				e.get(b, pg.path)
			}
		})
	}
}

type benchEnv struct {
	e        *echo.Echo
	url      string
	owner    string
	policyID uuid.UUID
	rec      *sqlRecorder
}

// sqlRecorder remembers the sqlc list and count queries a request runs, so
// their plans can be shown.
type sqlRecorder struct {
	mu      sync.Mutex
	queries []recorded
}

type recorded struct {
	name string
	sql  string
	args []any
}

var queryName = regexp.MustCompile(`^-- name: ((?:List|Search|Count)\w*)`)

// authQueries run for every request, before the page's own.
var authQueries = map[string]bool{"ListUserWorkspaces": true, "ListUserOrganizations": true, "ListMemberStatements": true}

func (r *sqlRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if m := queryName.FindStringSubmatch(d.SQL); m != nil && !authQueries[m[1]] {
		r.mu.Lock()
		r.queries = append(r.queries, recorded{m[1], d.SQL, d.Args})
		r.mu.Unlock()
	}
	return ctx
}

func (r *sqlRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *sqlRecorder) take() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.queries
	r.queries = nil
	return q
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	ctx := context.Background()
	dbURL, _ := dbtest.NewDatabase(b)
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		b.Fatal(err)
	}
	rec := &sqlRecorder{}
	cfg.ConnConfig.Tracer = rec
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	keys, err := core.DeriveKeys(strings.Repeat("bench-secret-", 4))
	if err != nil {
		b.Fatal(err)
	}
	st := store.New(pool, keys, slog.New(slog.DiscardHandler), core.Options{PasswordCost: bcrypt.MinCost})
	if _, err := st.IAM().Bootstrap(ctx, iam.Owner{Email: ownerEmail, Password: ownerPassword}); err != nil {
		b.Fatal(err)
	}
	e := &benchEnv{e: newHandler(st, slog.New(slog.DiscardHandler)), url: dbURL, rec: rec}
	var s iam.Session
	e.call(b, "POST", "/api/v1/identity/login-by-email", "", fmt.Sprintf(`{"email":%q,"password":%q}`, ownerEmail, ownerPassword), &s)
	e.owner = "Bearer " + s.Token
	var p iam.Policy
	e.call(b, "POST", "/api/v1/policies", e.owner, `{"name":"Testers","key":"testers"}`, &p)
	e.policyID = p.ID

	start := time.Now()
	var orgID, wsID uuid.UUID
	if err := pool.QueryRow(ctx, `SELECT id, workspace_id FROM organizations`).Scan(&orgID, &wsID); err != nil {
		b.Fatal(err)
	}
	// A neighbour organization of the same size makes the tables twice what
	// one organization holds, so a plan that reads a whole table shows.
	var neighbour uuid.UUID
	if err := pool.QueryRow(ctx, `INSERT INTO organizations (workspace_id, name, key) VALUES ($1, 'Neighbour', 'neighbour') RETURNING id`, wsID).Scan(&neighbour); err != nil {
		b.Fatal(err)
	}
	seedOrg(b, pool, wsID, neighbour, core.DeveloperPolicyID, "neighbour")
	seedOrg(b, pool, wsID, orgID, p.ID, "acme")
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		b.Fatal(err)
	}
	rec.take()
	b.Logf("seeded %d members and %d groups in %s", benchMembers, benchGroups, time.Since(start).Round(time.Millisecond))
	return e
}

// seedOrg fills an organization: members with varied emails and names (their
// domain says which organization), every one holding Developer directly and
// every tenth the policy; groups with varied names, every twentieth holding
// the policy; each member in one group.
func seedOrg(b *testing.B, pool *pgxpool.Pool, wsID, orgID, policyID uuid.UUID, domain string) {
	b.Helper()
	_, err := seed.InsertMembers(context.Background(), pool, seed.Organization{WorkspaceID: wsID, OrgID: orgID,
		Members: benchMembers, Groups: benchGroups, Domain: domain, BasePolicy: core.DeveloperPolicyID, Policy: policyID})
	if err != nil {
		b.Fatal(err)
	}
}

func (e *benchEnv) call(b *testing.B, method, path, auth, body string, out any) {
	b.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	e.e.ServeHTTP(rec, req)
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &env) != nil {
		b.Fatalf("%s %s: got %d %s, want 200", method, path, rec.Code, rec.Body)
	}
	if out != nil {
		if err := json.Unmarshal(env.Data, out); err != nil {
			b.Fatal(err)
		}
	}
}

func (e *benchEnv) get(b *testing.B, path string) {
	var page struct {
		TotalCount int64 `json:"totalCount"`
	}
	e.call(b, "GET", path, e.owner, "", &page)
	if page.TotalCount == 0 {
		b.Fatalf("%s found nothing", path)
	}
}

// memberScan is a plan line that reads a whole table of the members' scale;
// groupScan one that reads all groups, which a search must not do either
// (2,000 groups are few enough for the planner to read them for a plain page).
var (
	memberScan = regexp.MustCompile(`Seq Scan on (users|organization_users|member_policies|group_members)\b`)
	groupScan  = regexp.MustCompile(`Seq Scan on groups\b`)
)

// explain runs the page once, then shows how PostgreSQL runs each list and
// count query it issued: with the plan chosen for these values (custom) and
// with the plan a prepared statement may switch to (generic).
func (e *benchEnv) explain(b *testing.B, path string) {
	b.Helper()
	ctx := context.Background()
	e.rec.take()
	e.get(b, path)
	queries := e.rec.take()
	conn, err := pgx.Connect(ctx, e.url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range queries {
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			params := make([]string, len(q.args))
			for i := range params {
				params[i] = fmt.Sprintf("$%d", i+1)
			}
			var plan []string
			err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = "+mode); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, "PREPARE bench_query AS "+q.sql); err != nil {
					return err
				}
				defer tx.Exec(ctx, "DEALLOCATE bench_query")
				// The simple protocol inlines the values: EXECUTE's arguments cannot be parameters.
				args := []any{pgx.QueryExecModeSimpleProtocol}
				for _, a := range q.args {
					if ids, ok := a.([]uuid.UUID); ok { // the simple protocol has no encoding for these
						strs := make([]string, len(ids))
						for i, id := range ids {
							strs[i] = id.String()
						}
						a = strs
					}
					args = append(args, a)
				}
				rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF, SUMMARY OFF) EXECUTE bench_query("+strings.Join(params, ", ")+")", args...)
				if err != nil {
					return err
				}
				plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
				return err
			})
			if err != nil {
				b.Fatalf("explain %s: %v", q.name, err)
			}
			text := strings.Join(plan, "\n")
			b.Logf("%s %s (%s):\n%s", path, q.name, strings.TrimPrefix(mode, "force_"), text)
			if mode != "force_custom_plan" || strings.HasPrefix(q.name, "Count") {
				continue
			}
			if m := memberScan.FindString(text); m != "" {
				b.Errorf("%s %s reads a whole table: %s", path, q.name, m)
			}
			if m := groupScan.FindString(text); m != "" && strings.HasPrefix(q.name, "Search") {
				b.Errorf("%s %s reads a whole table: %s", path, q.name, m)
			}
		}
	}
}
