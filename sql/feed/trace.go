package feed

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TraceParent is the W3C trace context (a traceparent header value) of the
// span ctx carries, "" when it carries none: what a change records of the
// request that made it, so the work the change causes later, on any
// instance, is tied to that request. It only reads ctx: tracing, when the
// server has it on, is set up and exported outside the data layer.
func TraceParent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String()
}

// SpanContext is the remote span context a TraceParent value names; not
// valid for "" or a malformed value.
func SpanContext(traceparent string) trace.SpanContext {
	if traceparent == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceparent})
	return trace.SpanContextFromContext(ctx)
}
