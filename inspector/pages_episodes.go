package inspector

import (
	"errors"
	"net/http"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/memory"
)

// maxListed is how many episodes one page lists, the latest first.
const maxListed = 200

type episodesView struct {
	Head     scopeHead
	State    string
	Episodes []memory.Episode
	Full     bool // the list reached maxListed
	CanRetry bool
}

// episodesPage lists the scope's episodes with their state, attempts and last error.
func (s *Server) episodesPage(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	scope := r.PathValue("scope")
	if err := checkScope(p, scope); err != nil {
		return err
	}
	v := episodesView{State: r.URL.Query().Get("state"), CanRetry: s.jobs != nil && p.Can(api.RightOperate)}
	if st := memory.EpisodeState(v.State); st != "" && !st.Valid() {
		return badRequest("The state is pending, applied or failed.")
	}
	ctx := r.Context()
	var err error
	v.Episodes, err = s.store.Episodes(ctx, memory.EpisodeQuery{Scope: scope, State: memory.EpisodeState(v.State), Limit: maxListed})
	if err != nil {
		return err
	}
	v.Full = len(v.Episodes) == maxListed
	if v.Head, err = s.scopeHead(ctx, p, scope, "episodes"); err != nil {
		return err
	}
	return s.render(w, r, p, "episodes", "Episodes of "+scope, append(scopeCrumbs(scope), crumb{Label: "Episodes"}), v)
}

type episodeView struct {
	Source *sourceView
	// Beliefs are what the episode stated or restated.
	Beliefs  []memory.Belief
	CanRetry bool
}

// episodePage shows one episode's transcript and state, and the beliefs it stated or
// restated.
func (s *Server) episodePage(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	ep, err := s.ops.Episode(r.Context(), p, id)
	if err != nil {
		return lookupError(err)
	}
	v := episodeView{Source: newSource(ep, ""), CanRetry: s.jobs != nil && p.Can(api.RightOperate)}
	if v.Beliefs, err = s.store.FromEpisode(r.Context(), ep.Scope, id); err != nil {
		return err
	}
	crumbs := append(scopeCrumbs(ep.Scope), crumb{Label: "Episodes", URL: scopeURL(ep.Scope, "/episodes")},
		crumb{Label: "Episode " + itoa(id)})
	return s.render(w, r, p, "episode", "Episode "+itoa(id), crumbs, v)
}

// retry sets a failed episode back to pending; its scope's job extracts it in turn.
func (s *Server) retry(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	ep, err := s.ops.Episode(ctx, p, id)
	if err != nil {
		return lookupError(err)
	}
	back := scopeURL(ep.Scope, "/episodes")
	if s.jobs == nil {
		return &httpError{status: http.StatusServiceUnavailable, title: "Not available", back: back,
			msg: "Retries need the worker's job queue, which this server does not have."}
	}
	err = s.store.InTx(ctx, func(tx pgx.Tx) error {
		return extract.Retry(ctx, tx, s.jobs, ep.Scope, id)
	})
	if errors.Is(err, extract.ErrNotRetryable) {
		return conflict("Episode "+itoa(id)+" is not failed: only a failed episode is retried.", back)
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, done(back, "retried", id), http.StatusSeeOther)
	return nil
}
