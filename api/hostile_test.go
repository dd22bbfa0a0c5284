package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// hostileBodies replace a whole request body.
var hostileBodies = []string{
	`{`, `}`, `[]`, `"text"`, `123`, `true`, `{"a":}`, `{"name":"x"} {"name":"y"}`,
	strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
	`{"name":"` + strings.Repeat("x", 1<<20) + `"}`,
	"{\"name\":\"\xff\xfe\xfd\",\"key\":\"k\xc3\x28\"}",
	`[{"op":"replace","path":"/name","value":"x"}]`,
}

// hostileValues replace one field of a valid body at a time.
var hostileValues = []any{
	123, -1, 1e308, true, []any{}, map[string]any{}, nil,
	"a\x00b", strings.Repeat("y", 1<<20), "'; DROP TABLE users; --", `<script>alert(1)</script>`,
	"𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u202e", strings.Repeat("z", 600), []any{"a\x00"}, []any{1, 2}, []any{map[string]any{"id": 1}},
}

// hostileQueries are appended to every route's query string.
var hostileQueries = []string{"PageIndex=-1", "PageSize=0", "PageSize=101", "pageSize=99999999999999999999",
	"pageIndex=abc", "PageIndex=2147483647&PageSize=100", "isArchived=maybe", "name=%00", "name=%27%3B--",
	"ids=not-a-uuid", "from=yesterday", "sortBy=%3Cscript%3E"}

// hostilePatches are JSON Patches with every kind of mistake.
var hostilePatches = []string{
	`[{"op":"explode","path":"/name"}]`, `[{"op":"replace"}]`, `[{"op":"replace","path":"name","value":"x"}]`,
	`[{"op":"add","path":"/rules/99","value":{}}]`, `[{"op":"remove","path":"/id"}]`, `[{"op":"move","from":"/nope","path":"/name"}]`,
	`[{"op":"copy","from":"/id","path":"/name"}]`, `[{"op":"test","path":"/name","value":"surely not"}]`,
	`[{"op":"replace","path":"/tags","value":"not an array"}]`, `[{"op":"replace","path":"/~2","value":1}]`,
	`[{"op":"add","path":"/rules/-","value":{"id":"r","conditions":[]}}]`, `{}`, `[[]]`, `[null]`,
}

var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// TestHostileInputNeverFailsTheServer sends every route malformed and hostile
// input. Every answer is the envelope with a documented status, none is a
// 5xx, and nothing is stored by a request that was refused.
func TestHostileInputNeverFailsTheServer(t *testing.T) {
	t.Parallel()
	m := newMatrix(t)
	s := m.s
	s.hostile = true
	cases := m.allCases()
	sent := 0
	statusSeen := map[int]int{}
	defer func() { t.Logf("answers by status: %v", statusSeen) }()
	for _, route := range m.apiRoutes() {
		make := cases[route]
		if make == nil {
			continue
		}
		method, _, _ := strings.Cut(route, " ")
		c := make()
		send := func(what, path string, body any) {
			t.Helper()
			sent++
			before := m.fingerprint()
			r := s.do(method, path, s.owner, body)
			statusSeen[r.Status]++
			switch {
			case r.Status >= 500:
				t.Errorf("%s with %s: got %d %.300s", route, what, r.Status, r.raw)
			case r.Status >= 400:
				if r.Success || string(r.Data) != "null" || len(r.Errors) == 0 {
					t.Errorf("%s with %s: %d is not a failure envelope: %.300s", route, what, r.Status, r.raw)
				}
				if after := m.fingerprint(); after != before {
					t.Errorf("%s with %s was refused (%d %v) but changed what is stored", route, what, r.Status, r.Errors)
				}
			}
		}
		sep := "?"
		if strings.Contains(c.path, "?") {
			sep = "&"
		}
		for _, q := range hostileQueries {
			send("query "+q, c.path+sep+q, c.body)
		}
		for _, id := range []string{"not-a-uuid", "00000000-0000-0000-0000-000000000000", "%27%3B%20DROP%20TABLE%20x", "%00"} {
			if loc := uuidPattern.FindStringIndex(c.path); loc != nil {
				send("path id "+id, c.path[:loc[0]]+id+c.path[loc[1]:], c.body)
			}
		}
		if method == http.MethodGet {
			continue
		}
		for i, b := range hostileBodies {
			send("body #"+string(rune('A'+i)), c.path, b)
		}
		if method == http.MethodPatch {
			for _, p := range hostilePatches {
				send("patch "+p, c.path, p)
			}
		}
		fields, ok := c.body.(map[string]string)
		var object map[string]any
		if ok {
			object = map[string]any{}
			for k, v := range fields {
				object[k] = v
			}
		} else if o, isObject := c.body.(map[string]any); isObject {
			object = o
		}
		for field := range object {
			for _, v := range hostileValues {
				body := map[string]any{}
				for k, val := range object {
					body[k] = val
				}
				body[field] = v
				raw, _ := json.Marshal(body)
				send("field "+field+"="+shorten(v), c.path, raw)
			}
		}
	}
	if sent < 2000 {
		t.Fatalf("only %d hostile requests were sent; the corpus no longer reaches the routes", sent)
	}
}

func shorten(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// fingerprint summarises everything a change would touch: row counts of
// every table and the newest change time of those that record one.
func (m *matrix) fingerprint() string {
	var out string
	err := m.s.pool.QueryRow(context.Background(), `SELECT concat_ws(',',
		(SELECT count(*) FROM audit_logs), (SELECT count(*) FROM feature_flags), (SELECT count(*) FROM flag_revisions),
		(SELECT count(*) FROM segments), (SELECT count(*) FROM projects), (SELECT count(*) FROM environments),
		(SELECT count(*) FROM env_secrets), (SELECT count(*) FROM access_tokens), (SELECT count(*) FROM policies),
		(SELECT count(*) FROM groups), (SELECT count(*) FROM group_members), (SELECT count(*) FROM group_policies),
		(SELECT count(*) FROM member_policies), (SELECT count(*) FROM organization_users), (SELECT count(*) FROM users),
		(SELECT max(updated_at) FROM feature_flags), (SELECT max(updated_at) FROM segments), (SELECT max(updated_at) FROM projects),
		(SELECT max(updated_at) FROM environments), (SELECT max(updated_at) FROM workspaces), (SELECT max(updated_at) FROM organizations),
		(SELECT max(updated_at) FROM policies), (SELECT max(updated_at) FROM groups), (SELECT max(updated_at) FROM access_tokens),
		(SELECT max(updated_at) FROM env_secrets))`).Scan(&out)
	must(m.s.t, err)
	return out
}
