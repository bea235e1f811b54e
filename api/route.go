package api

import "net/http"

// Route is the pattern of the API's own mux that serves r ("POST /v1/transcripts",
// "/mcp"), "" when none: what names a request's span (tracing.Router), never its path,
// which holds scopes.
func (s *Server) Route(r *http.Request) string {
	_, pattern := s.mux.Handler(r)
	return pattern
}
