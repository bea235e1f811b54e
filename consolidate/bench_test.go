package consolidate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

// noChat is the LLM of a benchmark that must not call one.
type noChat struct{}

func (noChat) Chat(context.Context, llm.ChatRequest) (llm.ChatResponse, error) {
	return llm.ChatResponse{}, errors.New("the clustering benchmark makes no LLM call")
}

const (
	benchScope = "bench"
	benchModel = "bench-64"
	benchDim   = 64
)

// BenchmarkClustering times a pass's planning over n active beliefs of one scope: the
// changed-belief query, the neighbours of each seed, union-find and the judged-signature
// lookup. No LLM call, nothing applied. Scopes are read exactly, as by default, except
// the one whose operator opted in to an index of its own (EXACT_SEARCH_LIMIT).
func BenchmarkClustering(b *testing.B) {
	type clusteringCase struct {
		beliefs, seeds int
		// indexLimit is the store's ExactSearchLimit: 0 reads exactly at every size.
		indexLimit int
		// dim is the vectors' dimension: benchDim unless set.
		dim int
	}
	cases := []clusteringCase{
		{beliefs: 1_000, seeds: 1_000},
		{beliefs: 10_000, seeds: 10_000},
		// A periodic pass at the default: MaxSeeds changed beliefs, read exactly.
		{beliefs: 100_000, seeds: DefaultMaxSeeds},
		// The same at the dimension of nomic-embed-text, where the scope's vectors no
		// longer fit in a statement's work_mem.
		{beliefs: 100_000, seeds: DefaultMaxSeeds, dim: 768},
		// A first pass where every belief is a seed, through the scope's own index.
		{beliefs: 100_000, seeds: 100_000, indexLimit: 50_000},
	}
	if os.Getenv("CREDO_BENCH_SMOKE") != "" {
		// CI runs every benchmark once at tiny sizes (bench.benchSize): read exactly, and
		// through the scope's own index.
		cases = []clusteringCase{{beliefs: 200, seeds: 200}, {beliefs: 200, seeds: 200, indexLimit: 100}}
	}
	for _, c := range cases {
		dim := cmp.Or(c.dim, benchDim)
		model := fmt.Sprintf("bench-%d", dim)
		name := fmt.Sprintf("beliefs=%d/seeds=%d/index=%t/dim=%d", c.beliefs, c.seeds, c.indexLimit > 0, dim)
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			schema := dbtest.New(b)
			store := memory.NewStore(schema.Pool, &memory.Config{ExactSearchLimit: c.indexLimit})
			require.NoError(b, store.EnsureEmbeddingModel(ctx, model, dim))
			insertSynthetic(b, schema.Pool, c.beliefs, dim, model)
			// As the pass would (pass calls IndexScope; plan, timed here, does not).
			start := time.Now()
			res, err := store.IndexScope(ctx, benchScope, model)
			require.NoError(b, err)
			require.Equal(b, c.indexLimit > 0, len(res.Created) > 0, "index built: %v", res.Created)
			b.Logf("%s: scope index %v built in %s", name, res.Created, time.Since(start).Round(time.Millisecond))
			_, err = schema.Pool.Exec(ctx, "ANALYZE belief")
			require.NoError(b, err)
			w, err := NewWorker(Config{Store: store, Chat: noChat{}, EmbedModel: model, MaxSeeds: c.seeds, Settle: -1})
			require.NoError(b, err)

			var p *plan
			for b.Loop() {
				p, err = w.plan(ctx, benchScope)
				require.NoError(b, err)
			}
			require.Equal(b, c.seeds, p.seeds)
			members := 0
			for _, c := range p.clusters {
				members += len(c.members)
			}
			b.ReportMetric(float64(len(p.clusters)), "clusters")
			b.ReportMetric(float64(members)/float64(c.seeds), "clustered/seed")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(c.seeds), "µs/seed")
		})
	}
}

// insertSynthetic stores n active beliefs of dim dimensions, embedded with model, in
// groups of one to four around random centres: members of a group have a cosine
// similarity of about 0.9, beliefs of different groups about 0, so clustering has real
// work and real clusters.
func insertSynthetic(b *testing.B, pool *pgxpool.Pool, n, dim int, model string) {
	b.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(42, uint64(n)))
	at := time.Now().Add(-2 * time.Hour)
	const chunk = 5000
	var statements, vectors []string
	flush := func() {
		// A multi-row insert from arrays: vectors go as text and are cast by
		// pgvector, which needs no client-side type registration.
		// Each row changed a millisecond after the one before, so that a pass of
		// MaxSeeds seeds takes that many, not every row of one instant.
		_, err := pool.Exec(ctx, `INSERT INTO belief (scope, subject, attribute, kind, statement, confidence, origin,
				valid_from, recorded_at, last_seen_at, updated_at, embedding, embed_model)
			SELECT $1, 'user', 'bench', 'other', s, 0.9, 'user_stated', $2::timestamptz, $2, $2, $2::timestamptz + i * interval '1 millisecond', v::vector, $3
			FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS u(s, v, i)`, benchScope, at, model, statements, vectors)
		require.NoError(b, err)
		at = at.Add(time.Duration(len(statements)) * time.Millisecond)
		statements, vectors = statements[:0], vectors[:0]
	}
	centre := make([]float64, dim)
	// The same distance from the centre whatever the dimension.
	noise := 0.045 * math.Sqrt(benchDim/float64(dim))
	for i := 0; i < n; {
		for d := range centre {
			centre[d] = rng.NormFloat64()
		}
		normalize(centre)
		for range min(1+rng.IntN(4), n-i) {
			v := make([]float64, dim)
			for d := range v {
				v[d] = centre[d] + noise*rng.NormFloat64()
			}
			normalize(v)
			statements = append(statements, fmt.Sprintf("Synthetic belief %d", i))
			vectors = append(vectors, vectorText(v))
			i++
			if len(statements) == chunk {
				flush()
			}
		}
	}
	if len(statements) > 0 {
		flush()
	}
}

func normalize(v []float64) {
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] /= norm
	}
}

func vectorText(v []float64) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.FormatFloat(x, 'g', 7, 32))
	}
	sb.WriteByte(']')
	return sb.String()
}
