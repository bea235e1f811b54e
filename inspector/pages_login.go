package inspector

import (
	"errors"
	"net/http"
	"strings"

	"github.com/credohq/credo/api"
)

type loginView struct {
	Next    string
	Problem string
	// Open: this request is served without a key (the API's keyless mode).
	Open bool
}

// loginForm shows the login form, or says that no key is needed.
func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) {
	v := loginView{Next: safeNext(r.URL.Query().Get("next"))}
	if r.URL.Query().Get("expired") != "" {
		v.Problem = "The key is no longer valid: it was revoked, or the keys changed. Log in again."
	}
	if r.Header.Get("Authorization") == "" {
		if p, err := s.gate.Admit(r); err == nil && p.KeyID == 0 {
			v.Open = true
		}
	}
	s.show(w, r, http.StatusOK, "login", frame{Title: "Log in"}, v)
}

// login checks the key of the form, as the API would, and when it is valid starts a
// session whose random id the cookie keeps. The key goes nowhere: not in a cookie, a
// URL or a log.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if err := s.sameOrigin(r); err != nil {
		s.fail(w, r, nil, err)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, nil, badRequest("The form could not be read."))
		return
	}
	v := loginView{Next: safeNext(r.PostForm.Get("next"))}
	token := strings.TrimSpace(r.PostForm.Get("key"))
	if token == "" {
		v.Problem = "Enter an API key."
		s.show(w, r, http.StatusBadRequest, "login", frame{Title: "Log in"}, v)
		return
	}
	p, err := s.gate.Admit(withKey(r, token))
	var e *api.Error
	switch {
	case err == nil && p.KeyID != 0:
		// A login from a browser that still holds a session ends that one: one session
		// per browser.
		if old := session(r); old != "" {
			if err := s.gate.EndSession(r.Context(), old); err != nil {
				s.fail(w, r, nil, err)
				return
			}
		}
		sess, err := s.gate.StartSession(r.Context(), p, s.sessionTTL)
		if err != nil {
			s.fail(w, r, nil, err)
			return
		}
		s.setCookie(w, r, sess)
		http.Redirect(w, r, v.Next, http.StatusSeeOther)
	case err == nil:
		s.fail(w, r, nil, errors.New("inspector: a bearer key was admitted without a key id"))
	case errors.As(err, &e) && e.Status() == http.StatusUnauthorized:
		v.Problem = "That key is not valid, or it was revoked."
		s.show(w, r, http.StatusUnauthorized, "login", frame{Title: "Log in"}, v)
	case errors.As(err, &e):
		s.fail(w, r, nil, &httpError{status: e.Status(), title: http.StatusText(e.Status()), msg: e.Message()})
	default:
		s.fail(w, r, nil, err)
	}
}

// logout ends the browser's session: its id is no longer admitted, whoever holds it.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if err := s.sameOrigin(r); err != nil {
		s.fail(w, r, nil, err)
		return
	}
	if token := session(r); token != "" {
		if err := s.gate.EndSession(r.Context(), token); err != nil {
			s.fail(w, r, nil, err)
			return
		}
	}
	s.clearCookie(w, r, cookieName)
	s.clearCookie(w, r, legacyCookieName)
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
}
