package store

import (
	"errors"
	"sync"
	"testing"
)

// TestSSOStates: an attempt is consumed once, only by the browser that began
// it, and not after it expired.
func TestSSOStates(t *testing.T) {
	s, a, pool := testStore(t)
	ctx := t.Context()
	settings := OIDCSettings{ClientID: "c", ClientSecret: "s", AuthorizationEndpoint: "https://id.example.com/auth",
		TokenEndpoint: "https://id.example.com/token", ClientAuthenticationMethod: ClientSecretBasic}
	if _, err := s.UpdateWorkspaceSSO(ctx, a, settings); err != nil {
		t.Fatal(err)
	}
	login, err := s.BeginSSO(ctx, SSOStartInput{Next: "/projects"}, "browser-one", "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	if login.Client.ClientSecret != "s" || login.Verifier == "" || login.Nonce == "" || len(login.State) < 32 {
		t.Fatalf("attempt %+v", login)
	}
	if _, err := s.FinishSSO(ctx, login.State, "browser-two"); !errors.Is(err, ErrSSOState) {
		t.Errorf("another browser: got %v, want ErrSSOState", err)
	}
	got, err := s.FinishSSO(ctx, login.State, "browser-one")
	if err != nil || got.Nonce != login.Nonce || got.Verifier != login.Verifier || got.Next != "/projects" {
		t.Errorf("finish: got %+v, %v", got, err)
	}
	if _, err := s.FinishSSO(ctx, login.State, "browser-one"); !errors.Is(err, ErrSSOState) {
		t.Errorf("second use: got %v, want ErrSSOState", err)
	}

	late, err := s.BeginSSO(ctx, SSOStartInput{}, "browser-one", "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE sso_login_states SET expires_at = now()`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FinishSSO(ctx, late.State, "browser-one"); !errors.Is(err, ErrSSOStateExpired) {
		t.Errorf("expired: got %v, want ErrSSOStateExpired", err)
	}
	if _, err := s.BeginSSO(ctx, SSOStartInput{Workspace: "nope"}, "b", "192.0.2.1"); err == nil || err.Error() != "invalid input: workspace_is_invalid" {
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

// TestSSOPendingCap: a workspace holds at most maxPendingSSO unexpired
// attempts, whatever the addresses; expired ones are deleted as new ones
// begin, which makes room again.
func TestSSOPendingCap(t *testing.T) {
	s, a, pool := testStore(t)
	ctx := t.Context()
	if _, err := s.UpdateWorkspaceSSO(ctx, a, OIDCSettings{ClientID: "c", ClientSecret: "s", AuthorizationEndpoint: "https://id.example.com/auth",
		TokenEndpoint: "https://id.example.com/token", ClientAuthenticationMethod: ClientSecretBasic}); err != nil {
		t.Fatal(err)
	}
	// Attempts already pending, as from many addresses.
	if _, err := pool.Exec(ctx, `INSERT INTO sso_login_states (state_hash, browser_hash, workspace_id, nonce, code_verifier, next, expires_at)
		SELECT sha256(i::text::bytea), '\x00', $1, 'n', 'v', '/', now() + interval '10 minutes'
		FROM generate_series(1, $2::int - 1) i`, a.WorkspaceID, maxPendingSSO); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM sso_login_states`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := s.BeginSSO(ctx, SSOStartInput{}, "b", "192.0.2.1"); err != nil {
		t.Fatalf("the last place: %v", err)
	}
	for i := range 3 {
		if _, err := s.BeginSSO(ctx, SSOStartInput{}, "b", "192.0.2."+string(rune('2'+i))); !errors.Is(err, ErrTooManyRequests) {
			t.Errorf("beyond the cap: got %v, want ErrTooManyRequests", err)
		}
	}
	if n := count(); n != maxPendingSSO {
		t.Errorf("%d attempts kept, want the cap %d", n, maxPendingSSO)
	}
	if _, err := pool.Exec(ctx, `UPDATE sso_login_states SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginSSO(ctx, SSOStartInput{}, "b", "192.0.2.9"); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if n := count(); n != 1 {
		t.Errorf("%d attempts after the expired ones went, want 1", n)
	}
}
