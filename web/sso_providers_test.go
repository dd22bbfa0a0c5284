package web_test

import (
	"net/http"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/iam"
)

// TestSSOKeepsProviders: sign-ins read a provider's discovery document and
// key set once, not on every sign-in; a provider that rotated its key is read
// again when the kept key does not verify its token; and changing the
// workspace's settings reads the provider as they now find it.
func TestSSOKeepsProviders(t *testing.T) {
	t.Parallel()
	logs := &logRecorder{}
	a := newSSOApp(t, logs)
	prov := newOIDCProvider(t, "127.0.0.1", "/realms/acme")
	a.useProvider(prov, iam.ClientSecretBasic, true)

	for range 2 {
		b := a.browser()
		b.ssoSignIn("/projects").status(http.StatusOK).at("/projects")
	}
	if discoveries, keys := prov.Reads(); discoveries != 1 || keys != 1 {
		t.Errorf("two sign-ins read discovery %d and the key set %d times, want once each", discoveries, keys)
	}

	// The provider signs with a new key, which only its key set knows.
	prov.Set(func(p *oidcProvider) { p.Key = p.OtherKey })
	a.browser().ssoSignIn("/projects").status(http.StatusOK).at("/projects")
	if _, keys := prov.Reads(); keys != 2 {
		t.Errorf("after the key changed the key set was read %d times in all, want 2", keys)
	}
	a.browser().ssoSignIn("/projects").status(http.StatusOK).at("/projects")
	if discoveries, keys := prov.Reads(); discoveries != 2 || keys != 2 {
		t.Errorf("the sign-in after reading the new key read discovery %d and keys %d times in all, want 2 and 2", discoveries, keys)
	}

	// Without the issuer Bunting finds discovery next to the endpoints:
	// other settings, read afresh.
	a.useProvider(prov, iam.ClientSecretBasic, false)
	a.browser().ssoSignIn("/projects").status(http.StatusOK).at("/projects")
	if discoveries, keys := prov.Reads(); discoveries <= 2 || keys != 3 {
		t.Errorf("after the settings changed: discovery read %d and keys %d times in all, want more than 2 and 3", discoveries, keys)
	}
	if got := logs.reasons(); len(got) != 0 {
		t.Errorf("refusals logged: %v", got)
	}
}
