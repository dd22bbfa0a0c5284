package iam

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// codes runs a check and returns the error codes it reported, nil for none.
func codes(check func(v *core.Validator)) []string {
	var v core.Validator
	check(&v)
	var ve *core.ValidationError
	if errors.As(v.Err(), &ve) {
		return ve.Codes
	}
	return nil
}

// The codes a policy's, a group's and a list's input is refused with: every
// problem at once, named by the field as the body names it.
func TestRulesPolicyInput(t *testing.T) {
	long := strings.Repeat("k", 128)
	tests := []struct {
		name string
		in   PolicyInput
		want []string
	}{
		{"valid", PolicyInput{Name: "Flags", Key: "flags.team-a_1"}, nil},
		{"128-character key and name", PolicyInput{Name: strings.Repeat("é", 128), Key: long}, nil},
		{"nothing", PolicyInput{}, []string{"name_is_required", "key_is_required"}},
		{"blank name", PolicyInput{Name: "   ", Key: "k"}, []string{"name_is_required"}},
		{"129-character name", PolicyInput{Name: strings.Repeat("é", 129), Key: "k"}, []string{"name_is_invalid"}},
		{"name with NUL", PolicyInput{Name: "a\x00b", Key: "k"}, []string{"name_is_invalid"}},
		{"name not UTF-8", PolicyInput{Name: "a\xffb", Key: "k"}, []string{"name_is_invalid"}},
		{"key with a space", PolicyInput{Name: "n", Key: "my key"}, []string{"key_is_invalid"}},
		{"key with a slash", PolicyInput{Name: "n", Key: "a/b"}, []string{"key_is_invalid"}},
		{"key with a colon", PolicyInput{Name: "n", Key: "a:b"}, []string{"key_is_invalid"}},
		{"129-character key", PolicyInput{Name: "n", Key: long + "k"}, []string{"key_is_invalid"}},
		{"513-character description", PolicyInput{Name: "n", Key: "k", Description: strings.Repeat("d", 513)}, []string{"description_is_invalid"}},
		{"512-character description", PolicyInput{Name: "n", Key: "k", Description: strings.Repeat("d", 512)}, nil},
		{"all wrong", PolicyInput{Name: "", Key: "a b", Description: "\x00"}, []string{"name_is_required", "key_is_invalid", "description_is_invalid"}},
	}
	for _, tt := range tests {
		if got := codes(tt.in.check); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRulesGroupInput(t *testing.T) {
	tests := []struct {
		name string
		in   GroupInput
		want []string
	}{
		{"valid", GroupInput{Name: "Team A", Description: "the A team"}, nil},
		{"no description", GroupInput{Name: "Team A"}, nil},
		{"no name", GroupInput{}, []string{"name_is_required"}},
		{"blank name", GroupInput{Name: "\t "}, []string{"name_is_required"}},
		{"129-character name", GroupInput{Name: strings.Repeat("n", 129)}, []string{"name_is_invalid"}},
		{"513-character description", GroupInput{Name: "n", Description: strings.Repeat("d", 513)}, []string{"description_is_invalid"}},
	}
	for _, tt := range tests {
		if got := codes(tt.in.check); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// IAM lists: PageIndex 0 to 2^20, PageSize 1 to 100, a search of at most
// 256 characters, trimmed.
func TestRulesIAMFilter(t *testing.T) {
	tests := []struct {
		name   string
		f      IAMFilter
		want   []string
		search string
	}{
		{"first page of ten", IAMFilter{Page: core.Page{Index: 0, Size: 10}}, nil, ""},
		{"largest page", IAMFilter{Page: core.Page{Index: 1 << 20, Size: 100}}, nil, ""},
		{"page size 0", IAMFilter{Page: core.Page{Size: 0}}, []string{"pageSize_is_invalid"}, ""},
		{"page size 101", IAMFilter{Page: core.Page{Size: 101}}, []string{"pageSize_is_invalid"}, ""},
		{"negative page", IAMFilter{Page: core.Page{Index: -1, Size: 10}}, []string{"pageIndex_is_invalid"}, ""},
		{"page past 2^20", IAMFilter{Page: core.Page{Index: 1<<20 + 1, Size: 10}}, []string{"pageIndex_is_invalid"}, ""},
		{"search trimmed", IAMFilter{Search: "  ann@ ", Page: core.Page{Size: 10}}, nil, "ann@"},
		{"256-character search", IAMFilter{Search: strings.Repeat("s", 256), Page: core.Page{Size: 10}}, nil, strings.Repeat("s", 256)},
		{"257-character search", IAMFilter{Search: strings.Repeat("s", 257), Page: core.Page{Size: 10}}, []string{"searchText_is_invalid"}, strings.Repeat("s", 257)},
		{"everything wrong", IAMFilter{Search: "\x00", Page: core.Page{Index: -1}}, []string{"pageIndex_is_invalid", "pageSize_is_invalid", "searchText_is_invalid"}, "\x00"},
	}
	for _, tt := range tests {
		f := tt.f
		if got := codes(func(v *core.Validator) { f.check(v, "searchText") }); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
		if f.Search != tt.search {
			t.Errorf("%s: search %q, want %q", tt.name, f.Search, tt.search)
		}
	}
}

// A member's email is a bare address of at most 254 characters.
func TestRulesMemberEmail(t *testing.T) {
	local := strings.Repeat("a", 64)
	domain := strings.Repeat("d", 63) + "." + strings.Repeat("e", 63) + "." + strings.Repeat("f", 57) + ".com" // 189
	tests := []struct {
		email string
		want  []string
	}{
		{"ann@example.com", nil},
		{"ann.lee+flags@sub.example.co.uk", nil},
		{local + "@" + domain, nil}, // 254 characters
		{"", []string{"email_is_required"}},
		{"ann", []string{"email_is_invalid"}},
		{"ann@", []string{"email_is_invalid"}},
		{"Ann Lee <ann@example.com>", []string{"email_is_invalid"}}, // no display names
		{" ann@example.com", []string{"email_is_invalid"}},
		{"ann@example.com, bob@example.com", []string{"email_is_invalid"}},
		{local + "a@" + domain, []string{"email_is_invalid"}}, // 255 characters
	}
	for _, tt := range tests {
		if got := codes(func(v *core.Validator) { checkEmail(v, "email", tt.email) }); !slices.Equal(got, tt.want) {
			t.Errorf("checkEmail(%q) = %v, want %v", tt.email, got, tt.want)
		}
	}
}

// A new user's name is their email's local part until they set one.
func TestRulesEmailName(t *testing.T) {
	tests := []struct{ email, want string }{
		{"ann@example.com", "ann"},
		{"ann.lee+x@example.com", "ann.lee+x"},
		{"noat", "noat"},
		{"@example.com", ""},
	}
	for _, tt := range tests {
		if got := emailName(tt.email); got != tt.want {
			t.Errorf("emailName(%q) = %q, want %q", tt.email, got, tt.want)
		}
	}
}

// Lists of ids lose their repeats and keep their first order; a member's
// access changed only when their policies or groups did.
func TestRulesDistinctAndMemberAccess(t *testing.T) {
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	if got := distinct([]uuid.UUID{b, a, b, c, a}); !slices.Equal(got, []uuid.UUID{b, a, c}) {
		t.Errorf("distinct = %v, want [b a c]", got)
	}
	if got := distinct(nil); got == nil || len(got) != 0 {
		t.Errorf("distinct(nil) = %#v, want an empty list", got)
	}
	m := memberAccess{ID: a, Email: "ann@example.com", PolicyIDs: []uuid.UUID{b}, GroupIDs: []uuid.UUID{c}}
	renamed := m
	renamed.Name = "Ann"
	tests := []struct {
		name string
		o    memberAccess
		want bool
	}{
		{"same", m, true},
		{"name aside", renamed, true},
		{"a policy more", memberAccess{ID: a, PolicyIDs: []uuid.UUID{b, c}, GroupIDs: []uuid.UUID{c}}, false},
		{"a group fewer", memberAccess{ID: a, PolicyIDs: []uuid.UUID{b}}, false},
	}
	for _, tt := range tests {
		if got := m.equal(tt.o); got != tt.want {
			t.Errorf("%s: equal = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// An OIDC email_verified claim refuses an email only when it says false.
func TestRulesEmailVerified(t *testing.T) {
	tests := []struct {
		claim any
		want  bool
	}{
		{true, true},
		{false, false},
		{"true", true},
		{"false", false},
		{" FALSE ", false},
		{"no", true},
		{nil, true},
		{1.0, true},
	}
	for _, tt := range tests {
		if got := emailVerified(tt.claim); got != tt.want {
			t.Errorf("emailVerified(%#v) = %v, want %v", tt.claim, got, tt.want)
		}
	}
}
