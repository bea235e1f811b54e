//go:build citus

package memory

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/internal/testclock"
)

// TestCitusExportImport: the export of a scope and its import into another are each the
// work of the scope's shard alone on Citus (any multi-shard statement fails on the
// router pool), and the import reads as the export, its entities included.
func TestCitusExportImport(t *testing.T) {
	dbtest.RequireCitus(t)
	ctx := context.Background()
	schema := dbtest.New(t)
	clock := testclock.New(day("2026-06-01"))
	store := NewStore(schema.RouterPool(t), &Config{Now: clock.Now})
	const from, into = "acme/user:1", "globex/user:1"
	oslo := mustApply(t, store, extraction(from, "2026-01-01", nil, fact("User lives in Oslo", "location", ""),
		about(fact("User's sister works at Acme", "employer", ""), "my sister", "Sarah"),
		about(fact("Sally plays the cello", "instrument", ""), "Sally"))).Facts[0].BeliefID
	mustApply(t, store, extraction(from, "2026-03-01", []int64{oslo}, resolves(fact("User lives in Bergen", "location", ""), 0, ActionSupersede, ReasonTemporal)))
	_, err := store.MergeEntities(ctx, Merge{Scope: from, Into: "Sarah", Other: "Sally"})
	require.NoError(t, err)

	sc, _ := exportOf(t, store, from, into)
	require.Len(t, sc.Entities, 2)
	require.NoError(t, store.CheckImport(ctx, []*ScopeImport{sc}))
	holding, err := store.HoldingMemory(ctx, []string{from, into})
	require.NoError(t, err)
	require.Equal(t, []string{from}, holding)
	require.NoError(t, pgx.BeginFunc(ctx, schema.RouterPool(t), func(tx pgx.Tx) error {
		_, err := store.ImportTx(ctx, tx, sc, nil)
		return err
	}))
	require.Equal(t, entitiesOf(t, store, from), entitiesOf(t, store, into), "the registry, aliases and all")
	require.Equal(t, beliefEntities(t, store, from), beliefEntities(t, store, into))
	was, err := store.All(ctx, from)
	require.NoError(t, err)
	is, err := store.All(ctx, into)
	require.NoError(t, err)
	require.Len(t, is, len(was))
	for i := range was {
		require.Equal(t, was[i].Statement, is[i].Statement)
		require.Equal(t, was[i].Status, is[i].Status)
		require.Equal(t, was[i].ValidUntil, is[i].ValidUntil)
		require.Len(t, is[i].SupersededBy, len(was[i].SupersededBy))
	}
}
