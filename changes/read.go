package changes

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Query is a read of the feed: one scope, or every scope starting with one of Prefixes.
type Query struct {
	Scope string
	// Prefixes, when not nil, make the read a prefix read: every scope starting with one
	// of them (an empty prefix is every scope).
	Prefixes []string
	After    Cursor
	Limit    int
}

// Page is what a read returns: the changes after the cursor, oldest first, and the
// cursor after them (the same as After when there is nothing new).
type Page struct {
	Changes []Change
	Next    Cursor
}

// clockSQL is the database's clock in microseconds: the first position of a scope's
// changes, and the bound of the positions that may exist.
const clockSQL = "(extract(epoch FROM statement_timestamp()) * 1000000)::bigint"

// AheadError is a cursor naming a position of a scope that its feed never gave: past
// the scope's last change, or, for a scope with none kept, past the database's clock.
// It is an ErrCursor.
type AheadError struct {
	Scope    string
	Position int64
	// Last is the scope's last position, zero when it has none kept.
	Last int64
}

func (e *AheadError) Error() string {
	if e.Last == 0 {
		return fmt.Sprintf("the cursor names position %d of %q, which no change of it has had yet", e.Position, e.Scope)
	}
	return fmt.Sprintf("the cursor names position %d of %q, past its last change (%d)", e.Position, e.Scope, e.Last)
}

// Is makes an AheadError an ErrCursor.
func (e *AheadError) Is(target error) bool { return target == ErrCursor }

// Reader reads the feed.
type Reader struct {
	pool *pgxpool.Pool
}

// NewReader returns a Reader on pool.
func NewReader(pool *pgxpool.Pool) *Reader { return &Reader{pool: pool} }

// Read reads one page. A scope's changes come in position order; a prefix's scopes are
// read one by one (router work on Citus), and merged by time. Positions in the cursor
// of scopes outside q are kept, untouched. A position of a scope of q that its feed
// never gave is an *AheadError.
func (r *Reader) Read(ctx context.Context, q Query) (*Page, error) {
	q.Limit = cmp.Or(q.Limit, 100)
	next := q.After.clone()
	if next == nil {
		next = Cursor{}
	}
	heads, err := r.heads(ctx, q)
	if err != nil {
		return nil, err
	}
	if err := heads.check(q, next); err != nil {
		return nil, err
	}
	var scopes []string
	for s, last := range heads.last {
		if last > next[s] {
			scopes = append(scopes, s)
		}
	}
	lists := make([][]Change, 0, len(scopes))
	for _, s := range scopes {
		cs, err := r.scope(ctx, s, next[s], q.Limit)
		if err != nil {
			return nil, err
		}
		if len(cs) > 0 {
			lists = append(lists, cs)
		}
	}
	out := merge(lists, q.Limit)
	for _, c := range out {
		next[c.Scope] = c.Position
	}
	return &Page{Changes: out, Next: next}, nil
}

// merge takes at most limit changes from lists (one per scope, each in position order),
// the earliest head first: a scope's changes stay in position order, so a cursor never
// passes a change a limit left out.
func merge(lists [][]Change, limit int) []Change {
	var out []Change
	for len(out) < limit {
		best := -1
		for i, l := range lists {
			if len(l) == 0 {
				continue
			}
			if best < 0 || cmp.Or(l[0].At.Compare(lists[best][0].At), strings.Compare(l[0].Scope, lists[best][0].Scope)) < 0 {
				best = i
			}
		}
		if best < 0 {
			break
		}
		out = append(out, lists[best][0])
		lists[best] = lists[best][1:]
	}
	return out
}

// heads is what a read starts from: the last position of each scope of the read that
// has changes, and the database's clock.
type heads struct {
	last map[string]int64
	now  int64
}

// heads reads the last positions of q's scopes, and the clock, in one round trip: for a
// prefix, the one read of every shard on Citus, one small row per scope.
func (r *Reader) heads(ctx context.Context, q Query) (*heads, error) {
	h := &heads{last: map[string]int64{}}
	collect := func(rows pgx.Rows) error {
		var (
			scope string
			last  int64
		)
		_, err := pgx.ForEachRow(rows, []any{&scope, &last}, func() error {
			h.last[scope] = last
			return nil
		})
		return err
	}
	b := &pgx.Batch{}
	if q.Prefixes == nil {
		b.Queue("SELECT scope, position FROM change_head WHERE scope = $1", q.Scope).Query(collect)
	}
	for _, p := range q.Prefixes {
		b.Queue("SELECT scope, position FROM change_head WHERE starts_with(scope, $1)", p).Query(collect)
	}
	// No table: on Citus the coordinator's clock, which gave the positions.
	b.Queue("SELECT " + clockSQL).QueryRow(func(row pgx.Row) error { return row.Scan(&h.now) })
	if err := r.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("read the change heads: %w", err)
	}
	return h, nil
}

// check refuses a cursor naming a position of one of q's scopes that was never given: a
// scope's positions never pass its last, nor, once a purge dropped them, the clock.
func (h *heads) check(q Query, c Cursor) error {
	for scope, pos := range c {
		if !q.covers(scope) {
			continue
		}
		last, ok := h.last[scope]
		if (ok && pos > last) || (!ok && pos > h.now) {
			return &AheadError{Scope: scope, Position: pos, Last: last}
		}
	}
	return nil
}

// covers is whether scope is one of q's.
func (q Query) covers(scope string) bool {
	if q.Prefixes == nil {
		return scope == q.Scope
	}
	return slices.ContainsFunc(q.Prefixes, func(p string) bool { return strings.HasPrefix(scope, p) })
}

// scope reads at most limit changes of scope after position.
func (r *Reader) scope(ctx context.Context, scope string, after int64, limit int) ([]Change, error) {
	rows, err := r.pool.Query(ctx, `SELECT scope, position, kind, coalesce(ref_id, 0), counts, created_at FROM change
		WHERE scope = $1 AND position > $2 ORDER BY position LIMIT $3`, scope, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read changes of %q: %w", scope, err)
	}
	cs, err := pgx.CollectRows(rows, scanChange)
	if err != nil {
		return nil, fmt.Errorf("read changes of %q: %w", scope, err)
	}
	return cs, nil
}

func scanChange(row pgx.CollectableRow) (Change, error) {
	var (
		c      Change
		counts []byte
	)
	if err := row.Scan(&c.Scope, &c.Position, &c.Kind, &c.RefID, &counts, &c.At); err != nil {
		return c, err
	}
	if counts != nil {
		var p purgeJSON
		if err := json.Unmarshal(counts, &p); err != nil {
			return c, fmt.Errorf("read purge counts: %w", err)
		}
		c.Counts, c.All = p.Counts, p.All
	}
	return c, nil
}

// Get reads one change of scope by position, for a delivery built at send time.
func (r *Reader) Get(ctx context.Context, scope string, position int64) (*Change, error) {
	rows, err := r.pool.Query(ctx, `SELECT scope, position, kind, coalesce(ref_id, 0), counts, created_at FROM change
		WHERE scope = $1 AND position = $2`, scope, position)
	if err != nil {
		return nil, fmt.Errorf("read change %d of %q: %w", position, scope, err)
	}
	c, err := pgx.CollectExactlyOneRow(rows, scanChange)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil //nolint:nilnil // gone: purged
	}
	if err != nil {
		return nil, fmt.Errorf("read change %d of %q: %w", position, scope, err)
	}
	return &c, nil
}
