package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bunting-flags/bunting/sql/dbtest"
)

// TestFeatBitUIFixtures replays the requests FeatBit's own UI sent in a
// walk (testdata/*.json, written by `featbit-ui -record`) against a fresh
// Bunting, in order, as the UI sends them (its Authorization, Organization
// and Workspace headers included), and checks each answer's status and the
// fields the UI reads. It keeps the UI's wire shapes working in CI, which
// cannot fetch FeatBit's source to run the walk itself.
func TestFeatBitUIFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in testdata: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var f fixture
			if err := json.Unmarshal(data, &f); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if len(f.Requests) == 0 {
				t.Fatalf("%s has no requests", file)
			}
			replay(t, f)
		})
	}
}

func replay(t *testing.T, f fixture) {
	dbURL, _ := dbtest.NewDatabase(t)
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	done, err := startBunting(ctx, dbURL, addr, "http://ui.test", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { <-done }) // t.Context ends first, stopping the server
	base := "http://" + addr
	vars := map[string]string{}
	for i, r := range f.Requests {
		where := func() string { return r.Step + ": " + r.Method + " " + r.Path }
		path, err := fill(r.Path, vars)
		if err != nil {
			t.Fatalf("request %d (%s): %v", i+1, where(), err)
		}
		var body io.Reader
		if len(r.Body) > 0 {
			b, err := fill(string(r.Body), vars)
			if err != nil {
				t.Fatalf("request %d (%s): %v", i+1, where(), err)
			}
			body = bytes.NewReader([]byte(b))
		}
		req, err := http.NewRequestWithContext(ctx, r.Method, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		// The UI's interceptor sends these on every request, the literal
		// "Bearer null" and empty ids before sign-in.
		token := "token"
		if r.As != "" {
			token = r.As + ".token"
		}
		req.Header.Set("Authorization", "Bearer "+orNull(vars[token]))
		req.Header.Set("Organization", vars["org.id"])
		req.Header.Set("Workspace", vars["workspace.id"])
		req.Header.Set("Origin", "http://ui.test")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("request %d (%s): %v", i+1, where(), err)
		}
		raw, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != r.Status {
			t.Fatalf("request %d (%s): status %d, want %d: %s", i+1, where(), res.StatusCode, r.Status, raw)
		}
		var answer any
		if len(r.Expect) > 0 || len(r.Capture) > 0 {
			if err := json.Unmarshal(raw, &answer); err != nil {
				t.Fatalf("request %d (%s): answer is not JSON: %s", i+1, where(), raw)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(r.Capture)) {
			v, ok := lookup(answer, r.Capture[name])
			s, isStr := v.(string)
			if !ok || !isStr || s == "" {
				t.Fatalf("request %d (%s): nothing to capture as %s at %s: %s", i+1, where(), name, r.Capture[name], raw)
			}
			vars[name] = s
		}
		for _, p := range slices.Sorted(maps.Keys(r.Expect)) {
			got, found := lookup(answer, p)
			if err := check(r.Expect[p], got, found, vars); err != nil {
				t.Errorf("request %d (%s): %s: %v", i+1, where(), p, err)
			}
		}
	}
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}
