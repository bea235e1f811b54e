package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNotFound is returned for an unknown belief id.
var ErrNotFound = errors.New("not found")

// The columns of a belief: candidateColumns are what writers read, beliefColumns what
// is shown, which adds the episodes each belief rests on (two index lookups a row that
// an extraction's or a consolidation's candidates do without). Their subqueries find
// the belief's related rows in {scope}, which query replaces (see scoped).
const (
	candidateColumns = `b.id, b.scope, b.subject, b.attribute, b.kind, b.statement, b.status, b.confidence, b.origin,
	b.valid_from, b.valid_until, b.recorded_at, b.retired_at,
	(SELECT array_agg(p.id ORDER BY p.valid_from, p.id) FROM belief p WHERE p.scope = {scope} AND p.superseded_by = b.id),
	b.superseded_by, b.episode_id, b.quote, b.reinforced_count, b.last_seen_at,
	(SELECT array_agg(d.basis_id ORDER BY d.basis_id) FROM belief_dependency d WHERE d.scope = {scope} AND d.belief_id = b.id), b.needs_review, b.entity`
	beliefColumns = candidateColumns + `,
	(SELECT array_agg(s.id ORDER BY s.occurred_at, s.id) FROM (
		SELECT e.id, e.occurred_at FROM episode e WHERE e.scope = {scope} AND e.id = b.episode_id
		UNION SELECT e.id, e.occurred_at FROM revision_event r JOIN episode e ON e.scope = r.scope AND e.id = r.episode_id
			WHERE r.scope = {scope} AND r.old_belief_id = b.id AND r.action = 'reinforce' AND r.reverted_by IS NULL) s) AS episodes`
)

// scoped is columns for a statement of where: where a read of one scope names it as its
// first argument ("b.scope = $1 ..."), the subqueries name $1 too, as Citus must see it
// in each of them to keep the statement on the scope's shard (b.scope is not enough);
// a read by id names b.scope.
func scoped(columns, where string) string {
	scope := "b.scope"
	if strings.HasPrefix(where, "b.scope = $1 ") {
		scope = "$1"
	}
	return strings.ReplaceAll(columns, "{scope}", scope)
}

// beliefsSQL is the statement that reads columns of the beliefs b of where.
func beliefsSQL(columns, where string) string {
	return "SELECT " + scoped(columns, where) + " FROM belief b WHERE " + where
}

func scanBelief(row pgx.CollectableRow) (Belief, error) {
	var (
		b            Belief
		supersededBy *int64
		// A fused read's ranks and words score (nearestQuery.joinBack): null where a
		// belief is not in that ranking.
		vectorRank, wordsRank, entityRank *int
		words                             *float64
	)
	dest := []any{&b.ID, &b.Scope, &b.Subject, &b.Attribute, &b.Kind, &b.Statement, &b.Status, &b.Confidence, &b.Origin,
		&b.ValidFrom, &b.ValidUntil, &b.RecordedAt, &b.RetiredAt, &b.Supersedes, &supersededBy, &b.EpisodeID, &b.Quote,
		&b.ReinforcedCount, &b.LastSeenAt, &b.DependsOn, &b.NeedsReview, &b.Entity}
	for _, f := range row.FieldDescriptions()[len(dest):] {
		switch f.Name {
		case "episodes":
			dest = append(dest, &b.Episodes)
		case "distance":
			dest = append(dest, &b.Distance)
		case "vector_rank":
			dest = append(dest, &vectorRank)
		case "words":
			dest = append(dest, &words)
		case "words_rank":
			dest = append(dest, &wordsRank)
		case "entity_rank":
			dest = append(dest, &entityRank)
		default:
			return Belief{}, fmt.Errorf("unknown belief column %q", f.Name)
		}
	}
	if err := row.Scan(dest...); err != nil {
		return Belief{}, err
	}
	if supersededBy != nil {
		b.SupersededBy = []int64{*supersededBy}
	}
	if vectorRank != nil || words != nil || entityRank != nil {
		b.Match = &Match{VectorRank: deref(vectorRank), WordsScore: deref(words), WordsRank: deref(wordsRank),
			EntityRank: deref(entityRank)}
	}
	b.ValidFrom, b.RecordedAt, b.LastSeenAt = b.ValidFrom.UTC(), b.RecordedAt.UTC(), b.LastSeenAt.UTC()
	b.ValidUntil, b.RetiredAt = utcPtr(b.ValidUntil), utcPtr(b.RetiredAt)
	return b, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// Views of a scope's beliefs, as conditions on belief b with the scope in $1 and, for
// the point-in-time views, the time in $2. Only All sees forgotten beliefs, and held
// ones: never current, they are in no history.
const (
	currentView = "b.scope = $1 AND b.status = 'active'"
	historyView = "b.scope = $1 AND b.status NOT IN ('forgotten', 'held')"
	asOfView    = `b.scope = $1 AND b.status NOT IN ('forgotten', 'held')
		AND b.valid_from <= $2 AND (b.valid_until IS NULL OR b.valid_until > $2)`
	knownAtView = `b.scope = $1 AND b.status NOT IN ('forgotten', 'held')
		AND b.recorded_at <= $2 AND (b.retired_at IS NULL OR b.retired_at > $2)`
)

// queryBeliefs reads beliefs to show; queryCandidates reads them for a writer, without
// their episodes.
func (s *Store) queryBeliefs(ctx context.Context, where string, args ...any) ([]Belief, error) {
	return s.query(ctx, beliefColumns, where, args...)
}

func (s *Store) queryCandidates(ctx context.Context, where string, args ...any) ([]Belief, error) {
	return s.query(ctx, candidateColumns, where, args...)
}

func (s *Store) query(ctx context.Context, columns, where string, args ...any) ([]Belief, error) {
	rows, err := s.db.Query(ctx, beliefsSQL(columns, where), args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanBelief)
}

const currentOrder = " ORDER BY b.attribute, b.valid_from, b.id"

// Current is what memory believes now in scope: its active beliefs.
func (s *Store) Current(ctx context.Context, scope string) ([]Belief, error) {
	bs, err := s.queryBeliefs(ctx, currentView+currentOrder, scope)
	if err != nil {
		return nil, fmt.Errorf("current beliefs of %q: %w", scope, err)
	}
	return bs, nil
}

// CurrentUpTo is, for a writer, at most limit of the current beliefs of scope (0:
// all), so that a caller that needs them only while they are few learns it in one
// query. Their Episodes are not read.
func (s *Store) CurrentUpTo(ctx context.Context, scope string, limit int) ([]Belief, error) {
	var bs []Belief
	if err := sendQueued(ctx, s.db, func(b *pgx.Batch) { queueCurrentUpTo(b, scope, limit, &bs) }); err != nil {
		return nil, err
	}
	return bs, nil
}

// queueCurrentUpTo queues CurrentUpTo's read on b, into bs once b is sent.
func queueCurrentUpTo(b *pgx.Batch, scope string, limit int, bs *[]Belief) {
	where := currentView + currentOrder + " LIMIT nullif($2, 0)"
	b.Queue(beliefsSQL(candidateColumns, where), scope, limit).Query(func(rows pgx.Rows) error {
		var err error
		if *bs, err = pgx.CollectRows(rows, scanBelief); err != nil {
			return fmt.Errorf("current beliefs of %q: %w", scope, err)
		}
		return nil
	})
}

// All is every belief of scope, forgotten ones included, oldest first.
func (s *Store) All(ctx context.Context, scope string) ([]Belief, error) {
	bs, err := s.queryBeliefs(ctx, "b.scope = $1 ORDER BY b.valid_from, b.id", scope)
	if err != nil {
		return nil, fmt.Errorf("beliefs of %q: %w", scope, err)
	}
	return bs, nil
}

// AsOf is what was true in the world at t (valid time), as memory knows it now.
func (s *Store) AsOf(ctx context.Context, scope string, t time.Time) ([]Belief, error) {
	bs, err := s.queryBeliefs(ctx, asOfView+" ORDER BY b.attribute, b.valid_from, b.id", scope, t)
	if err != nil {
		return nil, fmt.Errorf("beliefs of %q as of %s: %w", scope, t.Format(time.RFC3339), err)
	}
	return bs, nil
}

// KnownAt is what memory believed current at t (known time).
func (s *Store) KnownAt(ctx context.Context, scope string, t time.Time) ([]Belief, error) {
	bs, err := s.queryBeliefs(ctx, knownAtView+" ORDER BY b.attribute, b.valid_from, b.id", scope, t)
	if err != nil {
		return nil, fmt.Errorf("beliefs of %q known at %s: %w", scope, t.Format(time.RFC3339), err)
	}
	return bs, nil
}

// Get is one belief by id, forgotten or not: it is how an operator looks a belief up.
// It finds the id's scope first (see ScopeOf); a caller that knows it calls GetIn.
func (s *Store) Get(ctx context.Context, id int64) (*Belief, error) {
	scope, err := s.ScopeOf(ctx, OfBelief, id)
	if err != nil {
		return nil, err
	}
	return s.GetIn(ctx, scope, id)
}

// GetIn is Get of a belief whose scope is known: on Citus, a read of that scope's shard
// alone.
func (s *Store) GetIn(ctx context.Context, scope string, id int64) (*Belief, error) {
	bs, err := s.queryBeliefs(ctx, "b.scope = $1 AND b.id = $2", scope, id)
	if err != nil {
		return nil, fmt.Errorf("belief %d: %w", id, err)
	}
	if len(bs) == 0 {
		return nil, fmt.Errorf("belief %d: %w", id, ErrNotFound)
	}
	return &bs[0], nil
}

// History is the supersession chain through belief id, oldest first: every belief that
// led to it and every belief that replaced it. Forgotten beliefs are left out, though the
// chain is followed through them; a forgotten id is not found.
func (s *Store) History(ctx context.Context, id int64) ([]Belief, error) {
	scope, err := s.ScopeOf(ctx, OfBelief, id)
	if err != nil {
		return nil, err
	}
	return s.HistoryIn(ctx, scope, id)
}

// HistoryIn is History of a belief whose scope is known. A chain never leaves its scope,
// so every step names it: on Citus the recursive read runs on the scope's shard alone.
func (s *Store) HistoryIn(ctx context.Context, scope string, id int64) ([]Belief, error) {
	bs, err := s.queryBeliefs(ctx, `b.scope = $1 AND b.id IN (
		WITH RECURSIVE back AS (
			SELECT id, 0 AS depth FROM belief WHERE scope = $1 AND id = $2
			UNION ALL
			SELECT p.id, c.depth + 1 FROM belief p JOIN back c ON p.superseded_by = c.id WHERE p.scope = $1 AND c.depth < 1000
		), fwd AS (
			SELECT id, superseded_by, 0 AS depth FROM belief WHERE scope = $1 AND id = $2
			UNION ALL
			SELECT n.id, n.superseded_by, f.depth + 1 FROM belief n JOIN fwd f ON n.id = f.superseded_by WHERE n.scope = $1 AND f.depth < 1000
		)
		SELECT id FROM back UNION SELECT id FROM fwd)
		ORDER BY b.valid_from, b.recorded_at, b.id`, scope, id)
	if err != nil {
		return nil, fmt.Errorf("history of belief %d: %w", id, err)
	}
	if len(bs) == 0 {
		return nil, fmt.Errorf("belief %d: %w", id, ErrNotFound)
	}
	kept := bs[:0]
	for _, b := range bs {
		if b.Status != StatusForgotten {
			kept = append(kept, b)
		} else if b.ID == id {
			return nil, fmt.Errorf("belief %d is forgotten: %w", id, ErrNotFound)
		}
	}
	return kept, nil
}

// Nearest is, for a writer, up to k active beliefs of scope embedded with model, nearest
// to vec by cosine distance first: the scope's own k nearest, whatever other scopes
// hold (see nearest). Their Episodes are not read.
func (s *Store) Nearest(ctx context.Context, scope, model string, vec []float32, k int) ([]Belief, error) {
	bs, err := s.ranked(ctx, rankQuery{view: currentView, args: []any{scope}, columns: candidateColumns, model: model, vec: vec, k: k})
	if err != nil {
		return nil, fmt.Errorf("nearest beliefs of %q: %w", scope, err)
	}
	return bs, nil
}

// CandidatesQuery asks for the current beliefs of a scope a writer shows its model for a
// text, as extraction does for a transcript.
type CandidatesQuery struct {
	Scope string
	// Text is what the writer read (the transcript); Vector its embedding by Model.
	Text   string
	Model  string
	Vector []float32
	K      int
}

// Candidates is up to q.K current beliefs of q.Scope for q.Text: the vector, words and
// entity rankings fused (fuse.go), so that a belief whose code, number or name the text
// says is among them even where the embedding blurs it. Beliefs not embedded with the
// model follow, newest first, as in every ranked read.
func (s *Store) Candidates(ctx context.Context, q CandidatesQuery) ([]Belief, error) {
	bs, err := s.ranked(ctx, rankQuery{view: currentView, args: []any{q.Scope}, columns: candidateColumns, text: q.Text,
		model: q.Model, vec: q.Vector, k: q.K})
	if err != nil {
		return nil, fmt.Errorf("candidates of %q: %w", q.Scope, err)
	}
	return bs, nil
}

// ranked is up to q.k beliefs of q.view (its arguments in q.args, the scope first)
// embedded with q.model, nearest to q.vec by cosine distance first, read as q.columns;
// with q.text, the vector ranking fused with the words and entity rankings of the text
// (fuse.go), each of q.k.
//
// Beliefs of the view without a vector of model cannot be ranked by it: those of a scope
// not yet re-embedded after EMBED_MODEL changed, or stored while an embedding call
// failed. Up to k of them follow the ranked ones, newest first and without a distance,
// so that a read still finds every belief while the background re-embedding goes on.
//
// Every read goes in one round trip, unless the scope has an index of its own.
func (s *Store) ranked(ctx context.Context, q rankQuery) ([]Belief, error) {
	scope, _ := q.args[0].(string)
	q.columns = scoped(q.columns, q.view)
	r, err := newNearestRead(ctx, s, nearestQuery{table: searchBeliefs, scope: scope, where: q.view, args: q.args, model: q.model,
		vec: q.vec, k: q.k, text: q.text}, q.columns, scanBelief)
	if err != nil {
		return nil, err
	}
	b := &pgx.Batch{}
	r.queue(b)
	n := len(q.args)
	where := fmt.Sprintf("%s AND %s ORDER BY b.valid_from DESC, b.id DESC LIMIT $%d", q.view, notEmbeddedWith(n+1), n+2)
	var unranked []Belief
	b.Queue("SELECT "+q.columns+" FROM belief b WHERE "+where, append(slices.Clone(q.args), q.model, q.k)...).Query(func(rows pgx.Rows) error {
		var err error
		unranked, err = pgx.CollectRows(rows, scanBelief)
		return err
	})
	if err := s.db.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	// A fused statement's rows are the vector ranking's and those only the text found:
	// finish sees the former alone, as a read of the vectors.
	var text []Belief
	if q.text != "" {
		r.rows, text = splitRanks(r.rows)
	}
	bs, err := r.finish(ctx)
	if err != nil {
		return nil, err
	}
	if q.text != "" {
		bs = fuse(q.k, bs, text)
	}
	for _, u := range unranked {
		if !slices.ContainsFunc(bs, func(b Belief) bool { return b.ID == u.ID }) {
			bs = append(bs, u)
		}
	}
	return bs, nil
}

// Events is the revision events of scope, newest first, at most limit (0: all). Events
// of forgotten beliefs are left out: they quote them.
func (s *Store) Events(ctx context.Context, scope string, limit int) ([]Event, error) {
	rows, err := s.db.Query(ctx, `SELECT `+eventColumns+`
		FROM revision_event e WHERE e.scope = $1 AND `+eventNotForgotten+`
		ORDER BY e.created_at DESC, e.id DESC LIMIT nullif($2, 0)`, scope, limit)
	if err != nil {
		return nil, fmt.Errorf("events of %q: %w", scope, err)
	}
	evs, err := pgx.CollectRows(rows, scanEvent)
	if err != nil {
		return nil, fmt.Errorf("events of %q: %w", scope, err)
	}
	return evs, nil
}

// EventIn is revision event id of scope, or ErrNotFound; an event of a forgotten belief
// is not found either, as Events leaves it out: it quotes the belief. A caller with an
// id alone finds its scope first (ScopeOf).
func (s *Store) EventIn(ctx context.Context, scope string, id int64) (*Event, error) {
	return one(ctx, s.db, "event", scope, id, `SELECT `+eventColumns+` FROM revision_event e WHERE e.scope = $1 AND e.id = $2 AND `+eventNotForgotten, scanEvent)
}

// one is the row that sql, with scope in $1 and id in $2, reads, scanned by scan;
// ErrNotFound, naming what and id, when there is none.
func one[T any](ctx context.Context, db querier, what, scope string, id int64, sql string, scan pgx.RowToFunc[T]) (*T, error) {
	rows, err := db.Query(ctx, sql, scope, id)
	if err != nil {
		return nil, fmt.Errorf("%s %d: %w", what, id, err)
	}
	v, err := pgx.CollectExactlyOneRow(rows, scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s %d: %w", what, id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %d: %w", what, id, err)
	}
	return &v, nil
}

// eventColumns are the columns of a revision event e, in scanEvent's order.
const eventColumns = `e.id, e.scope, e.action, e.reason, e.origin, e.old_belief_id, e.new_belief_id,
	e.old_statement, e.new_statement, e.excerpt, e.rationale, e.episode_id, e.created_at,
	e.reverts, e.reverted_by, e.reverted_at`

// eventNotForgotten keeps out the events of forgotten beliefs: they quote them.
// The scope is $1 of every statement using it, named so that Citus keeps it on one shard.
const eventNotForgotten = `NOT EXISTS (SELECT 1 FROM belief f
	WHERE f.scope = $1 AND f.id IN (e.old_belief_id, e.new_belief_id) AND f.status = 'forgotten')`

func scanEvent(row pgx.CollectableRow) (Event, error) {
	var e Event
	err := row.Scan(e.fields()...)
	e.CreatedAt, e.RevertedAt = e.CreatedAt.UTC(), utcPtr(e.RevertedAt)
	return e, err
}

// fields are the scan destinations of eventColumns.
func (e *Event) fields() []any {
	return []any{&e.ID, &e.Scope, &e.Action, &e.Reason, &e.Origin, &e.OldBeliefID, &e.NewBeliefID,
		&e.OldStatement, &e.NewStatement, &e.Excerpt, &e.Rationale, &e.EpisodeID, &e.CreatedAt,
		&e.Reverts, &e.RevertedBy, &e.RevertedAt}
}

// conflictColumns are the columns of a review item c, its statement taken from the
// proposal or, for an item about a belief, from that belief, found in {scope} (see
// scoped).
const conflictColumns = `c.id, c.scope, c.kind, c.cause, c.origin, c.action, c.reason, c.belief_id, c.target_belief_id,
	coalesce(nullif(c.proposed->>'statement', ''), (SELECT b.statement FROM belief b WHERE b.scope = {scope} AND b.id = c.belief_id), ''),
	c.proposed, c.detail, c.episode_id, c.status, c.created_at, c.resolved_at, c.resolution, c.note`

func scanConflict(row pgx.CollectableRow) (Conflict, error) {
	var c Conflict
	err := row.Scan(&c.ID, &c.Scope, &c.Kind, &c.Cause, &c.Origin, &c.Action, &c.Reason, &c.BeliefID, &c.TargetID,
		&c.Statement, &c.Proposed, &c.Detail, &c.EpisodeID, &c.Status, &c.CreatedAt, &c.ResolvedAt, &c.Resolution, &c.Note)
	c.CreatedAt, c.ResolvedAt = c.CreatedAt.UTC(), utcPtr(c.ResolvedAt)
	return c, err
}

// Conflicts is the review queue of scope, oldest first: the open items, or with all the
// closed ones too. Open items about forgotten beliefs are left out: nothing is left to
// review there (a forgotten basis is what a basis_changed item is about, though).
func (s *Store) Conflicts(ctx context.Context, scope string, all bool) ([]Conflict, error) {
	rows, err := s.db.Query(ctx, `SELECT `+strings.ReplaceAll(conflictColumns, "{scope}", "$1")+`
		FROM belief_conflict c WHERE c.scope = $1 AND ($2 OR (c.status = 'open' AND NOT EXISTS (SELECT 1 FROM belief f
			WHERE f.scope = $1 AND f.status = 'forgotten' AND (f.id = c.belief_id OR (c.kind = 'refused' AND f.id = c.target_belief_id)))))
		ORDER BY c.created_at, c.id`, scope, all)
	if err != nil {
		return nil, fmt.Errorf("conflicts of %q: %w", scope, err)
	}
	cs, err := pgx.CollectRows(rows, scanConflict)
	if err != nil {
		return nil, fmt.Errorf("conflicts of %q: %w", scope, err)
	}
	if err := s.explain(ctx, scope, cs); err != nil {
		return nil, err
	}
	return cs, nil
}

// Conflict is review item id, open or closed, or ErrNotFound.
func (s *Store) Conflict(ctx context.Context, id int64) (*Conflict, error) {
	scope, err := s.ScopeOf(ctx, OfItem, id)
	if err != nil {
		return nil, err
	}
	return s.ConflictIn(ctx, scope, id)
}

// ConflictIn is Conflict of a review item whose scope is known.
func (s *Store) ConflictIn(ctx context.Context, scope string, id int64) (*Conflict, error) {
	c, err := one(ctx, s.db, "review item", scope, id, `SELECT `+strings.ReplaceAll(conflictColumns, "{scope}", "$1")+` FROM belief_conflict c WHERE c.scope = $1 AND c.id = $2`, scanConflict)
	if err != nil {
		return nil, err
	}
	cs := []Conflict{*c}
	if err := s.explain(ctx, scope, cs); err != nil {
		return nil, err
	}
	return &cs[0], nil
}

// ActiveWithAttributes is, for a writer, up to limit active beliefs of scope filling
// one of attributes, newest first, leaving out the ids in exclude. Their Episodes are
// not read.
func (s *Store) ActiveWithAttributes(ctx context.Context, scope string, attributes []string, exclude []int64, limit int) ([]Belief, error) {
	bs, err := s.queryCandidates(ctx, `b.scope = $1 AND b.status = 'active' AND b.attribute = ANY($2) AND NOT b.id = ANY($3)
		ORDER BY b.valid_from DESC, b.id DESC LIMIT $4`, scope, attributes, exclude, limit)
	if err != nil {
		return nil, fmt.Errorf("beliefs of %q by attribute: %w", scope, err)
	}
	return bs, nil
}
