package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/api"
	"github.com/bunting-flags/bunting/sql/store"
)

// A change made from a page costs at most twice the SQL statements the same
// change costs through the API: the page pays for who is acting and where,
// and for what it shows afterwards, but loads each of those once.

// statementCount is the context key of a request's statement counter.
type statementCount struct{}

// statementTracer counts each statement a request's context runs.
type statementTracer struct{}

func (statementTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	if n, ok := ctx.Value(statementCount{}).(*atomic.Int64); ok {
		n.Add(1)
	}
	return ctx
}

func (statementTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// countedHeader marks the requests whose statements a test counts; Go's
// client sends it again when it follows a redirect.
const countedHeader = "X-Count-Statements"

// statementLog holds how many statements each marked request ran, in the
// order the requests ended.
type statementLog struct {
	mu    sync.Mutex
	ended *sync.Cond
	runs  []int64
}

// counting gives each request a counter the tracer adds to, and logs it
// when a marked request ends.
func (l *statementLog) counting(next http.Handler) http.Handler {
	l.ended = sync.NewCond(&l.mu)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := new(atomic.Int64)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), statementCount{}, n)))
		if r.Header.Get(countedHeader) == "" {
			return
		}
		l.mu.Lock()
		l.runs = append(l.runs, n.Load())
		l.mu.Unlock()
		l.ended.Broadcast()
	})
}

// take waits until requests marked requests have ended (a client may read
// an answer before its handler returns) and returns their counts.
func (l *statementLog) take(requests int) []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.runs) < requests {
		l.ended.Wait()
	}
	out := l.runs
	l.runs = nil
	return out
}

// mountAPI serves the JSON API beside the pages on e, as the server does
// (cmd/internal/server), with its own errors in its envelope.
func mountAPI(e *echo.Echo, st *store.Store) {
	log := slog.New(slog.DiscardHandler)
	pages := e.HTTPErrorHandler
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if strings.HasPrefix(c.Request().URL.Path, "/api/") {
			api.WriteError(c, log, err)
			return
		}
		pages(err, c)
	}
	api.New(st, log, api.Shared{}).Register(e)
}

// apiCall sends a JSON request to the API with a session token, marked to
// be counted.
func (a *app) apiCall(method, path, token string, body any) {
	a.t.Helper()
	var buf bytes.Buffer
	if body != nil {
		must(a.t, json.NewEncoder(&buf).Encode(body))
	}
	req, err := http.NewRequest(method, a.srv.URL+path, &buf)
	must(a.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", token)
	req.Header.Set(countedHeader, "1")
	resp, err := http.DefaultClient.Do(req)
	must(a.t, err)
	defer resp.Body.Close()
	var env struct {
		Success bool     `json:"success"`
		Errors  []string `json:"errors"`
	}
	must(a.t, json.NewDecoder(resp.Body).Decode(&env))
	if resp.StatusCode != http.StatusOK || !env.Success {
		a.t.Fatalf("%s %s: status %d, errors %v", method, path, resp.StatusCode, env.Errors)
	}
}

// apiLogin signs in through the API and returns the Authorization value.
func (a *app) apiLogin(email, password string) string {
	a.t.Helper()
	body, err := json.Marshal(map[string]string{"email": email, "password": password})
	must(a.t, err)
	resp, err := http.Post(a.srv.URL+"/api/v1/identity/login-by-email", "application/json", bytes.NewReader(body))
	must(a.t, err)
	defer resp.Body.Close()
	var s struct {
		Data store.Session `json:"data"`
	}
	must(a.t, json.NewDecoder(resp.Body).Decode(&s))
	return "Bearer " + s.Data.Token
}

// budgetRow is one change's statements through the API and from its page,
// as a form post (answered with a redirect) and with htmx (answered with
// the regions it swaps).
type budgetRow struct {
	change            string
	api, form, htmx   int64
	redirectedPageGET int64
}

// TestPageChangesCostAtMostTwiceTheAPI counts the SQL statements of a flag's
// targeting, a segment's targeting and a member's policy changed through
// the API and from their pages. The store's listener is not started, so
// both surfaces authenticate from the database on every request and the
// counts do not depend on when a notification empties the actor cache.
func TestPageChangesCostAtMostTwiceTheAPI(t *testing.T) {
	t.Parallel()
	// Cold: no listener, so both surfaces resolve every session from the
	// database. Warm: as a server runs, with the actor cache they share.
	t.Run("cold", func(t *testing.T) { t.Parallel(); pageChangeBudget(t, false) })
	t.Run("warm", func(t *testing.T) { t.Parallel(); pageChangeBudget(t, true) })
}

func pageChangeBudget(t *testing.T, warm bool) {
	a := startApp(t, appOptions{countStatements: true, listen: warm})
	ctx := t.Context()
	_, err := a.st.CreateProject(ctx, a.ownerActor(), store.ProjectInput{Name: "Web", Key: "web"})
	must(t, err)
	env := a.project("web").Environments[0]
	a.makeFlag(env, store.FlagInput{Name: "Checkout", Key: "checkout", VariationType: "string",
		Variations: []store.Variation{{ID: "a", Name: "Old", Value: "old"}, {ID: "b", Name: "New", Value: "new"}}})
	sg := a.makeSegment(env, "Beta users", "beta")
	member := a.addMember("ann@example.com")
	policies := []uuid.UUID{a.readerPolicy(), store.DeveloperPolicyID, store.AdministratorPolicyID}
	token := a.apiLogin(ownerEmail, ownerPassword)
	b := a.signedIn(ownerEmail, ownerPassword)

	var rows []budgetRow
	// measure makes a change three times: through the API (apiChange), then
	// from its page as a form post and with htmx (the form page prepares,
	// loading the page it is posted from, uncounted).
	measure := func(change string, apiChange func(n int), form func(n int) (path string, vals url.Values), target string) {
		r := budgetRow{change: change}
		apiChange(1)
		r.api = a.statements.take(1)[0]
		path, vals := form(2)
		b.send(path, vals, http.Header{countedHeader: {"1"}}).status(http.StatusOK)
		posted := a.statements.take(2) // the post, and the page it redirects to
		r.form, r.redirectedPageGET = posted[0], posted[1]
		path, vals = form(3)
		htmx := http.Header{countedHeader: {"1"}, "Hx-Request": {"true"}, "X-Csrf-Token": {b.last.csrf()}}
		if target != "" {
			htmx.Set("Hx-Target", target) // the region the form's hx-target names, as htmx sends it
		}
		b.send(path, vals, htmx).status(http.StatusOK)
		r.htmx = a.statements.take(1)[0]
		rows = append(rows, r)
	}

	measure("flag targeting", func(n int) {
		a.apiCall(http.MethodPut, "/api/v1/envs/"+env.ID.String()+"/feature-flags/checkout/targeting", token,
			map[string]any{"targeting": map[string]any{"targetUsers": []any{}, "rules": []any{},
				"fallthrough": map[string]any{"variations": []any{map[string]any{"id": "b", "rollout": []float64{0, 1}}}}},
				"comment": fmt.Sprint("change ", n)})
	}, func(n int) (string, url.Values) {
		vals := b.targetingForm("checkout")
		vals.Set("comment", fmt.Sprint("change ", n))
		vals.Set("default.serve", []string{"a", "b"}[n%2])
		vals.Set("_csrf", b.last.csrf())
		return "/flags/checkout/targeting", vals
	}, "")
	measure("segment targeting", func(n int) {
		a.apiCall(http.MethodPut, "/api/v1/envs/"+env.ID.String()+"/segments/"+sg.ID.String()+"/targeting", token,
			map[string]any{"included": []string{fmt.Sprint("user-", n)}, "excluded": []string{}, "rules": []any{}})
	}, func(n int) (string, url.Values) {
		vals := formValues(b.get(segmentPath(sg)).must("segment-targeting-form"))
		vals.Set("included", fmt.Sprint("user-", n))
		vals.Set("_csrf", b.last.csrf())
		return segmentPath(sg) + "/targeting", vals
	}, "")
	measure("member policy", func(n int) {
		a.apiCall(http.MethodPut, "/api/v1/members/"+member.String()+"/add-policy/"+policies[n-1].String(), token, nil)
	}, func(n int) (string, url.Values) {
		b.get(memberHrefOf(member))
		return memberHrefOf(member) + "/policies/" + policies[n-1].String() + "/add", url.Values{"_csrf": {b.last.csrf()}}
	}, "member-policies-body")

	// Each change was made: the last one, from the page with htmx, stands.
	if got := a.flag(env, "checkout").Fallthrough.Variations; len(got) != 1 || got[0].ID != "b" {
		t.Errorf("flag serves %+v by default, want b", got)
	}
	if got := a.segment(env, sg).Included; !slices.Equal(got, []string{"user-3"}) {
		t.Errorf("segment includes %v, want user-3", got)
	}
	if got := a.directPolicies(member.String()); len(got) != len(policies) {
		t.Errorf("member's policies %v, want %d", got, len(policies))
	}

	t.Log("statements per change: API | page form post | its redirected page | page htmx post")
	for _, r := range rows {
		t.Logf("%-18s %3d | %3d | %3d | %3d", r.change, r.api, r.form, r.redirectedPageGET, r.htmx)
		if r.form > 2*r.api || r.htmx > 2*r.api {
			t.Errorf("%s: the page's change ran %d (form) and %d (htmx) statements, the API's %d: want at most %d",
				r.change, r.form, r.htmx, r.api, 2*r.api)
		}
	}
}

func memberHrefOf(id uuid.UUID) string { return "/members/" + id.String() }
