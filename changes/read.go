package changes

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Query is a read of the feed: one scope, or every scope starting with Prefix.
type Query struct {
	Scope  string
	Prefix string
	// IsPrefix says Prefix is set (an empty prefix is every scope).
	IsPrefix bool
	After    Cursor
	Limit    int
}

// Page is what a read returns: the changes after the cursor, oldest first, and the
// cursor after them (the same as After when there is nothing new).
type Page struct {
	Changes []Change
	Next    Cursor
}

// Reader reads the feed.
type Reader struct {
	pool *pgxpool.Pool
}

// NewReader returns a Reader on pool.
func NewReader(pool *pgxpool.Pool) *Reader { return &Reader{pool: pool} }

// Read reads one page. A scope's changes come in position order; a prefix's scopes are
// read one by one (router work on Citus), and merged by time. Positions in the cursor
// of scopes outside q are kept, untouched.
func (r *Reader) Read(ctx context.Context, q Query) (*Page, error) {
	q.Limit = cmp.Or(q.Limit, 100)
	next := q.After.clone()
	if next == nil {
		next = Cursor{}
	}
	scopes := []string{q.Scope}
	if q.IsPrefix {
		heads, err := r.heads(ctx, q.Prefix)
		if err != nil {
			return nil, err
		}
		scopes = scopes[:0]
		for _, h := range heads {
			if h.position > next[h.scope] {
				scopes = append(scopes, h.scope)
			}
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

type head struct {
	scope    string
	position int64
}

// heads are the last positions of the scopes starting with prefix: the one read of
// every shard on Citus, one small row per scope.
func (r *Reader) heads(ctx context.Context, prefix string) ([]head, error) {
	rows, err := r.pool.Query(ctx, "SELECT scope, position FROM change_head WHERE starts_with(scope, $1)", prefix)
	if err != nil {
		return nil, fmt.Errorf("read change heads under %q: %w", prefix, err)
	}
	hs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (head, error) {
		var h head
		return h, row.Scan(&h.scope, &h.position)
	})
	if err != nil {
		return nil, fmt.Errorf("read change heads under %q: %w", prefix, err)
	}
	return hs, nil
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
