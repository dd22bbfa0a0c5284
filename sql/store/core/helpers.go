package core

import (
	"strings"
	"time"
)

// Small helpers every seam uses.

func UTCPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// EscapeLike makes user text literal inside an ILIKE pattern.
func EscapeLike(s string) string { return likeEscaper.Replace(s) }

// likeEscaper is made once: a Replacer is safe to share, and making one
// took a search a few percent of its CPU time.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// OrEmpty is s, or an empty list for nil, so that JSON shows [] rather
// than null; the API, the pages and the SDK payloads all answer so.
func OrEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
