package web_test

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/web/limit"
)

// ssoAttempts names the single sign-on attempts the browser keeps.
func (b *browser) ssoAttempts() []string {
	b.t.Helper()
	callback, err := url.Parse(b.app.srv.URL + "/sso/callback")
	must(b.t, err)
	var out []string
	for _, c := range b.client.Jar.Cookies(callback) {
		if strings.HasPrefix(c.Name, "bunting_sso_") {
			out = append(out, c.Name)
		}
	}
	return out
}

// browserFrom is a browser whose connections come from ip, a loopback
// address of its own (127.0.0.0/8 is all loopback), as another client.
func (a *app) browserFrom(ip string) *browser {
	b := a.browser()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	b.client.Transport = &http.Transport{DialContext: d.DialContext}
	return b
}

// TestSSOStartFloodRefusesNoUser: anyone may begin single sign-on, from as
// many addresses as they have. 36 addresses beginning 30 attempts each
// (1,080, more than the 1,000 pending attempts a workspace used to hold, after
// which every start was refused for ten minutes) are all answered, store
// nothing, and a person then begins and completes a sign-in against the
// provider; their attempt from another browser still cannot be completed.
func TestSSOStartFloodRefusesNoUser(t *testing.T) {
	t.Parallel()
	a := newSSOApp(t, &logRecorder{})
	prov := newOIDCProvider(t, "127.0.0.1", "/realms/acme")
	a.useProvider(prov, iam.ClientSecretBasic, true)

	const addresses = 36
	flooders := make([]*browser, addresses)
	tokens := make([]string, addresses)
	for i := range flooders {
		flooders[i] = a.browserFrom(fmt.Sprintf("127.0.0.%d", 2+i))
		tokens[i] = flooders[i].get("/login").status(http.StatusOK).csrf()
	}
	start := time.Now()
	var mu sync.Mutex
	answers := map[int]int{}
	var wg sync.WaitGroup
	for i, f := range flooders {
		wg.Go(func() {
			client := *f.client
			client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			for range limit.SSOStartBurst {
				res, err := client.PostForm(a.srv.URL+"/sso/start", url.Values{"next": {"/"}, "_csrf": {tokens[i]}})
				if err != nil {
					t.Errorf("start from %d: %v", i, err)
					return
				}
				res.Body.Close()
				mu.Lock()
				answers[res.StatusCode]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("%d starts from %d addresses in %v: %v", addresses*limit.SSOStartBurst, addresses, time.Since(start), answers)
	if answers[http.StatusSeeOther] != addresses*limit.SSOStartBurst {
		t.Errorf("answers %v, want all %d sent to the provider (303)", answers, addresses*limit.SSOStartBurst)
	}
	var rows int
	must(t, a.pool.QueryRow(t.Context(), `SELECT count(*) FROM sso_login_states`).Scan(&rows))
	if rows != 0 {
		t.Errorf("%d attempts stored, want none", rows)
	}

	// A person signs in from their own address.
	person := a.browser()
	back := person.startSSO("", "/projects")
	// Their callback, taken to another browser, is refused (and spends nothing of theirs).
	thief := a.browserFrom("127.0.0.200")
	thief.get(back.RequestURI()).status(http.StatusBadRequest)
	thief.signedOut()
	person.get(back.RequestURI()).status(http.StatusOK).at("/projects")
	if _, err := a.q.GetUserByEmail(t.Context(), prov.Email); err != nil {
		t.Errorf("the person was not signed in: %v", err)
	}
}
