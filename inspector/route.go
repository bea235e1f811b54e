package inspector

import "net/http"

// Route is the pattern of the inspector's mux that serves r ("GET /ui/scopes/{scope}"),
// "" when none: what names a request's span (tracing.Router), never its path, which
// holds scopes.
func (s *Server) Route(r *http.Request) string {
	_, pattern := s.mux.Handler(r)
	return pattern
}
