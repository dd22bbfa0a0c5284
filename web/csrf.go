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
// The body reader holds any caller without credentials to this anyway.
const publicFormBytes = httpx.AnonymousBodyBytes

// protect is the Echo middleware, for forms of at most limit bytes.
func (g *csrfGuard) protect(limit int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { return g.check(c, next, limit) }
	}
}

func (g *csrfGuard) check(c echo.Context, next echo.HandlerFunc, limit int64) error {
	// gorilla/csrf reads a posted form for its token: read first by the
	// one body reader, charged to the body budget as it arrives, its
	// fields counted, and its parsing's cost reserved. GET, HEAD and
	// OPTIONS carry no form gorilla/csrf or a handler reads.
	switch c.Request().Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
	default:
		if err := httpx.ReadForm(c, limit, formCost); err != nil {
			return err
		}
	}
	r := c.Request()
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
