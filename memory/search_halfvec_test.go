package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
)

// TestHalfvecReadPlan: a ranked read of a scope's current beliefs ranks them from the
// covering halfvec index alone, under the plan a pooled connection's prepared statement
// settles on after five runs: an index-only scan of the scope's entries, no heap fetch
// and no sequential scan, then a lookup by key for each belief re-ranked.
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
	sql, args := q.halfvecSQL(scoped(candidateColumns, currentView), true)
	// The plan a pooled connection settles on.
	explain := func() (string, error) {
		var plan []string
		err := pgx.BeginFunc(ctx, schema.Pool, func(tx pgx.Tx) error {
			var err error
			plan, err = dbtest.ExplainPrepared(ctx, tx, "ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF", sql, args)
			return err
		})
		return strings.Join(plan, "\n"), err
	}
	// What autovacuum gives a table in use: statistics, and the visibility map that lets
	// a scan answer from the index alone (without it, the planner rightly prefers another
	// index). VACUUM marks a page all-visible only once no snapshot of another test's
	// transaction predates its rows: it is run again until it has.
	indexOnly := regexp.MustCompile(`Index Only Scan using belief_scope_half_idx\S* on belief\S* \S+ \(actual rows=300 loops=1\)\n\s+Index Cond: [^\n]+\n\s+Heap Fetches: 0\n`)
	var text string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		_, err := schema.Pool.Exec(ctx, "VACUUM (ANALYZE) belief")
		require.NoError(t, err)
		text, err = explain()
		require.NoError(t, err)
		if indexOnly.MatchString(text) || time.Now().After(deadline) {
			break
		}
	}
	require.Regexp(t, indexOnly, text, "the scope's 300 entries read from the index alone")
	require.Contains(t, text, "loops=40", "each of the 4k candidates looked up by key:\n%s", text)
	require.NotContains(t, text, "Seq Scan", text)
	require.Regexp(t, `InitPlan[^\n]*\n(.*\n)*.*One-Time Filter: \(NOT `, text, "the guard against a scope's own index is checked once")
}

// TestHalfvecFits: the bound memory applies is the migration's, at its edges: a scope
// beyond it has no halfvec copy, and its reads stay exact; the largest index entry the
// bound allows is written; and a vector of any length is (its copy is of the unit vector,
// within halfvec's range).
func TestHalfvecFits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, b := setup(t)
	for i, c := range []struct {
		scope, model string
		dim          int
	}{
		{"u1", "m-a", 3}, {"u2", "m-b", maxHalfvecDim}, {"u3", "m-c", maxHalfvecDim + 1},
		// 125 and 126 characters of names, in three-byte characters.
		{strings.Repeat("€", 115), "model-0123", 3}, {strings.Repeat("₤", 115), "model-01234", 3},
		// The largest index entry there is: 125 four-byte characters and 1,024 dimensions.
		{strings.Repeat("𝄞", 115), strings.Repeat("𝄞", 10), maxHalfvecDim},
	} {
		require.NoError(t, store.EnsureEmbeddingModel(ctx, c.model, c.dim))
		vec := make([]float32, c.dim)
		vec[0], vec[1] = 1e5, -3e5 // far beyond halfvec's range (65,504)
		res := mustApply(t, store, &Batch{Scope: c.scope, Origin: RevisionExtraction, At: day("2026-01-01"),
			EmbedModel: c.model, Facts: []Fact{withVec("User likes tea", vec)}})
		var stored bool
		require.NoError(t, b.schema.Pool.QueryRow(ctx, "SELECT embedding_half IS NOT NULL FROM belief WHERE scope = $1 AND id = $2",
			c.scope, res.Facts[0].BeliefID).Scan(&stored))
		require.Equal(t, halfvecFits(c.dim, c.scope, c.model), stored, "case %d: %d dims", i, c.dim)
		got, err := store.Nearest(ctx, c.scope, c.model, vec, 3)
		require.NoError(t, err)
		require.Len(t, got, 1, "case %d: found, whichever read", i)
		require.InDelta(t, 0, *got[0].Distance, 1e-6, "case %d", i)
	}
	require.True(t, halfvecFits(3, strings.Repeat("€", 115), "model-0123"))
	require.False(t, halfvecFits(3, strings.Repeat("₤", 115), "model-01234"))
}
