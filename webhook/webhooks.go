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
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/credohq/credo/memory"
)

// ErrNotFound is a webhook that does not exist.
var ErrNotFound = errors.New("webhook not found")

// ErrInvalid is a webhook's parameters refused.
var ErrInvalid = errors.New("invalid webhook")

// RotateOverlap is how long a rotated secret still signs beside the new one.
const RotateOverlap = 24 * time.Hour

// Webhook is a subscription and where its deliveries stand.
type Webhook struct {
	ID             int64
	URL            string
	ScopePrefix    string
	Events         []memory.ChangeKind
	CreatedBy      string
	CreatedAt      time.Time
	DisabledAt     *time.Time
	DisabledReason *string
	// PreviousUntil: a rotated secret signs beside the new one until then.
	PreviousUntil *time.Time
	// FailingSince: every delivery since has failed.
	FailingSince *time.Time
	Status       Status

	secret, previous []byte
	// retired are the secrets rotated out before previous, each signing until its day
	// is over.
	retired []retiredSecret
}

// retiredSecret is a secret rotated out, still signing until Until.
type retiredSecret struct {
	Secret []byte    `json:"secret"`
	Until  time.Time `json:"until"`
}

// maxRetired bounds the retired secrets kept beside the previous one: rotated more
// often than that within a day, the oldest stops signing before its day is over.
const maxRetired = 8

// Status is where a webhook's deliveries stand.
type Status struct {
	// LastStatus is the HTTP status of the last attempt (0: no answer, see LastError).
	LastStatus    *int
	LastError     *string
	LastAttemptAt *time.Time
	// FailuresInRow are the failed attempts of its oldest undelivered change.
	FailuresInRow int
	// OldestUndelivered is when the oldest change still to deliver was made.
	OldestUndelivered *time.Time
	Pending           int
	// Failed are the deliveries given up after RetryFor.
	Failed int
}

// EveryScope as a webhook's prefix subscribes it to every scope, as a key's, a policy's
// and the change feed's "*" reads; only a key of every scope may create it.
const EveryScope = "*"

// Subscribes reports whether w takes changes of kind in scope.
func (w *Webhook) Subscribes(scope string, kind memory.ChangeKind) bool {
	under := w.ScopePrefix == EveryScope || strings.HasPrefix(scope, w.ScopePrefix)
	return w.DisabledAt == nil && under && (len(w.Events) == 0 || slices.Contains(w.Events, kind))
}

// Webhooks manages subscriptions: the owner of the webhook table.
type Webhooks struct {
	pool  *pgxpool.Pool
	seal  *Sealer
	guard Guard
	now   func() time.Time
}

// Config configures Webhooks, Dispatcher and Worker.
type Config struct {
	Pool *pgxpool.Pool
	// SecretKey is WEBHOOK_SECRET_KEY; without it no webhook is created or sent.
	SecretKey string
	Guard     Guard
	Now       func() time.Time
}

func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// NewWebhooks returns Webhooks. A missing SecretKey is told when a webhook is created.
func NewWebhooks(cfg Config) (*Webhooks, error) {
	cfg = cfg.withDefaults()
	w := &Webhooks{pool: cfg.Pool, guard: cfg.Guard, now: cfg.Now}
	if cfg.SecretKey != "" {
		var err error
		if w.seal, err = NewSealer(cfg.SecretKey); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// CreateParams are a new webhook's.
type CreateParams struct {
	URL         string
	ScopePrefix string
	// Events are the kinds to deliver; none: every kind.
	Events    []memory.ChangeKind
	CreatedBy string
}

// Create stores a webhook and returns it with its secret, shown this once.
func (s *Webhooks) Create(ctx context.Context, p CreateParams) (*Webhook, string, error) {
	if s.seal == nil {
		return nil, "", ErrNoSecretKey
	}
	if err := checkEvents(p.Events); err != nil {
		return nil, "", err
	}
	if len(p.URL) > 2000 || len(p.ScopePrefix) > 200 {
		return nil, "", fmt.Errorf("%w: URL or scope prefix too long", ErrInvalid)
	}
	if err := s.guard.CheckURL(ctx, p.URL); err != nil {
		return nil, "", err
	}
	text, key := NewSecret()
	events := make([]string, len(p.Events))
	for i, e := range p.Events {
		events[i] = string(e)
	}
	w := &Webhook{URL: p.URL, ScopePrefix: p.ScopePrefix, Events: slices.Clone(p.Events), CreatedBy: p.CreatedBy,
		CreatedAt: s.now().UTC().Truncate(time.Microsecond)}
	err := s.pool.QueryRow(ctx, `INSERT INTO webhook (scope_prefix, url, events, secret, created_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, p.ScopePrefix, p.URL, events, s.seal.Seal(key), p.CreatedBy, w.CreatedAt).Scan(&w.ID)
	if err != nil {
		return nil, "", fmt.Errorf("create webhook: %w", err)
	}
	return w, text, nil
}

const webhookColumns = `id, url, scope_prefix, events, created_by, created_at, disabled_at, disabled_reason, previous_until,
	failing_since, secret, previous_secret, retired_secrets`

func scanWebhook(row pgx.CollectableRow) (*Webhook, error) {
	var (
		w      Webhook
		events []string
	)
	err := row.Scan(&w.ID, &w.URL, &w.ScopePrefix, &events, &w.CreatedBy, &w.CreatedAt, &w.DisabledAt, &w.DisabledReason,
		&w.PreviousUntil, &w.FailingSince, &w.secret, &w.previous, &w.retired)
	for _, e := range events {
		w.Events = append(w.Events, memory.ChangeKind(e))
	}
	return &w, err
}

// all reads every webhook, without status.
func all(ctx context.Context, db interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}) ([]*Webhook, error) {
	rows, err := db.Query(ctx, "SELECT "+webhookColumns+" FROM webhook ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("read webhooks: %w", err)
	}
	ws, err := pgx.CollectRows(rows, scanWebhook)
	if err != nil {
		return nil, fmt.Errorf("read webhooks: %w", err)
	}
	return ws, nil
}

// List is every webhook whose prefix within accepts, with its status. The status reads
// every shard on Citus (webhook_delivery by webhook).
func (s *Webhooks) List(ctx context.Context, within func(prefix string) bool) ([]*Webhook, error) {
	ws, err := all(ctx, s.pool)
	if err != nil {
		return nil, err
	}
	ws = slices.DeleteFunc(ws, func(w *Webhook) bool { return !within(w.ScopePrefix) })
	for _, w := range ws {
		if err := s.status(ctx, w); err != nil {
			return nil, err
		}
	}
	return ws, nil
}

func (s *Webhooks) status(ctx context.Context, w *Webhook) error {
	st := &w.Status
	err := s.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'pending'), count(*) FILTER (WHERE state = 'failed'),
			min(created_at) FILTER (WHERE state = 'pending'), coalesce(max(attempts) FILTER (WHERE state = 'pending'), 0)
		FROM webhook_delivery WHERE webhook_id = $1`, w.ID).Scan(&st.Pending, &st.Failed, &st.OldestUndelivered, &st.FailuresInRow)
	if err != nil {
		return fmt.Errorf("read status of webhook %d: %w", w.ID, err)
	}
	err = s.pool.QueryRow(ctx, `SELECT last_status, last_error, last_attempt_at FROM webhook_delivery
		WHERE webhook_id = $1 AND last_attempt_at IS NOT NULL ORDER BY last_attempt_at DESC LIMIT 1`, w.ID).
		Scan(&st.LastStatus, &st.LastError, &st.LastAttemptAt)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("read status of webhook %d: %w", w.ID, err)
	}
	return nil
}

// Get is webhook id with its status.
func (s *Webhooks) Get(ctx context.Context, id int64) (*Webhook, error) {
	w, err := get(ctx, s.pool, id)
	if err != nil {
		return nil, err
	}
	return w, s.status(ctx, w)
}

func get(ctx context.Context, db interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}, id int64) (*Webhook, error) {
	rows, err := db.Query(ctx, "SELECT "+webhookColumns+" FROM webhook WHERE id = $1", id)
	if err != nil {
		return nil, fmt.Errorf("read webhook %d: %w", id, err)
	}
	w, err := pgx.CollectExactlyOneRow(rows, scanWebhook)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("webhook %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read webhook %d: %w", id, err)
	}
	return w, nil
}

// Delete removes webhook id: its deliveries still queued are dropped when their jobs
// run.
func (s *Webhooks) Delete(ctx context.Context, id int64) error {
	tag, err := s.pool.Exec(ctx, "DELETE FROM webhook WHERE id = $1", id)
	if err != nil {
		return fmt.Errorf("delete webhook %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("webhook %d: %w", id, ErrNotFound)
	}
	return nil
}

// Rotate gives webhook id a new secret, returned this once; the old one signs beside it
// for RotateOverlap, so receivers can switch without losing a delivery. A secret rotated
// out earlier keeps its own day: a second rotation does not cut off the first secret.
func (s *Webhooks) Rotate(ctx context.Context, id int64) (string, error) {
	if s.seal == nil {
		return "", ErrNoSecretKey
	}
	text, key := NewSecret()
	now := s.now().UTC()
	until := now.Add(RotateOverlap).Truncate(time.Microsecond)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "SELECT "+webhookColumns+" FROM webhook WHERE id = $1 FOR UPDATE", id)
		if err != nil {
			return err
		}
		w, err := pgx.CollectExactlyOneRow(rows, scanWebhook)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("webhook %d: %w", id, ErrNotFound)
		}
		if err != nil {
			return err
		}
		retired := w.retired
		if w.previous != nil && w.PreviousUntil != nil {
			retired = append(retired, retiredSecret{Secret: w.previous, Until: *w.PreviousUntil})
		}
		retired = slices.DeleteFunc(retired, func(r retiredSecret) bool { return !now.Before(r.Until) })
		if retired == nil {
			retired = []retiredSecret{}
		}
		if len(retired) > maxRetired {
			retired = retired[len(retired)-maxRetired:]
		}
		_, err = tx.Exec(ctx, `UPDATE webhook SET retired_secrets = $2, previous_secret = secret, previous_until = $3, secret = $4
			WHERE id = $1`, id, retired, until, s.seal.Seal(key))
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return "", err
	}
	if err != nil {
		return "", fmt.Errorf("rotate webhook %d: %w", id, err)
	}
	return text, nil
}

// keys are the keys that sign w's deliveries at now: its secret's, and those rotated out
// whose day is not over.
func (w *Webhook) keys(seal *Sealer, now time.Time) ([][]byte, error) {
	if seal == nil {
		return nil, ErrNoSecretKey
	}
	k, err := seal.Open(w.secret)
	if err != nil {
		return nil, err
	}
	keys := [][]byte{k}
	if w.previous != nil && w.PreviousUntil != nil && now.Before(*w.PreviousUntil) {
		if old, err := seal.Open(w.previous); err == nil {
			keys = append(keys, old)
		}
	}
	for _, r := range slices.Backward(w.retired) {
		if now.Before(r.Until) {
			if old, err := seal.Open(r.Secret); err == nil {
				keys = append(keys, old)
			}
		}
	}
	return keys, nil
}

// Tested is the answer to a test message.
type Tested struct {
	// Status is the receiver's HTTP status, 0 without an answer.
	Status int
	// Error says why the test failed, empty when the receiver answered 2xx.
	Error string
}

// TestMessageType is the type of the message Test sends.
const TestMessageType = "webhook.test"

// Test sends webhook id a signed message of type webhook.test now, as a delivery is
// sent (the same guard, timeout and signature), and returns the answer.
func (s *Webhooks) Test(ctx context.Context, id int64, timeout time.Duration) (*Tested, error) {
	hook, err := get(ctx, s.pool, id)
	if err != nil {
		return nil, err
	}
	w := &Worker{cfg: WorkerConfig{Timeout: timeout, MaxBody: DefaultMaxBody, Now: s.now}.withDefaults(), seal: s.seal}
	w.client = s.guard.Client(w.cfg.Timeout)
	now := s.now().UTC()
	msg := &Message{Type: TestMessageType, Timestamp: now, Data: map[string]any{"webhook_id": id, "scope_prefix": hook.ScopePrefix}}
	status, _, err := w.post(ctx, hook, "msg_test_"+strconv.FormatInt(now.UnixNano(), 10), "", 0, msg)
	if errors.Is(err, ErrNoSecretKey) || errors.Is(err, ErrSealed) {
		return nil, err
	}
	out := &Tested{Status: status}
	if err != nil {
		out.Error = err.Error()
	}
	return out, nil
}

// Backlog is how many deliveries wait, and when the oldest change waiting was made: one
// read of every shard on Citus (the partial index of pending deliveries).
func (s *Webhooks) Backlog(ctx context.Context) (int, *time.Time, error) {
	var (
		n      int
		oldest *time.Time
	)
	err := s.pool.QueryRow(ctx, "SELECT count(*), min(created_at) FROM webhook_delivery WHERE state = 'pending'").Scan(&n, &oldest)
	if err != nil {
		return 0, nil, fmt.Errorf("read webhook backlog: %w", err)
	}
	return n, oldest, nil
}
