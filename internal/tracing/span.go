package tracing

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5/pgconn"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/credohq/credo/llm"
)

// Attributes of credo's spans. None holds text a user wrote or a model answered.
const (
	// ScopeKey is the scope a span works on: a user id, exported only with
	// OTEL_CREDO_RECORD_SCOPE.
	ScopeKey      = attribute.Key("credo.scope")
	EpisodeKey    = attribute.Key("credo.episode.id")
	AttemptKey    = attribute.Key("credo.episode.attempt")
	CountKey      = attribute.Key("credo.count")
	CandidatesKey = attribute.Key("credo.candidates")
	FactsKey      = attribute.Key("credo.facts")
	PromptKey     = attribute.Key("credo.prompt.chars")
)

// Start starts span name as a child of the span in ctx, with that span's provider. With
// no recording span in ctx (tracing off, or a trace not sampled) it starts nothing and
// returns ctx with a no-op span: a stage costs a context lookup then.
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, noop.Span{}
	}
	// A copy, so that attrs does not escape: off, the caller's attributes stay on its stack.
	return child(ctx, name, trace.WithAttributes(slices.Clone(attrs)...))
}

func child(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, noop.Span{}
	}
	return parent.TracerProvider().Tracer(tracerName).Start(ctx, name, opts...) //nolint:spancheck // the caller ends it
}

// StartFrom starts span name for work that began elsewhere: an episode, worked by its
// scope's job, whose enqueue is carried (Carry). The span belongs to the enqueue's trace
// (its parent is the enqueue), linked to the job's span, when the job runs in another
// trace: the job that serves a scope's backlog was enqueued by the first of its
// transcripts only. In the job's own trace, or with nothing carried, it is the job
// span's child. With no span in ctx (tracing off) it starts nothing.
func StartFrom(ctx context.Context, name, carried string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	job := trace.SpanFromContext(ctx)
	jsc := job.SpanContext()
	if !jsc.IsValid() {
		return ctx, noop.Span{}
	}
	tracer := job.TracerProvider().Tracer(tracerName)
	opts := []trace.SpanStartOption{trace.WithAttributes(slices.Clone(attrs)...)}
	if from := parse(carried); from.IsValid() && from.TraceID() != jsc.TraceID() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, from)
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: jsc, Attributes: []attribute.KeyValue{linkJob}}))
	}
	return tracer.Start(ctx, name, opts...) //nolint:spancheck // the caller ends it
}

// linkJob marks the link from an episode's span to the job that worked it.
var linkJob = attribute.String("credo.link", "job")

// Carry is the W3C traceparent of the span in ctx, for work that continues it later
// (an episode's extraction); "" when there is none.
func Carry(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier.Get("traceparent")
}

// parse reads a carried traceparent; the zero SpanContext when there is none or it is
// not one.
func parse(carried string) trace.SpanContext {
	if carried == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": carried})
	return trace.SpanContextFromContext(ctx)
}

// SetScope records the scope a span works on: exported only with
// OTEL_CREDO_RECORD_SCOPE (redact.go drops it otherwise).
func SetScope(span trace.Span, scope string) {
	if span.IsRecording() {
		span.SetAttributes(ScopeKey.String(scope))
	}
}

// End ends span, marking it failed when err is set: its kind (error.type, and the
// status), never its message, which may quote a transcript or a model's answer.
func End(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		kind := ErrorKind(err)
		span.SetAttributes(semconv.ErrorTypeKey.String(kind))
		span.SetStatus(codes.Error, kind)
	}
	span.End()
}

// ErrorKind names err without its text, by a low-cardinality code (error.type): the
// database's failures by SQLSTATE, the model's by code (llm.Code: a status, malformed
// output, a cancellation, a timeout), an error that names its own type by it; "error"
// otherwise.
func ErrorKind(err error) string {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return "sqlstate " + pgErr.Code
	}
	if k := llm.Code(err); k != "" {
		return k
	}
	if t, ok := errors.AsType[typed](err); ok {
		return t.ErrorType()
	}
	return "error"
}

// typed is an error that names its own kind (webhook.DeliveryError).
type typed interface {
	error
	ErrorType() string
}
