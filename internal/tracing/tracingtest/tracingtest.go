// Package tracingtest records credo's spans for tests: in memory, through the same
// redaction as an export (Recorder), or over the wire as an OTLP/HTTP collector would
// receive them (Receiver).
package tracingtest

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/credohq/credo/internal/tracing"
)

// Recorder is tracing on, exporting to memory.
type Recorder struct {
	*tracing.Tracing
	exp *tracetest.InMemoryExporter
}

// New returns tracing on, exporting to memory, with the scope recorded when
// recordScope; it stops when the test ends.
func New(tb testing.TB, recordScope bool) *Recorder {
	tb.Helper()
	exp := tracetest.NewInMemoryExporter()
	tr, err := tracing.New(context.Background(), tracing.Config{Exporter: exp, RecordScope: recordScope})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return &Recorder{Tracing: tr, exp: exp}
}

// Spans are the spans ended so far, as exported.
func (r *Recorder) Spans(tb testing.TB) Spans {
	tb.Helper()
	require.NoError(tb, r.Flush(context.Background()))
	return Spans(r.exp.GetSpans())
}

// Spans are exported spans.
type Spans tracetest.SpanStubs

// Named are the spans called name, in the order they ended.
func (s Spans) Named(name string) Spans {
	var out Spans
	for _, sp := range s {
		if sp.Name == name {
			out = append(out, sp)
		}
	}
	return out
}

// One is the only span called name; it fails the test when there is not exactly one.
func (s Spans) One(tb testing.TB, name string) tracetest.SpanStub {
	tb.Helper()
	named := s.Named(name)
	require.Len(tb, named, 1, "spans named %q among %v", name, s.Names())
	return named[0]
}

// Names are the spans' names.
func (s Spans) Names() []string {
	names := make([]string, len(s))
	for i, sp := range s {
		names[i] = sp.Name
	}
	return names
}

// Attr is the value of key on span, and whether it has it.
func Attr(span tracetest.SpanStub, key attribute.Key) (attribute.Value, bool) {
	i := slices.IndexFunc(span.Attributes, func(kv attribute.KeyValue) bool { return kv.Key == key })
	if i < 0 {
		return attribute.Value{}, false
	}
	return span.Attributes[i].Value, true
}

// Texts are every string a span exports besides its ids: its name, status message,
// attribute values and those of its events and links, for tests that look for what
// must not be there.
func Texts(span tracetest.SpanStub) []string {
	out := []string{span.Name, span.Status.Description}
	add := func(attrs []attribute.KeyValue) {
		for _, kv := range attrs {
			out = append(out, string(kv.Key), kv.Value.String())
		}
	}
	add(span.Attributes)
	for _, e := range span.Events {
		out = append(out, e.Name)
		add(e.Attributes)
	}
	for _, l := range span.Links {
		add(l.Attributes)
	}
	if span.Resource != nil {
		add(span.Resource.Attributes())
	}
	return out
}
