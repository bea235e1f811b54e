package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ChangeKind names a change memory announces: the event types of the change feed and
// of webhooks.
type ChangeKind string

// The kinds of change.
const (
	ChangeRevisionApplied  ChangeKind = "revision.applied"
	ChangeRevisionReverted ChangeKind = "revision.reverted"
	ChangeReviewOpened     ChangeKind = "review.opened"
	ChangeReviewResolved   ChangeKind = "review.resolved"
	ChangeEpisodeFailed    ChangeKind = "episode.failed"
	ChangeScopePurged      ChangeKind = "scope.purged"
)

// ChangeKinds are every kind, in the order the documentation lists them.
var ChangeKinds = []ChangeKind{ChangeRevisionApplied, ChangeRevisionReverted, ChangeReviewOpened, ChangeReviewResolved,
	ChangeEpisodeFailed, ChangeScopePurged}

// Change is one change memory committed: which row tells it, never its text.
type Change struct {
	Scope string
	Kind  ChangeKind
	// ID is the revision event, review item or episode; zero for a purge.
	ID int64
	At time.Time
	// Purged is a purge's counts, for ChangeScopePurged; All when the whole scope went.
	Purged map[string]int64
	All    bool
}

// Announcer hears of the changes memory makes, inside the transaction that makes them,
// after its last statement on memory's tables: what it writes commits or rolls back with
// them. memory calls it and knows nothing else of it (the change feed and webhooks
// implement it).
type Announcer interface {
	AnnounceTx(ctx context.Context, tx pgx.Tx, changes []Change) error
}

// announceTx tells the store's announcer of changes, if any.
func (s *Store) announceTx(ctx context.Context, tx pgx.Tx, changes []Change) error {
	if s.announcer == nil || len(changes) == 0 {
		return nil
	}
	if err := s.announcer.AnnounceTx(ctx, tx, changes); err != nil {
		return fmt.Errorf("announce changes of %q: %w", changes[0].Scope, err)
	}
	return nil
}

// note records a change the applier made, announced when its batch ends.
func (a *applier) note(kind ChangeKind, id int64) {
	a.changes = append(a.changes, Change{Scope: a.b.Scope, Kind: kind, ID: id, At: a.now})
}

// announce sends the queued statements, then announces what the batch changed: its
// events, the items it opened (refused revisions, and beliefs whose basis changed).
func (a *applier) announce(ctx context.Context) error {
	if err := a.flush(ctx); err != nil {
		return err
	}
	if a.store.announcer == nil {
		return nil
	}
	if a.flagged {
		// Items a flag opened: the statement is queued and returns nothing, and they are
		// the scope's open basis_changed items made at the batch's time, under its lock.
		rows, err := a.tx.Query(ctx, `SELECT id FROM belief_conflict WHERE scope = $1 AND kind = 'basis_changed'
			AND status = 'open' AND created_at = $2 ORDER BY id`, a.b.Scope, a.now)
		if err != nil {
			return fmt.Errorf("read opened review items: %w", err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return fmt.Errorf("read opened review items: %w", err)
		}
		for _, id := range ids {
			a.note(ChangeReviewOpened, id)
		}
	}
	changes := a.changes
	a.changes, a.flagged = nil, false
	return a.store.announceTx(ctx, a.tx, changes)
}
