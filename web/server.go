// Package web assembles the Echo server (middleware, the JSON API, health
// checks, the error handler every surface shares) and serves the admin
// application: server-rendered pages with sessions and CSRF protection.
package web

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/bunting-flags/bunting/api"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/web/limit"
	"github.com/bunting-flags/bunting/web/sdk"
)

// Config is what the web layer needs from the process configuration.
type Config struct {
	// BaseURL is the public URL of this instance.
	BaseURL *url.URL
	// TrustProxy takes the client address from X-Forwarded-For; set it only
	// behind a proxy that sets that header.
	TrustProxy bool
	// CORSOrigins are the exact origins whose browser pages may call the
	// management API with credentials; none when empty.
	CORSOrigins []string
	// SDK tunes the SDK endpoints (rate limits, streaming connection caps).
	SDK sdk.Options
	// Limits are the rate limits the API and the pages share (token
	// minting, single sign-on starts, trigger calls); limit.NewEdge() when
	// nil.
	Limits *limit.Edge
	// BodyBudget is the memory request bodies may take at once, read and
	// decoded (api.DefaultBodyBudget when 0).
	BodyBudget int64
	// OnShutdown, when set, is handed what must run at shutdown besides
	// http.Server.Shutdown: closing the SDK streaming connections with 1001,
	// which net/http no longer tracks once they are WebSockets.
	OnShutdown func(func(context.Context) error)
}

// New returns the complete HTTP handler.
func New(cfg Config, s *store.Store, log *slog.Logger) *echo.Echo {
	if cfg.Limits == nil {
		cfg.Limits = limit.NewEdge()
	}
	pg, err := newPages(cfg, s, log)
	if err != nil {
		// Only reading the embedded static files can fail: a broken build.
		panic(fmt.Sprintf("web: %v", err))
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.IPExtractor = echo.ExtractIPDirect()
	if cfg.TrustProxy {
		e.IPExtractor = echo.ExtractIPFromXFFHeader()
	}
	// Paths under /api/ answer in the API's JSON envelope; everything else is
	// a page, or a region of one, and answers in HTML.
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if isAPI(c) {
			api.WriteError(c, log, err)
			return
		}
		pg.writeError(c, err)
	}

	e.Use(middleware.RequestID())
	e.Use(middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogMethod: true, LogURIPath: true, LogStatus: true, LogLatency: true, LogRequestID: true, LogRemoteIP: true,
		HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			if sdk.LoggedInSummary(c) {
				return nil // refused past a limit: counted in the SDK's refusal summary instead
			}
			log.LogAttrs(c.Request().Context(), slog.LevelInfo, "request",
				slog.String("id", v.RequestID), slog.String("method", v.Method), slog.String("path", v.URIPath),
				slog.Int("status", v.Status), slog.Duration("latency", v.Latency), slog.String("remote", v.RemoteIP))
			return nil
		},
	}))
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisableStackAll: true, DisablePrintStack: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			log.ErrorContext(c.Request().Context(), "panic", "err", err, "stack", string(stack))
			return err
		}}))
	budget := cfg.BodyBudget
	if budget <= 0 {
		budget = api.DefaultBodyBudget
	}
	e.Use(api.NewBodyBudget(budget, api.BodyWait).Hold)
	e.Use(securityHeaders(cfg.BaseURL.Scheme == "https"))
	e.Use(boundAPIRequests)
	if len(cfg.CORSOrigins) > 0 {
		e.Use(managementCORS(cfg.CORSOrigins))
	}

	e.GET("/health/liveness", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.GET("/health/readiness", func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		if err := s.Ping(ctx); err != nil {
			return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "unreachable"})
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})

	api.New(s, log, cfg.Limits).Register(e)
	sdks := sdk.New(s, log, cfg.SDK)
	sdks.Register(e)
	if cfg.OnShutdown != nil {
		cfg.OnShutdown(sdks.Shutdown)
	}
	pg.register(e)
	return e
}

func isAPI(c echo.Context) bool { return strings.HasPrefix(c.Request().URL.Path, "/api/") }

// contentSecurityPolicy allows nothing inline: every script and style comes
// from this site's static files, and no site may frame the pages.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// securityHeaders protects the pages (not the JSON API, whose clients are not
// browsers rendering it). HSTS only makes sense, and is only sent, over https.
func securityHeaders(https bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !isAPI(c) {
				h := c.Response().Header()
				h.Set("Content-Security-Policy", contentSecurityPolicy)
				h.Set("X-Frame-Options", "DENY")
				h.Set("X-Content-Type-Options", "nosniff")
				h.Set("Referrer-Policy", "same-origin")
				h.Set("Cross-Origin-Opener-Policy", "same-origin")
				if https {
					h.Set("Strict-Transport-Security", "max-age=63072000; includeSubDomains")
				}
			}
			return next(c)
		}
	}
}

// managementCORS lets pages on the listed origins call the management API
// (/api/v1, /api/v2) with credentials. Only exact listed origins are echoed
// back, never "*"; other origins get no CORS headers, so browsers refuse them
// the answer. The SDK endpoints under /api/public have their own open policy.
func managementCORS(origins []string) echo.MiddlewareFunc {
	return middleware.CORSWithConfig(middleware.CORSConfig{
		Skipper: func(c echo.Context) bool {
			p := c.Request().URL.Path
			return !strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/api/public/")
		},
		AllowOriginFunc:  func(origin string) (bool, error) { return slices.Contains(origins, origin), nil },
		AllowMethods:     []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete},
		AllowHeaders:     []string{echo.HeaderAuthorization, echo.HeaderContentType, "Organization", "Workspace"},
		AllowCredentials: true,
		MaxAge:           600,
	})
}

// apiRequestTimeout bounds the work of one API request, so a database that
// hangs instead of refusing answers 503 rather than holding clients forever.
const apiRequestTimeout = 30 * time.Second

// boundAPIRequests gives every /api/ request a deadline; long-lived routes
// (SDK streaming) live outside /api/ and keep theirs open.
func boundAPIRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !strings.HasPrefix(c.Request().URL.Path, "/api/") {
			return next(c)
		}
		r := c.Request()
		ctx, cancel := context.WithTimeout(r.Context(), apiRequestTimeout)
		defer cancel()
		c.SetRequest(r.WithContext(ctx))
		// The error handler runs after this returns; it must see the client's
		// own context, not this one cancelled, to tell a client that went away.
		defer c.SetRequest(r)
		return next(c)
	}
}
