// Package web serves the admin application: server-rendered pages (templ
// and htmx) with sessions, CSRF protection and single sign-on, which decode
// forms into web's own form structs (form_inputs.go), turn them into the
// store's inputs, call the same store methods as the API, and render views. It knows nothing of the API or the SDK endpoints:
// the server (cmd/internal/server) mounts the pages beside them and sends
// every failed request outside /api/ to the pages' error writer.
package web

import (
	"fmt"
	"log/slog"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/web/actorcache"
	"github.com/bunting-flags/bunting/web/limit"
	"github.com/bunting-flags/bunting/web/sdk"
)

// Config is what the pages need from the process configuration.
type Config struct {
	// BaseURL is the public URL of this instance: https makes cookies
	// secure, and the first-run guide's snippets connect SDKs to it.
	BaseURL *url.URL
	// Limits are the rate limits the pages share with the API (token
	// minting, single sign-on starts); limit.NewEdge() when nil.
	Limits *limit.Edge
	// Actors keeps the actors sessions resolve to, while access holds (the
	// API shares it); a cache of the pages' own when nil.
	Actors *actorcache.Cache
	// SDK is the process's SDK server, which builds what relays are sent
	// (a manual agent's sync); one of the pages' own when nil.
	SDK *sdk.Server
}

// Pages is the admin application.
type Pages struct{ pages *pages }

// New returns the pages over s.
func New(cfg Config, s *store.Store, log *slog.Logger) *Pages {
	if cfg.Limits == nil {
		cfg.Limits = limit.NewEdge()
	}
	if cfg.Actors == nil {
		cfg.Actors = actorcache.New(s)
	}
	if cfg.SDK == nil {
		cfg.SDK = sdk.New(s, log, sdk.Options{})
	}
	p, err := newPages(cfg, s, log)
	if err != nil {
		// Only reading the embedded static files can fail: a broken build.
		panic(fmt.Sprintf("web: %v", err))
	}
	return &Pages{pages: p}
}

// Register adds every page route to e.
func (p *Pages) Register(e *echo.Echo) { p.pages.register(e) }

// WriteError answers a failed page request, or a request for no route at
// all outside the API: a lost session goes to sign-in, htmx gets the
// message in the page's message region, anything else an error page.
func (p *Pages) WriteError(c echo.Context, err error) { p.pages.writeError(c, err) }

// contentSecurityPolicy allows nothing inline: every script and style comes
// from this site's static files, and no site may frame the pages.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// SecurityHeaders protects what a browser renders: the pages, and the error
// pages of paths that name none. HSTS only makes sense, and is only sent,
// over https. The server installs it for every path but the JSON API's,
// whose clients are not browsers rendering it.
func SecurityHeaders(https bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			h.Set("Content-Security-Policy", contentSecurityPolicy)
			h.Set("X-Frame-Options", "DENY")
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Referrer-Policy", "same-origin")
			h.Set("Cross-Origin-Opener-Policy", "same-origin")
			if https {
				h.Set("Strict-Transport-Security", "max-age=63072000; includeSubDomains")
			}
			return next(c)
		}
	}
}
