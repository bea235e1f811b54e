package inspector

import (
	"errors"
	"net/http"
	"strings"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
)

type revertView struct {
	Event  memory.Event
	Action string
	Back   string
}

// visibleEvent is revision event id, unless the key can't see it: then, as for an
// unknown id, not found.
func (s *Server) visibleEvent(r *http.Request, p *api.Principal) (*memory.Event, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	ev, err := s.ops.Event(r.Context(), p, id)
	if err != nil {
		return nil, lookupError(err)
	}
	return ev, nil
}

// confirmRevert asks before reverting a revision event, saying what the revert does.
func (s *Server) confirmRevert(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	if !p.Can(api.RightOperate) {
		return forbiddenRight(api.RightOperate)
	}
	ev, err := s.visibleEvent(r, p)
	if err != nil {
		return err
	}
	v := revertView{Event: *ev, Action: r.URL.Path, Back: Prefix + "beliefs/" + itoa(ev.OldBeliefID)}
	title := "Revert event " + itoa(ev.ID) + "?"
	return s.render(w, r, p, "revert", title, append(scopeCrumbs(ev.Scope), crumb{Label: title}), v)
}

// revert undoes a revision event, as `beliefs revert` and the API do, then shows the
// belief it restored.
func (s *Server) revert(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	ev, err := s.visibleEvent(r, p)
	if err != nil {
		return err
	}
	note := strings.TrimSpace(r.PostForm.Get("note"))
	if err := checkInput(transcript.CheckText("note", note, memory.MaxNoteLen)); err != nil {
		return err
	}
	back := Prefix + "beliefs/" + itoa(ev.OldBeliefID)
	_, err = s.ops.Revert(r.Context(), p, ev.ID, note, "inspector, key "+p.Name)
	var refused *memory.RevertRefusedError
	switch {
	case errors.As(err, &refused):
		return conflict(refused.Error()+".", back)
	case err != nil:
		return lookupError(err)
	}
	http.Redirect(w, r, done(back, "reverted", ev.ID), http.StatusSeeOther)
	return nil
}
