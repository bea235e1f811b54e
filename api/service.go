package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/operator"
	"github.com/credohq/credo/transcript"
)

// The operations of the API, shared by the HTTP endpoints and the MCP tools. Each checks
// the principal's right first, then its scope, before anything is read: a request
// outside the key's scopes learns nothing, not even whether the scope exists.

func (s *Server) need(p *Principal, r Right) error {
	if !p.Can(r) {
		return forbiddenRight(r)
	}
	return nil
}

func (s *Server) scope(p *Principal, r Right, scope string) error {
	if err := s.need(p, r); err != nil {
		return err
	}
	if err := checkScope(scope); err != nil {
		return err
	}
	if !p.Sees(scope) {
		return forbiddenScope()
	}
	return nil
}

// prefix checks a scope_prefix that the key's prefixes must cover, as scope checks a
// scope: the key may then act on every scope under it ("" is every scope: a key for *).
func (s *Server) prefix(p *Principal, r Right, prefix string) error {
	if err := s.need(p, r); err != nil {
		return err
	}
	if prefix != "" {
		if err := checkInput(transcript.CheckScope("scope_prefix", prefix)); err != nil {
			return err
		}
	}
	if !p.Sees(prefix) {
		return forbiddenScope()
	}
	return nil
}

func checkScope(scope string) error {
	if strings.TrimSpace(scope) == "" {
		return invalid("scope is required")
	}
	return checkInput(transcript.CheckScope("scope", scope))
}

// checkInput is the shared rule's verdict as a 400 naming the field: the same rule, and
// the same limits, as the CLI, MCP and the web UI apply. Any *transcript.InputError in
// err's chain is the user's message, however it was wrapped.
func checkInput(err error) error {
	if msg, ok := transcript.InputMessage(err); ok {
		return invalid(msg)
	}
	return err
}

// opError answers an operator.Operator's error: input refused is a 400 with its message,
// an id the key can't see the not-found answer for what and id, a refusal a 409, a
// failed embedding a 502 saying nothing was changed; anything else a 500.
func (s *Server) opError(ctx context.Context, what string, id int64, err error) error {
	var refused *operator.RefusedError
	var revertRefused *memory.RevertRefusedError
	switch {
	case errors.Is(err, operator.ErrScope):
		return forbiddenScope()
	case errors.Is(err, memory.ErrNotFound):
		return notFound(what, id)
	case errors.As(err, &refused):
		return newError(http.StatusConflict, CodeRefused, refused.Error())
	case errors.As(err, &revertRefused):
		return newError(http.StatusConflict, CodeRefused, revertRefused.Error())
	case errors.Is(err, memory.ErrClosed), errors.Is(err, memory.ErrNotApplicable):
		return newError(http.StatusConflict, CodeRefused, err.Error())
	case errors.Is(err, llm.ErrEmbedding):
		s.log.ErrorContext(ctx, "api: embed", "error", err)
		return newError(http.StatusBadGateway, CodeEmbeddingFailed, "the embedding model did not answer; nothing was changed")
	}
	if msg, ok := transcript.InputMessage(err); ok {
		return invalid(msg)
	}
	return s.internal(ctx, err)
}

// enqueue stores transcripts as episodes with their extraction jobs, all or nothing.
func (s *Server) enqueue(ctx context.Context, p *Principal, ts []transcript.Transcript) (*Enqueued, error) {
	if err := s.need(p, RightWrite); err != nil {
		return nil, err
	}
	if len(ts) > s.maxRecords {
		return nil, tooManyRecords(len(ts), s.maxRecords)
	}
	for _, t := range ts {
		if !p.Sees(t.Scope) {
			return nil, forbiddenScope()
		}
	}
	if s.jobs == nil {
		return nil, s.internal(ctx, errors.New("no job inserter configured"))
	}
	var res *Enqueued
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		r, err := extract.Enqueue(ctx, tx, s.jobs, ts, s.now(), s.redact)
		if err != nil {
			return err
		}
		res = &Enqueued{EpisodeIDs: r.EpisodeIDs, Enqueued: r.Enqueued, Duplicates: r.Duplicates, Redacted: r.Redacted}
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, err)
	}
	return res, nil
}

func tooManyRecords(n, limit int) *Error {
	return newError(http.StatusRequestEntityTooLarge, CodeTooManyRecords,
		fmt.Sprintf("%d records; the limit is %d per request", n, limit))
}

// RecallRequest is a read of beliefs.
type RecallRequest struct {
	Scope   string
	Query   string
	K       int
	All     bool
	AsOf    string
	KnownAt string
	Inherit bool
}

func (s *Server) recall(ctx context.Context, p *Principal, q RecallRequest) (*Beliefs, error) {
	if err := s.scope(p, RightRead, q.Scope); err != nil {
		return nil, err
	}
	if err := checkInput(transcript.CheckText("query", q.Query, transcript.MaxQueryLen)); err != nil {
		return nil, err
	}
	// The key reads an ancestor it does not hold through inheritance only: its current
	// defaults, never its history, quotes or transcripts.
	rq := memory.RecallQuery{Scope: q.Scope, Text: q.Query, K: q.K, History: q.All, Inherit: q.Inherit, Sees: p.Sees}
	var err error
	if rq.AsOf, err = parseTime("as_of", q.AsOf); err != nil {
		return nil, err
	}
	if rq.KnownAt, err = parseTime("known_at", q.KnownAt); err != nil {
		return nil, err
	}
	switch {
	case rq.AsOf != nil && rq.KnownAt != nil:
		return nil, invalid("as_of and known_at exclude each other")
	case q.All && (rq.AsOf != nil || rq.KnownAt != nil):
		return nil, invalid("all excludes as_of and known_at")
	case q.K < 0 || q.K > memory.MaxRecallK:
		return nil, invalid(fmt.Sprintf("k must be within 1..%d", memory.MaxRecallK))
	}
	if strings.TrimSpace(q.Query) != "" {
		if rq.Vector, err = s.reader.EmbedQuery(ctx, q.Scope, q.Query); errors.Is(err, llm.ErrEmbedding) {
			s.log.ErrorContext(ctx, "api: embed query", "error", err)
			return nil, newError(http.StatusBadGateway, CodeEmbeddingFailed, "the embedding model did not answer; try again, or read without a query")
		} else if err != nil {
			return nil, s.internal(ctx, err)
		}
		rq.EmbedModel = s.embedModel
	}
	rec, err := s.store.Recall(ctx, rq)
	if msg, ok := transcript.InputMessage(err); ok {
		return nil, invalid(msg)
	}
	if err != nil {
		return nil, s.internal(ctx, err)
	}
	out := &Beliefs{Mode: string(rec.Mode), AutoHistory: rec.AutoHistory, Ranked: rec.Ranked, Beliefs: beliefsOf(rec.Beliefs)}
	if out.ScopeKnown, out.DidYouMean, err = s.scopeKnown(ctx, p, q.Scope, q.Inherit, len(rec.Beliefs)); err != nil {
		return nil, err
	}
	return out, nil
}

// parseTime reads RFC 3339 or a date (midnight UTC); "" is no time.
//
//nolint:nilnil // an absent parameter is no time, not an error
func parseTime(name, s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return &t, nil
		}
	}
	return nil, invalid(name + " is not an RFC 3339 time or a date like 2026-03-20")
}

// visibleBelief is belief id, unless the key can't see it: then, as for an unknown id,
// not found, through the one visibility check of every surface (operator.Operator.Belief).
// Forgotten beliefs are not found either.
func (s *Server) visibleBelief(ctx context.Context, p *Principal, id int64) (*memory.Belief, error) {
	b, err := s.ops.Belief(ctx, p, id)
	if err != nil {
		return nil, s.opError(ctx, "belief", id, err)
	}
	return b, nil
}

func (s *Server) history(ctx context.Context, p *Principal, id int64) (*History, error) {
	if err := s.need(p, RightRead); err != nil {
		return nil, err
	}
	b, err := s.visibleBelief(ctx, p, id)
	if err != nil {
		return nil, err
	}
	bs, err := s.store.HistoryIn(ctx, b.Scope, id)
	if errors.Is(err, memory.ErrNotFound) {
		return nil, notFound("belief", id)
	}
	if err != nil {
		return nil, s.internal(ctx, err)
	}
	kept := bs[:0]
	for _, b := range bs {
		if p.Sees(b.Scope) { // a chain never leaves its scope; this only makes sure
			kept = append(kept, b)
		}
	}
	return &History{Beliefs: beliefsOf(kept)}, nil
}

func (s *Server) events(ctx context.Context, p *Principal, scope string, limit int) (*Events, error) {
	evs, err := readScope(ctx, s, p, scope, func(ctx context.Context) ([]memory.Event, error) { return s.store.Events(ctx, scope, limit) })
	if err != nil {
		return nil, err
	}
	out := &Events{Events: mapped(evs, eventOf)}
	if out.ScopeKnown, out.DidYouMean, err = s.scopeKnown(ctx, p, scope, false, len(evs)); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Server) conflicts(ctx context.Context, p *Principal, scope string, all bool) (*Conflicts, error) {
	cs, err := readScope(ctx, s, p, scope, func(ctx context.Context) ([]memory.Conflict, error) { return s.store.Conflicts(ctx, scope, all) })
	if err != nil {
		return nil, err
	}
	out := &Conflicts{Conflicts: mapped(cs, conflictOf)}
	if out.ScopeKnown, out.DidYouMean, err = s.scopeKnown(ctx, p, scope, false, len(cs)); err != nil {
		return nil, err
	}
	return out, nil
}

// readScope reads a list of scope with read, once p may read scope; a failed read is
// an internal error.
func readScope[T any](ctx context.Context, s *Server, p *Principal, scope string, read func(context.Context) ([]T, error)) ([]T, error) {
	if err := s.scope(p, RightRead, scope); err != nil {
		return nil, err
	}
	ts, err := read(ctx)
	if err != nil {
		return nil, s.internal(ctx, err)
	}
	return ts, nil
}

// ResolveRequest is an operator's decision on a review item.
type ResolveRequest struct {
	Action string `json:"action" enum:"apply,dismiss" doc:"apply: carry out the refused revision (or retract the belief whose basis changed); dismiss: leave memory as it is."`
	Note   string `json:"note,omitempty" maxLength:"2000" doc:"Why; kept with the item."`
}

func (s *Server) resolve(ctx context.Context, p *Principal, id int64, in ResolveRequest) (*Decided, error) {
	if err := s.need(p, RightOperate); err != nil {
		return nil, err
	}
	got, err := s.ops.Resolve(ctx, p, id, memory.Verdict(in.Action), in.Note)
	if err != nil {
		return nil, s.opError(ctx, "review item", id, err)
	}
	out := &Decided{Conflict: conflictOf(got.Item)}
	if got.Outcome != nil {
		r := revisionOf(*got.Outcome)
		out.Revision = &r
	}
	return out, nil
}

// AssertRequest is an operator's assertion of a belief.
type AssertRequest struct {
	Scope         string     `json:"scope" minLength:"1" maxLength:"200" doc:"The scope the belief belongs to."`
	Statement     string     `json:"statement" minLength:"1" maxLength:"2000" doc:"The belief, one sentence."`
	Attribute     string     `json:"attribute" minLength:"1" maxLength:"200" doc:"The slot it fills, e.g. location."`
	Subject       string     `json:"subject,omitempty" maxLength:"200" default:"user" doc:"Who or what it is about."`
	Kind          string     `json:"kind,omitempty" enum:"attribute,preference,relation,event,plan,other" default:"attribute"`
	Authoritative bool       `json:"authoritative,omitempty" doc:"Only an operator may ever change it: extraction and consolidation never will."`
	ValidFrom     *time.Time `json:"valid_from,omitempty" doc:"When it became true; default now."`
}

func (s *Server) assert(ctx context.Context, p *Principal, in AssertRequest) (*Revision, error) {
	if err := s.scope(p, RightOperate, in.Scope); err != nil {
		return nil, err
	}
	out, err := s.ops.Assert(ctx, p, operator.AssertParams{Scope: in.Scope, Statement: in.Statement, Attribute: in.Attribute,
		Subject: in.Subject, Kind: memory.Kind(in.Kind), Authoritative: in.Authoritative, ValidFrom: in.ValidFrom})
	if err != nil {
		return nil, s.opError(ctx, "belief", 0, err)
	}
	r := revisionOf(out)
	return &r, nil
}

// CorrectRequest is an operator's revision of one belief.
type CorrectRequest struct {
	Statement string `json:"statement,omitempty" maxLength:"2000" doc:"What is true instead; give this or retract."`
	Retract   bool   `json:"retract,omitempty" doc:"Retract the belief with no replacement."`
	Reason    string `json:"reason,omitempty" enum:"correction,temporal" default:"correction" doc:"correction: it was never true; temporal: it changed."`
}

func (s *Server) correct(ctx context.Context, p *Principal, id int64, in CorrectRequest) (*Revision, error) {
	if err := s.need(p, RightOperate); err != nil {
		return nil, err
	}
	out, err := s.ops.Correct(ctx, p, operator.CorrectParams{ID: id, Statement: in.Statement, Retract: in.Retract, Reason: memory.Reason(in.Reason)})
	if err != nil {
		return nil, s.opError(ctx, "belief", id, err)
	}
	r := revisionOf(out)
	return &r, nil
}

// ForgetRequest names beliefs of one scope to forget, or to purge, or a subtree of
// scopes to purge.
type ForgetRequest struct {
	Scope       string  `json:"scope,omitempty" maxLength:"200" doc:"The scope; give this or scope_prefix."`
	ScopePrefix *string `json:"scope_prefix,omitempty" maxLength:"200" doc:"Erase every scope starting with this prefix (with all and purge, needs the purge right on the whole prefix): an organisation's subtree."`
	IDs         []int64 `json:"ids,omitempty" maxItems:"1000" nullable:"false" doc:"Forget these beliefs of the scope."`
	Match       string  `json:"match,omitempty" maxLength:"2000" doc:"Forget every belief whose statement, quote, subject or attribute contains this text, ignoring case."`
	Entity      string  `json:"entity,omitempty" maxLength:"200" doc:"Forget every belief about the entity of this name or alias (GET /v1/entities), whatever its subject says; with purge, the entity and its names are erased too."`
	All         bool    `json:"all,omitempty" doc:"Forget every belief of the scope; with purge, erase the whole scope."`
	Purge       bool    `json:"purge,omitempty" doc:"Erase for good (needs the purge right): the beliefs, and the revision events, conflicts, transcripts and job rows holding their text. Soft otherwise: forgotten beliefs leave every read and prompt but stay stored for audit."`
}

func (s *Server) forget(ctx context.Context, p *Principal, in ForgetRequest) (*Forgotten, error) {
	if in.ScopePrefix != nil {
		return s.purgeSubtree(ctx, p, in)
	}
	right := RightOperate
	if in.Purge {
		right = RightPurge
	}
	if err := s.scope(p, right, in.Scope); err != nil {
		return nil, err
	}
	if err := checkInput(transcript.CheckText("match", in.Match, transcript.MaxQueryLen)); err != nil {
		return nil, err
	}
	if err := checkName("entity", in.Entity); err != nil {
		return nil, err
	}
	sel := memory.Selection{Scope: in.Scope, IDs: in.IDs, Match: in.Match, Entity: in.Entity, All: in.All}
	given := 0
	for _, set := range []bool{len(in.IDs) > 0, strings.TrimSpace(in.Match) != "", strings.TrimSpace(in.Entity) != "", in.All} {
		if set {
			given++
		}
	}
	if given != 1 {
		return nil, invalid("give exactly one of ids, match, entity and all")
	}
	for _, id := range in.IDs {
		if id <= 0 {
			return nil, invalid("ids must be positive")
		}
	}
	if in.Purge {
		purged, err := s.ops.Purge(ctx, p, sel)
		if err != nil {
			return nil, s.forgetError(ctx, err)
		}
		return &Forgotten{Purged: &Purged{What: purged.What, Counts: purged.Counts, Relinked: purged.Relinked}}, nil
	}
	ids, err := s.ops.Forget(ctx, p, sel)
	if err != nil {
		return nil, s.forgetError(ctx, err)
	}
	if ids == nil {
		ids = []int64{}
	}
	return &Forgotten{Forgotten: &ids}, nil
}

// purgeSubtree erases every scope starting with the request's prefix. The key must
// cover the prefix: it then covers every scope under it.
func (s *Server) purgeSubtree(ctx context.Context, p *Principal, in ForgetRequest) (*Forgotten, error) {
	prefix := *in.ScopePrefix
	if err := s.need(p, RightPurge); err != nil {
		return nil, err
	}
	switch {
	case in.Scope != "" || len(in.IDs) > 0 || in.Match != "" || in.Entity != "" || !in.All || !in.Purge:
		return nil, invalid("scope_prefix erases a subtree: give it with all and purge, without scope, ids, match or entity")
	case strings.TrimSpace(prefix) == "" || prefix == "*":
		return nil, invalid("scope_prefix must name a prefix: an empty one or * would erase every scope")
	}
	if err := checkInput(transcript.CheckScope("scope_prefix", prefix)); err != nil {
		return nil, err
	}
	if !p.Sees(prefix) {
		return nil, forbiddenScope()
	}
	out, err := s.ops.PurgeSubtree(ctx, p, prefix)
	if err != nil {
		return nil, s.forgetError(ctx, err)
	}
	sub := &Subtree{Prefix: prefix, Scopes: make([]ScopePurged, len(out.Scopes)), Counts: out.Counts}
	for i, sp := range out.Scopes {
		sub.Scopes[i] = ScopePurged{Scope: sp.Scope, Purged: Purged{What: sp.What, Counts: sp.Counts, Relinked: sp.Relinked}}
	}
	return &Forgotten{Subtree: sub}, nil
}

func (s *Server) forgetError(ctx context.Context, err error) error {
	unknown, isUnknown := errors.AsType[*memory.UnknownEntityError](err)
	switch {
	case isUnknown:
		return newError(http.StatusNotFound, CodeNotFound, unknown.Error())
	case errors.Is(err, memory.ErrNotFound):
		return newError(http.StatusNotFound, CodeNotFound, "no such belief, or no belief at all, in this scope")
	case errors.Is(err, operator.ErrScope):
		return forbiddenScope()
	}
	if msg, ok := transcript.InputMessage(err); ok {
		return invalid(msg)
	}
	return s.internal(ctx, err)
}

func (s *Server) episode(ctx context.Context, p *Principal, id int64) (*Episode, error) {
	if err := s.need(p, RightRead); err != nil {
		return nil, err
	}
	e, err := s.ops.Episode(ctx, p, id)
	if err != nil {
		return nil, s.opError(ctx, "episode", id, err)
	}
	out := EpisodeOf(*e)
	out.LastError = PublicError(out.LastError)
	return &out, nil
}

// internal logs err and answers a 500 that says nothing about it. A canceled request
// is not logged as an error.
func (s *Server) internal(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		s.log.ErrorContext(ctx, "api: internal error", "error", err)
	}
	return internalError()
}
