package inspector

import (
	"errors"
	"net/http"
	"strings"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
)

type reviewView struct {
	Head  scopeHead
	All   bool
	Items []memory.Conflict
}

// reviewPage shows the scope's review queue: open items, or with all the closed ones.
func (s *Server) reviewPage(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	scope := r.PathValue("scope")
	if err := checkScope(p, scope); err != nil {
		return err
	}
	v := reviewView{All: r.URL.Query().Get("all") == "1"}
	ctx := r.Context()
	var err error
	if v.Items, err = s.store.Conflicts(ctx, scope, v.All); err != nil {
		return err
	}
	if v.Head, err = s.scopeHead(ctx, p, scope, "review"); err != nil {
		return err
	}
	return s.render(w, r, p, "review", "Review queue of "+scope, append(scopeCrumbs(scope), crumb{Label: "Review queue"}), v)
}

// resolve applies or dismisses a review item, as `beliefs resolve` and the API do.
// Another tenant's item is as unknown as an unknown one.
func (s *Server) resolve(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	verdict := memory.Verdict(r.PostForm.Get("action"))
	note := strings.TrimSpace(r.PostForm.Get("note"))
	if err := checkInput(transcript.CheckText("note", note, memory.MaxNoteLen)); err != nil {
		return err
	}
	ctx := r.Context()
	item, err := s.ops.Item(ctx, p, id)
	if err != nil {
		return lookupError(err)
	}
	back := scopeURL(item.Scope, "/review")
	_, err = s.ops.Resolve(ctx, p, id, verdict, note)
	switch {
	case errors.Is(err, memory.ErrClosed), errors.Is(err, memory.ErrNotApplicable):
		return conflict("Review item "+itoa(id)+": "+err.Error()+".", back)
	case errors.Is(err, memory.ErrInvalid):
		return badRequest("Choose apply or dismiss.")
	case errors.Is(err, memory.ErrNotFound):
		return notFound()
	case errors.Is(err, llm.ErrEmbedding):
		s.log.ErrorContext(ctx, "inspector: embed decision", "error", err)
		return &httpError{status: http.StatusBadGateway, title: "Nothing was changed", back: back,
			msg: "The embedding model did not answer; try again."}
	case err != nil:
		return err
	}
	what := "applied"
	if verdict == memory.VerdictDismiss {
		what = "dismissed"
	}
	http.Redirect(w, r, done(back, what, id), http.StatusSeeOther) //nolint:gosec // G710: an own path, its scope escaped
	return nil
}
