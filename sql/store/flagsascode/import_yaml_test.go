package flagsascode_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagsascode"
)

// yamlImportBytes is the API's bound on a YAML import (api.MaxYAMLImportBytes).
const yamlImportBytes = 1 << 20

// fillYAML is head, then item repeated (with sep between) to fill the
// API's bound on a YAML import, then tail.
func fillYAML(head, item, sep, tail string) []byte {
	n := (yamlImportBytes - len(head) - len(tail)) / (len(item) + len(sep))
	return []byte(head + strings.Repeat(item+sep, n-1) + item + tail)
}

// TestYAMLDecodingCostIsBounded decodes the costliest YAML files the API
// takes and measures every byte allocated meanwhile, freed or not. A file
// of more flags and segments than an import takes is refused after one pass
// over its nodes, within YAMLFactor times its size, however its items are
// written (empty, aliases, merged in); before, each of its 350,000 empty
// items was decoded into a whole flag (230 times the file). A file within
// the count is read in two passes, each within the factor.
//
// Not parallel: the allocation count is the process's.
func TestYAMLDecodingCostIsBounded(t *testing.T) {
	for _, c := range []struct {
		name    string
		body    []byte
		refused bool
	}{
		{"empty flags", fillYAML("version: 1\nflags: [", "{}", ",", "]\n"), true},
		{"empty segments in block style", fillYAML("version: 1\nsegments:\n", "- {}", "\n", "\n"), true},
		{"aliases of one flag", fillYAML("version: 1\nenvironment: &e {key: a}\nflags: [", "*e", ",", "]\n"), true},
		{"flags merged in", fillYAML("version: 1\n<<: {flags: [", "{}", ",", "]}\n"), true},
		{"one-letter keys of one flag", fillYAML("version: 1\nflags: [{key: a, name: A, targetUsers: [{variationId: on, keyIds: [", "a", ",", "]}]}]\n"), false},
	} {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		_, err := flagsascode.DecodeDocument(c.body, flagsascode.FormatYAML)
		runtime.ReadMemStats(&m1)
		allocated := m1.TotalAlloc - m0.TotalAlloc
		passes := uint64(2)
		var verr *core.ValidationError
		if c.refused {
			passes = 1
			if !errors.As(err, &verr) || !strings.Contains(verr.Details[0].Message, "at most 2000 flags and segments") {
				t.Errorf("%s: got %v, want the file refused for its number of items", c.name, err)
			}
		} else if err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		t.Logf("%-30s %8d bytes: allocated %5.1f times its size", c.name, len(c.body), float64(allocated)/float64(len(c.body)))
		if limit := passes * flagsascode.YAMLFactor * uint64(len(c.body)); allocated > limit {
			t.Errorf("%s: decoding allocated %d bytes, want at most %d", c.name, allocated, limit)
		}
	}
}

// TestYAMLItemCountFollowsTheDocument: the count before decoding finds the
// items decoding would find, and refuses nothing decoding would accept.
func TestYAMLItemCountFollowsTheDocument(t *testing.T) {
	ok := "version: 1\nenvironment: {key: prod}\nflags: [{key: a, name: A, variationType: boolean, variations: [], disabledVariationId: off, fallthrough: {variations: []}}]\n"
	doc, err := flagsascode.DecodeDocument([]byte(ok), flagsascode.FormatYAML)
	if err != nil || len(doc.Flags) != 1 || doc.Flags[0].Key != "a" {
		t.Fatalf("a plain file: %+v, %v", doc, err)
	}
	if _, err := flagsascode.DecodeDocument([]byte("&a {<<: *a}\n"), flagsascode.FormatYAML); err == nil {
		t.Error("a mapping merged into itself was read")
	}
	many := "version: 1\nsegments: &s [" + strings.Repeat("{key: s},", 1000) + "{key: s}]\nflags: *s\n"
	if _, err := flagsascode.DecodeDocument([]byte(many), flagsascode.FormatYAML); err == nil || !strings.Contains(err.Error(), "invalid") {
		t.Errorf("1,001 segments and the same as flags: %v, want refused", err)
	}
}
