package server

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/bunting-flags/bunting/api"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/web"
	"github.com/bunting-flags/bunting/web/actorcache"
	"github.com/bunting-flags/bunting/web/httpx"
	"github.com/bunting-flags/bunting/web/limit"
	"github.com/bunting-flags/bunting/web/sdk"
)

// NewHandler returns Bunting's complete HTTP handler: the JSON API under
// /api/v1, the SDK endpoints (/streaming, /api/public, /ofrep/v1) and the
// pages, on one Echo with the middleware they share, health checks and the
// one error handler. closeStreams is what must run at shutdown besides
// http.Server.Shutdown: closing the SDK streaming connections with 1001,
// which net/http no longer tracks once they are WebSockets.
func NewHandler(cfg Config, st *store.Store, log *slog.Logger, sdkOpts sdk.Options) (h *echo.Echo, closeStreams func(context.Context) error) {
	e := httpx.New(log, httpx.Options{TrustProxy: cfg.TrustProxy, BodyBudget: cfg.BodyBudget, BodyRate: cfg.BodyRate, Unlogged: sdk.LoggedInSummary,
		Observe: requestObserver(cfg.Metrics)})
	if sdkOpts.Metrics == nil {
		sdkOpts.Metrics = cfg.Metrics
	}
	if cfg.TracerProvider != nil {
		e.Use(traceRequests(cfg.TracerProvider))
	}
	// The API and the pages share one allowance of each rate limit, and one
	// cache of the actors credentials resolve to.
	limits, actors := limit.NewEdge(), actorcache.New(st)
	sdks := sdk.New(st, log, sdkOpts)
	pages := web.New(web.Config{BaseURL: cfg.BaseURL, Limits: limits, Actors: actors, SDK: sdks}, st, log)
	// Paths under /api/ answer in the API's JSON envelope; everything else is
	// a page, or a region of one, and answers in HTML.
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if isAPI(c) {
			api.WriteError(c, log, err)
			return
		}
		pages.WriteError(c, err)
	}
	e.Use(outsideAPI(web.SecurityHeaders(cfg.BaseURL.Scheme == "https")))
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
		if err := st.Projects().Ping(ctx); err != nil {
			return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "unreachable"})
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})

	mountMetrics(e, cfg)
	api.New(st, log, api.Shared{Limits: limits, Actors: actors, SDK: sdks}).Register(e)
	sdks.Register(e)
	pages.Register(e)
	return e, sdks.Shutdown
}

func isAPI(c echo.Context) bool { return strings.HasPrefix(c.Request().URL.Path, "/api/") }

// outsideAPI runs m for every request but the JSON API's (paths under
// /api/, the SDK's polling endpoints among them).
func outsideAPI(m echo.MiddlewareFunc) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		withM := m(next)
		return func(c echo.Context) error {
			if isAPI(c) {
				return next(c)
			}
			return withM(c)
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
			return !isAPI(c) || strings.HasPrefix(c.Request().URL.Path, "/api/public/")
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
		if !isAPI(c) {
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
