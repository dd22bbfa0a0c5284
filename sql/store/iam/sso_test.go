package iam

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// TestSSOStates: an attempt is sealed for the browser to keep, unreadable
// to it, and accepted only with its own state, unaltered, sealed under this
// server's key, and not after it expired. (Using it once is web's part:
// the browser's copy is deleted at the callback.)
func TestSSOStates(t *testing.T) {
	s, a, _ := testStore(t)
	ctx := t.Context()
	settings := OIDCSettings{ClientID: "c", ClientSecret: "s", AuthorizationEndpoint: "https://id.example.com/auth",
		TokenEndpoint: "https://id.example.com/token", ClientAuthenticationMethod: ClientSecretBasic}
	if _, err := s.UpdateWorkspaceSSO(ctx, a, settings); err != nil {
		t.Fatal(err)
	}
	login, err := s.BeginSSO(ctx, SSOStartInput{Next: "/projects"})
	if err != nil {
		t.Fatal(err)
	}
	if login.Client.ClientSecret != "s" || login.Verifier == "" || login.Nonce == "" || len(login.State) < 32 || login.Sealed == "" {
		t.Fatalf("attempt %+v", login)
	}
	for _, secret := range []string{login.Verifier, login.Nonce, "/projects"} {
		if strings.Contains(login.Sealed, secret) {
			t.Errorf("the sealed attempt shows %q", secret)
		}
	}
	other, err := s.BeginSSO(ctx, SSOStartInput{})
	if err != nil {
		t.Fatal(err)
	}
	otherKeys, err := core.DeriveKeys(strings.Repeat("another-key-", 4))
	if err != nil {
		t.Fatal(err)
	}
	flipped := []byte(login.Sealed)
	flipped[len(flipped)/2] ^= 1
	for name, sealed := range map[string]string{
		"none":                      "",
		"another attempt's":         other.Sealed,
		"altered":                   string(flipped),
		"sealed under another key":  sealAttempt(otherKeys, ssoAttempt{Workspace: a.WorkspaceID, State: login.State, Expires: time.Now().Add(time.Minute).UnixMilli()}),
		"sealed for something else": s.core.ServerKeys.Seal("{}"),
		"longer than any attempt":   strings.Repeat("A", maxSealedAttempt+1),
	} {
		if _, err := s.FinishSSO(ctx, login.State, sealed); !errors.Is(err, core.ErrSSOState) {
			t.Errorf("%s: got %v, want ErrSSOState", name, err)
		}
	}
	got, err := s.FinishSSO(ctx, login.State, login.Sealed)
	if err != nil || got.Nonce != login.Nonce || got.Verifier != login.Verifier || got.Next != "/projects" || got.Client.ClientID != "c" {
		t.Errorf("finish: got %+v, %v", got, err)
	}

	// A next path too long for a cookie comes back to "/"; a long one that fits is kept.
	for next, want := range map[string]string{"/" + strings.Repeat("p", 2000): "/" + strings.Repeat("p", 2000), "/" + strings.Repeat("&", 3000): "/"} {
		long, err := s.BeginSSO(ctx, SSOStartInput{Next: next})
		if err != nil {
			t.Fatal(err)
		}
		if len(long.Sealed) > maxSealedAttempt {
			t.Errorf("sealed attempt of %d bytes, want at most %d", len(long.Sealed), maxSealedAttempt)
		}
		if got, err := s.FinishSSO(ctx, long.State, long.Sealed); err != nil || got.Next != want {
			t.Errorf("next of %d bytes: came back as one of %d, %v; want %d", len(next), len(got.Next), err, len(want))
		}
	}

	s.core.Now = func() time.Time { return time.Now().Add(SSOStateTTL) }
	if _, err := s.FinishSSO(ctx, other.State, other.Sealed); !errors.Is(err, core.ErrSSOStateExpired) {
		t.Errorf("expired: got %v, want ErrSSOStateExpired", err)
	}
	if _, err := s.BeginSSO(ctx, SSOStartInput{Workspace: "nope"}); err == nil || err.Error() != "invalid input: workspace_is_invalid" {
		t.Errorf("unknown workspace: got %v", err)
	}
}

// TestSSOFirstSignInsAtOnce: two first sign-ins of one new email at the same
// moment end as one user with one membership.
func TestSSOFirstSignInsAtOnce(t *testing.T) {
	s, a, pool := testStore(t)
	ctx := t.Context()
	_, err := s.UpdateWorkspaceSSO(ctx, a, OIDCSettings{ClientID: "c", ClientSecret: "s", AuthorizationEndpoint: "https://id.example.com/auth",
		TokenEndpoint: "https://id.example.com/token", ClientAuthenticationMethod: ClientSecretPost})
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{"email": "twice@example.com", "email_verified": true}
	var wg sync.WaitGroup
	sessions := make([]Session, 8)
	errs := make([]error, len(sessions))
	for i := range sessions {
		wg.Go(func() { sessions[i], errs[i] = s.SignInWithSSO(ctx, a.WorkspaceID, claims) })
	}
	wg.Wait()
	firsts := 0
	for i, err := range errs {
		if err != nil {
			t.Fatalf("sign-in %d: %v", i, err)
		}
		if sessions[i].UserID != sessions[0].UserID {
			t.Errorf("sign-ins became different users")
		}
		if sessions[i].IsSsoFirstLogin {
			firsts++
		}
	}
	var members, audits int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM organization_users WHERE user_id = $1),
		(SELECT count(*) FROM audit_logs WHERE ref_id = $1::text)`, sessions[0].UserID).Scan(&members, &audits); err != nil {
		t.Fatal(err)
	}
	if firsts != 1 || members != 1 || audits != 1 {
		t.Errorf("first sign-ins %d, memberships %d, audit entries %d; want 1 each", firsts, members, audits)
	}
}

// TestSSOStartsStoreNothing: beginning single sign-on writes nothing, so
// no number of starts refuses the next one (how often one address may
// start is web/limit's TestSSOStartsPerAddress).
func TestSSOStartsStoreNothing(t *testing.T) {
	s, a, pool := testStore(t)
	ctx := t.Context()
	if _, err := s.UpdateWorkspaceSSO(ctx, a, OIDCSettings{ClientID: "c", ClientSecret: "s", AuthorizationEndpoint: "https://id.example.com/auth",
		TokenEndpoint: "https://id.example.com/token", ClientAuthenticationMethod: ClientSecretBasic}); err != nil {
		t.Fatal(err)
	}
	// More starts than the 1,000 pending attempts a workspace used to hold.
	for i := range 1200 {
		if _, err := s.BeginSSO(ctx, SSOStartInput{}); err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM sso_login_states`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Errorf("%d attempts stored, want none", rows)
	}
	last, err := s.BeginSSO(ctx, SSOStartInput{})
	if err != nil {
		t.Fatalf("a start after the others: %v", err)
	}
	if _, err := s.FinishSSO(ctx, last.State, last.Sealed); err != nil {
		t.Errorf("finishing it: %v", err)
	}
}
