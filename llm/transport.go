package llm

import (
	"net/http"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// maxIdleConnsPerHost is how many idle connections to one model server a provider keeps
// for its next calls. Go's default, 2, is for clients that call a host now and then; a
// worker makes one call per worker at a time, and with 50 workers it opened a new
// connection for 29% of its calls (a TCP and TLS handshake each, to a hosted model).
const maxIdleConnsPerHost = 100

// newTransport is http.DefaultTransport with room for every worker's connection.
func newTransport() http.RoundTripper {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	t = t.Clone()
	t.MaxIdleConnsPerHost = maxIdleConnsPerHost
	t.MaxIdleConns = max(t.MaxIdleConns, maxIdleConnsPerHost)
	return t
}

// withTraceContext is req with the W3C trace context (traceparent) of the span in its
// context, so that a model server that traces continues the caller's trace; req itself
// when there is none (tracing off costs a context lookup).
func withTraceContext(req *http.Request) *http.Request {
	ctx := req.Context()
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return req
	}
	req = req.Clone(ctx) // a RoundTripper must not change its request
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	return req
}

// Server is where a provider's model server is, for traces (server.address,
// server.port): the host and port of its base URL, the scheme's port when it names none.
func serverOf(u *url.URL) (string, int) {
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		port = 80
		if u.Scheme == "https" {
			port = 443
		}
	}
	return u.Hostname(), port
}
