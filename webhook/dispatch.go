package webhook

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/credohq/credo/changes"
	"github.com/credohq/credo/internal/riverjobs"
	"github.com/credohq/credo/internal/tracing"
	"github.com/credohq/credo/memory"
)

// Queue is the River queue of deliveries.
const Queue = "webhook"

// DeliverArgs is the job of one delivery: the change at Position of Scope, to webhook
// WebhookID. scope is also what a purge of the scope finds the job by.
type DeliverArgs struct {
	Scope     string `json:"scope"`
	WebhookID int64  `json:"webhook_id"`
	Position  int64  `json:"position"`
}

// Kind is River's name of the job.
func (DeliverArgs) Kind() string { return "webhook_deliver" }

// InsertOpts puts deliveries on their queue. Retries are the worker's (it snoozes),
// so River's attempts only count errors of its own.
func (DeliverArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: 25}
}

// purgeLockSQL keeps a purge of a scope and the sends of its deliveries apart: a send
// holds it shared from reading its body to recording the answer, a purge exclusively
// from its announcement to its commit. After a purge returns, no send carries what it
// erased.
const purgeLockSQL = "SELECT pg_advisory_xact_lock(hashtext('credo:webhook-purge'), hashtext($1))"

const sendLockSQL = "SELECT pg_advisory_xact_lock_shared(hashtext('credo:webhook-purge'), hashtext($1))"

// Dispatcher follows the change feed: it writes each change's deliveries and their jobs
// in the change's transaction.
type Dispatcher struct {
	jobs riverjobs.Inserter
	// err is why no River client could be made: told by FollowTx.
	err error
}

var _ changes.Follower = (*Dispatcher)(nil)

// NewDispatcher returns a Dispatcher, with an insert-only River client of its own (it
// inserts in the caller's transaction).
func NewDispatcher() *Dispatcher {
	client, err := river.NewClient(riverpgxv5.New(nil), &river.Config{})
	if err != nil {
		return &Dispatcher{err: fmt.Errorf("webhook dispatcher: %w", err)}
	}
	return &Dispatcher{jobs: client}
}

type delivery struct {
	change  changes.Change
	webhook int64
}

// FollowTx writes the deliveries of cs to the webhooks that subscribe to them, and their
// jobs. A purge first waits for the sends of its scope in flight.
func (d *Dispatcher) FollowTx(ctx context.Context, tx pgx.Tx, cs []changes.Change) error {
	if d.err != nil {
		return d.err
	}
	for _, c := range cs {
		if c.Kind != memory.ChangeScopePurged {
			continue
		}
		if _, err := tx.Exec(ctx, purgeLockSQL, c.Scope); err != nil {
			return fmt.Errorf("wait for deliveries of %q: %w", c.Scope, err)
		}
	}
	ws, err := all(ctx, tx)
	if err != nil {
		return err
	}
	var ds []delivery
	for _, c := range cs {
		for _, w := range ws {
			if w.Subscribes(c.Scope, c.Kind) {
				ds = append(ds, delivery{change: c, webhook: w.ID})
			}
		}
	}
	if len(ds) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, dl := range ds {
		b.Queue(`INSERT INTO webhook_delivery (scope, webhook_id, position, kind, created_at) VALUES ($1, $2, $3, $4, $5)`,
			dl.change.Scope, dl.webhook, dl.change.Position, dl.change.Kind, dl.change.At)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("write deliveries: %w", err)
	}
	_, err = riverjobs.InsertMany(ctx, tx, carryTrace{d.jobs}, ds, func(dl delivery) DeliverArgs {
		return DeliverArgs{Scope: dl.change.Scope, WebhookID: dl.webhook, Position: dl.change.Position}
	})
	if err != nil {
		return fmt.Errorf("insert delivery jobs: %w", err)
	}
	return nil
}

// ErasedTx deletes the deliveries of a scope purged whole, once the sends of the scope
// in flight are done: what they named is gone, and no row may name the scope. Their
// jobs go with the purge's (memory deletes the scope's jobs); one running finds its
// delivery gone and completes.
func (d *Dispatcher) ErasedTx(ctx context.Context, tx pgx.Tx, scope string) error {
	if _, err := tx.Exec(ctx, purgeLockSQL, scope); err != nil {
		return fmt.Errorf("wait for deliveries of %q: %w", scope, err)
	}
	if _, err := tx.Exec(ctx, "DELETE FROM webhook_delivery WHERE scope = $1", scope); err != nil {
		return fmt.Errorf("drop deliveries of %q: %w", scope, err)
	}
	return nil
}

// carryTrace writes the trace context of the change's transaction (the span that made
// the change) in each delivery job's metadata, as River's OpenTelemetry middleware does
// for the clients it is installed on (this insert-only client has none): a delivery's
// work is then that span's child (tracing.RiverMiddleware), with a link to it.
type carryTrace struct{ riverjobs.Inserter }

func (c carryTrace) InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	if parent := tracing.Carry(ctx); parent != "" {
		meta, err := json.Marshal(map[string]string{"traceparent": parent})
		if err != nil {
			return nil, err
		}
		for i := range params {
			params[i].InsertOpts = &river.InsertOpts{Metadata: meta}
		}
	}
	return c.Inserter.InsertManyTx(ctx, tx, params)
}
