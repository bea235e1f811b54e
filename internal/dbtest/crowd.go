package dbtest

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgvector/pgvector-go"
	"github.com/stretchr/testify/require"
)

// Row is a belief or a revision event stored straight into a test schema, to fill it
// faster than the engine would: a crowd of other scopes, or a large scope.
type Row struct {
	Scope     string
	Statement string
	Attribute string
	// Status is the belief's status; empty means active.
	Status string
	Vector []float32
}

// InsertBeliefs stores rows as beliefs embedded with model (registered before) and
// returns their ids in order.
func InsertBeliefs(tb testing.TB, db DB, model string, rows []Row) []int64 {
	tb.Helper()
	return insert(tb, db, "belief", rows, `INSERT INTO belief (scope, subject, attribute, kind, statement, status,
			confidence, origin, valid_from, recorded_at, last_seen_at, embedding, embed_model)
		SELECT s, 'user', a, 'attribute', t, st, 0.9, 'user_stated', $5, $5, $5, v::vector, $6
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $7::text[]) WITH ORDINALITY AS u (s, t, a, st, v, n)
		ORDER BY n`, model, nil)
}

// InsertEvents stores rows as retraction events, embedded with model, and returns their
// ids in order. Each event names the first belief of its scope, which must have one: an
// event refers to beliefs of its own scope only.
func InsertEvents(tb testing.TB, db DB, model string, rows []Row) []int64 {
	tb.Helper()
	return insert(tb, db, "revision_event", rows, `INSERT INTO revision_event (scope, action, reason, origin, old_belief_id,
			old_statement, excerpt, embedding, embed_model, created_at)
		SELECT s, 'retract', 'temporal', 'extraction', o, t, t || a || st, v::vector, $6, $5
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $7::text[], $8::bigint[]) WITH ORDINALITY AS u (s, t, a, st, v, o, n)
		ORDER BY n`, model, func(chunk []Row) []any { return []any{firstBeliefs(tb, db, chunk)} })
}

// firstBeliefs is the first belief of each row's scope, read before the insert: on Citus
// an INSERT ... SELECT from a function may not hold a subquery correlated with it.
func firstBeliefs(tb testing.TB, db DB, rows []Row) []int64 {
	tb.Helper()
	scopes := make([]string, 0, len(rows))
	for _, r := range rows {
		scopes = append(scopes, r.Scope)
	}
	slices.Sort(scopes)
	res, err := db.Query(context.Background(), "SELECT scope, min(id) FROM belief WHERE scope = ANY($1) GROUP BY scope", slices.Compact(scopes))
	require.NoError(tb, err)
	first := map[string]int64{}
	var (
		scope string
		id    int64
	)
	_, err = pgx.ForEachRow(res, []any{&scope, &id}, func() error {
		first[scope] = id
		return nil
	})
	require.NoError(tb, err)
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = first[r.Scope]
		require.NotZero(tb, out[i], "scope %q has no belief for its events to name", r.Scope)
	}
	return out
}

// insert runs sql over rows in chunks; identity values are handed out in order.
// extra, when set, gives a chunk's arguments after the seven columns' ($8 on).
func insert(tb testing.TB, db DB, table string, rows []Row, sql, model string, extra func(chunk []Row) []any) []int64 {
	tb.Helper()
	ctx := context.Background()
	var first int64
	require.NoError(tb, db.QueryRow(ctx, "SELECT coalesce(max(id), 0) + 1 FROM "+table).Scan(&first))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for chunk := range slices.Chunk(rows, 5000) {
		cols := make([][]string, 5)
		for _, r := range chunk {
			cols[0] = append(cols[0], r.Scope)
			cols[1] = append(cols[1], r.Statement)
			cols[2] = append(cols[2], cmp.Or(r.Attribute, "fact"))
			cols[3] = append(cols[3], cmp.Or(r.Status, "active"))
			cols[4] = append(cols[4], pgvector.NewVector(r.Vector).String())
		}
		if table == "revision_event" {
			// Events have no attribute nor status: those columns are empty strings.
			for i := range cols[2] {
				cols[2][i], cols[3][i] = "", ""
			}
		}
		args := []any{cols[0], cols[1], cols[2], cols[3], at, model, cols[4]}
		if extra != nil {
			args = append(args, extra(chunk)...)
		}
		_, err := db.Exec(ctx, sql, args...)
		require.NoError(tb, err)
	}
	return ids(tb, db, table, first, len(rows))
}

func ids(tb testing.TB, db DB, table string, first int64, n int) []int64 {
	tb.Helper()
	rows, err := db.Query(context.Background(), "SELECT id FROM "+table+" WHERE id >= $1 ORDER BY id LIMIT $2", first, n)
	require.NoError(tb, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(tb, err)
	require.Len(tb, out, n)
	return out
}

// DB is what the inserts need: a pool, a connection or a transaction.
type DB interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Near is a unit vector at cosine similarity about sim to the unit vector q: q turned
// towards a random direction.
func Near(rng *rand.Rand, q []float32, sim float64) []float32 {
	r := make([]float64, len(q))
	var dot float64
	for i := range r {
		r[i] = rng.NormFloat64()
		dot += r[i] * float64(q[i])
	}
	// The part of r orthogonal to q, made a unit vector.
	var norm float64
	for i := range r {
		r[i] -= dot * float64(q[i])
		norm += r[i] * r[i]
	}
	norm = math.Sqrt(norm)
	out := make([]float32, len(q))
	s := math.Sqrt(1 - sim*sim)
	for i := range out {
		out[i] = float32(sim*float64(q[i]) + s*r[i]/norm)
	}
	return out
}

// Unit is a random unit vector of dim dimensions.
func Unit(rng *rand.Rand, dim int) []float32 {
	v := make([]float64, dim)
	var norm float64
	for i := range v {
		v[i] = rng.NormFloat64()
		norm += v[i] * v[i]
	}
	out := make([]float32, dim)
	for i := range v {
		out[i] = float32(v[i] / math.Sqrt(norm))
	}
	return out
}

// ExactNearest is the indices of the k vectors of vs nearest to q by cosine distance,
// nearest first: the reference a search's recall is measured against.
func ExactNearest(q []float32, vs [][]float32, k int) []int {
	idx := make([]int, len(vs))
	d := make([]float64, len(vs))
	for i, v := range vs {
		idx[i], d[i] = i, CosineDistance(q, v)
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(d[a], d[b]) })
	return idx[:min(k, len(idx))]
}

// CosineDistance is 1 - cos(a, b), as pgvector's <=> computes it.
func CosineDistance(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return 1 - dot/math.Sqrt(na*nb)
}

// Recall is the share of want found in got.
func Recall[T comparable](got, want []T) float64 {
	if len(want) == 0 {
		return 1
	}
	n := 0
	for _, w := range want {
		if slices.Contains(got, w) {
			n++
		}
	}
	return float64(n) / float64(len(want))
}
