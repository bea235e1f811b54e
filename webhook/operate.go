package webhook

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/credohq/credo/memory"
)

// What an operator does with a webhook beside creating, testing and rotating it:
// re-enable it, change its URL or events, read its log of attempts, send again what was
// given up.

// Enable re-enables webhook id, disabled after failing (or a 410 Gone): changes from now
// on are delivered again. What was dropped while it was disabled is sent again by Resend.
func (s *Webhooks) Enable(ctx context.Context, id int64) (*Webhook, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE webhook SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL WHERE id = $1`, id)
	if err != nil {
		return nil, fmt.Errorf("enable webhook %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return nil, fmt.Errorf("webhook %d: %w", id, ErrNotFound)
	}
	return s.Get(ctx, id)
}

// UpdateParams change a webhook: a nil field stays as it is.
type UpdateParams struct {
	URL *string
	// Events are the kinds to deliver; empty: every kind.
	Events *[]memory.ChangeKind
}

// Update changes webhook id's URL or events, checked as at creation; the deliveries
// queued go to the new URL. Its secret and scope prefix stay.
func (s *Webhooks) Update(ctx context.Context, id int64, p UpdateParams) (*Webhook, error) {
	if p.URL == nil && p.Events == nil {
		return nil, fmt.Errorf("%w: nothing to change (a URL or events)", ErrInvalid)
	}
	var events []string
	if p.Events != nil {
		if err := checkEvents(*p.Events); err != nil {
			return nil, err
		}
		events = make([]string, len(*p.Events))
		for i, e := range *p.Events {
			events[i] = string(e)
		}
	}
	if p.URL != nil {
		if len(*p.URL) > 2000 {
			return nil, fmt.Errorf("%w: URL too long", ErrInvalid)
		}
		if err := s.guard.CheckURL(ctx, *p.URL); err != nil {
			return nil, err
		}
	}
	tag, err := s.pool.Exec(ctx, `UPDATE webhook SET url = coalesce($2, url), events = coalesce($3, events) WHERE id = $1`,
		id, p.URL, events)
	if err != nil {
		return nil, fmt.Errorf("update webhook %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return nil, fmt.Errorf("webhook %d: %w", id, ErrNotFound)
	}
	return s.Get(ctx, id)
}

func checkEvents(events []memory.ChangeKind) error {
	for _, e := range events {
		if !slices.Contains(memory.ChangeKinds, e) {
			return fmt.Errorf("%w: unknown event type %q (one of %v)", ErrInvalid, e, memory.ChangeKinds)
		}
	}
	return nil
}

// Delivery is one change sent, or to send, to a webhook, with its attempts.
type Delivery struct {
	// MessageID is its webhook-id, the same on every attempt; empty before the first.
	MessageID string
	Scope     string
	Position  int64
	Type      memory.ChangeKind
	// State is pending, delivered, failed (given up) or dropped (erased, or its webhook
	// disabled).
	State     string
	CreatedAt time.Time
	DoneAt    *time.Time
	// NextAttemptAt is when a failing delivery is tried again.
	NextAttemptAt *time.Time
	Attempts      []Attempt
}

// DeliveriesParams choose the deliveries of a webhook to read.
type DeliveriesParams struct {
	// State keeps those in it (pending, delivered, failed, dropped); empty: all.
	State string
	// Limit bounds them, newest first; 0: DefaultDeliveries.
	Limit int
}

// DefaultDeliveries is how many deliveries Deliveries reads by default.
const DefaultDeliveries = 50

// MaxDeliveries bounds Deliveries' Limit.
const MaxDeliveries = 1000

// deliveryStates are a delivery's states.
var deliveryStates = []string{"pending", "delivered", "failed", "dropped"}

// Deliveries is webhook id's log: its deliveries, newest first, each with its attempts
// (time, status, error). A delivery done is kept a day. One read of every shard on Citus.
func (s *Webhooks) Deliveries(ctx context.Context, id int64, p DeliveriesParams) ([]Delivery, error) {
	if p.State != "" && !slices.Contains(deliveryStates, p.State) {
		return nil, fmt.Errorf("%w: state %q is not one of %s", ErrInvalid, p.State, strings.Join(deliveryStates, ", "))
	}
	if p.Limit <= 0 {
		p.Limit = DefaultDeliveries
	}
	p.Limit = min(p.Limit, MaxDeliveries)
	if _, err := get(ctx, s.pool, id); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT scope, position, kind, state, id, message_no, attempts, created_at, done_at, next_attempt_at,
			attempt_log, last_attempt_at, last_status, last_error
		FROM webhook_delivery WHERE webhook_id = $1 AND ($2 = '' OR state = $2)
		ORDER BY created_at DESC, scope, position DESC LIMIT $3`, id, p.State, p.Limit)
	if err != nil {
		return nil, fmt.Errorf("read deliveries of webhook %d: %w", id, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Delivery, error) {
		var (
			d        Delivery
			p        pending
			tries    int
			lastAt   *time.Time
			lastCode *int
			lastErr  *string
		)
		err := row.Scan(&d.Scope, &d.Position, &d.Type, &d.State, &p.id, &p.messageNo, &tries, &d.CreatedAt, &d.DoneAt,
			&d.NextAttemptAt, &d.Attempts, &lastAt, &lastCode, &lastErr)
		if tries > 0 || p.messageNo != nil {
			d.MessageID = p.messageID()
		}
		if len(d.Attempts) == 0 && lastAt != nil {
			// Attempted before attempts were logged: its last one.
			d.Attempts = []Attempt{{At: *lastAt, Status: lastCode, Error: lastErr}}
		}
		if d.State != "pending" {
			d.NextAttemptAt = nil
		}
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("read deliveries of webhook %d: %w", id, err)
	}
	return out, nil
}

// ResendParams choose what Resend sends again.
type ResendParams struct {
	// MessageID is one delivery's webhook-id (msg_12), as Deliveries gives it.
	MessageID string
	// All is every delivery of the webhook given up (failed) or dropped.
	All bool
}

// ErrDisabled is a resend to a disabled webhook: enable it first.
var ErrDisabled = errors.New("webhook is disabled")

// Resend queues again the deliveries of webhook id given up (failed) or dropped while it
// was disabled: one by its message id, or all; each keeps its message id and starts a
// new day of retries. It returns how many it queued. A delivery done is kept a day, so
// what was given up longer ago is gone (read it from the change feed).
func (s *Webhooks) Resend(ctx context.Context, id int64, p ResendParams) (int, error) {
	if (p.MessageID == "") == !p.All {
		return 0, fmt.Errorf("%w: give a message id or all, not both", ErrInvalid)
	}
	hook, err := get(ctx, s.pool, id)
	if err != nil {
		return 0, err
	}
	if hook.DisabledAt != nil {
		return 0, fmt.Errorf("webhook %d: %w: enable it first", id, ErrDisabled)
	}
	ds, err := s.Deliveries(ctx, id, DeliveriesParams{Limit: MaxDeliveries})
	if err != nil {
		return 0, err
	}
	ds = slices.DeleteFunc(ds, func(d Delivery) bool {
		return (d.State != "failed" && d.State != "dropped") || (p.MessageID != "" && d.MessageID != p.MessageID)
	})
	if p.MessageID != "" && len(ds) == 0 {
		if _, err := strconv.ParseInt(strings.TrimPrefix(p.MessageID, "msg_"), 10, 64); err != nil {
			return 0, fmt.Errorf("%w: %q is not a message id (msg_ and a number)", ErrInvalid, p.MessageID)
		}
		return 0, fmt.Errorf("webhook %d: no delivery %s given up or dropped: %w", id, p.MessageID, ErrNotFound)
	}
	jobs, err := river.NewClient(riverpgxv5.New(nil), &river.Config{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range ds {
		// One transaction a delivery: its row and its job, on its scope's shard.
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `UPDATE webhook_delivery SET state = 'pending', attempts = 0, first_failed_at = NULL,
					next_attempt_at = NULL, done_at = NULL
				WHERE scope = $1 AND webhook_id = $2 AND position = $3 AND state IN ('failed', 'dropped')`, d.Scope, id, d.Position)
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
			n++
			_, err = jobs.InsertTx(ctx, tx, DeliverArgs{Scope: d.Scope, WebhookID: id, Position: d.Position}, nil)
			return err
		})
		if err != nil {
			return n, fmt.Errorf("resend to webhook %d: %w", id, err)
		}
	}
	return n, nil
}
