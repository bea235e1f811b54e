// Package tracing is credo's OpenTelemetry tracing: configured by the standard OTEL_*
// variables only, exported over OTLP (HTTP or gRPC), and off when they are unset.
//
// Off, nothing is installed: the HTTP handler, the River client, the database pool and
// the model providers are the same values as without this package, and the spans the
// pipeline starts (Start) cost a context lookup, as no span is ever in a context.
//
// On, the roots of traces are HTTP requests (Handler), River jobs (RiverMiddleware) and
// CLI commands (Root); everything under them finds its tracer through the span in its
// context (Start), the way otelhttp's own client does, so the pipeline's packages need no
// configuration and tests can trace in parallel, each with its own provider. The trace
// context travels to a job in its River metadata, and to each episode in its row
// (Carry, StartFrom), since one extraction job works a whole scope's backlog.
//
// What is exported names no user: no transcript text, statement, key or scope, and no
// error message (which may quote either); the scope only with OTEL_CREDO_RECORD_SCOPE
// (see redact.go).
package tracing

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// tracerName is the instrumentation scope of credo's own spans.
const tracerName = "github.com/credohq/credo"

// Tracing is a process's tracer provider: the SDK's when tracing is on, a no-op one
// when it is off. A nil *Tracing is off.
type Tracing struct {
	provider trace.TracerProvider
	// sdk is the provider to flush and shut down; nil when off.
	sdk *sdktrace.TracerProvider
}

// New starts tracing as cfg says. Off, it returns a Tracing with a no-op provider.
func New(ctx context.Context, cfg Config) (*Tracing, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if !cfg.Enabled {
		return &Tracing{provider: noop.NewTracerProvider()}, nil
	}
	exporter := cfg.Exporter
	if exporter == nil {
		var err error
		if cfg.httpJSON() {
			exporter, err = otlptracehttp.New(ctx, otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
		} else {
			exporter, err = autoexport.NewSpanExporter(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("tracing: %w", err)
		}
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(cfg.Service)),
		resource.WithTelemetrySDK(),
		// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, after the default name: they win.
		resource.WithFromEnv(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("tracing: OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	// The sampler is the SDK's, from OTEL_TRACES_SAMPLER (default: parent-based, always
	// on; validate refused an unknown one); batching from OTEL_BSP_*.
	sdk := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(redacting{next: exporter, recordScope: cfg.RecordScope}),
		sdktrace.WithResource(res),
	)
	return &Tracing{provider: sdk, sdk: sdk}, nil
}

// Enabled says whether spans are exported.
func (t *Tracing) Enabled() bool { return t != nil && t.sdk != nil }

// Provider is the tracer provider: the SDK's, or a no-op one.
func (t *Tracing) Provider() trace.TracerProvider {
	if t == nil {
		return noop.NewTracerProvider()
	}
	return t.provider
}

// Flush exports the spans ended so far.
func (t *Tracing) Flush(ctx context.Context) error {
	if !t.Enabled() {
		return nil
	}
	return t.sdk.ForceFlush(ctx)
}

// Shutdown exports the spans ended so far and stops exporting; bound ctx, so that an
// unreachable collector does not hold the process.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if !t.Enabled() {
		return nil
	}
	if err := t.sdk.Shutdown(ctx); err != nil {
		return fmt.Errorf("tracing: flush spans: %w", err)
	}
	return nil
}

// Root starts the root span of a command (a CLI run), in a new trace.
func (t *Tracing) Root(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if !t.Enabled() {
		return ctx, noop.Span{}
	}
	return t.provider.Tracer(tracerName).Start(ctx, name, trace.WithNewRoot(), trace.WithAttributes(attrs...)) //nolint:spancheck // the caller ends it
}
