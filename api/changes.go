package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/credohq/credo/changes"
	"github.com/credohq/credo/memory"
)

// MaxWait is the longest a read of the change feed waits for a change.
const MaxWait = 30 * time.Second

type changesInput struct {
	Scope       string `query:"scope" maxLength:"200" doc:"Read this scope's changes. Exactly one of scope and scope_prefix."`
	ScopePrefix string `query:"scope_prefix" maxLength:"200" doc:"Read the changes of every scope starting with this prefix; it must start with one of the key's scope prefixes. * reads every scope of the key's prefixes."`
	HasPrefix   bool   `query:"-"`
	After       string `query:"after" maxLength:"100000" doc:"The cursor a previous read answered: the changes after it. Absent: from the first change kept."`
	Limit       int    `query:"limit" minimum:"1" maximum:"1000" default:"100" doc:"At most this many changes."`
	Wait        int    `query:"wait" minimum:"0" maximum:"30" doc:"Seconds to wait for a change when there is none yet (long poll), at most 30."`
}

// Resolve notes whether scope_prefix was given (an empty prefix is every scope).
func (in *changesInput) Resolve(ctx huma.Context) []error {
	u := ctx.URL()
	in.HasPrefix = u.Query().Has("scope_prefix")
	return nil
}

// ChangeItem is one change of the feed, and the body of a webhook's delivery (without
// scope and position, which the data carries).
type ChangeItem struct {
	Type      string    `json:"type" enum:"belief.created,belief.forgotten,revision.applied,revision.reverted,review.opened,review.resolved,episode.failed,scope.purged" doc:"What changed."`
	Scope     string    `json:"scope"`
	Position  int64     `json:"position" doc:"The change's place in its scope: commit order, never going back (even across a purge of the scope); gaps mean nothing."`
	Timestamp time.Time `json:"timestamp" doc:"When the change was made."`
	Data      any       `json:"data" doc:"As the API gives the row: a belief of GET /v1/beliefs (belief.*; a forgotten one without its words), an event of GET /v1/events (revision.*), an item of GET /v1/conflicts (review.*), an episode of GET /v1/episodes/{id} (episode.failed), or the purge's counts (scope.purged)."`
}

// Purge is the data of a scope.purged change: counts only.
type Purge struct {
	Scope  string           `json:"scope"`
	What   string           `json:"what" enum:"beliefs,scope" doc:"Some beliefs, or the whole scope."`
	Counts map[string]int64 `json:"counts" doc:"Rows erased, per table."`
}

// Changes answers GET /v1/changes.
type Changes struct {
	Changes []ChangeItem `json:"changes" nullable:"false" doc:"Oldest first: in commit order within a scope, by time across scopes."`
	Cursor  string       `json:"cursor" doc:"Pass as after to read what follows; opaque."`
}

func (s *Server) registerChanges() {
	huma.Register(s.api, s.op(huma.Operation{
		OperationID: "listChanges", Method: http.MethodGet, Path: "/v1/changes", Tags: []string{"revisions"},
		Summary: "What changed: beliefs created and forgotten, revisions, reverts, review items, failed episodes, purges",
		Description: "The change feed of one scope, or of every scope under a prefix, in commit order, after a cursor; with wait, an empty read waits up to that many seconds for a change. " +
			"The cursor resumes exactly: nothing missed, nothing twice; one naming a position its scope never had is refused (400). A change whose row a purge erased since is left out; the purge itself is a scope.purged change with counts only. Needs the read right.",
	}, http.StatusBadRequest, http.StatusForbidden), func(ctx context.Context, in *changesInput) (*output[Changes], error) {
		return wrap(s.changes(ctx, principalFrom(ctx), *in))
	})
}

func (s *Server) changes(ctx context.Context, p *Principal, in changesInput) (*Changes, error) {
	q := changes.Query{Scope: in.Scope, Limit: in.Limit}
	switch {
	case in.HasPrefix == (in.Scope != ""):
		return nil, invalid("give exactly one of scope and scope_prefix")
	case in.HasPrefix && in.ScopePrefix == AllScopes:
		// As a key's scopes read it: every scope the key may read.
		if err := s.need(p, RightRead); err != nil {
			return nil, err
		}
		q.Prefixes = everyScope(p)
	case in.HasPrefix:
		if err := s.prefix(p, RightRead, in.ScopePrefix); err != nil {
			return nil, err
		}
		q.Prefixes = []string{in.ScopePrefix}
	default:
		if err := s.scope(p, RightRead, in.Scope); err != nil {
			return nil, err
		}
	}
	after, err := changes.ParseCursor(in.After)
	if err != nil {
		return nil, invalid("after: not a cursor of this feed")
	}
	q.After = after
	wait := min(time.Duration(in.Wait)*time.Second, MaxWait)
	deadline := time.Now().Add(wait)
	var wake <-chan struct{}
	if wait > 0 {
		var cancel func()
		wake, cancel = s.listener.Subscribe(ctx, func(scope string) bool {
			if q.Prefixes == nil {
				return scope == q.Scope
			}
			return slices.ContainsFunc(q.Prefixes, func(p string) bool { return strings.HasPrefix(scope, p) })
		})
		defer cancel()
	}
	for {
		out, err := s.readChanges(ctx, q)
		if err != nil || len(out.Changes) > 0 || wake == nil {
			return out, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return out, nil
		}
		t := time.NewTimer(left)
		select {
		case <-wake:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		if ctx.Err() != nil {
			return out, nil
		}
		q.After = changesCursor(out)
	}
}

// withheld is a forgotten belief as the feed tells its forgetting: as the API gave it,
// but its words, which no read of the API shows once it is forgotten.
func withheld(b memory.Belief) Belief {
	out := beliefOf(b)
	out.Subject, out.Entity, out.Attribute, out.Statement, out.Quote = "", "", "", "", nil
	return out
}

// everyScope is the prefixes of every scope p may read: its own, or every scope for a
// key of *.
func everyScope(p *Principal) []string {
	if slices.Contains(p.Scopes, AllScopes) {
		return []string{""}
	}
	return slices.Clone(p.Scopes)
}

func changesCursor(c *Changes) changes.Cursor {
	cur, _ := changes.ParseCursor(c.Cursor) // made by this feed: it parses
	return cur
}

// readChanges reads one page and renders it; a change whose row is gone (purged since)
// is left out, and the cursor passes it.
func (s *Server) readChanges(ctx context.Context, q changes.Query) (*Changes, error) {
	page, err := s.feed.Read(ctx, q)
	if ahead, ok := errors.AsType[*changes.AheadError](err); ok {
		return nil, invalid("after: " + ahead.Error() + ": not a cursor this feed gave (of another database, or altered)")
	}
	if err != nil {
		return nil, s.internal(ctx, err)
	}
	out := &Changes{Changes: []ChangeItem{}, Cursor: page.Next.String()}
	for _, c := range page.Changes {
		item, err := RenderChange(ctx, s.store, c)
		if err != nil {
			return nil, s.internal(ctx, err)
		}
		if item != nil {
			out.Changes = append(out.Changes, *item)
		}
	}
	return out, nil
}

// RenderChange is change c as the feed and webhooks give it, its row read now: nil
// when the row is gone (a purge erased it since).
func RenderChange(ctx context.Context, store *memory.Store, c changes.Change) (*ChangeItem, error) {
	item := &ChangeItem{Type: string(c.Kind), Scope: c.Scope, Position: c.Position, Timestamp: c.At.UTC()}
	var err error
	switch c.Kind {
	case memory.ChangeBeliefCreated, memory.ChangeBeliefForgotten:
		var b *memory.Belief
		b, err = store.GetIn(ctx, c.Scope, c.RefID)
		switch {
		case err != nil:
		case b.Status != memory.StatusForgotten:
			item.Data = beliefOf(*b)
		case c.Kind == memory.ChangeBeliefCreated:
			return nil, nil //nolint:nilnil // forgotten since: the API gives it no more
		default:
			item.Data = withheld(*b)
		}
	case memory.ChangeRevisionApplied, memory.ChangeRevisionReverted:
		var e *memory.Event
		if e, err = store.EventIn(ctx, c.Scope, c.RefID); err == nil {
			item.Data = eventOf(*e)
		}
	case memory.ChangeReviewOpened, memory.ChangeReviewResolved:
		var cf *memory.Conflict
		if cf, err = store.ConflictIn(ctx, c.Scope, c.RefID); err == nil {
			item.Data = conflictOf(*cf)
		}
	case memory.ChangeEpisodeFailed:
		var e *memory.Episode
		if e, err = store.EpisodeIn(ctx, c.Scope, c.RefID); err == nil {
			ep := EpisodeOf(*e)
			ep.LastError = PublicError(ep.LastError)
			item.Data = ep
		}
	case memory.ChangeScopePurged:
		what := memory.PurgedBeliefs
		if c.All {
			what = memory.PurgedScope
		}
		item.Data = Purge{Scope: c.Scope, What: what, Counts: c.Counts}
	}
	if errors.Is(err, memory.ErrNotFound) {
		return nil, nil //nolint:nilnil // gone
	}
	if err != nil {
		return nil, err
	}
	return item, nil
}
