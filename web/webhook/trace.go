package webhook

import (
	"context"
	"net/http"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
)

// deliverSpan starts the span of one attempt of a queued delivery: a child
// of the request whose change queued it, however much later it is sent (and
// linked to it, for backends that show links rather than late children); a
// trace of its own for a change no traced request made.
func deliverSpan(ctx context.Context, tracer trace.Tracer, d webhooks.WebhookSend) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("bunting.webhook.id", d.WebhookID.String()),
		attribute.String("bunting.webhook.delivery", d.DeliveryID.String()),
		attribute.String("bunting.webhook.events", d.Events),
		attribute.Int("bunting.webhook.attempt", d.Attempt))}
	if u, err := url.Parse(d.URL); err == nil {
		// The host only: a receiver's path or query may hold a token.
		opts = append(opts, trace.WithAttributes(attribute.String("server.address", u.Hostname())))
	}
	if sc := feed.SpanContext(d.Trace); sc.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	return tracer.Start(ctx, "webhook.deliver", opts...)
}

// recordAttempt notes on span how the attempt went.
func recordAttempt(span trace.Span, at webhooks.WebhookAttempt) {
	if !span.IsRecording() {
		return
	}
	if at.StatusCode != 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", at.StatusCode))
	}
	if !at.Succeeded {
		span.SetStatus(codes.Error, "delivery failed")
	}
}

// injectTrace sends the receiver the trace context of the span ctx carries
// (the delivery's, or the request's for one sent by hand), unless the
// webhook sets a traceparent header of its own; nothing when not traced.
func injectTrace(ctx context.Context, h http.Header) {
	if h.Get("traceparent") != "" || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
}
