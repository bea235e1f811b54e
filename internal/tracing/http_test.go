package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/credohq/credo/internal/tracing"
	"github.com/credohq/credo/internal/tracing/tracingtest"
)

// routed is a handler with a mux of its own, as the API and the inspector are.
type routed struct{ mux *http.ServeMux }

func (h routed) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func (h routed) Route(r *http.Request) string {
	_, pattern := h.mux.Handler(r)
	return pattern
}

// A request's span is named by its route template, which the handler it reaches names,
// continues its caller's trace, and records no path; scrapes and probes are not traced.
func TestHandlerNamesRoutes(t *testing.T) {
	t.Parallel()
	rec := tracingtest.New(t, false)
	inner := http.NewServeMux()
	served := make(chan trace.SpanContext, 1)
	inner.HandleFunc("GET /v1/scopes/{scope}/beliefs", func(w http.ResponseWriter, r *http.Request) {
		served <- trace.SpanContextFromContext(r.Context())
		io.WriteString(w, "[]")
	})
	mux := http.NewServeMux()
	mux.Handle("/v1/", routed{inner})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "# metrics") })
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	srv := httptest.NewServer(rec.Handler(mux))
	defer srv.Close()

	ctx, caller := rec.Root(context.Background(), "caller")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/scopes/alice/beliefs?as_of=2026-01-01", nil)
	require.NoError(t, err)
	req.Header.Set("Traceparent", tracing.Carry(ctx))
	get(t, req)
	for _, path := range []string{"/metrics", "/healthz", "/v1/nowhere"} {
		r, err := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		get(t, r)
	}
	caller.End()

	spans := rec.Spans(t)
	s := spans.One(t, "GET /v1/scopes/{scope}/beliefs")
	require.Equal(t, caller.SpanContext().TraceID(), s.SpanContext.TraceID(), "the caller's trace goes on")
	require.Equal(t, caller.SpanContext().SpanID(), s.Parent.SpanID())
	require.Equal(t, s.SpanContext.SpanID(), (<-served).SpanID(), "the handler runs under the request's span")
	route, _ := tracingtest.Attr(s, semconv.HTTPRouteKey)
	require.Equal(t, "/v1/scopes/{scope}/beliefs", route.AsString())
	require.NotContains(t, strings.Join(tracingtest.Texts(s), " "), "alice")
	require.Empty(t, spans.Named("GET /metrics"))
	require.Empty(t, spans.Named("GET /healthz"))
	require.Len(t, spans.Named("GET /v1/"), 1, "a path no route of the API takes is named by its prefix: %v", spans.Names())
	require.Len(t, spans, 3, "%v", spans.Names())
}

func get(t *testing.T, req *http.Request) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	require.NoError(t, res.Body.Close())
}

// A webhook's delivery is a client span of the delivering span, and its receiver gets
// the trace in its traceparent header; with no span, the request goes as it is.
func TestTransport(t *testing.T) {
	t.Parallel()
	rec := tracingtest.New(t, false)
	got := make(chan string, 2)
	hook := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Traceparent")
	}))
	defer hook.Close()
	client := &http.Client{Transport: tracing.Transport(nil)}
	ctx, deliver := rec.Root(context.Background(), "webhook.deliver")
	for _, c := range []context.Context{ctx, context.Background()} {
		req, err := http.NewRequestWithContext(c, http.MethodPost, hook.URL+"/hook?token=s3cret", strings.NewReader("{}"))
		require.NoError(t, err)
		res, err := client.Do(req)
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
	}
	deliver.End()
	spans := rec.Spans(t)
	post := spans.One(t, "HTTP POST")
	require.Equal(t, deliver.SpanContext().SpanID(), post.Parent.SpanID())
	require.Equal(t, "00-"+post.SpanContext.TraceID().String()+"-"+post.SpanContext.SpanID().String()+"-01", <-got)
	require.Empty(t, <-got, "no span, no trace to pass on")
	require.NotContains(t, strings.Join(tracingtest.Texts(post), " "), "s3cret")
}
