package sdk_test

import (
	"cmp"
	"crypto/md5"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/web/sdk"
)

type ofrepAnswer struct {
	Key          string         `json:"key"`
	Value        any            `json:"value"`
	Reason       string         `json:"reason"`
	Variant      string         `json:"variant"`
	Metadata     map[string]any `json:"metadata"`
	ErrorCode    string         `json:"errorCode"`
	ErrorDetails string         `json:"errorDetails"`
}

// evaluate posts a single-flag OFREP evaluation.
func (e *env) evaluate(key, body string, headers ...string) (int, ofrepAnswer, *http.Response) {
	e.in.t.Helper()
	if len(headers) == 0 {
		headers = []string{"Authorization", e.server}
	}
	res, b := e.in.request("POST", "/ofrep/v1/evaluate/flags/"+key, body, headers...)
	var a ofrepAnswer
	if len(b) > 0 && json.Unmarshal(b, &a) != nil {
		e.in.t.Fatalf("%s: answer is not JSON: %s", key, b)
	}
	if ct := res.Header.Get("Content-Type"); len(b) > 0 && !strings.HasPrefix(ct, "application/json") {
		e.in.t.Errorf("%s: Content-Type %q", key, ct)
	}
	return res.StatusCode, a, res
}

func TestOFREPSingleFlag(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, dev := in.project("web")
	fx := seed(prod)
	ctx := func(key string, attrs string) string {
		return fmt.Sprintf(`{"context":{"targetingKey":%q%s}}`, key, attrs)
	}
	tests := []struct {
		key, body string
		value     any
		reason    string
	}{
		{"ft-bool", ctx("u1", ""), true, "STATIC"},
		{"ft-off", ctx("u1", ""), false, "DISABLED"},
		{"ft-target", ctx("u-false", ""), false, "TARGETING_MATCH"},
		{"ft-rule", ctx("u1", `,"country":"us"`), false, "TARGETING_MATCH"},
		{"ft-rule", ctx("u1", `,"country":"fr"`), true, "STATIC"},
		{"ft-seg", ctx("u-seg", ""), false, "TARGETING_MATCH"},
		{"ft-split", ctx("a", ""), eval.Bucket("ft-splita") <= 0.5, "SPLIT"},
		{"ft-split", ctx("c", ""), eval.Bucket("ft-splitc") <= 0.5, "SPLIT"},
		{"ft-string", ctx("u1", ""), "blue", "STATIC"},
		{"ft-number", ctx("u1", ""), 10.0, "STATIC"},
	}
	for _, tt := range tests {
		status, a, _ := prod.evaluate(tt.key, tt.body)
		if status != 200 || a.Key != tt.key || a.Value != tt.value || a.Reason != tt.reason {
			t.Errorf("%s %s: %d %+v, want %v %s", tt.key, tt.body, status, a, tt.value, tt.reason)
		}
	}
	status, a, _ := prod.evaluate("ft-json", ctx("u1", ""))
	if b, _ := json.Marshal(a.Value); status != 200 || string(b) != `{"limit":5,"tags":["a"]}` || a.Variant != "j1" || a.Metadata["variationName"] != "Config" {
		t.Errorf("ft-json: %d %+v", status, a)
	}
	// Attributes of any JSON type are compared as text, as FeatBit users carry them.
	prod.put("/ft-rule/targeting", map[string]any{"rules": []map[string]any{{
		"id": "r", "name": "Adults", "conditions": []map[string]any{{"id": "c", "property": "age", "op": "BiggerEqualThan", "value": "18"}},
		"variations": []any{rollout(variationID(fx.flags["ft-rule"], "false"), 0, 1)}}}})
	waitFor(t, "a numeric attribute to match", func() bool {
		_, a, _ := prod.evaluate("ft-rule", ctx("u1", `,"age":21`))
		return a.Value == false && a.Metadata["matchReason"] == "Adults"
	})

	// Errors carry the key and an OFREP code.
	for _, tt := range []struct {
		key, body, headerName, header string
		status                        int
		code                          string
	}{
		{"nope", ctx("u1", ""), "", "", 404, "FLAG_NOT_FOUND"},
		{"ft-bool", `{"context":{}}`, "", "", 400, "TARGETING_KEY_MISSING"},
		{"ft-bool", ``, "", "", 400, "TARGETING_KEY_MISSING"},
		{"ft-bool", `{"context":{"targetingKey":5}}`, "", "", 400, "INVALID_CONTEXT"},
		{"ft-bool", `{"context":[1]}`, "", "", 400, "INVALID_CONTEXT"},
		{"ft-bool", `{not json`, "", "", 400, "INVALID_CONTEXT"},
		{"ft-bool", ctx("u1", `,"big":"`+strings.Repeat("x", 70<<10)+`"`), "", "", 413, "GENERAL"}, // past the 64 KiB body bound: send less
		// A flag of another environment is not found with this secret.
		{"only-in-dev", ctx("u1", ""), "", "", 404, "FLAG_NOT_FOUND"},
	} {
		if tt.key == "only-in-dev" {
			dev.flag(map[string]any{"name": "Dev", "key": "only-in-dev", "isEnabled": true})
		}
		status, a, _ := prod.evaluate(tt.key, tt.body)
		if status != tt.status || a.ErrorCode != tt.code || a.Key != tt.key {
			t.Errorf("%s %.60s: %d %+v, want %d %s with the key", tt.key, tt.body, status, a, tt.status, tt.code)
		}
	}
	// Changes reach evaluations once their event has arrived.
	prod.archive("ft-bool")
	in.settle()
	if status, a, _ := prod.evaluate("ft-bool", ctx("u1", "")); status != 404 || a.ErrorCode != "FLAG_NOT_FOUND" {
		t.Errorf("the archived flag: %d %s, want 404 FLAG_NOT_FOUND", status, a.ErrorCode)
	}

	// Credentials: the server secret bare, after Bearer, or as X-API-Key;
	// a client secret may not evaluate single flags.
	for _, h := range [][]string{{"Authorization", "Bearer " + prod.server}, {"X-API-Key", prod.server}} {
		if status, _, _ := prod.evaluate("ft-off", ctx("u1", ""), h...); status != 200 {
			t.Errorf("%s: %d, want 200", h[0], status)
		}
	}
	for _, tt := range []struct {
		headers []string
		status  int
	}{
		{[]string{"Authorization", prod.client}, 403},
		{[]string{"Authorization", core.NewSecretValue(prod.id)}, 401},
		{[]string{"X-Other", "x"}, 401},
	} {
		if status, _, _ := prod.evaluate("ft-off", ctx("u1", ""), tt.headers...); status != tt.status {
			t.Errorf("%v: %d, want %d", tt.headers, status, tt.status)
		}
	}
}

func TestOFREPBulk(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	seed(prod)
	prod.archive("ft-string")
	body := `{"context":{"targetingKey":"u1","country":"us"}}`
	res, b := in.request("POST", "/ofrep/v1/evaluate/flags", body, "Authorization", prod.client)
	var bulk struct{ Flags []ofrepAnswer }
	if res.StatusCode != 200 || json.Unmarshal(b, &bulk) != nil {
		t.Fatalf("bulk: %d %s", res.StatusCode, b)
	}
	got := map[string]ofrepAnswer{}
	for _, f := range bulk.Flags {
		got[f.Key] = f
	}
	if len(got) != 8 || got["ft-rule"].Value != false || got["ft-rule"].Reason != "TARGETING_MATCH" || got["ft-bool"].Value != true {
		t.Errorf("bulk flags: %+v (want 8, archived ft-string left out)", got)
	}
	etag := res.Header.Get("ETag")
	if etag == "" || res.Header.Get("Access-Control-Expose-Headers") == "" {
		t.Fatalf("no ETag or CORS headers: %v", res.Header)
	}
	if res, _ := in.request("POST", "/ofrep/v1/evaluate/flags", body, "Authorization", prod.client, "If-None-Match", etag); res.StatusCode != 304 {
		t.Errorf("If-None-Match with the same ETag: %d, want 304", res.StatusCode)
	}
	prod.put("/ft-bool/toggle/false", map[string]any{})
	waitFor(t, "a new ETag after a change", func() bool {
		res, _ := in.request("POST", "/ofrep/v1/evaluate/flags", body, "Authorization", prod.client, "If-None-Match", etag)
		return res.StatusCode == 200 && res.Header.Get("ETag") != etag
	})
	res, b = in.request("POST", "/ofrep/v1/evaluate/flags", `{"context":{}}`, "Authorization", prod.client)
	if res.StatusCode != 400 || !strings.Contains(string(b), `"errorCode":"TARGETING_KEY_MISSING"`) {
		t.Errorf("bulk without a targeting key: %d %s", res.StatusCode, b)
	}
	// Browsers may ask first.
	res, _ = in.request("OPTIONS", "/ofrep/v1/evaluate/flags", nil, "Origin", "https://shop.example", "Access-Control-Request-Method", "POST")
	if res.StatusCode != 204 || res.Header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: %d %v", res.StatusCode, res.Header)
	}
}

// exptBucket is FeatBit's RolloutOfKey("expt" + flag key + user key)
// written out apart from the evaluator: the first four bytes of the MD5 as a
// little-endian int32, over int.MinValue, made positive.
func exptBucket(flagKey, userKey string) float64 {
	sum := md5.Sum([]byte("expt" + flagKey + userKey))
	return math.Abs(float64(int32(binary.LittleEndian.Uint32(sum[:4]))) / float64(math.MinInt32))
}

// TestOFREPSendToExperiment: OFREP answers say, in metadata, whether the
// user's events count in experiments, by FeatBit's rule: with the default
// rule in experiments and 30% of its traffic in them (exptRollout 0.3 of a
// rollout of all users), a user whose second hash is at most 0.3 is in and
// one past it is not; a targeted user is in only with
// exptIncludeAllTargets. Single and bulk answers agree.
func TestOFREPSendToExperiment(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	const key = "ft-expt"
	f := prod.flag(map[string]any{"name": key, "key": key, "isEnabled": true})
	on, off := variationID(f, "true"), variationID(f, "false")
	prod.put("/"+key+"/targeting", map[string]any{
		"exptIncludeAllTargets": false,
		"targetUsers":           []map[string]any{{"keyIds": []string{"u-target"}, "variationId": off}},
		"fallthrough": map[string]any{"dispatchKey": nil, "includedInExpt": true,
			"variations": []any{map[string]any{"id": on, "rollout": []float64{0, 1}, "exptRollout": 0.3}}}})
	var inside, outside string
	for i := 0; inside == "" || outside == ""; i++ {
		u := fmt.Sprint("user-", i)
		if exptBucket(key, u) <= 0.3 {
			inside = cmp.Or(inside, u)
		} else {
			outside = cmp.Or(outside, u)
		}
	}
	ctx := func(u string) string { return fmt.Sprintf(`{"context":{"targetingKey":%q}}`, u) }
	bulk := func(u string) ofrepAnswer {
		res, b := in.request("POST", "/ofrep/v1/evaluate/flags", ctx(u), "Authorization", prod.client)
		var answer struct{ Flags []ofrepAnswer }
		if res.StatusCode != 200 || json.Unmarshal(b, &answer) != nil || len(answer.Flags) != 1 {
			t.Fatalf("bulk for %s: %d %s", u, res.StatusCode, b)
		}
		return answer.Flags[0]
	}
	check := func(u string, want bool) {
		t.Helper()
		status, a, _ := prod.evaluate(key, ctx(u))
		if got, ok := a.Metadata["sendToExperiment"].(bool); status != 200 || !ok || got != want {
			t.Errorf("single, %s: %d metadata %v, want sendToExperiment %v", u, status, a.Metadata, want)
		}
		if b := bulk(u); b.Metadata["sendToExperiment"] != want {
			t.Errorf("bulk, %s: metadata %v, want sendToExperiment %v", u, b.Metadata, want)
		}
	}
	check(inside, true)
	check(outside, false)
	check("u-target", false)

	// With exptIncludeAllTargets every evaluation counts, the targeted user's
	// and those past the rule's share alike.
	prod.put("/"+key+"/targeting", map[string]any{"exptIncludeAllTargets": true})
	waitFor(t, "exptIncludeAllTargets to reach evaluations", func() bool {
		_, a, _ := prod.evaluate(key, ctx("u-target"))
		return a.Metadata["sendToExperiment"] == true
	})
	check(outside, true)
}

// Past its limit a client gets 429 with Retry-After; secrets are guessed
// slowly; bodies are bounded.
func TestPublicEndpointLimits(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, dev := in.project("web")
	seed(prod)
	e := echo.New()
	sdk.New(in.store, slog.New(slog.DiscardHandler), sdk.Options{Limits: sdk.Limits{
		PerAddress: 1, AddressBurst: 100, PerSecret: 0.001, SecretBurst: 3, Failures: 0.001, FailureBurst: 2}}).Register(e)
	limited := &instance{t: t, url: httptest.NewServer(e).URL}
	ctx := `{"context":{"targetingKey":"u1"}}`
	for i := range 3 {
		if res, b := limited.request("POST", "/ofrep/v1/evaluate/flags/ft-bool", ctx, "Authorization", prod.server); res.StatusCode != 200 {
			t.Fatalf("request %d: %d %s", i, res.StatusCode, b)
		}
	}
	res, _ := limited.request("POST", "/ofrep/v1/evaluate/flags/ft-bool", ctx, "Authorization", prod.server)
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "1" {
		t.Errorf("past the secret's limit: %d Retry-After %q, want 429 1", res.StatusCode, res.Header.Get("Retry-After"))
	}
	// The client secret is another bucket.
	if res, _ := limited.request("POST", "/ofrep/v1/evaluate/flags", ctx, "Authorization", prod.client); res.StatusCode != 200 {
		t.Errorf("client secret: %d, want 200", res.StatusCode)
	}
	// Two wrong secrets, then secrets this server has not seen wait, while
	// those it knows still work (one misconfigured client behind a NAT must
	// not lock out the others).
	for range 2 {
		if res, _ := limited.request("POST", "/ofrep/v1/evaluate/flags", ctx, "Authorization", core.NewSecretValue(prod.id)); res.StatusCode != 401 {
			t.Errorf("wrong secret: %d, want 401", res.StatusCode)
		}
	}
	for _, secret := range []string{core.NewSecretValue(prod.id), dev.client} {
		if res, _ := limited.request("POST", "/ofrep/v1/evaluate/flags", ctx, "Authorization", secret); res.StatusCode != 429 {
			t.Errorf("an unseen secret after failures: %d, want 429", res.StatusCode)
		}
	}
	if res, _ := limited.request("POST", "/ofrep/v1/evaluate/flags", ctx, "Authorization", prod.client); res.StatusCode != 200 {
		t.Errorf("a known secret after failures: %d, want 200", res.StatusCode)
	}

	big := `[` + strings.Repeat(`{"user":{"keyId":"u"},"variations":[]},`, 30000) + `{}]`
	if res, _ := in.request("POST", "/api/public/insight/track", big, "Authorization", prod.server); res.StatusCode != 413 {
		t.Errorf("insight over 1 MiB: %d, want 413", res.StatusCode)
	}
}

func TestOFREPParseError(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	seed(prod)
	// A value that does not parse as its type, written behind the store's back.
	conn, err := pgx.Connect(t.Context(), in.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	if _, err := conn.Exec(t.Context(), `UPDATE feature_flags SET variations = '[{"id":"n1","name":"Ten","value":"ten"},{"id":"n2","name":"Pi","value":"3.5"}]' WHERE key = 'ft-number'`); err != nil {
		t.Fatal(err)
	}
	status, a, _ := prod.evaluate("ft-number", `{"context":{"targetingKey":"u1"}}`)
	if status != 400 || a.Key != "ft-number" || a.ErrorCode != "PARSE_ERROR" {
		t.Errorf("got %d %+v, want 400 PARSE_ERROR with the key", status, a)
	}
}
