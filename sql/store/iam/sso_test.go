package iam

import (
	"sync"
	"testing"
)

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
