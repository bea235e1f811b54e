package inspector

import (
	"errors"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/credohq/credo/api"
)

// cookieName holds the session id of a browser that logged in: random, stored only
// hashed, expiring, and ended with its key (see api.Server.StartSession). The key itself
// never leaves the login form. Every request is checked against the session's key, so a
// revoked key is refused at its next page, as in the API.
const cookieName = "credo_session"

// page is a handler acting for an admitted principal.
type page func(w http.ResponseWriter, r *http.Request, p *api.Principal) error

// get serves a page to requests admitted with right.
//
//nolint:unparam // every page reads today, but the route table names each page's right
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
		if err := formBody(r); err != nil {
			s.fail(w, r, p, err)
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

// formBody refuses a POST whose body is not a form ParseForm reads (text/plain, which
// any page of the origin can send without a CORS preflight, or multipart): read as a
// form without fields, it would revert with its note dropped. 415, as the API answers a
// body it does not read.
func formBody(r *http.Request) error {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		return &httpError{status: http.StatusUnsupportedMediaType, title: "Unsupported form",
			msg: "Forms are accepted as application/x-www-form-urlencoded only, as the inspector's pages send them."}
	}
	return nil
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

// session is the session id of r's cookie, or "".
func session(r *http.Request) string {
	if c, err := r.Cookie(cookieName); err == nil {
		return c.Value
	}
	return ""
}

// admit finds who r acts for: its bearer header, else its cookie's session, else the
// API's keyless mode. When it is nobody it answers, sending a browser to the login page,
// and reports false.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) (*api.Principal, bool) {
	var (
		p   *api.Principal
		err error
	)
	fromCookie := r.Header.Get("Authorization") == "" && session(r) != ""
	if fromCookie {
		p, err = s.gate.AdmitSession(r, session(r))
	} else {
		p, err = s.gate.Admit(r)
	}
	if err == nil {
		return p, true
	}
	var e *api.Error
	switch {
	case !errors.As(err, &e):
		s.fail(w, r, nil, err)
	case e.Status() == http.StatusUnauthorized && r.Header.Get("Authorization") == "":
		if fromCookie {
			s.clearCookie(w, r, cookieName)
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
// never sends the browser elsewhere. The path is cleaned as a browser resolves it
// ("/ui/../..//evil.com" is "/evil.com", and so is "/ui/%2e%2e/..//evil.com"), escaped
// and unescaped, and both must stay under Prefix; the cleaned path is returned.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return Prefix
	}
	escaped := cleanPath(strings.NewReplacer("%2e", ".", "%2E", ".").Replace(u.EscapedPath()))
	for _, p := range []string{cleanPath(u.Path), escaped} {
		if !strings.HasPrefix(p, Prefix) || strings.HasPrefix(p, "//") {
			return Prefix
		}
	}
	if u.RawQuery != "" {
		return escaped + "?" + u.RawQuery
	}
	return escaped
}

// cleanPath is p with its dot segments resolved and repeated slashes merged, keeping a
// final slash.
func cleanPath(p string) string {
	clean := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	return clean
}

// legacyCookieName is the cookie of earlier versions, which held the API key itself: a
// login or logout clears it, so a browser stops sending the key.
const legacyCookieName = "credo_key"

func (s *Server) setCookie(w http.ResponseWriter, r *http.Request, sess *api.Session) {
	// Secure whenever the browser reaches the worker over https; a worker served over
	// plain http (a laptop's localhost) needs its cookie all the same.
	//nolint:gosec // G124: Secure is set as said above
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: sess.Token, Path: Prefix, Expires: sess.ExpiresAt,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: s.secureCookie(r)})
	s.clearCookie(w, r, legacyCookieName)
}

// clearCookie makes the browser drop the cookie name.
func (s *Server) clearCookie(w http.ResponseWriter, r *http.Request, name string) {
	//nolint:gosec // G124: Secure as in setCookie
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: Prefix, MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.secureCookie(r)})
}

// secureCookie says whether the cookie is for https only: browsers reach the worker over
// https (PUBLIC_URL), or this request came over TLS.
func (s *Server) secureCookie(r *http.Request) bool { return s.secure || r.TLS != nil }
