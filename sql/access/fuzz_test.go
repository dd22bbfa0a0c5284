package access

import (
	"strings"
	"testing"
)

// FuzzMatchResource: matching never panics or hangs; "*" matches every name;
// a plain name (no wildcard, no tags) matches itself and everything below it.
func FuzzMatchResource(f *testing.F) {
	for _, seed := range [][2]string{
		{"project/*:env/*:flag/*;beta", "project/web:env/prod:flag/a;beta,ui"},
		{"*", "workspace/x"}, {"a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaa"}, {"project/web", "project/web:env/dev"},
		{";", ";"}, {"::", ":"}, {"x/*;*", "x/y;"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		got := MatchResource(pattern, name)
		if name != "" && !MatchResource("*", name) {
			t.Fatalf("* does not match %q", name)
		}
		if pattern == "" && got {
			t.Fatalf("empty pattern matched %q", name)
		}
		if name != "" && !strings.ContainsAny(name, "*;") && !MatchResource(name, name) {
			t.Fatalf("%q does not match itself", name)
		}
		if name != "" && !strings.ContainsAny(name, "*;") && !MatchResource(name, name+":child/x") {
			t.Fatalf("%q does not match %q below it", name, name+":child/x")
		}
	})
}
