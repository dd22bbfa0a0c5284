package sdk

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/sql/targeting"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/ofrep_*.golden from the current encoder")

// ofrepFixture is an environment with every kind of OFREP answer: each
// variation type, values that do not parse, a rollout that serves no one,
// targets, rules (regex, one-of, numbers, a segment), splits, a disabled and
// an archived flag, and names and keys that JSON must escape.
func ofrepFixture(n int) *snapshot {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	seg := flagstore.Segment{ID: uuid.MustParse("00000000-0000-0000-0000-0000000000a1"), Name: "Beta", Key: "beta",
		Included: []string{"u-seg"}, Excluded: []string{"u-out"}, UpdatedAt: at,
		Rules: []flagstore.SegmentRule{{ID: "s1", Name: "Pro", Conditions: []flagstore.Condition{{Property: "plan", Op: "IsOneOf", Value: `["pro","team"]`}}}}}
	boolean := []flagstore.Variation{{ID: "on", Name: "True", Value: "true"}, {ID: "off", Name: "False <off>", Value: "false"}}
	all := func(id string) []flagstore.RolloutVariation {
		return []flagstore.RolloutVariation{{ID: id, Rollout: []float64{0, 1}, ExptRollout: 1}}
	}
	split := []flagstore.RolloutVariation{{ID: "on", Rollout: []float64{0, 0.3}, ExptRollout: 1}, {ID: "off", Rollout: []float64{0.3, 1}, ExptRollout: 1}}
	keyID := "keyId"
	flags := []flagstore.Flag{
		{Key: "bool", VariationType: "boolean", Variations: boolean, IsEnabled: true, DisabledVariationID: "off",
			Fallthrough: flagstore.Fallthrough{Variations: all("on")}},
		{Key: "off", VariationType: "boolean", Variations: boolean, DisabledVariationID: "off", Fallthrough: flagstore.Fallthrough{Variations: all("on")}},
		{Key: "archived", VariationType: "boolean", Variations: boolean, IsEnabled: true, IsArchived: true, Fallthrough: flagstore.Fallthrough{Variations: all("on")}},
		{Key: "targeted", VariationType: "boolean", Variations: boolean, IsEnabled: true,
			TargetUsers: []flagstore.TargetUser{{KeyIDs: []string{"alice", "u1"}, VariationID: "off"}}, Fallthrough: flagstore.Fallthrough{Variations: all("on")}},
		{Key: "rules", VariationType: "boolean", Variations: boolean, IsEnabled: true,
			Rules: []flagstore.FlagRule{
				{ID: "r1", Name: "Dutch \"pro\" <users> & co", DispatchKey: &keyID, IncludedInExpt: true, Conditions: []flagstore.Condition{
					{Property: "country", Op: "IsOneOf", Value: `["NL","BE"]`}, {Property: "plan", Op: "Equal", Value: "pro"}}, Variations: split},
				{ID: "r2", Name: "Staff", Conditions: []flagstore.Condition{{Property: "email", Op: "MatchRegex", Value: `@example\.com$`}}, Variations: all("off")},
				{ID: "r3", Name: "Old", Conditions: []flagstore.Condition{{Property: "age", Op: "BiggerEqualThan", Value: "1,000"}}, Variations: all("off")},
				{ID: "r4", Name: "Segment", Conditions: []flagstore.Condition{{Property: targeting.SegmentIn, Value: `["` + seg.ID.String() + `"]`}}, Variations: all("off")},
				{ID: "r5", Name: "Not listed", Conditions: []flagstore.Condition{{Property: "tier", Op: "NotOneOf", Value: `["gold"]`}, {Property: "tier", Op: "IsTrue"}}, Variations: all("off")},
			},
			Fallthrough: flagstore.Fallthrough{Variations: split, IncludedInExpt: true}},
		{Key: "string", VariationType: "string", IsEnabled: true,
			Variations:  []flagstore.Variation{{ID: "b", Name: "Blue", Value: "blue </script>"}, {ID: "e", Name: "", Value: ""}, {ID: "", Name: "No id", Value: "é\u2028x"}},
			Fallthrough: flagstore.Fallthrough{Variations: []flagstore.RolloutVariation{{ID: "b", Rollout: []float64{0, 0.4}}, {ID: "e", Rollout: []float64{0.4, 0.7}}, {ID: "", Rollout: []float64{0.7, 1}}}}},
		{Key: "number", VariationType: "number", IsEnabled: true,
			Variations:  []flagstore.Variation{{ID: "n1", Name: "Ten", Value: " 10 "}, {ID: "n2", Name: "Tiny", Value: "1e-7"}, {ID: "n3", Name: "Big", Value: "123456789012345678901"}},
			Fallthrough: flagstore.Fallthrough{Variations: []flagstore.RolloutVariation{{ID: "n1", Rollout: []float64{0, 0.3}}, {ID: "n2", Rollout: []float64{0.3, 0.6}}, {ID: "n3", Rollout: []float64{0.6, 1}}}}},
		{Key: "json", VariationType: "json", IsEnabled: true,
			Variations:  []flagstore.Variation{{ID: "j1", Name: "Config", Value: "{ \"limit\": 5,\n \"html\": \"<b>&</b>\" }"}},
			Fallthrough: flagstore.Fallthrough{Variations: all("j1")}},
		{Key: "bad-number", VariationType: "number", IsEnabled: true, Variations: []flagstore.Variation{{ID: "x", Name: "X", Value: "ten"}},
			Fallthrough: flagstore.Fallthrough{Variations: all("x")}},
		{Key: "bad-json", VariationType: "json", IsEnabled: true, Variations: []flagstore.Variation{{ID: "x", Name: "X", Value: "{"}},
			Fallthrough: flagstore.Fallthrough{Variations: all("x")}},
		{Key: "bad-bool", VariationType: "boolean", IsEnabled: true, Variations: []flagstore.Variation{{ID: "x", Name: "X", Value: "yes"}},
			Fallthrough: flagstore.Fallthrough{Variations: all("x")}},
		{Key: "serves-no-one", VariationType: "boolean", Variations: boolean, IsEnabled: true,
			Fallthrough: flagstore.Fallthrough{Variations: []flagstore.RolloutVariation{{ID: "on", Rollout: []float64{0, 0}}}}},
		{Key: "k\"ey<&>é", VariationType: "string", IsEnabled: true, Variations: []flagstore.Variation{{ID: "v\"1", Name: "N\\1", Value: "\x01\t"}},
			Fallthrough: flagstore.Fallthrough{Variations: all("v\"1")}},
	}
	for i := range n { // seeded-like flags, as bunting-bench seeds them
		flags = append(flags, flagstore.Flag{Key: fmt.Sprintf("flag-%07d", i), VariationType: "boolean", Variations: boolean, IsEnabled: i%2 == 0,
			DisabledVariationID: "off", TargetUsers: []flagstore.TargetUser{{KeyIDs: []string{"alice", "bob"}, VariationID: "on"}},
			Rules: []flagstore.FlagRule{
				{ID: "r1", Name: "Beta", DispatchKey: &keyID, IncludedInExpt: true, Conditions: []flagstore.Condition{
					{Property: "country", Op: "IsOneOf", Value: `["NL","BE"]`}, {Property: "plan", Op: "Equal", Value: "pro"}}, Variations: split},
				{ID: "r2", Name: "Staff", Conditions: []flagstore.Condition{{Property: "email", Op: "EndsWith", Value: "@example.com"}}, Variations: all("on")},
				{ID: "r3", Name: "Segment", Conditions: []flagstore.Condition{{Property: targeting.SegmentIn, Value: `["` + seg.ID.String() + `"]`}}, Variations: split},
			},
			Fallthrough: flagstore.Fallthrough{IncludedInExpt: true, Variations: split}})
	}
	for i := range flags {
		flags[i].ID = uuid.NewSHA1(uuid.Nil, []byte(flags[i].Key))
		flags[i].UpdatedAt = at
	}
	return newSnapshot(sdkdata.EnvData{Flags: flags, Segments: []flagstore.Segment{seg}})
}

// ofrepContexts are the users the fixture is evaluated for.
var ofrepContexts = []string{
	`{"context":{"targetingKey":"u1"}}`,
	`{"context":{"targetingKey":"alice","country":"NL","plan":"pro"}}`,
	`{"context":{"targetingKey":"ann","email":"ann@example.com","name":"Ann"}}`,
	`{"context":{"targetingKey":"old","age":1000.5,"tier":true}}`,
	`{"context":{"targetingKey":"u-seg"}}`,
	`{"context":{"targetingKey":"pro","plan":"team","country":"BE"}}`,
	`{"context":{"targetingKey":"zed","tier":"true","nested":{"a":[1,2]}}}`,
}

// ofrepCall runs an OFREP handler's evaluation and answer on a snapshot, as
// the handler does once the secret is resolved.
func ofrepCall(t testing.TB, e *echo.Echo, answer func(echo.Context) error, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	c := e.NewContext(req, rec)
	if err := answer(c); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestOFREPAnswersByteForByte holds single and bulk answers for the fixture
// to the bytes recorded in testdata (by the encoder before the hand-written
// one), so a faster encoder cannot change what providers read.
func TestOFREPAnswersByteForByte(t *testing.T) {
	snap, e := ofrepFixture(3), echo.New()
	var got bytes.Buffer
	for _, ctx := range ofrepContexts {
		rec := ofrepCall(t, e, func(c echo.Context) error { _, err := ofrepBulkAnswer(c, snap, nil); return err }, "/ofrep/v1/evaluate/flags", ctx)
		fmt.Fprintf(&got, "bulk %s\n%d %s %s\n", ctx, rec.Code, rec.Header().Get("ETag"), rec.Body.String())
		for _, key := range append(snap.keys, "missing") {
			rec := ofrepCall(t, e, func(c echo.Context) error { return ofrepFlagAnswer(c, snap, key, nil) }, "/ofrep/v1/evaluate/flags/x", ctx)
			fmt.Fprintf(&got, "single %s %s\n%d %s", key, ctx, rec.Code, rec.Body.String())
		}
	}
	for _, bad := range []string{`{"context":{}}`, `{"context":{"targetingKey":5}}`, `[]`} {
		rec := ofrepCall(t, e, func(c echo.Context) error { _, err := ofrepBulkAnswer(c, snap, nil); return err }, "/ofrep/v1/evaluate/flags", bad)
		fmt.Fprintf(&got, "bulk %s\n%d %s", bad, rec.Code, rec.Body.String())
		rec = ofrepCall(t, e, func(c echo.Context) error { return ofrepFlagAnswer(c, snap, "bool", nil) }, "/ofrep/v1/evaluate/flags/bool", bad)
		fmt.Fprintf(&got, "single %s\n%d %s", bad, rec.Code, rec.Body.String())
	}
	path := filepath.Join("testdata", "ofrep_answers.golden")
	if *updateGolden {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		gl, wl := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d:\ngot  %s\nwant %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("got %d lines, want %d", len(gl), len(wl))
	}
}

// BenchmarkOFREPSingle is one single-flag evaluation as the handler answers
// it after the secret is resolved: the context read, the evaluation of a
// seeded-like flag (targets, rules, a segment, a split), the answer encoded.
func BenchmarkOFREPSingle(b *testing.B) {
	snap, e := ofrepFixture(1000), echo.New()
	body := `{"context":{"targetingKey":"user-42","country":"NL","plan":"free","email":"u42@example.org"}}`
	b.ReportAllocs()
	for b.Loop() {
		rec := ofrepCall(b, e, func(c echo.Context) error { return ofrepFlagAnswer(c, snap, "flag-0000500", nil) }, "/ofrep/v1/evaluate/flags/flag-0000500", body)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code, rec.Body.String())
		}
	}
}

// BenchmarkOFREPBulk is one bulk evaluation of an environment of 1,000
// seeded-like flags (and the fixture's 13), answered with its ETag.
func BenchmarkOFREPBulk(b *testing.B) {
	snap, e := ofrepFixture(1000), echo.New()
	body := `{"context":{"targetingKey":"user-42","country":"NL","plan":"free","email":"u42@example.org"}}`
	b.ReportAllocs()
	for b.Loop() {
		rec := ofrepCall(b, e, func(c echo.Context) error { _, err := ofrepBulkAnswer(c, snap, nil); return err }, "/ofrep/v1/evaluate/flags", body)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkOFREPHarness is what the benchmarks above spend outside the
// handler (the request, the recorder, echo's context) with an answer of
// fixed bytes: subtract it to see the evaluation's own cost.
func BenchmarkOFREPHarness(b *testing.B) {
	e := echo.New()
	body := `{"context":{"targetingKey":"user-42","country":"NL","plan":"free","email":"u42@example.org"}}`
	answer := []byte(`{"key":"flag-0000500","value":false}` + "\n")
	b.ReportAllocs()
	for b.Loop() {
		ofrepCall(b, e, func(c echo.Context) error { return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, answer) }, "/ofrep/v1/evaluate/flags/flag-0000500", body)
	}
}
