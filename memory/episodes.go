package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// MaxEpisodes bounds the episodes one Episodes call lists.
const MaxEpisodes = 1000

// Episode is one stored transcript and where its extraction stands.
type Episode struct {
	ID          int64
	Scope       string
	ExternalID  *string
	State       EpisodeState
	Attempts    int
	LastError   *string
	OccurredAt  time.Time
	ReceivedAt  time.Time
	ProcessedAt *time.Time
	// RedactedAt is when a purge replaced spans of the transcript with [redacted]: the
	// episode stayed because kept beliefs come from it. Nil if never redacted.
	RedactedAt *time.Time
	// Redactions counts, by kind, the secrets redaction replaced with placeholders
	// before the transcript was stored, or since by a policy's apply; nil when none.
	Redactions map[string]int
	// Messages is the transcript, read by Episode only: a list leaves it out.
	Messages []EpisodeMessage
}

// EpisodeMessage is one turn of an episode's transcript.
type EpisodeMessage struct {
	Role    string `json:"role"`
	Name    string `json:"name,omitempty"`
	Content string `json:"content"`
}

// EpisodeQuery selects episodes of one scope.
type EpisodeQuery struct {
	Scope string
	// State is EpisodePending, EpisodeApplied or EpisodeFailed; "" is any.
	State EpisodeState
	// Limit bounds the list (0 or more than MaxEpisodes: MaxEpisodes).
	Limit int
}

const episodeColumns = `id, scope, external_id, state, attempts, last_error, occurred_at, received_at, processed_at,
	redacted_at, redactions`

func scanEpisode(row pgx.CollectableRow) (Episode, error) {
	return scanEpisodeWith(row)
}

// scanEpisodeWith scans episodeColumns, then the extra columns into extra.
func scanEpisodeWith(row pgx.CollectableRow, extra ...any) (Episode, error) {
	var e Episode
	err := row.Scan(append([]any{&e.ID, &e.Scope, &e.ExternalID, &e.State, &e.Attempts, &e.LastError, &e.OccurredAt,
		&e.ReceivedAt, &e.ProcessedAt, &e.RedactedAt, &e.Redactions}, extra...)...)
	e.OccurredAt, e.ReceivedAt = e.OccurredAt.UTC(), e.ReceivedAt.UTC()
	e.ProcessedAt, e.RedactedAt = utcPtr(e.ProcessedAt), utcPtr(e.RedactedAt)
	return e, err
}

// Episodes lists the episodes of a scope, the latest conversation first, without their
// transcripts: what an operator looks through to find a failed one.
func (s *Store) Episodes(ctx context.Context, q EpisodeQuery) ([]Episode, error) {
	limit := q.Limit
	if limit <= 0 || limit > MaxEpisodes {
		limit = MaxEpisodes
	}
	rows, err := s.db.Query(ctx, `SELECT `+episodeColumns+` FROM episode
		WHERE scope = $1 AND ($2 = '' OR state = $2) ORDER BY occurred_at DESC, id DESC LIMIT $3`, q.Scope, q.State, limit)
	if err != nil {
		return nil, fmt.Errorf("episodes of %q: %w", q.Scope, err)
	}
	eps, err := pgx.CollectRows(rows, scanEpisode)
	if err != nil {
		return nil, fmt.Errorf("episodes of %q: %w", q.Scope, err)
	}
	return eps, nil
}

// Episode is episode id with its transcript, or ErrNotFound.
func (s *Store) Episode(ctx context.Context, id int64) (*Episode, error) {
	scope, err := s.ScopeOf(ctx, OfEpisode, id)
	if err != nil {
		return nil, err
	}
	return s.EpisodeIn(ctx, scope, id)
}

// EpisodeIn is Episode of an episode whose scope is known.
func (s *Store) EpisodeIn(ctx context.Context, scope string, id int64) (*Episode, error) {
	rows, err := s.db.Query(ctx, `SELECT `+episodeColumns+`, messages FROM episode WHERE scope = $1 AND id = $2`, scope, id)
	if err != nil {
		return nil, fmt.Errorf("episode %d: %w", id, err)
	}
	var raw []byte
	e, err := pgx.CollectExactlyOneRow(rows, func(row pgx.CollectableRow) (Episode, error) {
		return scanEpisodeWith(row, &raw)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("episode %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("episode %d: %w", id, err)
	}
	if err := json.Unmarshal(raw, &e.Messages); err != nil {
		return nil, fmt.Errorf("episode %d: decode messages: %w", id, err)
	}
	return &e, nil
}

// Unprocessed counts the scope's pending and failed episodes.
func (s *Store) Unprocessed(ctx context.Context, scope string) (pending, failed int, err error) {
	// Each count reads its state's partial index, however long the scope's history.
	err = s.db.QueryRow(ctx, `SELECT (SELECT count(*) FROM episode WHERE scope = $1 AND state = 'pending'),
		(SELECT count(*) FROM episode WHERE scope = $1 AND state = 'failed')`, scope).Scan(&pending, &failed)
	if err != nil {
		return 0, 0, fmt.Errorf("unprocessed episodes of %q: %w", scope, err)
	}
	return pending, failed, nil
}
