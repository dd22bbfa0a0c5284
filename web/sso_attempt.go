package web

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/bunting-flags/bunting/sql/store/sso"
	"github.com/labstack/echo/v4"
)

// A single sign-on attempt is kept by the browser that began it, in a
// cookie of its own named after the attempt's state, so two tabs can sign
// in at once; the store seals what is in it (see store's sso_attempt.go),
// so beginning one stores nothing on the server. The cookie is sent only to
// /sso/, lasts as long as the attempt, and is deleted at the callback
// whatever its outcome, so an attempt is tried once.
const (
	ssoAttemptPrefix = "bunting_sso_"
	// maxSSOAttempts is how many unfinished attempts a browser keeps; one
	// more drops the others (a person clicking "Sign in with SSO" again and
	// again), so the cookies sent to /sso/ stay a few kilobytes.
	maxSSOAttempts = 5
)

// ssoAttemptCookie names the cookie of the attempt with this state: a
// hash, so whatever a callback's state says, the name is a valid one.
func ssoAttemptCookie(state string) string {
	sum := sha256.Sum256([]byte(state))
	return ssoAttemptPrefix + hex.EncodeToString(sum[:8])
}

// keepSSOAttempt gives the browser the attempt to keep until the callback.
func (p *pages) keepSSOAttempt(c echo.Context, login sso.SSOLogin) {
	var kept []string
	for _, ck := range c.Cookies() {
		if strings.HasPrefix(ck.Name, ssoAttemptPrefix) {
			kept = append(kept, ck.Name)
		}
	}
	if len(kept) >= maxSSOAttempts {
		for _, name := range kept {
			p.setSSOCookie(c, name, "", -1)
		}
	}
	p.setSSOCookie(c, ssoAttemptCookie(login.State), login.Sealed, int(sso.SSOStateTTL.Seconds()))
}

// takeSSOAttempt returns the sealed attempt the browser kept for state ("" when
// it has none) and deletes it from the browser.
func (p *pages) takeSSOAttempt(c echo.Context, state string) string {
	name := ssoAttemptCookie(state)
	ck, err := c.Cookie(name)
	if err != nil {
		return ""
	}
	p.setSSOCookie(c, name, "", -1)
	return ck.Value
}

func (p *pages) setSSOCookie(c echo.Context, name, value string, maxAge int) {
	c.SetCookie(&http.Cookie{Name: name, Value: value, Path: "/sso/", MaxAge: maxAge,
		HttpOnly: true, Secure: p.sso.secure, SameSite: http.SameSiteLaxMode})
}
