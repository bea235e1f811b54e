package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/entity"
	"github.com/credohq/credo/transcript"
)

// ExportQuery selects what an export holds: one scope, or every scope starting with a
// prefix (exactly one of them), whole or, with Since, what changed at or after it.
type ExportQuery struct {
	Scope       string
	ScopePrefix string
	Since       *time.Time
}

// Export is one snapshot of memory being read out: OpenExport takes it, Records streams
// it, Close lets it go. Every read of an export sees the same data, whatever writers
// commit meanwhile.
type Export struct {
	tx     pgx.Tx
	q      ExportQuery
	Header ExportHeader
}

// OpenExport takes a snapshot of what q selects: a read-only REPEATABLE READ
// transaction, held until Close. On Citus each scope lives on one shard, read through
// one connection in the transaction, so each scope is one snapshot; scopes of a subtree
// on different shards may be read at slightly different moments, as no two of them share
// a row. It returns ErrNotFound when no scope q selects holds memory.
func (s *Store) OpenExport(ctx context.Context, q ExportQuery) (*Export, error) {
	q.Scope, q.ScopePrefix = strings.TrimSpace(q.Scope), strings.TrimSpace(q.ScopePrefix)
	switch {
	case (q.Scope == "") == (q.ScopePrefix == ""):
		return nil, transcript.InputErrorf(ErrSelection, "", "give a scope or a scope prefix, not both or neither")
	case q.Scope != "":
		if err := transcript.CheckScope("scope", q.Scope); err != nil {
			return nil, err
		}
	default:
		if err := transcript.CheckScope("scope prefix", q.ScopePrefix); err != nil {
			return nil, err
		}
	}
	if q.Since != nil {
		t := q.Since.UTC()
		q.Since = &t
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("export: begin: %w", err)
	}
	e := &Export{tx: tx, q: q, Header: ExportHeader{Format: ExportFormat, Version: ExportVersion, Since: q.Since}}
	if err := e.open(ctx); err != nil {
		e.Close(ctx)
		return nil, err
	}
	return e, nil
}

// open reads the snapshot's time, its scopes and the embedding model most of their
// beliefs have, in the export's transaction: its first statement takes the snapshot.
func (e *Export) open(ctx context.Context) error {
	if err := e.tx.QueryRow(ctx, "SELECT transaction_timestamp()").Scan(&e.Header.ExportedAt); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	e.Header.ExportedAt = e.Header.ExportedAt.UTC()
	// On one scope the reads name it, so that Citus keeps them on its shard.
	in, arg := "scope = $1", e.q.Scope
	if e.q.ScopePrefix != "" {
		in, arg = "starts_with(scope, $1)", e.q.ScopePrefix
		e.Header.ScopePrefix = &e.q.ScopePrefix
	}
	rows, err := e.tx.Query(ctx, `SELECT scope FROM belief WHERE `+in+` UNION SELECT scope FROM episode WHERE `+in+` ORDER BY 1`, arg)
	if err != nil {
		return fmt.Errorf("export: list scopes: %w", err)
	}
	if e.Header.Scopes, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return fmt.Errorf("export: list scopes: %w", err)
	}
	if len(e.Header.Scopes) == 0 {
		what := "scope " + e.q.Scope
		if e.q.ScopePrefix != "" {
			what = "no scope starts with " + e.q.ScopePrefix
		}
		return fmt.Errorf("export: %s: %w", what, ErrNotFound)
	}
	err = e.tx.QueryRow(ctx, `SELECT embed_model FROM belief WHERE `+in+` AND embed_model IS NOT NULL
		GROUP BY embed_model ORDER BY count(*) DESC, embed_model LIMIT 1`, arg).Scan(&e.Header.EmbeddingModel)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("export: embedding model: %w", err)
	}
	return nil
}

// Close ends the snapshot. It changed nothing, so there is nothing to commit.
func (e *Export) Close(ctx context.Context) {
	_ = e.tx.Rollback(context.WithoutCancel(ctx))
}

// Records reads the snapshot's records out to emit one at a time, scope after scope
// (see RecordType for their order), and last the ExportEnd that counts them. Rows are
// read as they arrive, never gathered: a scope of any size takes the memory of one row.
// An error of emit stops the export and is returned.
func (e *Export) Records(ctx context.Context, emit func(record any) error) error {
	end := &ExportEnd{Type: RecordEnd, Records: map[RecordType]int{}}
	counted := func(t RecordType, rec any) error {
		end.Records[t]++
		return emit(rec)
	}
	for _, scope := range e.Header.Scopes {
		for _, read := range []func(context.Context, string, func(RecordType, any) error) error{
			e.scope, e.entities, e.episodes, e.beliefs, e.dependencies, e.events, e.items,
		} {
			if err := read(ctx, scope, counted); err != nil {
				return fmt.Errorf("export %s: %w", scope, err)
			}
		}
	}
	return emit(end)
}

// Every read below is of one scope, $1, which each names (in subqueries too), so that on
// Citus it runs on the scope's shard; $2 is Since, or null.

func (e *Export) scope(ctx context.Context, scope string, emit func(RecordType, any) error) error {
	rec := ExportedScope{Type: RecordScope, Scope: scope}
	err := e.tx.QueryRow(ctx, "SELECT watermark FROM scope_consolidation WHERE scope = $1", scope).Scan(&rec.ConsolidatedUntil)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("read consolidation state: %w", err)
	}
	rec.ConsolidatedUntil = utcPtr(rec.ConsolidatedUntil)
	return emit(RecordScope, rec)
}

// entities reads the scope's registry, by key: every entity with its other names, and,
// for a key beliefs name that has no row (a raw insert's default, the user), the
// entity the migration would have made, so that every exported belief's entity has its
// record. An export with Since holds the whole registry too: the registry keeps no time
// of change (a merge moves names without one), and the part's beliefs name its keys.
func (e *Export) entities(ctx context.Context, scope string, emit func(RecordType, any) error) error {
	rows, err := e.tx.Query(ctx, `SELECT e.key, e.name, e.kind, e.created_at,
			coalesce((SELECT array_agg(a.name ORDER BY a.created_at, a.alias) FROM entity_alias a
				WHERE a.scope = $1 AND a.entity = e.key AND a.alias <> e.key), '{}')
		FROM entity e WHERE e.scope = $1
		UNION ALL
		SELECT b.entity, b.entity, NULL, min(b.recorded_at), '{}'::text[] FROM belief b
		WHERE b.scope = $1 AND NOT EXISTS (SELECT 1 FROM entity e WHERE e.scope = $1 AND e.key = b.entity)
		GROUP BY b.entity
		ORDER BY 1`, scope)
	if err != nil {
		return fmt.Errorf("read entities: %w", err)
	}
	var (
		rec  ExportedEntity
		kind *string
	)
	_, err = pgx.ForEachRow(rows, []any{&rec.Key, &rec.Name, &kind, &rec.CreatedAt, &rec.Aliases}, func() error {
		out := rec
		out.Type, out.Scope, out.CreatedAt = RecordEntity, scope, rec.CreatedAt.UTC()
		out.Kind = entity.KindOf(rec.Key)
		if kind != nil {
			out.Kind = entity.Kind(*kind)
		}
		rec.Aliases = nil // the next row gets a slice of its own
		return emit(RecordEntity, out)
	})
	if err != nil {
		return fmt.Errorf("read entities: %w", err)
	}
	return nil
}

func (e *Export) episodes(ctx context.Context, scope string, emit func(RecordType, any) error) error {
	var rec ExportedEpisode
	return e.each(ctx, "episodes", emit, RecordEpisode, `SELECT scope, id, external_id, messages, content_hash, occurred_at, received_at,
			state, attempts, last_error, processed_at, redacted_at, progress_message, progress_offset
		FROM episode WHERE scope = $1 AND ($2::timestamptz IS NULL OR received_at >= $2 OR processed_at >= $2 OR redacted_at >= $2)
		ORDER BY id`, scope, []any{&rec.Scope, &rec.ID, &rec.ExternalID, &rec.Messages, &rec.ContentHash, &rec.OccurredAt, &rec.ReceivedAt,
		&rec.State, &rec.Attempts, &rec.LastError, &rec.ProcessedAt, &rec.RedactedAt, &rec.ProgressMessage, &rec.ProgressOffset},
		func() any {
			out := rec
			out.Type = RecordEpisode
			// The scan reuses rec's buffer for the next row's transcript.
			out.Messages = bytes.Clone(rec.Messages)
			out.OccurredAt, out.ReceivedAt = rec.OccurredAt.UTC(), rec.ReceivedAt.UTC()
			out.ProcessedAt, out.RedactedAt = utcPtr(rec.ProcessedAt), utcPtr(rec.RedactedAt)
			return out
		})
}

// beliefChangedSince is whether belief b changed at or after $2 (always, without one).
const beliefChangedSince = `($2::timestamptz IS NULL OR b.updated_at >= $2 OR b.recorded_at >= $2 OR b.retired_at >= $2)`

func (e *Export) beliefs(ctx context.Context, scope string, emit func(RecordType, any) error) error {
	var rec ExportedBelief
	return e.each(ctx, "beliefs", emit, RecordBelief, `SELECT b.scope, b.id, b.subject, b.entity, b.attribute, b.kind, b.statement, b.status,
			b.confidence, b.origin, b.valid_from, b.valid_until, b.recorded_at, b.retired_at, b.superseded_by, b.episode_id, b.quote,
			b.reinforced_count, b.last_seen_at, b.updated_at, b.needs_review
		FROM belief b WHERE b.scope = $1 AND `+beliefChangedSince+` ORDER BY b.id`, scope,
		[]any{&rec.Scope, &rec.ID, &rec.Subject, &rec.Entity, &rec.Attribute, &rec.Kind, &rec.Statement, &rec.Status,
			&rec.Confidence, &rec.Origin, &rec.ValidFrom, &rec.ValidUntil, &rec.RecordedAt, &rec.RetiredAt, &rec.SupersededBy, &rec.EpisodeID, &rec.Quote,
			&rec.ReinforcedCount, &rec.LastSeenAt, &rec.UpdatedAt, &rec.NeedsReview},
		func() any {
			rec.Type = RecordBelief
			rec.ValidFrom, rec.RecordedAt, rec.LastSeenAt, rec.UpdatedAt = rec.ValidFrom.UTC(), rec.RecordedAt.UTC(), rec.LastSeenAt.UTC(), rec.UpdatedAt.UTC()
			rec.ValidUntil, rec.RetiredAt = utcPtr(rec.ValidUntil), utcPtr(rec.RetiredAt)
			return rec
		})
}

func (e *Export) dependencies(ctx context.Context, scope string, emit func(RecordType, any) error) error {
	rec := ExportedDependency{Type: RecordDependency}
	return e.each(ctx, "dependencies", emit, RecordDependency, `SELECT d.scope, d.belief_id, d.basis_id FROM belief_dependency d
		WHERE d.scope = $1 AND EXISTS (SELECT 1 FROM belief b WHERE b.scope = $1 AND b.id = d.belief_id AND `+beliefChangedSince+`)
		ORDER BY d.belief_id, d.basis_id`, scope, []any{&rec.Scope, &rec.BeliefID, &rec.BasisID}, func() any { return rec })
}

func (e *Export) events(ctx context.Context, scope string, emit func(RecordType, any) error) error {
	var rec ExportedEvent
	return e.each(ctx, "revision events", emit, RecordEvent, `SELECT `+eventColumns+`, e.prior
		FROM revision_event e WHERE e.scope = $1 AND ($2::timestamptz IS NULL OR e.created_at >= $2 OR e.reverted_at >= $2) ORDER BY e.id`, scope,
		append(rec.fields(), &rec.Prior),
		func() any {
			out := rec
			out.Type = RecordEvent
			out.CreatedAt, out.RevertedAt = rec.CreatedAt.UTC(), utcPtr(rec.RevertedAt)
			// The scan reuses rec's buffer for the next row's prior.
			out.Prior = bytes.Clone(rec.Prior)
			if len(out.Prior) == 0 {
				out.Prior = json.RawMessage("null")
			}
			return out
		})
}

// items reads the review items as JSON objects of their columns, all but the vector: a
// column a migration adds is exported with them.
func (e *Export) items(ctx context.Context, scope string, emit func(RecordType, any) error) error {
	var (
		id   int64
		cols map[string]json.RawMessage
	)
	return e.each(ctx, "review items", emit, RecordReviewItem, `SELECT c.id, to_jsonb(c) - 'embedding' - 'embed_model'
		FROM belief_conflict c WHERE c.scope = $1 AND ($2::timestamptz IS NULL OR c.created_at >= $2 OR c.resolved_at >= $2) ORDER BY c.id`,
		scope, []any{&id, &cols}, func() any {
			it := ExportedItem{Scope: scope, ID: id, Columns: cols}
			cols = nil // the next row gets a map of its own
			return it
		})
}

// each runs query on scope and Since, scans each row into dest and emits what record
// makes of it, as t.
func (e *Export) each(ctx context.Context, what string, emit func(RecordType, any) error, t RecordType, query, scope string,
	dest []any, record func() any) error {
	rows, err := e.tx.Query(ctx, query, scope, e.q.Since)
	if err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	_, err = pgx.ForEachRow(rows, dest, func() error { return emit(t, record()) })
	if err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	return nil
}
