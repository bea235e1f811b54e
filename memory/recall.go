package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/credohq/credo/transcript"
)

// Recall limits.
const (
	DefaultRecallK = 10
	MaxRecallK     = 1000
)

// ErrRecallQuery is what an error for a RecallQuery that asks for contradictory things is
// (errors.Is); the error is a *transcript.InputError.
var ErrRecallQuery = errors.New("invalid recall query")

// RecallQuery is an agent's question to memory.
type RecallQuery struct {
	Scope string
	// Text is the question as asked. It tells whether it is about the past (see
	// IsHistorical) and, in a ranked read, its words and the entities it names are ranked
	// beside its vector (fuse.go). Memory calls no model: the caller embeds it into Vector.
	Text string
	// Vector is the embedding of Text by EmbedModel. With it the answer is the K beliefs
	// that rank best for the question; without it, every belief of the view, unranked.
	// The vector ranking only sees beliefs embedded with EmbedModel.
	Vector     []float32
	EmbedModel string
	// VectorsOnly ranks by the embedding alone, leaving out the words and entity rankings
	// that Text otherwise adds (fuse.go): the read before they were fused, for measuring.
	VectorsOnly bool
	// K is how many beliefs are ranked (DefaultRecallK when zero).
	K int
	// History includes superseded and retracted beliefs. It is turned on by itself when
	// Text reads as historical, unless AsOf or KnownAt is set.
	History bool
	// AsOf asks what was true in the world at that time, as memory knows it now.
	AsOf *time.Time
	// KnownAt asks what memory believed current at that time.
	KnownAt *time.Time
	// Inherit adds the beliefs of the scope's ancestors (see Ancestors) on the slots the
	// scope does not fill itself in the view read; the nearest scope wins each slot.
	Inherit bool
	// Sees says which ancestors the reader may read in full, as a key's prefixes do; nil:
	// every one (the database's owner). Of an ancestor it may not see, an inherited read
	// shows only the current beliefs that fall in the view, as defaults (see
	// Belief.AsDefault): never its history, quotes or transcripts.
	Sees func(scope string) bool
}

// defaultsOnly says whether an inherited read shows only sc's current defaults.
func (q *RecallQuery) defaultsOnly(sc string) bool {
	return sc != q.Scope && q.Sees != nil && !q.Sees(sc)
}

// defaultsView narrows view to the current beliefs in it.
func defaultsView(view string) string { return view + " AND b.status = 'active'" }

// RecallMode is the view a recall read.
type RecallMode string

// The views a recall reads.
const (
	RecallCurrent RecallMode = "current"  // active beliefs
	RecallHistory RecallMode = "history"  // active, superseded and retracted beliefs, with their chains
	RecallAsOf    RecallMode = "as_of"    // beliefs valid at RecallQuery.AsOf
	RecallKnownAt RecallMode = "known_at" // beliefs memory held at RecallQuery.KnownAt
)

// Recollection is the answer to a RecallQuery.
type Recollection struct {
	Mode RecallMode
	// AutoHistory is set when history mode was chosen because the question reads as
	// historical rather than because it was asked for.
	AutoHistory bool
	// Ranked is set when Beliefs are ordered by similarity; each then carries its
	// Distance (nil for a chain member not embedded with the query's model).
	Ranked bool
	// Beliefs answer the query. Ranked history lists, for each of the K nearest beliefs,
	// its whole supersession chain oldest first, the chain of the nearest first; a chain
	// reached from several of them appears once. Unranked views are ordered by attribute
	// and valid time, so a slot's history reads in order.
	Beliefs []Belief
}

// Recall answers an agent's question from memory: the current beliefs of a scope, or
// their history, or a point in valid or known time, ranked by similarity to the
// question when its embedding is given. Forgotten beliefs are never recalled.
//
// History is answered with whole chains, not loose beliefs: "where did they live
// before?" is nearest to the current location as much as to the old one, and an agent
// needs the old one's place in the sequence (what replaced it, and when) to answer. The
// ranking runs over superseded and retracted beliefs too, so a fact retracted without a
// replacement is still found.
func (s *Store) Recall(ctx context.Context, q RecallQuery) (*Recollection, error) {
	q.Scope = strings.TrimSpace(q.Scope)
	switch {
	case q.Scope == "":
		return nil, transcript.InputErrorf(ErrRecallQuery, "scope", "is empty")
	case q.AsOf != nil && q.KnownAt != nil:
		return nil, transcript.InputErrorf(ErrRecallQuery, "", "AsOf and KnownAt exclude each other")
	case q.History && (q.AsOf != nil || q.KnownAt != nil):
		return nil, transcript.InputErrorf(ErrRecallQuery, "", "History excludes AsOf and KnownAt")
	case q.K < 0 || q.K > MaxRecallK:
		return nil, transcript.InputErrorf(ErrRecallQuery, "K", "%d is outside 0..%d", q.K, MaxRecallK)
	case len(q.Vector) > 0 && q.EmbedModel == "":
		return nil, transcript.InputErrorf(ErrRecallQuery, "", "a Vector needs its EmbedModel")
	}
	k := q.K
	if k == 0 {
		k = DefaultRecallK
	}

	rec := &Recollection{Mode: RecallCurrent, Ranked: len(q.Vector) > 0}
	view, at := currentView, []any(nil)
	switch {
	case q.AsOf != nil:
		rec.Mode, view, at = RecallAsOf, asOfView, []any{*q.AsOf}
	case q.KnownAt != nil:
		rec.Mode, view, at = RecallKnownAt, knownAtView, []any{*q.KnownAt}
	case q.History:
		rec.Mode, view = RecallHistory, historyView
	case IsHistorical(q.Text):
		rec.Mode, view, rec.AutoHistory = RecallHistory, historyView, true
	}
	// read is the answer of one scope.
	read := func(ctx context.Context, scope string) ([]Belief, error) {
		args := append([]any{scope}, at...)
		if q.defaultsOnly(scope) {
			bs, err := s.readView(ctx, defaultsView(view), args, rec.Ranked, q, k)
			for i := range bs {
				bs[i] = bs[i].AsDefault()
			}
			return bs, err
		}
		if rec.Ranked && rec.Mode == RecallHistory {
			return s.rankedChains(ctx, scope, q, k)
		}
		return s.readView(ctx, view, args, rec.Ranked, q, k)
	}
	var err error
	switch {
	case !q.Inherit:
		rec.Beliefs, err = read(ctx, q.Scope)
	case !rec.Ranked:
		rec.Beliefs, err = s.Inherited(ctx, q.Scope, read)
	default:
		rec.Beliefs, err = s.recallInherited(ctx, rec, &q, read, view, at, k)
	}
	if err != nil {
		return nil, fmt.Errorf("recall %s of %q: %w", rec.Mode, q.Scope, err)
	}
	return rec, nil
}

// recallInherited is a ranked read of scope with its ancestors: a slot counts as filled
// by what the whole view holds, not by the k nearest beliefs, and the nearest k beliefs
// of all scopes are kept (whole chains, for history).
func (s *Store) recallInherited(ctx context.Context, rec *Recollection, q *RecallQuery, read ScopeRead, view string, at []any, k int) ([]Belief, error) {
	fills := func(ctx context.Context, sc string) (map[slot]bool, error) {
		if q.defaultsOnly(sc) {
			return s.slots(ctx, defaultsView(view), append([]any{sc}, at...))
		}
		return s.slots(ctx, view, append([]any{sc}, at...))
	}
	bs, err := inherit(ctx, q.Scope, read, fills)
	if err != nil || rec.Mode == RecallHistory {
		return bs, err
	}
	slices.SortStableFunc(bs, func(a, b Belief) int {
		return cmp.Or(cmp.Compare(fused(b), fused(a)), cmp.Compare(deref(a.Distance), deref(b.Distance)))
	})
	return bs[:min(k, len(bs))], nil
}

// readView reads the beliefs of view: the k nearest to q's vector when ranked, else
// all, by attribute and valid time.
func (s *Store) readView(ctx context.Context, view string, args []any, ranked bool, q RecallQuery, k int) ([]Belief, error) {
	if ranked {
		text := q.Text
		if q.VectorsOnly {
			text = ""
		}
		return s.ranked(ctx, rankQuery{view: view, args: args, columns: beliefColumns, text: text, model: q.EmbedModel, vec: q.Vector, k: k})
	}
	return s.queryBeliefs(ctx, view+" ORDER BY b.attribute, b.valid_from, b.recorded_at, b.id", args...)
}

// rankedChains is the supersession chains through the k non-forgotten beliefs of scope
// that rank best for q (fused as every ranked read is). Chains are followed through
// forgotten beliefs, which are left out. Each step names the scope: a chain never leaves
// it, and on Citus the recursion runs on the scope's shard.
func (s *Store) rankedChains(ctx context.Context, scope string, q RecallQuery, k int) ([]Belief, error) {
	rq := rankQuery{view: historyView, args: []any{scope}, columns: candidateColumns, model: q.EmbedModel, vec: q.Vector, k: k}
	if !q.VectorsOnly {
		rq.text = q.Text
	}
	ranked, err := s.ranked(ctx, rq)
	if err != nil || len(ranked) == 0 {
		return nil, err
	}
	seeds := make([]int64, len(ranked))
	for i, b := range ranked {
		seeds[i] = b.ID
	}
	model, vec := q.EmbedModel, q.Vector
	rows, err := s.db.Query(ctx, `WITH RECURSIVE seed AS (
			SELECT id, rank FROM unnest($4::bigint[]) WITH ORDINALITY AS s (id, rank)
		), back AS (
			SELECT id, rank, 0 AS depth FROM seed
			UNION ALL
			SELECT p.id, c.rank, c.depth + 1 FROM belief p JOIN back c ON p.superseded_by = c.id WHERE p.scope = $1 AND c.depth < 1000
		), fwd AS (
			SELECT id, rank, 0 AS depth FROM seed
			UNION ALL
			SELECT n.superseded_by, f.rank, f.depth + 1 FROM fwd f JOIN belief n ON n.id = f.id
			WHERE n.scope = $1 AND n.superseded_by IS NOT NULL AND f.depth < 1000
		), chain AS (
			SELECT id, min(rank) AS rank FROM (SELECT id, rank FROM back UNION ALL SELECT id, rank FROM fwd) c GROUP BY id
		)
		SELECT `+scoped(beliefColumns, "b.scope = $1 ")+`, CASE WHEN b.embed_model = $2 THEN b.embedding <=> $3::vector END AS distance
		FROM chain JOIN belief b ON b.scope = $1 AND b.id = chain.id
		WHERE b.scope = $1 AND b.status NOT IN ('forgotten', 'held')
		ORDER BY chain.rank, b.valid_from, b.recorded_at, b.id`, scope, model, pgvector.NewVector(vec), seeds)
	if err != nil {
		return nil, err
	}
	bs, err := pgx.CollectRows(rows, scanBelief)
	for i := range bs {
		if j := slices.IndexFunc(ranked, func(r Belief) bool { return r.ID == bs[i].ID }); j >= 0 {
			bs[i].Match = ranked[j].Match
		}
	}
	return bs, err
}
