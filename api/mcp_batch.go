package api

import (
	"bytes"
	"io"
	"net/http"
)

// noBatches refuses JSON-RPC batches on the MCP endpoint: a batch of a thousand calls
// would count as one request against the key's rate limit. MCP (2025-06-18) has no
// batches; one call per request keeps every call counted.
func (s *Server) noBatches(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		// The body is bounded as the SDK bounds it; one more byte tells it is too large.
		body, err := io.ReadAll(io.LimitReader(r.Body, s.maxBody+2))
		if err != nil {
			writeError(w, newError(http.StatusBadRequest, CodeInvalidRequest, "the request body could not be read"))
			return
		}
		if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
			writeError(w, invalid("JSON-RPC batches are not accepted: send one call per request (each call counts against the key's rate limit)"))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}
