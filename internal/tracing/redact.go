package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// dropped are attributes the instrumentations credo uses set, which may name a user:
// a URL's path and query hold scopes (/v1/scopes/{scope}/...), a webhook's URL may hold
// a token. A request's route template (http.route) says what the path did.
var dropped = map[attribute.Key]bool{
	semconv.URLPathKey:  true,
	semconv.URLQueryKey: true,
	semconv.URLFullKey:  true,
	// An error's message may quote a transcript, a model's answer or a scope; its type
	// stays.
	semconv.ExceptionMessageKey: true,
}

// redacting exports spans without what may name a user: the dropped attributes (also
// those of events), the scope unless recordScope, and the status messages of other
// instrumentations' spans (otelriver and otelpgx set them to an error's text; credo's
// own are kinds, see End).
type redacting struct {
	next        sdktrace.SpanExporter
	recordScope bool
}

func (r redacting) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	out := make([]sdktrace.ReadOnlySpan, len(spans))
	for i, s := range spans {
		out[i] = redacted{ReadOnlySpan: s, recordScope: r.recordScope}
	}
	return r.next.ExportSpans(ctx, out)
}

func (r redacting) Shutdown(ctx context.Context) error { return r.next.Shutdown(ctx) }

// redacted is a span as exported.
type redacted struct {
	sdktrace.ReadOnlySpan
	recordScope bool
}

func (s redacted) keep(kv attribute.KeyValue) bool {
	return !dropped[kv.Key] && (s.recordScope || kv.Key != ScopeKey)
}

func (s redacted) filter(attrs []attribute.KeyValue) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(attrs))
	for _, kv := range attrs {
		if s.keep(kv) {
			out = append(out, kv)
		}
	}
	return out
}

func (s redacted) Attributes() []attribute.KeyValue { return s.filter(s.ReadOnlySpan.Attributes()) }

func (s redacted) Events() []sdktrace.Event {
	events := s.ReadOnlySpan.Events()
	out := make([]sdktrace.Event, len(events))
	for i, e := range events {
		e.Attributes = s.filter(e.Attributes)
		out[i] = e
	}
	return out
}

func (s redacted) Status() sdktrace.Status {
	st := s.ReadOnlySpan.Status()
	if s.InstrumentationScope().Name != tracerName {
		st.Description = ""
	}
	return st
}
