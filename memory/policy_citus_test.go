//go:build citus

package memory

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/redact"
)

// TestCitusPolicy: a policy is set, read in force (alone, and for an enqueue's scopes in
// its transaction) and unset through router queries on the reference table, on a pool
// where a multi-shard query fails; ApplyPolicy's writes of each scope route to its shard.
func TestCitusPolicy(t *testing.T) {
	dbtest.RequireCitus(t)
	ctx := context.Background()
	schema := dbtest.New(t)
	pool := schema.RouterPool(t)
	router := NewStore(pool, nil)
	_, err := router.SetPolicy(ctx, Policy{ScopePrefix: "acme/", Instructions: "Keep product facts.",
		Patterns: []redact.Pattern{{Name: "employee_id", Regex: `EMP-\d{6}`}}})
	require.NoError(t, err)
	p, err := router.PolicyFor(ctx, "acme/user:1")
	require.NoError(t, err)
	require.Equal(t, "acme/", p.ScopePrefix)
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		ps, err := PoliciesForTx(ctx, tx, []string{"acme/user:1", "globex/user:2"})
		require.Len(t, ps, 1)
		return err
	}))

	// ApplyPolicy lists the scopes of every shard (the coordinator's pool), then each
	// scope's rows are rewritten by router statements.
	store := NewStore(schema.Pool, nil)
	ep := insertTranscript(t, &testBundle{schema: schema}, "acme/user:1", "c1", userSays("I am EMP-204815."))
	mustApply(t, store, from(ep, extraction("acme/user:1", "2026-01-02", nil, quoted(fact("User is EMP-204815", "employee_id", ""), "I am EMP-204815"))))
	applied, err := store.ApplyPolicy(ctx, "acme/", redact.Default(), false)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"pattern:employee_id": 3}, applied.Counts)
	require.Equal(t, map[string]int{"episode": 1, "belief": 1}, applied.Scopes[0].Rows)
	got, err := router.EpisodeIn(ctx, "acme/user:1", ep)
	require.NoError(t, err)
	require.Equal(t, "I am [redacted employee id].", got.Messages[0].Content)
	_, err = router.DeletePolicy(ctx, "acme/")
	require.NoError(t, err)
}
