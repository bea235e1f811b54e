package tracing

import (
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// Router is a handler mounted on a mux under a prefix (/v1/, /ui/) that routes on a mux
// of its own: it names the route template r takes there, "" when none.
type Router interface {
	Route(r *http.Request) string
}

// untraced are the paths scraped and probed every few seconds: a trace each would
// drown the rest.
var untraced = map[string]bool{"/metrics": true, "/healthz": true}

// Handler traces the requests mux serves, each a span named by its method and route
// template (POST /v1/transcripts, GET /v1/scopes/{scope}/beliefs), never by its path,
// which holds scopes; a handler that routes on a mux of its own (Router) names its
// template. A request's W3C traceparent header continues its caller's trace. /metrics
// and /healthz are not traced. Off, it returns mux itself.
func (t *Tracing) Handler(mux *http.ServeMux) http.Handler {
	if !t.Enabled() {
		return mux
	}
	routed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if route := Route(mux, r); route != "" {
			trace.SpanFromContext(r.Context()).SetAttributes(semconv.HTTPRoute(route))
		}
		mux.ServeHTTP(w, r)
	})
	return otelhttp.NewHandler(routed, "http",
		otelhttp.WithTracerProvider(t.provider),
		otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelhttp.WithFilter(func(r *http.Request) bool { return !untraced[r.URL.Path] }),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			if route := Route(mux, r); route != "" {
				return r.Method + " " + route
			}
			return r.Method
		}),
	)
}

// Route is the route template mux, or the Router it hands r to, serves r by: its
// pattern's path ("/v1/scopes/{scope}/beliefs"); "" when none matches.
func Route(mux *http.ServeMux, r *http.Request) string {
	h, pattern := mux.Handler(r)
	if router, ok := h.(Router); ok {
		if inner := router.Route(r); inner != "" {
			pattern = inner
		}
	}
	// A pattern is [METHOD ][HOST]/PATH: the template is its path.
	if i := strings.IndexByte(pattern, '/'); i >= 0 {
		return pattern[i:]
	}
	return ""
}

// Transport traces the requests sent through next when their context holds a recording
// span, and passes the trace on in the W3C traceparent header: for webhook deliveries,
// whose receiver can then continue the trace. Its spans record no URL (redact.go), which
// may hold a token. Start a span per delivery around it (Start(ctx, "webhook.deliver",
// ...)) to group a delivery's attempts.
func Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return otelhttp.NewTransport(next,
		otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelhttp.WithFilter(func(r *http.Request) bool { return trace.SpanFromContext(r.Context()).IsRecording() }),
	)
}
