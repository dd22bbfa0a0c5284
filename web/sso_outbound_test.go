package web_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/web/limit"
	"github.com/bunting-flags/bunting/web/oidcflow/oidctest"
)

// Single sign-on makes the server fetch URLs a workspace admin chooses. These
// tests prove it cannot be turned into a window into the server's network:
// each runs real servers on loopback and looks at what the admin is shown
// and what is logged.

// testConnection posts the single sign-on form's "Test connection" with this
// issuer, as htmx does, and returns the result region.
func (b *browser) testConnection(issuer string) *page {
	b.t.Helper()
	if b.last == nil || b.last.url.Path != "/workspace" {
		b.get("/workspace").status(http.StatusOK)
	}
	form := url.Values{"clientId": {"x"}, "clientSecret": {""}, "authorizationEndpoint": {"https://id.example.com/auth"},
		"tokenEndpoint": {"https://id.example.com/token"}, "clientAuthenticationMethod": {iam.ClientSecretBasic},
		"scope": {"openid"}, "userEmailClaim": {"email"}, "issuer": {issuer}}
	return b.htmx("/workspace/sso/test", form)
}

// loopbackServer serves handler on 127.0.0.1 and counts its requests.
func loopbackServer(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestSSOProviderURLsValidated: the issuer and endpoints are plain https
// URLs (http here only because the setting allows loopback): a query (an
// issuer ending in "?x=" would turn the discovery suffix into a query
// string), a fragment or user info is refused before anything is fetched,
// on the test and on saving, and through the API's store alike.
func TestSSOProviderURLsValidated(t *testing.T) {
	a := newSSOApp(t, &logRecorder{})
	srv, hits := loopbackServer(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	b := a.signedIn(ownerEmail, ownerPassword)
	for _, issuer := range []string{srv.URL + "/internal/secret?x=", srv.URL + "/?", srv.URL + "/a#frag",
		"http://user:password@" + strings.TrimPrefix(srv.URL, "http://"), "ftp://" + strings.TrimPrefix(srv.URL, "http://"),
		"http:///no-host"} {
		p := b.testConnection(issuer).status(http.StatusBadRequest)
		if !p.has("sso-test-failed") || !strings.Contains(p.text("sso-test"), "Issuer") {
			t.Errorf("issuer %q: test answered %q, want the issuer refused", issuer, p.text("sso-test"))
		}
		_, err := a.st.IAM().UpdateWorkspaceSSO(t.Context(), a.ownerActor(), iam.OIDCSettings{ClientID: "x", ClientSecret: "s",
			AuthorizationEndpoint: "https://id.example.com/auth", TokenEndpoint: issuer, Issuer: issuer,
			ClientAuthenticationMethod: iam.ClientSecretBasic})
		if err == nil || !strings.Contains(err.Error(), "issuer_is_invalid") || !strings.Contains(err.Error(), "tokenEndpoint_is_invalid") {
			t.Errorf("issuer %q saved: %v", issuer, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server was asked %d times", n)
	}
}

// TestSSOHugeDiscovery: a provider streaming a 300 MB discovery document
// (generated, never held) is refused after 1 MiB; the server's heap does not
// grow by more than a few MB while it answers. One that announces its size
// is refused without reading.
func TestSSOHugeDiscovery(t *testing.T) {
	a := newSSOApp(t, &logRecorder{})
	const total = 300 << 20
	var served atomic.Int64
	chunk := bytes.Repeat([]byte("a"), 64<<10)
	srv, _ := loopbackServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"issuer":"`))
		for n := 0; n < total; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return // the reader hung up
			}
			served.Add(int64(len(chunk)))
		}
	})
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/workspace").status(http.StatusOK)

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // sample the heap while the test connection runs
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	p := b.testConnection(srv.URL + "/streamed").status(http.StatusOK)
	close(done)
	wg.Wait()
	grew := int64(peak.Load()) - int64(before.HeapAlloc)
	t.Logf("300 MB discovery: refused in %v, heap grew by at most %.1f MB, %.1f MB sent before the hang-up",
		time.Since(start).Round(time.Millisecond), float64(grew)/(1<<20), float64(served.Load())/(1<<20))
	if !p.has("sso-test-failed") || !strings.Contains(p.text("sso-test"), "answered more than 1024 KiB") {
		t.Errorf("a 300 MB document answered %q", p.text("sso-test"))
	}
	if grew > 8<<20 {
		t.Errorf("the heap grew by %d MB reading a huge discovery document, want a few", grew>>20)
	}
	if served.Load() > 100<<20 {
		t.Errorf("%d MB were read before refusing", served.Load()>>20)
	}

	srv2, _ := loopbackServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(total))
		w.Write(chunk)
	})
	p = b.testConnection(srv2.URL).status(http.StatusOK)
	if !strings.Contains(p.text("sso-test"), "answered more than 1024 KiB") {
		t.Errorf("a document announcing 300 MB answered %q", p.text("sso-test"))
	}
}

// providerDetail stands for whatever an internal service answers: it must
// reach neither the page nor the log.
const providerDetail = oidctest.Detail

// TestSSOProviderAnswersNotShown: a provider (or any service) answering
// 500 with text is described by its status only, on the connection test's
// page and in the log; so are its key set and token endpoint at sign-in.
func TestSSOProviderAnswersNotShown(t *testing.T) {
	logs := &logRecorder{}
	a := newSSOApp(t, logs)
	srv, _ := loopbackServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "database password is hunter2, "+providerDetail, http.StatusInternalServerError)
	})
	b := a.signedIn(ownerEmail, ownerPassword)
	p := b.testConnection(srv.URL + "/realm").status(http.StatusOK)
	want := "Discovery failed: " + srv.URL + "/realm/.well-known/openid-configuration answered 500 Internal Server Error"
	if got := p.text("sso-test"); !strings.Contains(got, want) {
		t.Errorf("test answered %q, want %q", got, want)
	}
	if strings.Contains(p.body, providerDetail) || strings.Contains(p.body, "hunter2") {
		t.Errorf("the answer's body reached the page: %s", p.body)
	}
	// Not reachable at all: said in words, not as a Go error.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	closed := "http://" + l.Addr().String()
	l.Close()
	if got := b.testConnection(closed).text("sso-test"); got != "Discovery failed: could not reach "+closed+
		"/.well-known/openid-configuration: connection refused" {
		t.Errorf("a closed port answered %q", got)
	}

	// At sign-in: the key set and the token endpoint answer 500 with text.
	prov := newOIDCProvider(t, "127.0.0.1", "/realms/acme")
	a.useProvider(prov, iam.ClientSecretBasic, true)
	prov.Set(func(p *oidcProvider) { p.KeysStatus = http.StatusInternalServerError })
	b2 := a.browser()
	b2.ssoSignIn("/projects").status(http.StatusBadGateway)
	prov.Set(func(p *oidcProvider) { p.KeysStatus, p.TokenStatus = 0, http.StatusInternalServerError })
	b2.ssoSignIn("/projects").status(http.StatusBadGateway)
	if got := logs.reasons(); len(got) != 2 || got[0] != "no_keys" || got[1] != "token_exchange_failed" {
		t.Errorf("logged reasons %v", got)
	}
	logs.mu.Lock()
	for _, r := range logs.records {
		if r["msg"] == "single sign-on refused" && !strings.Contains(r["err"], "answered 500") {
			t.Errorf("logged %q, want the status", r["err"])
		}
	}
	logs.mu.Unlock()
	if logs.mentions(providerDetail) || logs.mentions("hunter2") {
		t.Errorf("an answer's body reached the log")
	}
}

// TestSSOOutboundAddresses: link-local and cloud-metadata addresses are
// refused always, checked when dialing; loopback and private addresses only
// while BUNTING_SSO_ALLOW_PRIVATE_NETWORKS is off, including names that
// resolve to them; a redirect to another host is not followed.
func TestSSOOutboundAddresses(t *testing.T) {
	prov := newOIDCProvider(t, "127.0.0.1", "/realms/acme")
	_, port, _ := net.SplitHostPort(prov.Srv.Listener.Addr().String())

	t.Run("allowed", func(t *testing.T) {
		a := newSSOApp(t, &logRecorder{})
		b := a.signedIn(ownerEmail, ownerPassword)
		if p := b.testConnection(prov.Issuer).status(http.StatusOK); !p.has("sso-test-ok") {
			t.Errorf("the loopback provider failed with the setting on: %q", p.text("sso-test"))
		}
		for _, c := range []struct{ issuer, says string }{
			{"http://169.254.169.254/latest/meta-data", "link-local address 169.254.169.254 not allowed"},
			{"http://[::ffff:169.254.169.254]/latest", "link-local address 169.254.169.254 not allowed"},
			{"http://[fe80::1]:" + port, "link-local address fe80::1 not allowed"},
			{"http://100.100.100.200/latest", "cloud metadata address 100.100.100.200 not allowed"},
			{"http://[fd00:ec2::254]/latest", "cloud metadata address fd00:ec2::254 not allowed"},
			{"http://0.0.0.0:" + port + "/realms/acme", "unspecified address 0.0.0.0 not allowed"},
			{"http://[::]:" + port + "/realms/acme", "unspecified address :: not allowed"},
		} {
			p := b.testConnection(c.issuer).status(http.StatusOK)
			if got := p.text("sso-test"); !p.has("sso-test-failed") || !strings.Contains(got, c.says) {
				t.Errorf("%s answered %q, want %q", c.issuer, got, c.says)
			}
		}
		// Discovery at 127.0.0.1 redirects to the provider as "localhost": another host.
		redirector, _ := loopbackServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://localhost:"+port+"/realms/acme"+r.URL.Path, http.StatusFound)
		})
		p := b.testConnection(redirector.URL).status(http.StatusOK)
		if got := p.text("sso-test"); !strings.Contains(got, "redirected to another host") {
			t.Errorf("a redirect to another host answered %q", got)
		}
	})

	t.Run("refused", func(t *testing.T) {
		a := newSSOAppWith(t, &logRecorder{}, false)
		b := a.signedIn(ownerEmail, ownerPassword)
		// Plain http is refused as a URL; https to loopback when dialing,
		// by address and by a name that resolves to it.
		if p := b.testConnection(prov.Issuer).status(http.StatusBadRequest); !p.has("sso-test-failed") {
			t.Errorf("an http issuer passed with the setting off: %q", p.text("sso-test"))
		}
		for _, c := range []struct{ issuer, says string }{
			{"https://127.0.0.1:" + port + "/realms/acme", "private network address 127.0.0.1 not allowed"},
			{"https://localhost:" + port + "/realms/acme", "refused: localhost resolves to a private network address"},
			{"https://10.0.0.1/realms/acme", "private network address 10.0.0.1 not allowed"},
			{"https://192.168.1.1/realms/acme", "private network address 192.168.1.1 not allowed"},
			{"https://169.254.169.254/latest", "link-local address 169.254.169.254 not allowed"},
		} {
			p := b.testConnection(c.issuer).status(http.StatusOK)
			if got := p.text("sso-test"); !p.has("sso-test-failed") || !strings.Contains(got, c.says) {
				t.Errorf("%s answered %q, want %q", c.issuer, got, c.says)
			}
		}
		// A name is described as given: what it resolves to stays unsaid.
		if got := b.testConnection("https://localhost:" + port + "/realms/acme").text("sso-test"); strings.Contains(got, "127.0.0.1") || strings.Contains(got, "::1") {
			t.Errorf("the check of localhost says %q", got)
		}
		// Sign-in goes through the same client: settings naming a loopback
		// provider (stored before, say) reach nothing.
		_, err := a.pool.Exec(context.Background(), `UPDATE workspaces SET sso_oidc = $1`, fmt.Sprintf(
			`{"clientId":"bunting-client","clientSecret":%q,"authorizationEndpoint":%q,"tokenEndpoint":%q,"issuer":"https://127.0.0.1:%s/realms/acme","clientAuthenticationMethod":"client_secret_basic","scope":"openid"}`,
			a.st.Projects().Keys().Seal(prov.Secret), prov.AuthEndpoint(), prov.TokenEndpoint(), port))
		must(t, err)
		b2 := a.browser()
		b2.ssoSignIn("/projects").status(http.StatusBadGateway)
		prov.Mu.Lock()
		defer prov.Mu.Unlock()
		if prov.TokenRequests != 0 {
			t.Errorf("the token endpoint was called %d times", prov.TokenRequests)
		}
	})
}

// TestSSOStartLimited: beginning single sign-on needs no sign-in and stores
// nothing; a burst from one address is refused after the limit.
func TestSSOStartLimited(t *testing.T) {
	a := newSSOApp(t, &logRecorder{})
	prov := newOIDCProvider(t, "127.0.0.1", "")
	a.useProvider(prov, iam.ClientSecretBasic, true)
	b := a.browser()
	token := b.get("/login").status(http.StatusOK).csrf() // the refusal page carries none
	b.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	started, refused := 0, 0
	for range limit.SSOStartBurst + 10 {
		switch p := b.post("/sso/start", url.Values{"next": {"/"}, "_csrf": {token}}); p.code {
		case http.StatusSeeOther:
			started++
		case http.StatusTooManyRequests:
			refused++
		default:
			t.Fatalf("/sso/start answered %d after %d started, %d refused: %s", p.code, started, refused, p.body)
		}
	}
	var rows int
	must(t, a.pool.QueryRow(t.Context(), `SELECT count(*) FROM sso_login_states`).Scan(&rows))
	if started < limit.SSOStartBurst || started > limit.SSOStartBurst+2 || refused < 8 || rows != 0 {
		t.Errorf("%d started, %d refused, %d rows; want %d started (a refill or two), the rest refused, no rows",
			started, refused, rows, limit.SSOStartBurst)
	}
}

// TestWorkspaceSettingsPagesNeedEveryOrganization: the owner of one of two
// organizations, who does not own the workspace, is not offered the
// workspace's settings and may not change them from the pages; owning both,
// they may.
func TestWorkspaceSettingsPagesNeedEveryOrganization(t *testing.T) {
	a := newSSOApp(t, &logRecorder{})
	prov := newOIDCProvider(t, "127.0.0.1", "")
	other := createOrganization(t, a, "Other", "other", false)
	coOwner := a.addMember("co-owner@example.com", core.OwnerPolicyID)
	b := a.signedIn("co-owner@example.com", memberPassword)
	p := b.get("/workspace").status(http.StatusOK)
	if p.has("sso-form") || p.has("workspace-form") {
		t.Errorf("the owner of one organization is offered the workspace's settings")
	}
	sso := url.Values{"clientId": {prov.ClientID}, "clientSecret": {prov.Secret}, "authorizationEndpoint": {prov.AuthEndpoint()},
		"tokenEndpoint": {prov.TokenEndpoint()}, "clientAuthenticationMethod": {iam.ClientSecretBasic},
		"scope": {"openid"}, "userEmailClaim": {"email"}, "issuer": {prov.Issuer}}
	b.post("/workspace/sso", sso).status(http.StatusForbidden)
	b.testConnection(prov.Issuer).status(http.StatusForbidden)
	b.get("/workspace")
	b.post("/workspace", url.Values{"name": {"Taken"}, "key": {"taken"}}).status(http.StatusForbidden)
	ws, err := a.q.GetWorkspace(t.Context(), a.wsID)
	must(t, err)
	if ws.SsoOidc != nil || ws.Key != "default-workspace" {
		t.Errorf("the workspace changed: key %s, sso %s", ws.Key, ws.SsoOidc)
	}

	_, err = a.pool.Exec(t.Context(), `INSERT INTO organization_users (organization_id, user_id) VALUES ($1, $2)`, other, coOwner)
	must(t, err)
	_, err = a.pool.Exec(t.Context(), `INSERT INTO member_policies (organization_id, user_id, policy_id) VALUES ($1, $2, $3)`,
		other, coOwner, core.OwnerPolicyID)
	must(t, err)
	p = b.get("/workspace").status(http.StatusOK)
	if !p.has("sso-form") {
		t.Fatalf("the owner of both organizations is not offered single sign-on")
	}
	b.post("/workspace/sso", sso).status(http.StatusOK)
	if ws, err = a.q.GetWorkspace(t.Context(), a.wsID); err != nil || ws.SsoOidc == nil {
		t.Errorf("the owner of both could not save single sign-on: %v", err)
	}
}
