package web

import (
	"context"
	"errors"
	"net/http"

	"github.com/gorilla/csrf"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/web/httpx"
)

// csrfGuard refuses state-changing page requests that do not carry the
// anti-forgery token (gorilla/csrf: a token in an authenticated cookie, masked
// anew in every page, sent back as the _csrf form field or, by htmx, as the
// X-CSRF-Token header; the Origin header must be this site's too).
type csrfGuard struct {
	handler   http.Handler
	plaintext bool
}

// errCSRF is a state-changing request without a valid token.
var errCSRF = errors.New("csrf token missing or invalid")

// csrfCall carries one request through gorilla/csrf, which speaks net/http,
// and back into Echo.
type csrfCall struct {
	c      echo.Context
	next   echo.HandlerFunc
	err    error // the page handler's answer
	failed error // why gorilla/csrf refused the request
}

type csrfCallKey struct{}

func newCSRFGuard(key []byte, secure bool) *csrfGuard {
	call := func(r *http.Request) *csrfCall { return r.Context().Value(csrfCallKey{}).(*csrfCall) }
	protect := csrf.Protect(key,
		csrf.CookieName("bunting_csrf"), csrf.Path("/"), csrf.HttpOnly(true), csrf.Secure(secure),
		csrf.SameSite(csrf.SameSiteLaxMode), csrf.FieldName("_csrf"), csrf.RequestHeader("X-CSRF-Token"),
		csrf.ErrorHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			call(r).failed = csrf.FailureReason(r)
		})))
	handler := protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cc := call(r)
		cc.c.SetRequest(r) // carries the token for csrfToken
		cc.err = cc.next(cc.c)
	}))
	// Over plain HTTP gorilla/csrf must not insist on an https Referer.
	return &csrfGuard{handler: handler, plaintext: !secure}
}

// publicFormBytes bounds the forms posted without a session (signing in
// and out, starting single sign-on): a few short fields, and nothing a
// stranger may make the server hold a large share of the body budget for.
const publicFormBytes = 16 << 10

// protect is the Echo middleware, for forms of at most limit bytes.
func (g *csrfGuard) protect(limit int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { return g.check(c, next, limit) }
	}
}

func (g *csrfGuard) check(c echo.Context, next echo.HandlerFunc, limit int64) error {
	r := c.Request()
	if r.ContentLength > limit {
		return echo.ErrStatusRequestEntityTooLarge
	}
	// gorilla/csrf reads a posted form for its token: its share of the
	// body budget first.
	if size := r.ContentLength; size != 0 {
		if size < 0 {
			size = limit
		}
		if _, err := httpx.Reserve(c, formCost(size)); err != nil {
			return err
		}
	}
	r.Body = http.MaxBytesReader(c.Response(), r.Body, limit)
	cc := &csrfCall{c: c, next: next}
	r = r.WithContext(context.WithValue(r.Context(), csrfCallKey{}, cc))
	if g.plaintext {
		r = csrf.PlaintextHTTPRequest(r)
	}
	g.handler.ServeHTTP(c.Response(), r)
	if cc.failed != nil {
		return errors.Join(errCSRF, cc.failed)
	}
	return cc.err
}

// csrfToken is the token forms on this page carry.
func csrfToken(c echo.Context) string { return csrf.Token(c.Request()) }

// formCost is what a posted form of n bytes may take while the pages read
// it: the form parsed into its values, which the pages split into lists
// (user keys, tags), one value of one-byte items becoming 16 bytes each.
func formCost(n int64) int64 { return 2 * httpx.BodyCost(n) }
