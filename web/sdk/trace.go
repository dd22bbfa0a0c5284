package sdk

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/bunting-flags/bunting/sql/feed"
)

// notifySpan starts the span of one round of pushes: the changes read
// together, made by one request or several, possibly on other instances.
// It is linked to the span of each request that made one (the trace context
// the change carries), and is that request's child when there is only one,
// so the push shows in the request's trace.
func notifySpan(ctx context.Context, tracer trace.Tracer, events []feed.Event, envs int) (context.Context, trace.Span) {
	var links []trace.Link
	seen := map[string]bool{}
	for _, ev := range events {
		if ev.Trace == "" || seen[ev.Trace] {
			continue
		}
		seen[ev.Trace] = true
		if sc := feed.SpanContext(ev.Trace); sc.IsValid() {
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	if len(links) == 1 {
		ctx = trace.ContextWithRemoteSpanContext(ctx, links[0].SpanContext)
	}
	return tracer.Start(ctx, "change.notify", trace.WithSpanKind(trace.SpanKindConsumer), trace.WithLinks(links...),
		trace.WithAttributes(attribute.Int("bunting.changes", len(events)), attribute.Int("bunting.environments", envs)))
}
