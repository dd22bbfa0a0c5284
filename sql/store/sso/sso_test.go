package sso

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/seamtest"
)

// testStore is the single sign-on seam and the identity seam over one core
// on a fresh database, with its owner signed in.
func testStore(t testing.TB) (*SSO, *iam.IAM, *core.Actor, *pgxpool.Pool) {
	c, ids, a, pool := seamtest.Owner(t)
	return New(c), ids, a, pool
}

// TestSSOStates: an attempt is sealed for the browser to keep, unreadable
// to it, and accepted only with its own state, unaltered, sealed under this
// server's key, and not after it expired. (Using it once is web's part:
// the browser's copy is deleted at the callback.)
func TestSSOStates(t *testing.T) {
	s, ids, a, _ := testStore(t)
	ctx := t.Context()
	settings := iam.OIDCSettings{ClientID: "c", ClientSecret: "s", AuthorizationEndpoint: "https://id.example.com/auth",
		TokenEndpoint: "https://id.example.com/token", ClientAuthenticationMethod: iam.ClientSecretBasic}
	if _, err := ids.UpdateWorkspaceSSO(ctx, a, settings); err != nil {
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

// TestSSOStartsStoreNothing: beginning single sign-on writes nothing, so
// no number of starts refuses the next one (how often one address may
// start is web/limit's TestSSOStartsPerAddress).
func TestSSOStartsStoreNothing(t *testing.T) {
	s, ids, a, pool := testStore(t)
	ctx := t.Context()
	if _, err := ids.UpdateWorkspaceSSO(ctx, a, iam.OIDCSettings{ClientID: "c", ClientSecret: "s", AuthorizationEndpoint: "https://id.example.com/auth",
		TokenEndpoint: "https://id.example.com/token", ClientAuthenticationMethod: iam.ClientSecretBasic}); err != nil {
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

// Where FeatBit's UI may be sent back after single sign-on: an absolute
// http(s) address without credentials, fragment or spaces.
func TestRulesAppRedirectURI(t *testing.T) {
	tests := []struct {
		uri  string
		want bool
	}{
		{"https://flags.example.com/login", true},
		{"http://localhost:4200/login?x=1", true},
		{"/login", false},
		{"javascript:alert(1)", false},
		{"ftp://flags.example.com/", false},
		{"https://user:pw@flags.example.com/", false},
		{"https://flags.example.com/#frag", false},
		{"https://flags.example.com/a b", false},
		{"https:///nohost", false},
		{"https://flags.example.com/" + strings.Repeat("x", 2000), false},
	}
	for _, tt := range tests {
		if got := appRedirectURI(tt.uri); got != tt.want {
			t.Errorf("appRedirectURI(%.60q) = %v, want %v", tt.uri, got, tt.want)
		}
	}
}

// An SSO attempt comes back only as sealed by this server's key.
func TestRulesSSOAttemptSeal(t *testing.T) {
	keys, _ := core.DeriveKeys(strings.Repeat("rules-test-", 4))
	other, _ := core.DeriveKeys(strings.Repeat("other-key--", 4))
	at := ssoAttempt{Workspace: uuid.New(), State: "st", Nonce: "no", Verifier: "ve", Next: "/flags?a=1&b=2", Expires: 1700000000000}
	sealed := sealAttempt(keys, at)
	if got, ok := openAttempt(keys, sealed); !ok || got != at {
		t.Errorf("opened %+v %v, want %+v", got, ok, at)
	}
	if sealAttempt(keys, at) == sealed {
		t.Error("two seals of one attempt are equal: the nonce is not fresh")
	}
	flipped := []byte(sealed)
	flipped[len(flipped)-2] ^= 1
	for name, s := range map[string]string{"other key": sealAttempt(other, at), "altered": string(flipped), "empty": "", "not base64": "%%%",
		"too long": strings.Repeat("A", maxSealedAttempt+1)} {
		if _, ok := openAttempt(keys, s); ok {
			t.Errorf("%s: opened", name)
		}
	}
	long := at
	long.Next = "/" + strings.Repeat("x", maxAttemptJSON)
	if got, ok := openAttempt(keys, sealAttempt(keys, long)); !ok || got.Next != "/" || got.State != "st" {
		t.Errorf("an attempt too long for a cookie: next %q, ok %v; want \"/\"", got.Next, ok)
	}
}
