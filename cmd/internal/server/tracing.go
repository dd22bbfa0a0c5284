package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is the OpenTelemetry tracing the standard OTEL_ variables ask for
// (README.md beside this file, "Tracing"). The zero value is tracing off.
type Tracing struct {
	// On is true when an OTLP endpoint is configured (or the otlp exporter
	// named) and the SDK is not disabled.
	On bool
	// Protocol is "http/protobuf" or "grpc".
	Protocol string
	// Endpoint is the URL the exporter sends spans to, the signal's path
	// included for http/protobuf; "" for the exporter's default.
	Endpoint string
	// ServiceName overrides service.name; "" keeps OTEL_RESOURCE_ATTRIBUTES'
	// or "bunting".
	ServiceName string
	// Sampler and SamplerArg are OTEL_TRACES_SAMPLER and its argument.
	Sampler    string
	SamplerArg float64
}

// loadTracing reads the OTEL_ variables that say whether traces are sent,
// where, how and how many; it returns every problem it finds. The
// exporter's other settings (headers, timeout, certificates, compression)
// and OTEL_RESOURCE_ATTRIBUTES are read by the OpenTelemetry SDK itself,
// from the process's environment.
func loadTracing(getenv func(string) string) (Tracing, []error) {
	env := func(name string) string { return strings.TrimSpace(getenv(name)) }
	var problems []error
	bad := func(name, format string, args ...any) {
		problems = append(problems, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
	}
	t := Tracing{Protocol: "http/protobuf", ServiceName: env("OTEL_SERVICE_NAME"), Sampler: "parentbased_always_on", SamplerArg: 1}
	exporter := strings.ToLower(env("OTEL_TRACES_EXPORTER"))
	switch exporter {
	case "", "otlp", "none":
	default:
		bad("OTEL_TRACES_EXPORTER", "%q is not otlp or none (Bunting sends traces over OTLP only)", exporter)
	}
	base, signal := env("OTEL_EXPORTER_OTLP_ENDPOINT"), env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	disabled := strings.EqualFold(env("OTEL_SDK_DISABLED"), "true")
	t.On = (base != "" || signal != "" || exporter == "otlp") && exporter != "none" && !disabled

	protocol := env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	name := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	if protocol == "" {
		protocol, name = env("OTEL_EXPORTER_OTLP_PROTOCOL"), "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	switch protocol {
	case "":
	case "http/protobuf", "grpc":
		t.Protocol = protocol
	default:
		bad(name, "%q is not http/protobuf or grpc", protocol)
	}
	// The signal's own endpoint is used as it is; the base endpoint gets
	// the signal's path under it over HTTP (the OTLP exporter specification).
	switch {
	case signal != "":
		if !isEndpoint(signal) {
			bad("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "%q is not an http or https URL", signal)
		}
		t.Endpoint = signal
	case base != "":
		if !isEndpoint(base) {
			bad("OTEL_EXPORTER_OTLP_ENDPOINT", "%q is not an http or https URL", base)
		}
		t.Endpoint = base
		if t.Protocol == "http/protobuf" {
			t.Endpoint = strings.TrimSuffix(base, "/") + "/v1/traces"
		}
	}

	if s := strings.ToLower(env("OTEL_TRACES_SAMPLER")); s != "" {
		switch s {
		case "always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio":
			t.Sampler = s
		default:
			bad("OTEL_TRACES_SAMPLER", "%q is not always_on, always_off, traceidratio or one of them parentbased_", s)
		}
	}
	if arg := env("OTEL_TRACES_SAMPLER_ARG"); arg != "" && strings.HasSuffix(t.Sampler, "traceidratio") {
		ratio, err := strconv.ParseFloat(arg, 64)
		if err != nil || ratio < 0 || ratio > 1 {
			bad("OTEL_TRACES_SAMPLER_ARG", "%q is not a ratio from 0 to 1", arg)
		}
		t.SamplerArg = ratio
	}
	return t, problems
}

func isEndpoint(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// sampler is t's sampler: parent-based samplers follow the sampling
// decision of an incoming traceparent.
func (t Tracing) sampler() sdktrace.Sampler {
	var root sdktrace.Sampler
	switch strings.TrimPrefix(t.Sampler, "parentbased_") {
	case "always_off":
		root = sdktrace.NeverSample()
	case "traceidratio":
		root = sdktrace.TraceIDRatioBased(t.SamplerArg)
	default:
		root = sdktrace.AlwaysSample()
	}
	if strings.HasPrefix(t.Sampler, "parentbased_") {
		return sdktrace.ParentBased(root)
	}
	return root
}

// StartTracing returns the tracer provider t asks for and the function that
// sends the spans still buffered and stops it; nil and a no-op when tracing
// is off, so nothing is traced, nor any span made, and requests pay nothing.
func StartTracing(ctx context.Context, t Tracing, log *slog.Logger) (trace.TracerProvider, func(context.Context) error, error) {
	if !t.On {
		return nil, func(context.Context) error { return nil }, nil
	}
	var exporter sdktrace.SpanExporter
	var err error
	if t.Protocol == "grpc" {
		var opts []otlptracegrpc.Option
		if t.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(t.Endpoint))
		}
		exporter, err = otlptracegrpc.New(ctx, opts...)
	} else {
		var opts []otlptracehttp.Option
		if t.Endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(t.Endpoint))
		}
		exporter, err = otlptracehttp.New(ctx, opts...)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: the OTLP exporter: %w", err)
	}
	// service.name is "bunting" unless OTEL_RESOURCE_ATTRIBUTES names
	// another, and OTEL_SERVICE_NAME overrides both: later options win.
	opts := []resource.Option{resource.WithAttributes(attribute.String("service.name", "bunting")),
		resource.WithFromEnv(), resource.WithTelemetrySDK()}
	if t.ServiceName != "" {
		opts = append(opts, resource.WithAttributes(attribute.String("service.name", t.ServiceName)))
	}
	res, err := resource.New(ctx, opts...)
	if err != nil {
		// A malformed attribute is left out; the rest still describe us.
		log.Warn("tracing: some resource attributes were left out", "err", err)
	}
	// The SDK reports failed exports (a collector down) through its one
	// process-wide handler, which would print them with the log package.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing: sending spans failed", "err", err) }))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res), sdktrace.WithSampler(t.sampler()))
	log.Info("tracing on", "protocol", t.Protocol, "sampler", t.Sampler)
	return tp, tp.Shutdown, nil
}
