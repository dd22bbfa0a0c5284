package store

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/bunting-flags/bunting/sql/targeting"
)

// Lengths of keys, names, descriptions and comments, in characters, checked
// by every input (keys also match keyPattern), and named in the messages
// that explain breaking them.
const (
	MaxKeyLen         = targeting.MaxKeyLen
	MaxNameLen        = targeting.MaxNameLen
	MaxDescriptionLen = 512
	MaxCommentLen     = 512
)

var keyPattern = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// validator collects field problems so an input reports all of them at once.
type validator struct {
	codes   []string
	details []FieldProblem
}

func (v *validator) add(field, problem string) { v.at(field, problem, field, "") }

// at adds a problem with the path of the part that is wrong and why.
func (v *validator) at(field, problem, path, message string) {
	code := field + "_is_" + problem
	v.codes = append(v.codes, code)
	v.details = append(v.details, FieldProblem{Path: path, Code: code, Message: message})
}

// text checks that a free-text value is storable: valid UTF-8, no NUL, and at most max characters.
func (v *validator) text(field, value string, max int) bool {
	if !utf8.ValidString(value) || strings.ContainsRune(value, 0) || utf8.RuneCountInString(value) > max {
		v.add(field, "invalid")
		return false
	}
	return true
}

// required checks a text value that may not be blank.
func (v *validator) required(field, value string, max int) {
	if strings.TrimSpace(value) == "" {
		v.add(field, "required")
		return
	}
	v.text(field, value, max)
}

// key checks a key: required, at most 128 characters of [a-zA-Z0-9._-].
func (v *validator) key(field, value string) {
	switch {
	case value == "":
		v.add(field, "required")
	case len(value) > MaxKeyLen || !keyPattern.MatchString(value):
		v.add(field, "invalid")
	}
}

// oneOf checks that value is one of allowed.
func (v *validator) oneOf(field, value string, allowed ...string) {
	if value == "" {
		v.add(field, "required")
		return
	}
	for _, a := range allowed {
		if value == a {
			return
		}
	}
	v.add(field, "invalid")
}

func (v *validator) err() error {
	if len(v.codes) == 0 {
		return nil
	}
	return &ValidationError{Codes: v.codes, Details: v.details}
}
