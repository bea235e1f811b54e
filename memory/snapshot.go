package memory

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ErrStale is returned by ApplyTx for a batch whose writer decided without seeing an
// active belief its scope holds now (another writer stored it meanwhile): nothing is
// applied, and the writer should decide again from what the scope holds now. Without
// this, two extractions of one scope running at once could each store a belief the
// other never saw, and the final state would depend on their timing.
var ErrStale = errors.New("the scope gained beliefs the writer did not see")

// Snapshot is what a writer saw of a scope before deciding: the newest belief id of the
// scope then. Beliefs of a scope are inserted under its lock, so a belief committed
// after the snapshot has a larger id.
type Snapshot struct {
	Latest int64
}

// Snapshot reads the newest belief id of scope. Take it before choosing what to show the
// writer, and pass it as Batch.Seen.
func (s *Store) Snapshot(ctx context.Context, scope string) (*Snapshot, error) {
	var snap Snapshot
	if err := sendQueued(ctx, s.db, func(b *pgx.Batch) { queueSnapshot(b, scope, &snap) }); err != nil {
		return nil, err
	}
	return &snap, nil
}

// queueSnapshot queues Snapshot's read on b, into snap once b is sent.
func queueSnapshot(b *pgx.Batch, scope string, snap *Snapshot) {
	b.Queue("SELECT coalesce(max(id), 0) FROM belief WHERE scope = $1", scope).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(&snap.Latest); err != nil {
			return fmt.Errorf("snapshot of %q: %w", scope, err)
		}
		return nil
	})
}
