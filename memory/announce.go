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
	// ChangeBeliefCreated is a belief stored by any writer but an import: extraction,
	// an operator, consolidation; whatever its status (a held replacement, history
	// stored already ended).
	ChangeBeliefCreated ChangeKind = "belief.created"
	// ChangeBeliefForgotten is a belief soft-forgotten.
	ChangeBeliefForgotten ChangeKind = "belief.forgotten"
)

// ChangeKinds are every kind, in the order the documentation lists them.
var ChangeKinds = []ChangeKind{ChangeBeliefCreated, ChangeBeliefForgotten, ChangeRevisionApplied, ChangeRevisionReverted,
	ChangeReviewOpened, ChangeReviewResolved, ChangeEpisodeFailed, ChangeScopePurged}

// Change is one change memory committed: which row tells it, never its text.
type Change struct {
	Scope string
	Kind  ChangeKind
	// ID is the belief, revision event, review item or episode; zero for a purge.
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
	if a.reviewed {
		cs, err := reviewChanges(ctx, a.tx, a.b.Scope, a.now, a.b.decides)
		if err != nil {
			return err
		}
		a.changes = append(a.changes, cs...)
	}
	changes := a.changes
	a.changes, a.reviewed = nil, false
	return a.store.announceTx(ctx, a.tx, changes)
}

// reviewChanges is the review items of scope that statements returning nothing opened
// (a flag of dependents) or closed (a retirement, a keep, a forget) at time at: the
// scope's basis_changed items made then, and its items resolved then, read under the
// scope's lock. An item opened and closed at once is told both ways. skip is an item
// whose resolution its writer announces itself (an operator's decision), or zero.
func reviewChanges(ctx context.Context, tx pgx.Tx, scope string, at time.Time, skip int64) ([]Change, error) {
	rows, err := tx.Query(ctx, `SELECT id, kind = 'basis_changed' AND created_at = $2, resolved_at IS NOT NULL AND resolved_at = $2
		FROM belief_conflict WHERE scope = $1 AND ((kind = 'basis_changed' AND created_at = $2) OR resolved_at = $2)
		ORDER BY id`, scope, at)
	if err != nil {
		return nil, fmt.Errorf("read review items opened or closed: %w", err)
	}
	var (
		out              []Change
		id               int64
		opened, resolved bool
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &opened, &resolved}, func() error {
		if opened {
			out = append(out, Change{Scope: scope, Kind: ChangeReviewOpened, ID: id, At: at})
		}
		if resolved && id != skip {
			out = append(out, Change{Scope: scope, Kind: ChangeReviewResolved, ID: id, At: at})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read review items opened or closed: %w", err)
	}
	return out, nil
}

// announceReviewTx announces the review items of scope opened or closed at time at, by
// a writer that is no applier (forget, purge), with changes of its own after them.
func (s *Store) announceReviewTx(ctx context.Context, tx pgx.Tx, scope string, at time.Time, changes ...Change) error {
	if s.announcer == nil {
		return nil
	}
	cs, err := reviewChanges(ctx, tx, scope, at, 0)
	if err != nil {
		return err
	}
	return s.announceTx(ctx, tx, append(cs, changes...))
}
