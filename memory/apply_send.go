package memory

import (
	"cmp"
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// How the revision engine's statements reach PostgreSQL. A write whose result no
// decision waits for (a retirement, its flags, a moved start) is queued, and goes with
// the next statement something waits for, or when the batch ends: statements run in the
// order they were made, in fewer round trips. Each round trip costs a writer about a
// millisecond under load, inside the scope's lock.

// pipeline holds the statements queued and not yet sent.
type pipeline struct {
	batch *pgx.Batch
	// what names each queued statement, for its error.
	what []string
}

// exec queues a write whose result nothing waits for.
func (a *applier) exec(what, sql string, args ...any) {
	a.written()
	if a.queued.batch == nil {
		a.queued.batch = &pgx.Batch{}
	}
	a.queued.batch.Queue(sql, args...)
	a.queued.what = append(a.queued.what, what)
}

// written notes that the batch wrote: what was read ahead may have changed.
func (a *applier) written() { a.ahead = nil }

// send sends the queued statements and then sql, in one round trip, and gives sql's
// result to read. Without sql, it sends the queued statements alone, if any.
func (a *applier) send(ctx context.Context, what, sql string, args []any, read func(pgx.BatchResults) error) error {
	b, whats := a.queued.batch, a.queued.what
	a.queued = pipeline{}
	if sql != "" {
		if b == nil {
			b = &pgx.Batch{}
		}
		b.Queue(sql, args...)
	}
	if b == nil {
		return nil
	}
	br := a.tx.SendBatch(ctx, b)
	defer br.Close()
	for _, w := range whats {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("%s: %w", w, err)
		}
	}
	if sql != "" {
		if err := read(br); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("%s: %w", cmp.Or(what, "send queued statements"), err)
	}
	return nil
}

// flush sends the queued statements.
func (a *applier) flush(ctx context.Context) error { return a.send(ctx, "", "", nil, nil) }

// queryRow sends sql after the queued statements and scans its one row into dest.
func (a *applier) queryRow(ctx context.Context, what, sql string, args []any, dest ...any) error {
	return a.send(ctx, what, sql, args, func(br pgx.BatchResults) error { return br.QueryRow().Scan(dest...) })
}
