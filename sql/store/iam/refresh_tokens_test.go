package iam

import (
	"errors"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// TestEndSessionRevokesRefreshToken: however a session ends (EndSession, as
// the pages' sign-out ends a token whatever state it is in), the refresh
// token issued with it stops working, and a sign-in's own chain is the only
// one touched.
func TestEndSessionRevokesRefreshToken(t *testing.T) {
	s, _, _ := testStore(t)
	ctx := t.Context()
	in := LoginInput{Email: "owner@example.com", Password: "owner-password"}
	ended, err := s.LoginWithRefresh(ctx, in, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	kept, err := s.LoginWithRefresh(ctx, in, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EndSession(ctx, ended.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshWithToken(ctx, ended.Refresh, "192.0.2.1"); !errors.Is(err, core.ErrUnauthenticated) {
		t.Fatalf("refresh with the ended session's token: %v, want ErrUnauthenticated", err)
	}
	next, err := s.RefreshWithToken(ctx, kept.Refresh, "192.0.2.1")
	if err != nil || next.Refresh == "" || next.Refresh == kept.Refresh {
		t.Fatalf("refresh with another sign-in's token: %+v, %v; want a new token", next, err)
	}
}
