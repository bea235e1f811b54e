package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ConsolidationWatermark is the scope's consolidation watermark (nil: never
// consolidated) and the database's clock, read together so that a pass settles its
// next watermark on the database's time, not a worker's.
func (s *Store) ConsolidationWatermark(ctx context.Context, scope string) (watermark *time.Time, dbNow time.Time, err error) {
	err = s.db.QueryRow(ctx, `SELECT (SELECT watermark FROM scope_consolidation WHERE scope = $1), statement_timestamp()`,
		scope).Scan(&watermark, &dbNow)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read watermark of %q: %w", scope, err)
	}
	return watermark, dbNow, nil
}

// AdvanceWatermarkTx moves the scope's watermark to to in tx, never back, and returns
// where it stands.
func AdvanceWatermarkTx(ctx context.Context, tx pgx.Tx, scope string, to time.Time) (time.Time, error) {
	var wm time.Time
	err := tx.QueryRow(ctx, `INSERT INTO scope_consolidation (scope, watermark, updated_at) VALUES ($1, $2, now())
		ON CONFLICT (scope) DO UPDATE SET watermark = greatest(scope_consolidation.watermark, excluded.watermark),
			updated_at = excluded.updated_at
		RETURNING watermark`, scope, to).Scan(&wm)
	if err != nil {
		return time.Time{}, fmt.Errorf("advance watermark of %q: %w", scope, err)
	}
	return wm.UTC(), nil
}

// JudgedSignatures is which of the cluster signatures sigs were judged in scope before.
func (s *Store) JudgedSignatures(ctx context.Context, scope string, sigs []string) (map[string]bool, error) {
	rows, err := s.db.Query(ctx, `SELECT signature FROM consolidation_judgment WHERE scope = $1 AND signature = ANY($2)`, scope, sigs)
	if err != nil {
		return nil, fmt.Errorf("look up judged clusters of %q: %w", scope, err)
	}
	judged := map[string]bool{}
	var sig string
	_, err = pgx.ForEachRow(rows, []any{&sig}, func() error {
		judged[sig] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("look up judged clusters of %q: %w", scope, err)
	}
	return judged, nil
}

// JudgmentClaim is a pass's claim to have judged one cluster of a scope.
type JudgmentClaim struct {
	Scope string
	// Signature names the cluster (consolidate's signature of its members).
	Signature string
	// Members are the ids of the beliefs the model was shown.
	Members []int64
}

// Claim is what ClaimJudgmentTx found.
type Claim int

const (
	// Claimed is a judgment recorded by this call: the pass applies its verdict.
	Claimed Claim = iota
	// ClaimedBefore is a cluster another pass judged first (a CLI run beside a job),
	// which applies its verdict alone.
	ClaimedBefore
	// MembersGone is a cluster whose member was purged since the pass read it. Nothing
	// is recorded: the model's answer came from the purged text, and nothing written
	// after a purge may.
	MembersGone
)

// ClaimJudgmentTx records in tx that the cluster c.Signature was judged, once every
// member is found under the scope's lock: a purge either committed before (the claim
// finds its member gone) or waits until the claim's transaction ends, and then deletes
// the judgment with the rest of the scope's.
func ClaimJudgmentTx(ctx context.Context, tx pgx.Tx, c JudgmentClaim) (Claim, error) {
	if err := lockScope(ctx, tx, c.Scope); err != nil {
		return 0, err
	}
	ids := uniq(c.Members)
	var found int
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM belief WHERE scope = $1 AND id = ANY($2)", c.Scope, ids).Scan(&found); err != nil {
		return 0, fmt.Errorf("check the members of a judged cluster: %w", err)
	}
	if found != len(ids) {
		return MembersGone, nil
	}
	tag, err := tx.Exec(ctx, `INSERT INTO consolidation_judgment (scope, signature, judged_at) VALUES ($1, $2, now())
		ON CONFLICT (scope, signature) DO NOTHING`, c.Scope, c.Signature)
	if err != nil {
		return 0, fmt.Errorf("record judgment: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ClaimedBefore, nil
	}
	return Claimed, nil
}

// changedScopesSQL walks the scopes with a skip scan over the (scope, …) indexes, one
// index probe per scope, rather than by reading every belief; each scope's check is then
// a range scan of (scope, updated_at) from its watermark.
const changedScopesSQL = `
	WITH RECURSIVE scopes AS (
		(SELECT scope FROM belief ORDER BY scope LIMIT 1)
		UNION ALL
		SELECT (SELECT b.scope FROM belief b WHERE b.scope > s.scope ORDER BY b.scope LIMIT 1)
		FROM scopes s WHERE s.scope IS NOT NULL
	)
	SELECT s.scope FROM scopes s LEFT JOIN scope_consolidation c ON c.scope = s.scope
	WHERE s.scope IS NOT NULL AND EXISTS (
		SELECT 1 FROM belief b WHERE b.scope = s.scope AND b.status = 'active'
			AND b.updated_at > coalesce(c.watermark, '-infinity'))
	ORDER BY s.scope`

// shardedChangedScopesSQL is changedScopesSQL on Citus, which runs no recursive query
// across shards: each shard joins its active beliefs with its scopes' watermarks
// (co-located by scope) and the coordinator merges the scopes (the sweep spans scopes;
// docs/operations.md lists it).
const shardedChangedScopesSQL = `
	SELECT b.scope FROM belief b LEFT JOIN scope_consolidation c ON c.scope = b.scope
	WHERE b.status = 'active' AND b.updated_at > coalesce(c.watermark, '-infinity')
	GROUP BY b.scope ORDER BY b.scope`

// ChangedScopesTx is, in tx, every scope with an active belief changed after the scope's
// consolidation watermark (or never consolidated), in order. Beliefs that a pass
// superseded are not active, so a pass's own revisions do not bring its scope back.
func ChangedScopesTx(ctx context.Context, tx pgx.Tx) ([]string, error) {
	return scopesTx(ctx, tx, "changed scopes", changedScopesSQL, shardedChangedScopesSQL)
}
