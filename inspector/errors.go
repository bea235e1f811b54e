package inspector

import (
	"context"
	"errors"
	"net/http"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/operator"
)

// httpError is a page's answer when it cannot show what was asked: a status and what
// to tell the operator, which never depends on what exists outside the key's scopes.
type httpError struct {
	status     int
	title, msg string
	// back is where the error page links to, if anywhere.
	back string
	// suggest is what the operator may have meant (a scope, an entity), linked as "did
	// you mean" to suggestURL.
	suggest, suggestURL string
}

type errorView struct{ Title, Msg, Back, Suggest, SuggestURL string }

func (e *httpError) Error() string { return e.title + ": " + e.msg }

func notFound() error {
	return &httpError{status: http.StatusNotFound, title: "Not found",
		msg: "There is no such page, or nothing here that this key may see."}
}

// noScope is the answer for a scope memory never held, with the nearest one the key
// may see, if any: a misspelt scope would otherwise show as an empty one.
func noScope(unknown *memory.UnknownScopeError) error {
	e := &httpError{status: http.StatusNotFound, title: "No such scope", suggest: unknown.Nearest,
		msg: "Memory has never held a transcript or a belief of " + unknown.Scope + "."}
	if e.suggest != "" {
		e.suggestURL = scopeURL(e.suggest)
	}
	return e
}

// noEntity is the answer for a name no entity of a scope goes by, with the nearest name
// the scope knows: the scope is one the key sees, so the suggestion shows nothing else.
func noEntity(unknown *memory.UnknownEntityError) error {
	e := &httpError{status: http.StatusNotFound, title: "No such entity", suggest: unknown.Nearest,
		back: scopeURL(unknown.Scope),
		msg:  "No entity of " + unknown.Scope + " is called " + unknown.Name + ", by its name or an alias."}
	if e.suggest != "" {
		e.suggestURL = entityURL(unknown.Scope, e.suggest)
	}
	return e
}

func badRequest(msg string) error {
	return &httpError{status: http.StatusBadRequest, title: "Bad request", msg: msg}
}

func forbiddenRight(r api.Right) error {
	return &httpError{status: http.StatusForbidden, title: "Not allowed",
		msg: "This key does not have the " + string(r) + " right."}
}

// forbiddenScope is the answer for a scope outside the key's prefixes, whether it
// exists or not, as in the API.
func forbiddenScope() error {
	return &httpError{status: http.StatusForbidden, title: "Not allowed", msg: "This key may not access this scope."}
}

// lookupError answers an operator.Operator's lookup or operation error: an id the key
// can't see is not found, whether unknown or another tenant's; a scope outside the key's
// forbidden; input refused a 400 naming the field.
func lookupError(err error) error {
	switch {
	case errors.Is(err, memory.ErrNotFound):
		return notFound()
	case errors.Is(err, operator.ErrScope):
		return forbiddenScope()
	}
	return checkInput(err)
}

func conflict(msg, back string) error {
	return &httpError{status: http.StatusConflict, title: "Nothing was changed", msg: msg, back: back}
}

// fail answers err: its page for an httpError, else a 500 that says nothing of it,
// with err in the log.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, p *api.Principal, err error) {
	var e *httpError
	if !errors.As(err, &e) {
		s.internal(w, r, err)
		return
	}
	f := frame{Title: e.title}
	f.who(p)
	v := errorView{Title: e.title, Msg: e.msg, Back: e.back, Suggest: e.suggest, SuggestURL: e.suggestURL}
	s.show(w, r, e.status, "error", f, v)
}

func (s *Server) internal(w http.ResponseWriter, r *http.Request, err error) {
	if !errors.Is(err, context.Canceled) {
		s.log.ErrorContext(r.Context(), "inspector: internal error", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write([]byte("Internal error; the server log has the details.\n"))
}
