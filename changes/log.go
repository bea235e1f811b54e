package changes

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/memory"
)

// Channel is the LISTEN/NOTIFY channel a committed change is notified on, with its
// scope as the payload.
const Channel = "credo_changes"

// Change is one row of the feed.
type Change struct {
	Scope    string
	Position int64
	Kind     memory.ChangeKind
	// RefID is the revision event, review item or episode; zero for a purge.
	RefID  int64
	Counts map[string]int64
	// All: the purge erased the whole scope.
	All bool
	At  time.Time
}

// purgeJSON is a purge's counts as stored.
type purgeJSON struct {
	All    bool             `json:"all"`
	Counts map[string]int64 `json:"counts"`
}

// Follower hears of the changes written, in the same transaction: a webhook
// subscription inserts its deliveries.
type Follower interface {
	FollowTx(ctx context.Context, tx pgx.Tx, changes []Change) error
	// ErasedTx is told that scope was purged whole: the follower deletes what it keeps
	// that names the scope, for no row may name it after the purge commits.
	ErasedTx(ctx context.Context, tx pgx.Tx, scope string) error
}

// Config configures a Log.
type Config struct {
	// Followers are told of every change written, in order.
	Followers []Follower
}

// Log writes the change feed: it is memory's Announcer.
type Log struct {
	followers []Follower
}

// NewLog returns a Log.
func NewLog(cfg Config) *Log {
	return &Log{followers: slices.Clone(cfg.Followers)}
}

var _ memory.Announcer = (*Log)(nil)

// AnnounceTx gives the changes their scope's next positions and writes them in tx, then
// tells the followers. A change already written (the same kind and row, announced twice)
// is not written again.
func (l *Log) AnnounceTx(ctx context.Context, tx pgx.Tx, cs []memory.Change) error {
	var written []Change
	for scope, group := range byScope(cs) {
		if erasedWhole(group) {
			if err := l.erase(ctx, tx, scope); err != nil {
				return err
			}
			continue
		}
		w, err := writeScope(ctx, tx, scope, group)
		if err != nil {
			return err
		}
		written = append(written, w...)
	}
	if len(written) == 0 {
		return nil
	}
	for _, f := range l.followers {
		if err := f.FollowTx(ctx, tx, written); err != nil {
			return err
		}
	}
	return nil
}

// byScope groups cs by scope, each group in its order, the scopes in first-seen order.
func byScope(cs []memory.Change) func(yield func(string, []memory.Change) bool) {
	return func(yield func(string, []memory.Change) bool) {
		var order []string
		groups := map[string][]memory.Change{}
		for _, c := range cs {
			if _, ok := groups[c.Scope]; !ok {
				order = append(order, c.Scope)
			}
			groups[c.Scope] = append(groups[c.Scope], c)
		}
		for _, s := range order {
			if !yield(s, groups[s]) {
				return
			}
		}
	}
}

// erasedWhole is whether cs purge their scope whole.
func erasedWhole(cs []memory.Change) bool {
	return slices.ContainsFunc(cs, func(c memory.Change) bool { return c.Kind == memory.ChangeScopePurged && c.All })
}

// erase drops the feed of a scope purged whole, its changes and its head, and tells the
// followers: an erased scope leaves no row that names it, so its purge is not announced.
func (l *Log) erase(ctx context.Context, tx pgx.Tx, scope string) error {
	b := &pgx.Batch{}
	b.Queue("DELETE FROM change WHERE scope = $1", scope)
	b.Queue("DELETE FROM change_head WHERE scope = $1", scope)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("drop the feed of purged %q: %w", scope, err)
	}
	for _, f := range l.followers {
		if err := f.ErasedTx(ctx, tx, scope); err != nil {
			return err
		}
	}
	return nil
}

// writeScope writes the changes of one scope: the head first, whose row lock orders the
// scope's writers by commit (see the package's documentation).
func writeScope(ctx context.Context, tx pgx.Tx, scope string, cs []memory.Change) ([]Change, error) {
	cs = dedupe(cs)
	now := cs[len(cs)-1].At
	var last int64
	// The first position is the database's clock, in microseconds, or the head's next
	// when that is later: a scope's positions grow, and go on growing after a purge
	// dropped its head (see the package's documentation). On Citus the coordinator
	// evaluates the clock: one clock for every scope.
	err := tx.QueryRow(ctx, `INSERT INTO change_head (scope, position, updated_at) VALUES ($1, `+clockSQL+` + $2 - 1, $3)
		ON CONFLICT (scope) DO UPDATE SET position = greatest(change_head.position + $2, excluded.position), updated_at = $3
		RETURNING position`, scope, int64(len(cs)), now).Scan(&last)
	if err != nil {
		return nil, fmt.Errorf("take positions of %q: %w", scope, err)
	}
	first := last - int64(len(cs)) + 1
	all := make([]Change, 0, len(cs))
	deletes := make([]bool, 0, len(cs))
	b := &pgx.Batch{}
	for i, c := range cs {
		ch := Change{Scope: scope, Position: first + int64(i), Kind: c.Kind, RefID: c.ID, Counts: c.Purged, All: c.All, At: c.At}
		var counts []byte
		if c.Kind == memory.ChangeScopePurged {
			purged := c.Purged
			if purged == nil {
				purged = map[string]int64{}
			}
			if counts, err = json.Marshal(purgeJSON{All: c.All, Counts: purged}); err != nil {
				return nil, err
			}
		}
		var ref *int64
		if c.ID != 0 {
			ref = &ch.RefID
		}
		b.Queue(`INSERT INTO change (scope, position, kind, ref_id, counts, created_at) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (scope, kind, ref_id) WHERE ref_id IS NOT NULL DO NOTHING`, scope, ch.Position, ch.Kind, ref, counts, ch.At)
		if c.Kind == memory.ChangeScopePurged && c.All {
			// What the scope's earlier changes named is gone: only the purge stays.
			b.Queue("DELETE FROM change WHERE scope = $1 AND position < $2", scope, ch.Position)
		}
		all = append(all, ch)
		deletes = append(deletes, c.Kind == memory.ChangeScopePurged && c.All)
	}
	b.Queue("SELECT pg_notify($1, $2)", Channel, scope)
	br := tx.SendBatch(ctx, b)
	out := make([]Change, 0, len(all))
	for i, ch := range all {
		tag, err := br.Exec()
		if err != nil {
			_ = br.Close()
			return nil, fmt.Errorf("write changes of %q: %w", scope, err)
		}
		if tag.RowsAffected() == 1 {
			out = append(out, ch) // else announced before: a gap in positions, never a double
		}
		if deletes[i] {
			if _, err := br.Exec(); err != nil {
				_ = br.Close()
				return nil, fmt.Errorf("drop changes of purged %q: %w", scope, err)
			}
		}
	}
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("write changes of %q: %w", scope, err)
	}
	return out, nil
}

// dedupe drops a change announced twice in one call.
func dedupe(cs []memory.Change) []memory.Change {
	type ref struct {
		kind memory.ChangeKind
		id   int64
	}
	seen := map[ref]bool{}
	out := cs[:0:0]
	for _, c := range cs {
		key := ref{c.Kind, c.ID}
		if c.ID != 0 && seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, c)
	}
	return out
}
