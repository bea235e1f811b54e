package inspector

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/credohq/credo/api"
)

// cookieName holds the key of a browser that logged in. The key itself, not a session
// of its own: every request is checked against the key's row, so a revoked key is
// refused at its next page, as in the API.
const cookieName = "credo_key"

// page is a handler acting for an admitted principal.
type page func(w http.ResponseWriter, r *http.Request, p *api.Principal) error

// get serves a page to requests admitted with right.
func (s *Server) get(right api.Right, h page) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := s.admit(w, r)
		if !ok {
			return
		}
		if !p.Can(right) {
			s.fail(w, r, p, forbiddenRight(right))
			return
		}
		if err := h(w, r, p); err != nil {
			s.fail(w, r, p, err)
		}
	})
}

// post serves a form posted from one of the inspector's own pages, by a request
// admitted with right ("": the handler checks the right itself).
func (s *Server) post(right api.Right, h page) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.sameOrigin(r); err != nil {
			s.fail(w, r, nil, err)
			return
		}
		p, ok := s.admit(w, r)
		if !ok {
			return
		}
		if right != "" && !p.Can(right) {
			s.fail(w, r, p, forbiddenRight(right))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			s.fail(w, r, p, badRequest("The form could not be read."))
			return
		}
		if err := h(w, r, p); err != nil {
			s.fail(w, r, p, err)
		}
	})
}

// sameOrigin refuses a POST that a browser sent from another site (cross-site request
// forgery), as the API does, and also one that says nothing of where it comes from:
// browsers always send Origin with a form's POST, so only a forged request lacks it.
func (s *Server) sameOrigin(r *http.Request) error {
	refused := &httpError{status: http.StatusForbidden, title: "Request refused",
		msg: "Forms are accepted only from the inspector's own pages."}
	if err := s.csrf.Check(r); err != nil {
		return refused
	}
	if r.Header.Get("Origin") == "" && r.Header.Get("Sec-Fetch-Site") == "" {
		return refused
	}
	return nil
}

// withKey is r carrying token as a bearer key, the way the API reads it.
func withKey(r *http.Request, token string) *http.Request {
	c := r.Clone(r.Context())
	c.Header.Set("Authorization", "Bearer "+token)
	return c
}

// admit finds who r acts for: its bearer header, else its cookie's key, else the API's
// keyless mode. When it is nobody it answers, sending a browser to the login page, and
// reports false.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) (*api.Principal, bool) {
	req, fromCookie := r, false
	if r.Header.Get("Authorization") == "" {
		if c, err := r.Cookie(cookieName); err == nil && c.Value != "" {
			req, fromCookie = withKey(r, c.Value), true
		}
	}
	p, err := s.gate.Admit(req)
	if err == nil {
		return p, true
	}
	var e *api.Error
	switch {
	case !errors.As(err, &e):
		s.fail(w, r, nil, err)
	case e.Status() == http.StatusUnauthorized && r.Header.Get("Authorization") == "":
		if fromCookie {
			clearCookie(w, r)
		}
		http.Redirect(w, r, loginURL(r, fromCookie), http.StatusSeeOther)
	default:
		s.fail(w, r, nil, &httpError{status: e.Status(), title: http.StatusText(e.Status()), msg: e.Message()})
	}
	return nil, false
}

// loginURL is the login page, with the page to go back to after it when that was a
// page one can go back to.
func loginURL(r *http.Request, expired bool) string {
	q := url.Values{}
	if r.Method == http.MethodGet && r.URL.Path != Prefix {
		q.Set("next", r.URL.RequestURI())
	}
	if expired {
		q.Set("expired", "1")
	}
	if len(q) == 0 {
		return Prefix + "login"
	}
	return Prefix + "login?" + q.Encode()
}

// safeNext is next when it is a page of the inspector, else the scopes page: a login
// never sends the browser elsewhere.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, Prefix) ||
		strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return Prefix
	}
	return next
}

func setCookie(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: token, Path: Prefix, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

func clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: Prefix, MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}
