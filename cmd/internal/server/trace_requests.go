package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// instrumentation names the tracers Bunting's own code makes spans with.
const instrumentation = "github.com/bunting-flags/bunting"

// traceRequests makes a server span of each request, named by its method
// and route pattern ("PATCH /api/v1/envs/:envId/feature-flags/:key"), under
// the caller's span when the request carries a W3C traceparent. It records
// the route, never the path or query, which may carry keys, and only once
// the error handler has answered, so the status is the one sent. Health
// checks are not traced.
func traceRequests(tp trace.TracerProvider) echo.MiddlewareFunc {
	tracer := tp.Tracer(instrumentation)
	propagator := propagation.TraceContext{}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			route := c.Path()
			if strings.HasPrefix(route, "/health/") {
				return next(c) // probes, every few seconds: noise
			}
			name := r.Method
			if route != "" {
				name += " " + route
			}
			ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
			ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("http.route", route)))
			defer span.End()
			c.SetRequest(r.WithContext(ctx))
			err := next(c)
			if err != nil {
				// Answered here, inside the span, so the span has the status
				// sent; the error still goes out, and the error handler,
				// called again, sees the answer committed and leaves it (as
				// after the request logger, which answers errors too).
				c.Error(err)
			}
			c.SetRequest(r)
			status := c.Response().Status
			span.SetAttributes(attribute.Int("http.response.status_code", status))
			if status >= http.StatusInternalServerError {
				span.SetStatus(codes.Error, http.StatusText(status))
			}
			return err
		}
	}
}
