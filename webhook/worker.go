package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/credohq/credo/changes"
	"github.com/credohq/credo/internal/tracing"
)

// Defaults of WorkerConfig.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultMaxBody      = 256 << 10
	DefaultRetryFor     = 24 * time.Hour
	DefaultDisableAfter = 5 * 24 * time.Hour
	DefaultRetryBase    = 5 * time.Second
	DefaultRetryMax     = time.Hour
	// drainBatch bounds the deliveries one job sends.
	drainBatch = 100
)

// Message is a delivery's body, as Standard Webhooks has it, with the change's place in
// the feed: its scope, its position and a cursor after it, so that a receiver that
// missed deliveries resumes from the change feed (GET /v1/changes?scope=S&after=CURSOR).
type Message struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Scope     string    `json:"scope,omitempty"`
	Position  int64     `json:"position,omitempty"`
	Cursor    string    `json:"cursor,omitempty"`
	Data      any       `json:"data"`
}

// Renderer builds the body of the change at position of scope, from its rows as they
// are now: nil when they are gone (erased since).
type Renderer func(ctx context.Context, scope string, position int64) (*Message, error)

// Observer hears of each attempt: outcome is delivered, retrying, failed (given up
// after RetryFor), refused (an internal address) or dropped (erased, or its webhook
// deleted or disabled).
type Observer interface {
	WebhookDelivery(outcome string, latency time.Duration)
}

// WorkerConfig configures a Worker.
type WorkerConfig struct {
	Pool      *pgxpool.Pool
	SecretKey string
	Guard     Guard
	Render    Renderer
	// Timeout bounds one attempt; MaxBody a body: a larger one is sent without its
	// data, with truncated true (read the change from the feed).
	Timeout time.Duration
	MaxBody int
	// RetryFor is how long a failing delivery is retried, with back-off from RetryBase
	// doubling up to RetryMax; DisableAfter how long a webhook may fail before it is
	// disabled.
	RetryFor, DisableAfter, RetryBase, RetryMax time.Duration
	Observer                                    Observer
	Logger                                      *slog.Logger
	Now                                         func() time.Time
}

func (c WorkerConfig) withDefaults() WorkerConfig {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.RetryFor <= 0 {
		c.RetryFor = DefaultRetryFor
	}
	if c.DisableAfter <= 0 {
		c.DisableAfter = DefaultDisableAfter
	}
	if c.RetryBase <= 0 {
		c.RetryBase = DefaultRetryBase
	}
	if c.RetryMax <= 0 {
		c.RetryMax = DefaultRetryMax
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

func (c WorkerConfig) validate() error {
	if c.Pool == nil || c.Render == nil {
		return errors.New("webhook worker: Pool and Render are required")
	}
	return nil
}

// Worker sends deliveries.
type Worker struct {
	river.WorkerDefaults[DeliverArgs]
	cfg    WorkerConfig
	seal   *Sealer
	client *http.Client
}

// NewWorker returns a Worker. Without SecretKey it still runs: each delivery fails,
// saying so, until the key is set.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, client: cfg.Guard.Client(cfg.Timeout)}
	if cfg.SecretKey != "" {
		var err error
		if w.seal, err = NewSealer(cfg.SecretKey); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// Timeout leaves a job the time of a batch of attempts.
func (w *Worker) Timeout(*river.Job[DeliverArgs]) time.Duration { return -1 }

// pending is a delivery still to send.
type pending struct {
	position, id  int64
	messageNo     *int64
	attempts      int
	firstFailedAt *time.Time
	nextAttemptAt *time.Time
	createdAt     time.Time
}

// Work sends the pending deliveries of the job's webhook and scope in position order,
// its own among them, one job at a time per webhook and scope.
func (w *Worker) Work(ctx context.Context, job *river.Job[DeliverArgs]) error {
	a := job.Args
	conn, err := w.cfg.Pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	var state string
	err = conn.QueryRow(ctx, "SELECT state FROM webhook_delivery WHERE scope = $1 AND webhook_id = $2 AND position = $3",
		a.Scope, a.WebhookID, a.Position).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && state != "pending") {
		return nil // sent by an earlier job of the stream, or erased
	}
	if err != nil {
		return fmt.Errorf("read delivery: %w", err)
	}
	var locked bool
	key := strconv.FormatInt(a.WebhookID, 10)
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock(hashtext('credo:webhook:' || $1), hashtext($2))", key, a.Scope).Scan(&locked); err != nil {
		return fmt.Errorf("lock deliveries: %w", err)
	}
	if !locked {
		return river.JobSnooze(time.Second) // another job sends this stream; ours may be sent by it
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext('credo:webhook:' || $1), hashtext($2))", key, a.Scope)
	}()
	hook, err := get(ctx, conn, a.WebhookID)
	if errors.Is(err, ErrNotFound) || (err == nil && hook.DisabledAt != nil) {
		_, err = conn.Exec(ctx, `UPDATE webhook_delivery SET state = 'dropped', done_at = $3
			WHERE scope = $1 AND webhook_id = $2 AND state = 'pending'`, a.Scope, a.WebhookID, w.cfg.Now())
		w.observe("dropped", 0)
		return err
	}
	if err != nil {
		return err
	}
	for range drainBatch {
		var p pending
		err := conn.QueryRow(ctx, `SELECT position, id, message_no, attempts, first_failed_at, next_attempt_at, created_at
			FROM webhook_delivery WHERE scope = $1 AND webhook_id = $2 AND state = 'pending' ORDER BY position LIMIT 1`, a.Scope, a.WebhookID).
			Scan(&p.position, &p.id, &p.messageNo, &p.attempts, &p.firstFailedAt, &p.nextAttemptAt, &p.createdAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read deliveries: %w", err)
		}
		if now := w.cfg.Now(); p.nextAttemptAt != nil && now.Before(*p.nextAttemptAt) {
			if p.position <= a.Position {
				return river.JobSnooze(p.nextAttemptAt.Sub(now))
			}
			return nil // the job of that delivery retries it
		}
		if p.messageNo == nil && p.attempts == 0 {
			if err := w.number(ctx, conn, hook.ID, a.Scope, &p); err != nil {
				return err
			}
		}
		retry, err := w.send(ctx, conn, hook, a.Scope, p)
		if err != nil {
			return err
		}
		if retry > 0 {
			if p.position <= a.Position {
				return river.JobSnooze(retry)
			}
			return nil
		}
	}
	return river.JobSnooze(0) // more to send: another turn
}

// send makes one attempt at delivery p, holding the scope's send lock from its body to
// its record, and returns when to try again (0: delivered, dropped or given up).
func (w *Worker) send(ctx context.Context, conn *pgxpool.Conn, hook *Webhook, scope string, p pending) (time.Duration, error) {
	var retry time.Duration
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sendLockSQL, scope); err != nil {
			return fmt.Errorf("lock scope for sending: %w", err)
		}
		msg, err := w.cfg.Render(ctx, scope, p.position)
		if err != nil {
			return err
		}
		if msg == nil {
			w.observe("dropped", 0)
			return w.finish(ctx, tx, scope, hook.ID, p.position, "dropped", nil, nil)
		}
		ctx, span := tracing.Start(ctx, "webhook.deliver", WebhookIDKey.Int64(hook.ID), attribute.Int("credo.webhook.attempt", p.attempts+1))
		status, latency, sendErr := w.post(ctx, hook, p.messageID(), scope, p.position, msg)
		if span.IsRecording() && status > 0 {
			span.SetAttributes(semconv.HTTPResponseStatusCode(status))
		}
		tracing.End(span, deliveryError(status, sendErr))
		if sendErr == nil {
			w.observe("delivered", latency)
			if hook.FailingSince != nil {
				if _, err := tx.Exec(ctx, "UPDATE webhook SET failing_since = NULL WHERE id = $1", hook.ID); err != nil {
					return err
				}
				hook.FailingSince = nil
			}
			return w.finish(ctx, tx, scope, hook.ID, p.position, "delivered", &status, nil)
		}
		retry, err = w.failed(ctx, tx, hook, scope, p, status, sendErr, latency)
		return err
	})
	return retry, err
}

// post sends msg as message msgID, signed, and returns the status and, unless it is
// 2xx, why it failed.
func (w *Worker) post(ctx context.Context, hook *Webhook, msgID, scope string, position int64, msg *Message) (int, time.Duration, error) {
	if scope != "" {
		msg.Scope, msg.Position, msg.Cursor = scope, position, changes.Cursor{scope: position}.String()
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return 0, 0, err
	}
	if len(body) > w.cfg.MaxBody {
		data := map[string]any{"scope": scope, "position": position, "truncated": true}
		short := Message{Type: msg.Type, Timestamp: msg.Timestamp, Scope: msg.Scope, Position: msg.Position, Cursor: msg.Cursor, Data: data}
		if body, err = json.Marshal(short); err != nil {
			return 0, 0, err
		}
	}
	now := w.cfg.Now()
	keys, err := hook.keys(w.seal, now)
	if err != nil {
		return 0, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "credo-webhooks")
	req.Header.Set(HeaderID, msgID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(HeaderSignature, Sign(keys, msgID, now, body))
	start := time.Now()
	resp, err := w.client.Do(req)
	latency := time.Since(start)
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err // without the URL, which may hold a token: it is logged and shown
	}
	if err != nil {
		return 0, latency, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, latency, fmt.Errorf("answered %s", resp.Status)
	}
	return resp.StatusCode, latency, nil
}

// failed records a failed attempt: retried with back-off for RetryFor, then given up;
// a webhook failing for DisableAfter is disabled.
func (w *Worker) failed(ctx context.Context, tx pgx.Tx, hook *Webhook, scope string, p pending, status int, sendErr error,
	latency time.Duration) (time.Duration, error) {
	now := w.cfg.Now()
	msg := sendErr.Error()
	if len(msg) > 500 {
		msg = msg[:500]
	}
	var st *int
	if status > 0 {
		st = &status
	}
	logged := []any{"webhook", hook.ID, "message", p.messageID(), "attempt", p.attempts + 1, "status", status, "error", msg}
	switch {
	case status == http.StatusGone:
		// The receiver says the endpoint is gone for good: retrying cannot succeed.
		reason := "the receiver answered 410 Gone"
		if _, err := tx.Exec(ctx, "UPDATE webhook SET disabled_at = $2, disabled_reason = $3 WHERE id = $1", hook.ID, now, reason); err != nil {
			return 0, err
		}
		hook.DisabledAt = &now
		w.cfg.Logger.WarnContext(ctx, "webhook disabled", "webhook", hook.ID, "reason", reason)
	case hook.FailingSince == nil:
		if _, err := tx.Exec(ctx, "UPDATE webhook SET failing_since = $2 WHERE id = $1 AND failing_since IS NULL", hook.ID, now); err != nil {
			return 0, err
		}
		hook.FailingSince = &now
	case now.Sub(*hook.FailingSince) >= w.cfg.DisableAfter:
		reason := fmt.Sprintf("every delivery failed since %s (last: %s)", hook.FailingSince.UTC().Format(time.RFC3339), msg)
		if _, err := tx.Exec(ctx, "UPDATE webhook SET disabled_at = $2, disabled_reason = $3 WHERE id = $1", hook.ID, now, reason); err != nil {
			return 0, err
		}
		hook.DisabledAt = &now
		w.cfg.Logger.WarnContext(ctx, "webhook disabled", "webhook", hook.ID, "reason", reason)
	}
	first := now
	if p.firstFailedAt != nil {
		first = *p.firstFailedAt
	}
	entry := attemptEntry(now, st, &msg)
	if hook.DisabledAt != nil || now.Sub(first) >= w.cfg.RetryFor {
		w.observe("failed", latency)
		w.cfg.Logger.WarnContext(ctx, "webhook delivery failed, given up", logged...)
		_, err := tx.Exec(ctx, `UPDATE webhook_delivery SET state = 'failed', attempts = attempts + 1, first_failed_at = $4,
				last_attempt_at = $5, last_status = $6, last_error = $7, done_at = $5, attempt_log = attempt_log || $8::jsonb
			WHERE scope = $1 AND webhook_id = $2 AND position = $3`, scope, hook.ID, p.position, first, now, st, msg, entry)
		return 0, err
	}
	if errors.Is(sendErr, errInternalAddr) {
		w.observe("refused", 0)
	} else {
		w.observe("retrying", latency)
	}
	retry := w.backoff(p.attempts + 1)
	w.cfg.Logger.WarnContext(ctx, "webhook delivery failed, will retry", append(logged, "retry_in", retry)...)
	_, err := tx.Exec(ctx, `UPDATE webhook_delivery SET attempts = attempts + 1, first_failed_at = $4, next_attempt_at = $5,
			last_attempt_at = $6, last_status = $7, last_error = $8, attempt_log = attempt_log || $9::jsonb
		WHERE scope = $1 AND webhook_id = $2 AND position = $3`, scope, hook.ID, p.position, first, now.Add(retry), now, st, msg, entry)
	return retry, err
}

// finish closes a delivery and forgets its stream's deliveries closed a day ago.
func (w *Worker) finish(ctx context.Context, tx pgx.Tx, scope string, hook, position int64, state string, status *int, msg *string) error {
	now := w.cfg.Now()
	b := &pgx.Batch{}
	entry := []byte("[]")
	if status != nil {
		entry = attemptEntry(now, status, msg)
	}
	b.Queue(`UPDATE webhook_delivery SET state = $4, attempts = attempts + CASE WHEN $5::int IS NULL THEN 0 ELSE 1 END,
			last_attempt_at = CASE WHEN $5::int IS NULL THEN last_attempt_at ELSE $6 END, last_status = coalesce($5, last_status),
			last_error = $7, done_at = $6, next_attempt_at = NULL, attempt_log = attempt_log || $8::jsonb
		WHERE scope = $1 AND webhook_id = $2 AND position = $3`, scope, hook, position, state, status, now, msg, entry)
	b.Queue(`DELETE FROM webhook_delivery WHERE scope = $1 AND webhook_id = $2 AND state <> 'pending' AND done_at < $3`,
		scope, hook, now.Add(-24*time.Hour))
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("record delivery: %w", err)
	}
	return nil
}

// backoff is the wait before attempt n+1: RetryBase doubling, at most RetryMax.
func (w *Worker) backoff(n int) time.Duration {
	d := w.cfg.RetryBase
	for i := 1; i < n && d < w.cfg.RetryMax; i++ {
		d *= 2
	}
	return min(d, w.cfg.RetryMax)
}

func (w *Worker) observe(outcome string, latency time.Duration) {
	if w.cfg.Observer != nil {
		w.cfg.Observer.WebhookDelivery(outcome, latency)
	}
}

// WebhookIDKey is the span attribute of a delivery's webhook.
const WebhookIDKey = attribute.Key("credo.webhook.id")

// messageID is the delivery's webhook-id: msg_ and its number among its webhook's
// messages; a delivery queued before messages were numbered per webhook keeps its row's
// id, the one its earlier attempts carried.
func (p pending) messageID() string {
	if p.messageNo != nil {
		return "msg_" + strconv.FormatInt(*p.messageNo, 10)
	}
	return "msg_" + strconv.FormatInt(p.id, 10)
}

// number gives delivery p the next number of its webhook's messages, before its first
// attempt: one short statement on the webhook's row, not held while the body is sent, so
// that the webhook's streams of other scopes do not wait for each other. A number taken
// by a worker that stops before recording it is skipped.
func (w *Worker) number(ctx context.Context, conn *pgxpool.Conn, hook int64, scope string, p *pending) error {
	var n int64
	err := conn.QueryRow(ctx, "UPDATE webhook SET message_seq = message_seq + 1 WHERE id = $1 RETURNING message_seq", hook).Scan(&n)
	if err != nil {
		return fmt.Errorf("number delivery: %w", err)
	}
	if _, err := conn.Exec(ctx, "UPDATE webhook_delivery SET message_no = $4 WHERE scope = $1 AND webhook_id = $2 AND position = $3",
		scope, hook, p.position, n); err != nil {
		return fmt.Errorf("number delivery: %w", err)
	}
	p.messageNo = &n
	return nil
}

// Attempt is one attempt at a delivery, as its log keeps it.
type Attempt struct {
	At time.Time `json:"at"`
	// Status is the receiver's HTTP status; nil without an answer (see Error).
	Status *int    `json:"status"`
	Error  *string `json:"error"`
}

// attemptEntry is an attempt as the JSON array to append to attempt_log.
func attemptEntry(at time.Time, status *int, msg *string) []byte {
	b, _ := json.Marshal([]Attempt{{At: at.UTC(), Status: status, Error: msg}}) //nolint:errchkjson // plain values
	return b
}

// deliveryError is why an attempt failed, for its span, by a low-cardinality kind
// (error.type): the status when the receiver answered, else internal_address, timeout
// or connection; nil when it accepted.
func deliveryError(status int, err error) error {
	switch {
	case err == nil:
		return nil
	case status > 0:
		return &DeliveryError{Type: strconv.Itoa(status), err: err}
	case errors.Is(err, errInternalAddr):
		return &DeliveryError{Type: "internal_address", err: err}
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return &DeliveryError{Type: "timeout", err: err}
	}
	return &DeliveryError{Type: "connection", err: err}
}

func isTimeout(err error) bool {
	t, ok := errors.AsType[net.Error](err)
	return ok && t.Timeout()
}

// DeliveryError is a failed attempt, with its kind.
type DeliveryError struct {
	// Type is the HTTP status of the answer ("503"), or internal_address, timeout or
	// connection when there was none.
	Type string
	err  error
}

func (e *DeliveryError) Error() string { return e.err.Error() }
func (e *DeliveryError) Unwrap() error { return e.err }

// ErrorType is the kind, for a span's error.type.
func (e *DeliveryError) ErrorType() string { return e.Type }
