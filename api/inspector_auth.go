package api

import "net/http"

// Admit is who r acts for, by the API's own rules, within the key's rate limit: its
// bearer key; without one, when no key exists, every scope and right where the address
// allows it (loopback, only to requests naming localhost or a loopback address; or
// behind a gate). The web inspector, served on the API's listener, admits its requests
// with it, so that a key sees and may do exactly the same there as in the API.
//
// A refusal is an *Error whose Status and Code say why (401, 403, 429, 503); any other
// error is the database's.
func (s *Server) Admit(r *http.Request) (*Principal, error) {
	p, err := s.authenticate(r)
	if err != nil {
		return nil, err
	}
	if e := s.limit(p); e != nil {
		return nil, e
	}
	return p, nil
}

// Message is what the error says, for people.
func (e *Error) Message() string { return e.Body.Message }
