package core

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bunting-flags/bunting/sql/targeting"
)

// Lengths of keys, names, descriptions and comments, in characters, checked
// by every input (keys also match KeyPattern), and named in the messages
// that explain breaking them.
const (
	MaxKeyLen         = targeting.MaxKeyLen
	MaxNameLen        = targeting.MaxNameLen
	MaxDescriptionLen = 512
	MaxCommentLen     = 512
)

var KeyPattern = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// validator collects field problems so an input reports all of them at once.
type Validator struct {
	codes   []string
	details []FieldProblem
}

func (v *Validator) Add(field, problem string) { v.At(field, problem, field, "") }

// at adds a problem with the path of the part that is wrong and why.
func (v *Validator) At(field, problem, path, message string) {
	code := field + "_is_" + problem
	v.codes = append(v.codes, code)
	v.details = append(v.details, FieldProblem{Path: path, Code: code, Message: message})
}

// text checks that a free-text value is storable: valid UTF-8, no NUL, and at most max characters.
func (v *Validator) Text(field, value string, max int) bool {
	if !utf8.ValidString(value) || strings.ContainsRune(value, 0) || utf8.RuneCountInString(value) > max {
		v.Add(field, "invalid")
		return false
	}
	return true
}

// required checks a text value that may not be blank.
func (v *Validator) Required(field, value string, max int) {
	if strings.TrimSpace(value) == "" {
		v.Add(field, "required")
		return
	}
	v.Text(field, value, max)
}

// key checks a key: required, at most 128 characters of [a-zA-Z0-9._-].
func (v *Validator) Key(field, value string) {
	switch {
	case value == "":
		v.Add(field, "required")
	case len(value) > MaxKeyLen || !KeyPattern.MatchString(value):
		v.Add(field, "invalid")
	}
}

// OneOf checks that value is one of allowed.
func (v *Validator) OneOf(field, value string, allowed ...string) {
	if value == "" {
		v.Add(field, "required")
		return
	}
	for _, a := range allowed {
		if value == a {
			return
		}
	}
	v.Add(field, "invalid")
}

// Times a client names (list filters, cursors) lie in the years 1 to 9999,
// those RFC 3339 can write. Go's times reach far wider than PostgreSQL's
// (4713 BC to 294276 AD), and a time outside those fails in the database,
// which would be a 500 instead of the request's own mistake: ?from=
// -9223372036854775808 is a time of Go's, not of the database's.
var (
	minClientTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxClientTime = time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC)
)

// TimeInRange reports whether a time a client named is one the store takes,
// for the pages that read a time from an address before asking the store.
func TimeInRange(t time.Time) bool { return !t.Before(minClientTime) && !t.After(maxClientTime) }

// when checks an optional time a client named.
func (v *Validator) When(field string, t *time.Time) {
	if t != nil && !TimeInRange(*t) {
		v.Add(field, "invalid")
	}
}

// millis checks a required time a client named in Unix milliseconds
// (FeatBit's form): after 1970, and by the end of the year 9999.
func (v *Validator) Millis(field string, ms int64) {
	if ms <= 0 || ms > maxClientTime.UnixMilli() {
		v.Add(field, "invalid")
	}
}

func (v *Validator) Err() error {
	if len(v.codes) == 0 {
		return nil
	}
	return &ValidationError{Codes: v.codes, Details: v.details}
}
