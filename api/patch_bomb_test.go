package api_test

import (
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// TestPatchCopyBombIsRefused sends the 1.4 KB JSON Patch that used to kill the
// process: 22 copies of /variations into itself, each doubling the document
// (2^22 times the variations, gigabytes). It must be refused as an invalid
// patch, leave the flag and segment as they were, and the heap must stay
// small while the server refuses it.
//
// Not parallel: the allocation count is the process's, so it runs while no
// other test does.
func TestPatchCopyBombIsRefused(t *testing.T) {
	s := newServer(t)
	e := s.prodEnv()
	e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	// The included list gives the segment's copies something to double.
	seg := e.createSegment(map[string]any{"name": "Beta", "key": "beta", "type": "environment-specific",
		"included": []string{"alice", "bob", "carol", "dave"}})

	bomb := func(path string) string {
		op := `{"op":"copy","from":"` + path + `","path":"` + path + `/-"}`
		return "[" + strings.TrimSuffix(strings.Repeat(op+",", 22), ",") + "]"
	}
	for _, c := range []struct{ name, target, from string }{
		{"flag", e.flags + "/pay", "/variations"},
		{"segment", e.segs + "/" + seg.ID.String(), "/included"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := bomb(c.from)
			before := s.do("GET", c.target, s.owner, nil).ok(t).raw
			runtime.GC()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			r := s.do("PATCH", c.target, s.owner, body)
			runtime.ReadMemStats(&m1)
			if r.Status != http.StatusBadRequest || len(r.Errors) < 1 || r.Errors[0] != "patch_is_invalid" {
				t.Fatalf("got %d %v, want 400 patch_is_invalid", r.Status, r.Errors)
			}
			// TotalAlloc counts every byte allocated while the patch was
			// refused, freed or not: the copies stop at 1 MiB, so a few MiB
			// of work in all; the unbounded patch needed gigabytes.
			allocated := m1.TotalAlloc - m0.TotalAlloc
			t.Logf("%d-byte patch: %d bytes allocated while refusing it, heap %d → %d bytes", len(body), allocated, m0.HeapAlloc, m1.HeapAlloc)
			if allocated > 64<<20 {
				t.Errorf("refusing the patch allocated %d bytes, want under 64 MiB", allocated)
			}
			if after := s.do("GET", c.target, s.owner, nil).ok(t).raw; after != before {
				t.Errorf("a refused patch changed the resource:\nbefore %s\nafter  %s", before, after)
			}
		})
	}

	// Past the operation limit: refused before anything is applied.
	many := "[" + strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"/name","value":"Pay"},`, 1001), ",") + "]"
	r := s.do("PATCH", e.flags+"/pay", s.owner, many)
	if r.Status != http.StatusBadRequest || r.Errors[0] != "patch_is_invalid" {
		t.Fatalf("1001 operations: got %d %v, want 400 patch_is_invalid", r.Status, r.Errors)
	}
}
