package llm

import "net/http"

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
