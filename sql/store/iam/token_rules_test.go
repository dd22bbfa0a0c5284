package iam

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// Bearer accepts an access token bare or after "Bearer " (any case), and a
// session token only when signed with this server's key and unexpired.
func TestRulesBearer(t *testing.T) {
	keys, err := core.DeriveKeys(strings.Repeat("rules-test-", 4))
	if err != nil {
		t.Fatal(err)
	}
	other, err := core.DeriveKeys(strings.Repeat("other-key--", 4))
	if err != nil {
		t.Fatal(err)
	}
	s := &IAM{core: &core.Core{ServerKeys: keys}}
	elsewhere := &IAM{core: &core.Core{ServerKeys: other}}
	session := s.issueSessionToken(uuid.New(), uuid.New(), time.Now().Add(time.Hour))
	expired := s.issueSessionToken(uuid.New(), uuid.New(), time.Now().Add(-time.Second))
	foreign := elsewhere.issueSessionToken(uuid.New(), uuid.New(), time.Now().Add(time.Hour))
	tampered := []byte(session)
	tampered[3] ^= 1
	tests := []struct {
		authorization string
		token         string
		accessToken   bool
		ok            bool
	}{
		{"", "", false, false},
		{"   ", "", false, false},
		{"Bearer ", "", false, false},
		{"api-0123456789abcdef0123456789abcdef", "api-0123456789abcdef0123456789abcdef", true, true},
		{"Bearer api-0123456789abcdef", "api-0123456789abcdef", true, true},
		{"bEARER   api-x ", "api-x", true, true},
		{"Bearer " + session, session, false, true},
		{session, session, false, true},
		{"Bearer " + expired, "", false, false},
		{"Bearer " + foreign, "", false, false},
		{"Bearer " + string(tampered), "", false, false},
		{"Basic dXNlcjpwYXNz", "", false, false},
	}
	for _, tt := range tests {
		token, accessToken, err := s.Bearer(Credentials{Authorization: tt.authorization})
		if tt.ok != (err == nil) || token != tt.token || accessToken != tt.accessToken {
			t.Errorf("Bearer(%q) = %q, %v, %v; want %q, %v, ok %v", tt.authorization, token, accessToken, err, tt.token, tt.accessToken, tt.ok)
		}
		if err != nil && !errors.Is(err, core.ErrUnauthenticated) {
			t.Errorf("Bearer(%q): %v, want ErrUnauthenticated", tt.authorization, err)
		}
	}
	sid, uid := uuid.New(), uuid.New()
	if gotS, gotU, ok := s.verifySessionToken(s.issueSessionToken(sid, uid, time.Now().Add(time.Minute))); !ok || gotS != sid || gotU != uid {
		t.Errorf("a session token names session %s user %s (%v), want %s %s", gotS, gotU, ok, sid, uid)
	}
}

// pick chooses the workspace or organization a request acts in among the
// caller's memberships.
func TestRulesPickContext(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	tests := []struct {
		name    string
		header  string
		members []uuid.UUID
		want    uuid.UUID
		err     error
	}{
		{"no header, one membership", "", []uuid.UUID{a}, a, nil},
		{"no header, none", "", nil, uuid.Nil, nil},
		{"no header, several: the operation asks", "", []uuid.UUID{a, b}, uuid.Nil, nil},
		{"named", b.String(), []uuid.UUID{a, b}, b, nil},
		{"named with spaces", "  " + a.String() + " ", []uuid.UUID{a, b}, a, nil},
		{"named but not a member", uuid.NewString(), []uuid.UUID{a, b}, uuid.Nil, core.ErrForbidden},
		{"not a uuid", "acme", []uuid.UUID{a}, uuid.Nil, core.ErrForbidden},
	}
	for _, tt := range tests {
		got, err := pick(tt.header, len(tt.members), func(i int) uuid.UUID { return tt.members[i] })
		if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("%s: got %s, %v; want %s, %v", tt.name, got, err, tt.want, tt.err)
		}
	}
}
