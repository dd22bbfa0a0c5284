package web

import (
	"strconv"
	"strings"
	"testing"
)

// TestLineDiffOfLargeValues: a value of 20,000 lines (a segment's users)
// with a line added and one changed shows just those, where a table of
// every pair of lines would have been too large to build.
func TestLineDiffOfLargeValues(t *testing.T) {
	t.Parallel()
	var a, b []string
	for i := range 20_000 {
		a = append(a, strconv.Itoa(i))
		switch i {
		case 5_000:
			b = append(b, "new", strconv.Itoa(i))
		case 15_000:
			b = append(b, "changed")
		default:
			b = append(b, strconv.Itoa(i))
		}
	}
	var kinds strings.Builder
	for _, l := range lineDiff(a, b) {
		kinds.WriteString(map[string]string{"same": "=", "added": "+", "removed": "-", "skip": "~"}[l.Kind])
		if l.Kind == "added" || l.Kind == "removed" {
			kinds.WriteString(l.Text)
		}
	}
	if got, want := kinds.String(), "~==+new==~==-15000+changed==~"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
