// Package httpx holds what Bunting's three HTTP surfaces (the JSON API,
// the SDK endpoints and the pages) share, so none of them imports another:
// the Echo every surface is served by, path ids, route groups behind
// middleware, the body size cap and the body budget, telling a client that
// went away, and the one classification of HTTP's own errors (an unknown
// route, a wrong method, a body too large) that the API's envelope and the
// pages' error page both answer by.
package httpx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// Options tune the Echo that New returns; the zero value is the server's
// defaults.
type Options struct {
	// TrustProxy takes the client address from X-Forwarded-For; set it only
	// behind a proxy that sets that header.
	TrustProxy bool
	// BodyBudget is the memory request bodies may take at once, read and
	// decoded (DefaultBodyBudget when 0).
	BodyBudget int64
	// BodyRate is how fast bodies must arrive (DefaultBodyRate's for each
	// of its fields left 0).
	BodyRate BodyRate
	// Budget, when set, is the body budget itself, BodyBudget and BodyRate
	// aside: for tests that watch what it holds.
	Budget *BodyBudget
	// Unlogged, when set, leaves the requests it reports out of the request
	// log: the SDK endpoints' refusals past a limit, which their own summary
	// counts instead.
	Unlogged func(echo.Context) bool
	// Observe, when set, sees every answered request with its final status
	// (after the error handler) and latency, from the request logger that
	// measures both anyway, refused and unlogged requests included: the
	// metrics' request counts and durations.
	Observe func(c echo.Context, status int, latency time.Duration)
}

// New returns an Echo with what every surface relies on: request ids, a
// request log line per request, panics recovered and logged, and the body
// budget. Its error handler and routes are the caller's to set: the server
// mounts every surface, a surface's tests only their own.
func New(log *slog.Logger, opts Options) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.JSONSerializer = jsonSerializer{}
	e.IPExtractor = echo.ExtractIPDirect()
	if opts.TrustProxy {
		e.IPExtractor = echo.ExtractIPFromXFFHeader()
	}
	e.Use(middleware.RequestID())
	e.Use(middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogMethod: true, LogURIPath: true, LogStatus: true, LogLatency: true, LogRequestID: true, LogRemoteIP: true,
		HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			if opts.Observe != nil {
				opts.Observe(c, v.Status, v.Latency)
			}
			if opts.Unlogged != nil && opts.Unlogged(c) {
				return nil
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
	budget := opts.Budget
	if budget == nil {
		size := opts.BodyBudget
		if size <= 0 {
			size = DefaultBodyBudget
		}
		budget = NewBodyBudget(size, BodyWait).WithRate(opts.BodyRate)
	}
	e.Use(budget.Hold)
	return e
}

// Classify classes the errors of HTTP itself, which the store's
// classification does not know: a body too large, the body budget spent,
// and Echo's own (an unknown route, a wrong method). ok is false for any
// other error. The API answers the class's codes in its envelope; the
// pages choose their words by its code.
func Classify(err error) (class core.Class, ok bool) {
	var herr *echo.HTTPError
	switch {
	case errors.Is(err, ErrTooLarge):
		return core.Class{Status: http.StatusRequestEntityTooLarge, Codes: []string{"RequestTooLarge"}}, true
	case errors.Is(err, ErrTooManyFields):
		return core.Class{Status: http.StatusRequestEntityTooLarge, Codes: []string{"TooManyFields"}}, true
	case errors.Is(err, ErrSlowBody):
		return core.Class{Status: http.StatusRequestTimeout, Codes: []string{"RequestTimeout"}}, true
	case errors.Is(err, ErrBusy):
		return core.Class{Status: http.StatusServiceUnavailable, Codes: []string{"ServiceUnavailable"}}, true
	case errors.As(err, &herr):
		switch herr.Code {
		case http.StatusNotFound:
			return core.Class{Status: http.StatusNotFound, Codes: []string{"ResourceNotFound"}}, true
		case http.StatusMethodNotAllowed:
			return core.Class{Status: http.StatusMethodNotAllowed, Codes: []string{"MethodNotAllowed"}}, true
		case http.StatusRequestEntityTooLarge:
			return core.Class{Status: http.StatusRequestEntityTooLarge, Codes: []string{"RequestTooLarge"}}, true
		case http.StatusUnauthorized:
			return core.Class{Status: http.StatusUnauthorized, Codes: []string{"Unauthorized"}}, true
		}
		// Any other refusal of Echo's is the request's fault, not the server's.
		if herr.Code >= 400 && herr.Code < 500 {
			return core.Class{Status: herr.Code, Codes: []string{"InvalidRequest"}}, true
		}
	}
	return core.Class{}, false
}

// ClientGone marks err as the client's going away when the request's
// context was canceled: whatever the request ran into on the way out (a
// query cut short reads as a database failure) is not the server's fault.
func ClientGone(c echo.Context, err error) error {
	// A body cut for its slowness cancels its request's context too (net/http
	// does, when the connection's read deadline passes): the client is still
	// there to be told.
	if errors.Is(err, ErrSlowBody) {
		return err
	}
	if errors.Is(c.Request().Context().Err(), context.Canceled) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: %w", context.Canceled, err)
	}
	return err
}

// PathID reads a uuid path parameter; a malformed one names nothing, so
// 404, like an unknown id.
func PathID(c echo.Context, name string) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Param(name))
	if err != nil {
		return uuid.Nil, core.ErrNotFound
	}
	return id, nil
}

// Before runs check ahead of the rest of a route: a route whose right
// does not depend on its body refuses a caller without it before the body
// is read and decoded (the API's JSON, the pages' forms, which the CSRF
// guard reads for its token).
func Before(check func(c echo.Context) error) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := check(c); err != nil {
				return err
			}
			return next(c)
		}
	}
}

// Routes registers routes under one Echo group, every one behind the same
// middleware: a route group whose routes cannot forget it. It is not Echo's
// Group.Use, which also registers catch-all routes below the group that run
// the middleware: an unknown path would answer as the middleware does (401
// for an anonymous caller) and a known path's wrong method 404, not 405.
type Routes struct {
	group      *echo.Group
	middleware []echo.MiddlewareFunc
}

// Guarded returns the routes of g that run middleware first.
func Guarded(g *echo.Group, middleware ...echo.MiddlewareFunc) Routes {
	return Routes{group: g, middleware: middleware}
}

// With returns the same routes running more middleware after r's.
func (r Routes) With(middleware ...echo.MiddlewareFunc) Routes {
	return Routes{group: r.group, middleware: append(slices.Clip(r.middleware), middleware...)}
}

// GET registers a GET route.
func (r Routes) GET(path string, h echo.HandlerFunc) { r.group.GET(path, h, r.middleware...) }

// POST registers a POST route.
func (r Routes) POST(path string, h echo.HandlerFunc) { r.group.POST(path, h, r.middleware...) }

// PUT registers a PUT route.
func (r Routes) PUT(path string, h echo.HandlerFunc) { r.group.PUT(path, h, r.middleware...) }

// PATCH registers a PATCH route.
func (r Routes) PATCH(path string, h echo.HandlerFunc) { r.group.PATCH(path, h, r.middleware...) }

// Add registers a route of any method.
func (r Routes) Add(method, path string, h echo.HandlerFunc) {
	r.group.Add(method, path, h, r.middleware...)
}

// DELETE registers a DELETE route.
func (r Routes) DELETE(path string, h echo.HandlerFunc) { r.group.DELETE(path, h, r.middleware...) }
