// Package web assembles the Echo server: middleware, the JSON API, health
// checks, and the error handler every surface shares.
package web

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/bunting-flags/bunting/api"
	"github.com/bunting-flags/bunting/sql/store"
)

// Config is what the web layer needs from the process configuration.
type Config struct {
	// BaseURL is the public URL of this instance.
	BaseURL *url.URL
	// TrustProxy takes the client address from X-Forwarded-For; set it only
	// behind a proxy that sets that header.
	TrustProxy bool
}

// New returns the complete HTTP handler.
func New(cfg Config, s *store.Store, log *slog.Logger) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.IPExtractor = echo.ExtractIPDirect()
	if cfg.TrustProxy {
		e.IPExtractor = echo.ExtractIPFromXFFHeader()
	}
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if strings.HasPrefix(c.Request().URL.Path, "/api/") {
			api.WriteError(c, log, err)
			return
		}
		status := http.StatusInternalServerError
		if he, ok := err.(*echo.HTTPError); ok {
			status = he.Code
		} else {
			log.ErrorContext(c.Request().Context(), "request failed", "err", err)
		}
		if !c.Response().Committed {
			c.String(status, http.StatusText(status))
		}
	}

	e.Use(middleware.RequestID())
	e.Use(middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogMethod: true, LogURIPath: true, LogStatus: true, LogLatency: true, LogRequestID: true, LogRemoteIP: true,
		HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
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

	api.New(s, log).Register(e)
	return e
}
