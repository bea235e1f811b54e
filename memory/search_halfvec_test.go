package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
)

// TestHalfvecReadPlan: a ranked read of a scope's current beliefs ranks them from the
// covering halfvec index alone, under the generic plan a pooled connection's prepared
// statement gets after five runs: an index-only scan of the scope's entries, no heap
// fetch and no sequential scan, then a lookup by key for each belief re-ranked.
func TestHalfvecReadPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := dbtest.New(t)
	store := NewStore(schema.Pool, nil)
	const model, dim, scope = "m-64", 64, "user:0"
	require.NoError(t, store.EnsureEmbeddingModel(ctx, model, dim))
	rng := rand.New(rand.NewPCG(3, 5))
	var rows []dbtest.Row
	for i := range 6000 {
		rows = append(rows, dbtest.Row{Scope: fmt.Sprintf("user:%d", i%20), Statement: fmt.Sprintf("User likes hobby %d", i),
			Attribute: fmt.Sprintf("hobby_%d", i), Vector: dbtest.Unit(rng, dim)})
	}
	dbtest.InsertBeliefs(t, schema.Pool, model, rows)

	q := nearestQuery{table: searchBeliefs, scope: scope, where: currentView, args: []any{scope}, model: model,
		vec: dbtest.Unit(rng, dim), k: 10}
	require.True(t, q.activeBeliefs())
	require.True(t, halfvecFits(dim, scope, model))
	sql, args := q.halfvecSQL(scoped(candidateColumns, currentView))
	explain := func() (string, error) {
		var plan []string
		err := pgx.BeginFunc(ctx, schema.Pool, func(tx pgx.Tx) error {
			if err := setLocal(ctx, tx, setting{"plan_cache_mode", "force_generic_plan"}); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "+sql, args...)
			if err != nil {
				return err
			}
			plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		return strings.Join(plan, "\n"), err
	}
	// What autovacuum gives a table in use: statistics, and the visibility map that lets
	// a scan answer from the index alone. VACUUM marks a page all-visible only once no
	// snapshot of another test's transaction predates its rows: it is run again until it
	// has.
	var text string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		_, err := schema.Pool.Exec(ctx, "VACUUM (ANALYZE) belief")
		require.NoError(t, err)
		text, err = explain()
		require.NoError(t, err)
		if strings.Contains(text, "Heap Fetches: 0") || time.Now().After(deadline) {
			break
		}
	}
	require.Contains(t, text, "Heap Fetches: 0", text)
	require.Contains(t, text, "Index Only Scan using belief_scope_half_idx", text)
	require.Contains(t, text, "rows=300 loops=1", "the scope's 300 entries read once:\n%s", text)
	require.Contains(t, text, "loops=40", "each of the 4k candidates looked up by key:\n%s", text)
	require.NotContains(t, text, "Seq Scan", text)
}

// TestHalfvecFits: the bound memory applies is the migration's, at its edges: a scope
// beyond it has no halfvec copy, and its reads stay exact.
func TestHalfvecFits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, b := setup(t)
	// Scopes of 163 three-byte characters, 489 bytes, with a model name of 10, 11 or 12
	// bytes (its dimensions appended): 499, 500 and 501 bytes together.
	long := func(r string) string { return strings.Repeat(r, 163) }
	for _, c := range []struct {
		scope, model string
		dim          int
	}{
		{"u1", "m", 3}, {"u2", "m", maxHalfvecDim}, {"u3", "m", maxHalfvecDim + 1},
		{long("€"), "m12345678", 3}, {long("₤"), "m123456789", 3}, {long("₹"), "m1234567890", 3},
		// The largest index entry there is: 500 bytes of names and 1,024 dimensions.
		{long("₺"), "m123456", maxHalfvecDim},
	} {
		model := c.model + strconv.Itoa(c.dim)
		require.NoError(t, store.EnsureEmbeddingModel(ctx, model, c.dim))
		vec := make([]float32, c.dim)
		vec[0] = 1
		res := mustApply(t, store, &Batch{Scope: c.scope, Origin: RevisionExtraction, At: day("2026-01-01"),
			EmbedModel: model, Facts: []Fact{withVec("User likes tea", vec)}})
		var stored bool
		require.NoError(t, b.schema.Pool.QueryRow(ctx, "SELECT embedding_half IS NOT NULL FROM belief WHERE scope = $1 AND id = $2",
			c.scope, res.Facts[0].BeliefID).Scan(&stored))
		require.Equal(t, halfvecFits(c.dim, c.scope, model), stored, "%d bytes, %d dims", len(c.scope)+len(c.model), c.dim)
		got, err := store.Nearest(ctx, c.scope, model, vec, 3)
		require.NoError(t, err)
		require.Len(t, got, 1, "found, whichever read")
	}
}
