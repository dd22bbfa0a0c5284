package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/segments"
)

// A change made from a page costs at most twice the SQL statements the same
// change costs through the API: the page pays for who is acting and where,
// and for what it shows afterwards, but loads each of those once. Both are
// served by the assembled server, as Serve serves them.

// statementCount is the context key of a request's statement counter.
type statementCount struct{}

// statementTracer counts each statement a request's context runs, alone or
// in a batch (a transaction's BEGIN goes with its first statement).
type statementTracer struct{}

// requestStatements are the statements one request ran, by the name sqlc
// gives each query (or the statement's first words), so a test over budget
// says which ones.
type requestStatements struct {
	mu    sync.Mutex
	names []string
}

func (r *requestStatements) len() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(len(r.names))
}

func countStatement(ctx context.Context, sql string) {
	if r, ok := ctx.Value(statementCount{}).(*requestStatements); ok {
		r.mu.Lock()
		r.names = append(r.names, statementName(sql))
		r.mu.Unlock()
	}
}

// statementName is sqlc's name of a query ("-- name: GetFlag :one"), else
// its first words.
func statementName(sql string) string {
	sql = strings.TrimSpace(sql)
	if rest, ok := strings.CutPrefix(sql, "-- name: "); ok {
		name, _, _ := strings.Cut(rest, " ")
		return name
	}
	if f := strings.Fields(sql); len(f) > 3 {
		return strings.Join(f[:3], " ")
	}
	return sql
}

func (statementTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	countStatement(ctx, d.SQL)
	return ctx
}

func (statementTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (statementTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (statementTracer) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	countStatement(ctx, d.SQL)
}

func (statementTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// countedHeader marks the requests whose statements a test counts; Go's
// client sends it again when it follows a redirect.
const countedHeader = "X-Count-Statements"

// statementLog holds how many statements each marked request ran, in the
// order the requests ended.
type statementLog struct {
	mu    sync.Mutex
	ended *sync.Cond
	runs  []*requestStatements
}

// counting gives each request a counter the tracer adds to, and logs it
// when a marked request ends.
func (l *statementLog) counting(next http.Handler) http.Handler {
	l.ended = sync.NewCond(&l.mu)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := new(requestStatements)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), statementCount{}, n)))
		if r.Header.Get(countedHeader) == "" {
			return
		}
		l.mu.Lock()
		l.runs = append(l.runs, n)
		l.mu.Unlock()
		l.ended.Broadcast()
	})
}

// take waits until requests marked requests have ended (a client may read
// an answer before its handler returns) and returns their counts.
func (l *statementLog) take(requests int) []*requestStatements {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.runs) < requests {
		l.ended.Wait()
	}
	out := l.runs
	l.runs = nil
	return out
}

// apiCall sends a JSON request to the API at base with a session token,
// marked to be counted.
func apiCall(t *testing.T, base, method, path, token string, body any) {
	t.Helper()
	var buf bytes.Buffer
	if body != nil {
		must(t, json.NewEncoder(&buf).Encode(body))
	}
	req, err := http.NewRequest(method, base+path, &buf)
	must(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", token)
	req.Header.Set(countedHeader, "1")
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	var env struct {
		Success bool     `json:"success"`
		Errors  []string `json:"errors"`
	}
	must(t, json.NewDecoder(resp.Body).Decode(&env))
	if resp.StatusCode != http.StatusOK || !env.Success {
		t.Fatalf("%s %s: status %d, errors %v", method, path, resp.StatusCode, env.Errors)
	}
}

// budgetRow is one change's statements through the API and from its page,
// as a form post (answered with a redirect) and with htmx (answered with
// the regions it swaps).
type budgetRow struct {
	change                    string
	api, form, redirect, htmx *requestStatements
	// answer is what the htmx post answered.
	answer *page
}

// TestPageChangesCostAtMostTwiceTheAPI counts the SQL statements of a flag's
// targeting, a toggle from the flag list, a segment's targeting and a
// member's policy and group changed through the API and from their pages.
func TestPageChangesCostAtMostTwiceTheAPI(t *testing.T) {
	t.Parallel()
	// Cold: no listener, so both surfaces resolve every session from the
	// database and the counts do not depend on when a notification empties
	// the actor cache. Warm: as a server runs, with the actor cache they share.
	t.Run("cold", func(t *testing.T) { t.Parallel(); pageChangeBudget(t, false) })
	t.Run("warm", func(t *testing.T) { t.Parallel(); pageChangeBudget(t, true) })
}

func pageChangeBudget(t *testing.T, warm bool) {
	statements := &statementLog{}
	s := newSiteOver(t, dbtest.New(t, func(cfg *pgxpool.Config) {
		core.ConfigurePool(cfg)
		cfg.ConnConfig.Tracer = statementTracer{}
	}))
	if warm {
		s.listen()
	}
	srv := httptest.NewServer(statements.counting(s.handler(server.Config{}, slog.New(slog.DiscardHandler))))
	t.Cleanup(srv.Close)
	ctx, owner := t.Context(), s.ownerActor()
	env := s.project("web")
	created, err := s.st.Flags().CreateFlag(ctx, owner, env.ID, flagstore.FlagInput{Name: "Checkout", Key: "checkout", VariationType: "string",
		Variations: []flagstore.Variation{{ID: "a", Name: "Old", Value: "old"}, {ID: "b", Name: "New", Value: "new"}}})
	must(t, err)
	flagID := created.ID
	sg, err := s.st.Segments().CreateSegment(ctx, owner, env.ID, segments.SegmentInput{Name: "Beta users", Key: "beta", Type: flagstore.SegmentEnvironmentSpecific})
	must(t, err)
	member := addMember(t, s, "ann@example.com")
	policies := []uuid.UUID{readerPolicy(t, s), core.DeveloperPolicyID, core.AdministratorPolicyID}
	var groups []uuid.UUID
	for _, name := range []string{"Checkout team", "Search team", "Platform team"} {
		g, err := s.st.IAM().CreateGroup(ctx, owner, iam.GroupInput{Name: name})
		must(t, err)
		groups = append(groups, g.ID)
	}
	b := signIn(t, srv.URL)

	var rows []budgetRow
	// measure makes a change three times: through the API (apiChange), then
	// from its page as a form post and with htmx (the form page prepares,
	// loading the page it is posted from, uncounted).
	measure := func(change string, apiChange func(n int), form func(n int) (path string, vals url.Values), target string) {
		r := budgetRow{change: change}
		apiChange(1)
		r.api = statements.take(1)[0]
		path, vals := form(2)
		b.send(path, vals, http.Header{countedHeader: {"1"}})
		posted := statements.take(2) // the post, and the page it redirects to
		r.form, r.redirect = posted[0], posted[1]
		path, vals = form(3)
		htmx := http.Header{countedHeader: {"1"}, "Hx-Request": {"true"}, "X-Csrf-Token": {b.last.csrf()}}
		if target != "" {
			htmx.Set("Hx-Target", target) // the region the form's hx-target names, as htmx sends it
		}
		r.answer = b.send(path, vals, htmx)
		r.htmx = statements.take(1)[0]
		rows = append(rows, r)
	}

	flagPath := "/api/v1/envs/" + env.ID.String() + "/feature-flags/checkout"
	measure("flag targeting", func(n int) {
		apiCall(t, srv.URL, http.MethodPut, flagPath+"/targeting", s.owner,
			map[string]any{"targeting": map[string]any{"targetUsers": []any{}, "rules": []any{},
				"fallthrough": map[string]any{"variations": []any{map[string]any{"id": "b", "rollout": []float64{0, 1}}}}},
				"comment": fmt.Sprint("change ", n)})
	}, func(n int) (string, url.Values) {
		vals := b.get("/flags/checkout?edit=targeting").form("targeting-form")
		vals.Set("comment", fmt.Sprint("change ", n))
		vals.Set("default.serve", []string{"a", "b"}[n%2])
		vals.Set("_csrf", b.last.csrf())
		return "/flags/checkout/targeting", vals
	}, "")
	// Turned on through the API, off from the list, on again with htmx,
	// which answers the flag's row alone.
	measure("flag toggle (list)", func(n int) {
		apiCall(t, srv.URL, http.MethodPut, flagPath+"/toggle/true", s.owner, map[string]any{"comment": fmt.Sprint("toggle ", n)})
	}, func(n int) (string, url.Values) {
		b.get("/flags")
		return "/flags/checkout/toggle", url.Values{"on": {fmt.Sprint(n == 3)}, "next": {"/flags"}, "_csrf": {b.last.csrf()}}
	}, "flag-row-"+flagID.String())
	segmentPath := "/segments/" + sg.ID.String()
	measure("segment targeting", func(n int) {
		apiCall(t, srv.URL, http.MethodPut, "/api/v1/envs/"+env.ID.String()+"/segments/"+sg.ID.String()+"/targeting", s.owner,
			map[string]any{"included": []string{fmt.Sprint("user-", n)}, "excluded": []string{}, "rules": []any{}})
	}, func(n int) (string, url.Values) {
		vals := b.get(segmentPath).form("segment-targeting-form")
		vals.Set("included", fmt.Sprint("user-", n))
		vals.Set("_csrf", b.last.csrf())
		return segmentPath + "/targeting", vals
	}, "")
	memberPath := "/members/" + member.String()
	measure("member policy", func(n int) {
		apiCall(t, srv.URL, http.MethodPut, "/api/v1/members/"+member.String()+"/add-policy/"+policies[n-1].String(), s.owner, nil)
	}, func(n int) (string, url.Values) {
		b.get(memberPath)
		return memberPath + "/policies/" + policies[n-1].String() + "/add", url.Values{"_csrf": {b.last.csrf()}}
	}, "member-policies-body")
	measure("member group", func(n int) {
		apiCall(t, srv.URL, http.MethodPut, "/api/v1/groups/"+groups[n-1].String()+"/add-member/"+member.String(), s.owner, nil)
	}, func(n int) (string, url.Values) {
		b.get(memberPath)
		return memberPath + "/groups/" + groups[n-1].String() + "/add", url.Values{"_csrf": {b.last.csrf()}}
	}, "member-groups-body")

	// An htmx change answers the regions it changed, not the page: a flag's
	// summary and heading, without its tabs; a segment's editor, without
	// its heading.
	regions := map[string]struct{ shown, left []string }{
		"flag targeting":    {[]string{"summary-default", "flag-heading"}, []string{"tab-history"}},
		"segment targeting": {[]string{"segment-targeting-form"}, []string{"segment-heading", "tab-history"}},
	}
	for _, r := range rows {
		for _, id := range regions[r.change].shown {
			r.answer.must(id)
		}
		for _, id := range regions[r.change].left {
			if find(r.answer.doc, id) != nil {
				t.Errorf("%s: the htmx answer draws %q, which the change left as it was", r.change, id)
			}
		}
	}

	// Each change was made: the last one, from the page with htmx, stands.
	flag, err := s.st.Flags().GetFlag(ctx, owner, env.ID, "checkout")
	must(t, err)
	if got := flag.Fallthrough.Variations; len(got) != 1 || got[0].ID != "b" {
		t.Errorf("flag serves %+v by default, want b", got)
	}
	segment, err := s.st.Segments().GetSegment(ctx, owner, env.ID, sg.ID)
	must(t, err)
	if got := segment.Included; !slices.Equal(got, []string{"user-3"}) {
		t.Errorf("segment includes %v, want user-3", got)
	}
	direct, err := s.st.IAM().ListMemberDirectPolicies(ctx, owner, member, iam.IAMFilter{Page: core.Page{Size: 100}})
	must(t, err)
	if got := direct.Items; len(got) != len(policies) {
		t.Errorf("member's policies %v, want %d", got, len(policies))
	}
	if got, err := s.st.Flags().GetFlag(ctx, owner, env.ID, "checkout"); err != nil || !got.IsEnabled {
		t.Errorf("flag on: %v (%v), want on", got.IsEnabled, err)
	}
	in, err := s.st.IAM().ListMemberGroups(ctx, owner, member, iam.IAMFilter{Page: core.Page{Size: 100}})
	must(t, err)
	if len(in.Items) != len(groups) {
		t.Errorf("member's groups %v, want %d", in.Items, len(groups))
	}

	t.Log("statements per change: API | page form post + its redirected page | page htmx post")
	for _, r := range rows {
		api, form, redirect, htmx := r.api.len(), r.form.len(), r.redirect.len(), r.htmx.len()
		t.Logf("%-18s %3d | %3d + %3d | %3d", r.change, api, form, redirect, htmx)
		t.Logf("  API:      %v", r.api.names)
		t.Logf("  form:     %v", r.form.names)
		t.Logf("  redirect: %v", r.redirect.names)
		t.Logf("  htmx:     %v", r.htmx.names)
		if form > 2*api || htmx > 2*api {
			t.Errorf("%s: the page's change ran %d (form) and %d (htmx) statements, the API's %d: want at most %d",
				r.change, form, htmx, api, 2*api)
		}
		// Warm, whether a request finds its actor in the cache is timing: a
		// member's change empties it when its notification arrives. The
		// budgets below count each page request as if it had found the
		// cache as the API's did, paying, where the API's resolved its
		// actor, the page's own resolution (three statements: PageSession).
		asAPI := func(n int64, req *requestStatements) int64 {
			if resolved(r.api) > 0 {
				n += pageResolution
			}
			return n - resolved(req)
		}
		htmx, form, redirect = asAPI(htmx, r.htmx), asAPI(form, r.form), asAPI(redirect, r.redirect)
		// An htmx post reads, besides the change, who acts and where (the
		// working environment only when the change needs it) and only the
		// regions it redraws: a member's list finds the member and counts
		// itself in its one statement.
		if htmx > api+3 {
			t.Errorf("%s: the page's htmx change ran %d statements, the API's %d: want at most %d", r.change, htmx, api, api+3)
		}
		// The no-script post pays, besides the change, where the person
		// works when the change needs it (the place: one statement).
		if form > api+1 {
			t.Errorf("%s: the no-script post ran %d statements, the API's %d: want at most %d", r.change, form, api, api+1)
		}
		// The page it redirects to pays its own reads, as the API's change
		// pays its own, and the place, which holds all the frame of every
		// page shows (projects, the working environment's secrets, the
		// reviews waiting; the session holds the profile and organizations).
		if redirect > api+7 {
			t.Errorf("%s: the page the no-script post redirects to ran %d statements, the API's change %d: want at most %d",
				r.change, redirect, api, api+7)
		}
		if together := form + redirect; together > 2*api {
			t.Errorf("%s: the no-script post and the page it redirects to ran %d statements together, the API's change %d: want at most %d",
				r.change, together, api, 2*api)
		}
	}
}

// pageResolution is how many statements resolve a page's session
// (PageSession) when the actor cache does not have it.
const pageResolution = 3

// resolved is how many of a request's statements resolved its actor from
// the database, none when the actor cache had it: an API request's
// (SessionActor: the session's user, their workspaces and organizations,
// their statements) or a page's (PageSession: the session's user with where
// they work, their organizations there, their statements).
func resolved(r *requestStatements) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case slices.Contains(r.names, "GetSessionUser"):
		return 4
	case slices.Contains(r.names, "GetSessionUserContext"):
		return 3
	}
	return 0
}

// addMember adds a user to the owner's organization without any direct
// policy: the organization's default one is taken back.
func addMember(t *testing.T, s *site, email string) uuid.UUID {
	t.Helper()
	m, err := s.st.IAM().AddMember(t.Context(), s.ownerActor(), iam.MemberInput{Email: email})
	must(t, err)
	must(t, s.st.IAM().RemoveMemberPolicy(t.Context(), s.ownerActor(), m.ID, core.DeveloperPolicyID))
	return m.ID
}

// readerPolicy is a policy that may open every project and environment and
// change nothing.
func readerPolicy(t *testing.T, s *site) uuid.UUID {
	t.Helper()
	p, err := s.st.IAM().CreatePolicy(t.Context(), s.ownerActor(), iam.PolicyInput{Name: "Reader", Key: "reader"})
	must(t, err)
	_, err = s.st.IAM().UpdatePolicyStatements(t.Context(), s.ownerActor(), p.ID, []access.Statement{
		{ID: "p", ResourceType: access.TypeProject, Effect: "allow", Actions: []string{string(access.CanAccessProject)}, Resources: []string{"project/*"}},
		{ID: "e", ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: []string{"project/*:env/*"}},
	})
	must(t, err)
	return p.ID
}
