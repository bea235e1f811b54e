package bench_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/memory"
)

// The scale of BenchmarkSearchAtScale: scopes of these sizes live among the crowd, other
// scopes' beliefs, at each dimension. CREDO_BENCH_CROWD sets another crowd size (a
// quick trial with fewer rows), CREDO_BENCH_SCOPES and CREDO_BENCH_DIMS other scope
// sizes and dimensions (comma-separated; the Citus comparison leaves out the largest).
var (
	searchDims   = []int{64, 768}
	searchScopes = []int{20, 1_000, 10_000, 100_000}
)

const (
	searchCrowd = 1_000_000
	// searchCrowdPerUser is how many beliefs each user of the crowd holds.
	searchCrowdPerUser = 4
	// searchTopics is how many directions the crowd gathers around: "User lives in ...",
	// "User works at ...", each near one question.
	searchTopics = 32
	// searchReads is how many reads of each kind are timed per scope; searchWarmup more
	// go first, untimed.
	searchReads  = 300
	searchWarmup = 10
	// The reads' k: a ranked recall (GET /v1/beliefs?query=, context) and the
	// extraction's candidates.
	searchRankedK    = 10
	searchCandidateK = 24
	searchQuestion   = "what does the user like"
	// searchIndexRecallTarget is the recall a scope's own index must reach;
	// searchHalfvecRecallTarget the default read's (docs/guarantees.md).
	searchIndexRecallTarget   = 0.98
	searchHalfvecRecallTarget = 0.999
	// searchIndexLimit is the EXACT_SEARCH_LIMIT an operator would opt in with: scopes
	// above it get an index of their own. The default, 0, never builds one.
	searchIndexLimit = 50_000
)

// BenchmarkSearchAtScale: the nearest-neighbour reads of one scope of 20, 1,000, 10,000
// and 100,000 beliefs among a crowd of 1,000,000 beliefs of 250,000 other scopes, at 64
// and 768 dimensions. For each scope: latency p50/p99 of a ranked current recall
// (store.Recall, K 10) and of the extraction's candidate read (store.Nearest, k 24),
// and their recall@k against the exact answer computed in Go. Each scope is read by
// the exact scan of full vectors (memory.Config.FullScan, the read before migration
// 020) and by the default read (halfvec copies ranked from the covering index, the
// nearest re-ranked exactly), one after the other in the same run; the 100,000 scope a
// third time by its own HNSW index, built with store.IndexScope and timed. Sizes of the
// table, its btree indexes and the scope index are reported with the load.
//
// The crowd lies nearer to a third of the queries than anything of the scope does, as
// every other user's "User lives in ..." lies nearer to "where does the user live?".
// The scopes' rows are spread evenly through the crowd's, as rows written over months
// among other users' writes are: a scope's rows share no page with one another, the
// least favourable heap layout for a scan of one scope.
func BenchmarkSearchAtScale(b *testing.B) {
	crowd := benchSize(searchCrowd, 2_000)
	if s := os.Getenv("CREDO_BENCH_CROWD"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(b, err, "CREDO_BENCH_CROWD")
		crowd = n
	}
	sizes := benchInts(b, "CREDO_BENCH_SCOPES", benchSizes(searchScopes, []int{20}))
	for _, dim := range benchInts(b, "CREDO_BENCH_DIMS", benchSizes(searchDims, []int{64})) {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			w := loadSearchWorld(b, dim, crowd, sizes)
			b.Run("load", func(b *testing.B) {
				for range b.N {
					// Loaded once per dimension, above: this reports it.
				}
				w.reportLoad(b)
			})
			for _, n := range sizes {
				sc := w.scopes[n]
				b.Run(fmt.Sprintf("beliefs=%d", n), func(b *testing.B) {
					b.Run("exact", func(b *testing.B) {
						// Read before the scope has an index of its own, by a store whose limit
						// would not give it one and that compares every full vector: the read
						// before migration 020, the reference of the halfvec read.
						require.False(b, w.indexed(b, sc), "the exact reads of %s run before its index exists", sc.name)
						w.measure(b, w.exact, sc, readExact)
					})
					b.Run("halfvec", func(b *testing.B) {
						// The default read: halfvec copies from the covering index, the nearest
						// re-ranked exactly.
						w.measure(b, w.half, sc, readHalfvec)
					})
					b.Run("fused", func(b *testing.B) {
						// The default read with its question's words and entities
						// (memory/fuse.go), after the vector read above, on the same scope.
						w.measure(b, w.half, sc, readFused)
					})
					if n <= searchIndexLimit {
						return
					}
					b.Run("index", func(b *testing.B) {
						size := w.buildIndex(b, sc)
						w.measure(b, w.store, sc, readIndex)
						// After the reads: the timer's reset drops the metrics reported before.
						b.ReportMetric(w.buildTime.Seconds(), "index_build_s")
						b.ReportMetric(mb(size), "scope_index_MB")
					})
				})
			}
		})
	}
}

// benchSize is full, or tiny when CREDO_BENCH_SMOKE is set: CI runs every benchmark once
// at tiny sizes (-benchtime 1x) so that none can break unseen; those numbers mean nothing.
func benchSize(full, tiny int) int {
	if os.Getenv("CREDO_BENCH_SMOKE") != "" {
		return tiny
	}
	return full
}

// benchSizes is benchSize for a list.
func benchSizes(full, tiny []int) []int {
	if os.Getenv("CREDO_BENCH_SMOKE") != "" {
		return tiny
	}
	return full
}

// benchCases is cases, or only those at the indexes keep when CREDO_BENCH_SMOKE is set.
func benchCases[T any](cases []T, keep ...int) []T {
	if os.Getenv("CREDO_BENCH_SMOKE") == "" {
		return cases
	}
	out := make([]T, len(keep))
	for i, k := range keep {
		out[i] = cases[k]
	}
	return out
}

// benchInts is the comma-separated integers of the variable name, or def when it is unset.
func benchInts(b *testing.B, name string, def []int) []int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		require.NoError(b, err, name)
		out = append(out, n)
	}
	return out
}

// searchWorld is one loaded schema: the crowd and the scopes, at one dimension.
type searchWorld struct {
	schema *dbtest.Schema
	// pool runs every read, traced to tell exact scans from index scans and to capture
	// the statements explained.
	pool   *pgxpool.Pool
	tracer *searchTracer
	// store gives scopes above searchIndexLimit their own index; half has the default
	// limit, 0, and never reads through one; exact neither, and compares full vectors
	// only (memory.Config.FullScan).
	store, half, exact *memory.Store
	model              string
	dim, crowd         int
	scopes             map[int]*searchScope

	load, vacuum, reindex time.Duration
	// built is the index build of the scope above the exact limit, once done.
	built      bool
	buildTime  time.Duration
	buildNotes []string
}

// searchScope is one scope searched, as the reference knows it.
type searchScope struct {
	name string
	size int
	// vecs and active are every row's, in id order; ids once loaded.
	vecs   [][]float32
	active []bool
	ids    []int64
	// The active rows, the only ones current reads return.
	activeVecs [][]float32
	activeIDs  []int64
	// queries are the timed reads' vectors, after searchWarmup untimed ones; nearCrowd
	// marks those drawn near a topic rather than near one of the scope's beliefs.
	queries   [][]float32
	nearCrowd []bool
	// nearOf is, for each query, the belief it was drawn near, -1 near the crowd.
	nearOf []int
	// refs are the searchCandidateK nearest active rows of each query, nearest first
	// (computed once, on first use).
	refs     [][]searchHit
	refsOnce sync.Once
}

func loadSearchWorld(b *testing.B, dim, crowd int, sizes []int) *searchWorld {
	b.Helper()
	ctx := context.Background()
	schema := dbtest.New(b)
	b.Logf("schema %s: %d crowd beliefs, %d dimensions", schema.Name, crowd, dim)
	w := &searchWorld{schema: schema, model: fmt.Sprintf("bench-%d", dim), dim: dim, crowd: crowd,
		scopes: map[int]*searchScope{}, tracer: &searchTracer{}}
	cfg, err := pgxpool.ParseConfig(schema.URL)
	require.NoError(b, err)
	cfg.MaxConns = 4
	cfg.ConnConfig.Tracer = w.tracer
	cfg.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { w.tracer.notice(n.Message) }
	w.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(b, err)
	b.Cleanup(w.pool.Close) // before the schema is dropped
	w.store = memory.NewStore(w.pool, &memory.Config{ExactSearchLimit: searchIndexLimit})
	w.half = memory.NewStore(w.pool, nil)
	w.exact = memory.NewStore(w.pool, &memory.Config{FullScan: true})
	require.NoError(b, w.store.EnsureEmbeddingModel(ctx, w.model, dim))
	require.False(b, memory.IsHistorical(searchQuestion))

	topics := searchTopicsOf(dim)
	var scopes []*searchScope
	for _, n := range sizes {
		sc := newSearchScope(dim, n, topics)
		w.scopes[n] = sc
		scopes = append(scopes, sc)
	}

	// One COPY of every row, in binary: vectors are not printed and parsed as text, and
	// nothing is held but the scopes' own vectors. The btree indexes of the table are
	// kept up to date on the way, as an application's inserts keep them.
	conn, err := pgx.Connect(ctx, schema.URL)
	require.NoError(b, err)
	defer conn.Close(ctx)
	var vectorOID uint32
	require.NoError(b, conn.QueryRow(ctx, "SELECT 'vector'::regtype::oid").Scan(&vectorOID))
	conn.TypeMap().RegisterType(&pgtype.Type{Name: "vector", OID: vectorOID, Codec: vectorCodec{}})
	src := &searchRows{model: w.model, crowd: crowd, topics: topics, scopes: scopes,
		rng: rand.New(rand.NewPCG(uint64(dim), 2)), next: make([]int, 1+len(scopes)),
		at: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	start := time.Now()
	n, err := conn.CopyFrom(ctx, pgx.Identifier{"belief"}, []string{"scope", "subject", "attribute", "kind", "statement",
		"status", "confidence", "origin", "valid_from", "recorded_at", "last_seen_at", "embedding", "embed_model"}, src)
	require.NoError(b, err)
	w.load = time.Since(start)
	require.EqualValues(b, src.total(), n)

	// What a table in use has had long since: hint bits set, statistics gathered.
	start = time.Now()
	_, err = w.pool.Exec(ctx, "VACUUM (ANALYZE) belief")
	require.NoError(b, err)
	w.vacuum = time.Since(start)

	// The btree indexes were kept up to date by the COPY; built again from scratch, they
	// show what building them for the loaded rows costs.
	start = time.Now()
	_, err = w.pool.Exec(ctx, "REINDEX TABLE belief")
	require.NoError(b, err)
	w.reindex = time.Since(start)

	for _, sc := range scopes {
		// The words more than memory.MaxTermBeliefs of the scope's beliefs hold, counted
		// as the scope's consolidation pass counts them once it grew.
		start = time.Now()
		common, err := w.store.CountCommonWords(ctx, sc.name)
		require.NoError(b, err)
		require.Equal(b, sc.size > memory.MaxTermBeliefs, common.Counted)
		b.Logf("%s: %d common words counted in %s", sc.name, common.Words, time.Since(start).Round(time.Millisecond))
		rows, err := w.pool.Query(ctx, "SELECT id FROM belief WHERE scope = $1 ORDER BY id", sc.name)
		require.NoError(b, err)
		sc.ids, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		require.NoError(b, err)
		require.Len(b, sc.ids, sc.size)
		for i, id := range sc.ids {
			if sc.active[i] {
				sc.activeVecs = append(sc.activeVecs, sc.vecs[i])
				sc.activeIDs = append(sc.activeIDs, id)
			}
		}
	}
	b.Logf("loaded %d rows in %s (%.0f rows/s), VACUUM (ANALYZE) %s, REINDEX (btrees) %s", n, w.load.Round(time.Second),
		float64(n)/w.load.Seconds(), w.vacuum.Round(time.Second), w.reindex.Round(time.Second))
	var settings string
	require.NoError(b, w.pool.QueryRow(ctx, `SELECT format('PostgreSQL %s, pgvector %s, shared_buffers %s, work_mem %s, maintenance_work_mem %s, max_parallel_maintenance_workers %s',
		current_setting('server_version'), (SELECT extversion FROM pg_extension WHERE extname = 'vector'),
		current_setting('shared_buffers'), current_setting('work_mem'), current_setting('maintenance_work_mem'),
		current_setting('max_parallel_maintenance_workers'))`).Scan(&settings))
	b.Logf("%s", settings)
	return w
}

// searchTopicsOf is the directions the crowd and the scopes gather around, at dim.
func searchTopicsOf(dim int) [][]float32 {
	rng := rand.New(rand.NewPCG(uint64(dim), 1))
	topics := make([][]float32, searchTopics)
	for i := range topics {
		topics[i] = dbtest.Unit(rng, dim)
	}
	return topics
}

// newSearchScope is a scope of n beliefs, one in five superseded, each near one of the
// topics but less near than the crowd (similarity 0 to 0.9), and its queries: two in
// three near one of its own beliefs, one in three near a topic, where the crowd lies
// nearer than the scope.
func newSearchScope(dim, n int, topics [][]float32) *searchScope {
	rng := rand.New(rand.NewPCG(uint64(dim), uint64(n)))
	sc := &searchScope{name: fmt.Sprintf("bench:%d", n), size: n}
	for i := range n {
		sc.vecs = append(sc.vecs, dbtest.Near(rng, topics[rng.IntN(len(topics))], 0.9*rng.Float64()))
		sc.active = append(sc.active, i%5 != 4)
	}
	for i := range searchWarmup + searchReads {
		sc.nearCrowd = append(sc.nearCrowd, i%3 == 2)
		if i%3 == 2 {
			sc.queries = append(sc.queries, dbtest.Near(rng, topics[rng.IntN(len(topics))], 0.98))
			sc.nearOf = append(sc.nearOf, -1)
		} else {
			j := rng.IntN(n)
			sc.queries = append(sc.queries, dbtest.Near(rng, sc.vecs[j], 0.85+0.1*rng.Float64()))
			sc.nearOf = append(sc.nearOf, j)
		}
	}
	return sc
}

// searchRows is the COPY's rows: the crowd's, generated as they are sent, and the
// scopes', each stream spread evenly over the whole (row i of a stream of n goes at
// (i+0.5)/n of the way).
type searchRows struct {
	model  string
	crowd  int
	topics [][]float32
	scopes []*searchScope
	rng    *rand.Rand
	// next is the next row of each stream: the crowd's, then each scope's.
	next []int
	at   time.Time
	row  []any
}

func (r *searchRows) size(stream int) int {
	if stream == 0 {
		return r.crowd
	}
	return r.scopes[stream-1].size
}

func (r *searchRows) total() int {
	n := 0
	for s := range r.next {
		n += r.size(s)
	}
	return n
}

func (r *searchRows) Next() bool {
	stream, key := -1, 2.0
	for s, i := range r.next {
		if n := r.size(s); i < n {
			if k := (float64(i) + 0.5) / float64(n); k < key {
				stream, key = s, k
			}
		}
	}
	if stream < 0 {
		return false
	}
	i := r.next[stream]
	r.next[stream]++
	var scope, statement, attribute, status string
	var vec []float32
	if stream == 0 {
		users := max(r.crowd/searchCrowdPerUser, 1)
		scope, statement, attribute, status = fmt.Sprintf("user:%d", i%users), fmt.Sprintf("User lives in city %d", i), "home_city", "active"
		vec = dbtest.Near(r.rng, r.topics[i%len(r.topics)], 0.95+0.05*r.rng.Float64())
	} else {
		sc := r.scopes[stream-1]
		scope, statement, attribute, status = sc.name, searchStatement(i), fmt.Sprintf("hobby_%d", i), "active"
		if !sc.active[i] {
			status = "superseded"
		}
		vec = sc.vecs[i]
	}
	r.row = []any{scope, "user", attribute, "attribute", statement, status, 0.9, "user_stated",
		r.at, r.at, r.at, pgvector.NewVector(vec), r.model}
	return true
}

func (r *searchRows) Values() ([]any, error) { return r.row, nil }
func (r *searchRows) Err() error             { return nil }

// searchWords are the words a scope's statements draw on, as a scope's beliefs share
// some words and not others: each of searchWords' words is in about one in
// len(searchWords) statements.
var searchWords = []string{"garden", "violin", "kayak", "pottery", "chess", "sourdough", "marathon", "origami", "telescope",
	"climbing", "knitting", "podcast", "vinyl", "bonsai", "fencing", "surfing", "calligraphy", "beekeeping", "juggling",
	"sailing", "archery", "puzzles", "poetry", "cycling", "bouldering", "tango", "ceramics", "birding", "rowing", "fishing"}

// searchStatement is the i-th statement of a scope: two of searchWords and a code of
// its own, as an order number or a ticket is.
func searchStatement(i int) string {
	return fmt.Sprintf("User likes %s and %s, ticket %s", searchWords[i%len(searchWords)],
		searchWords[(i/len(searchWords))%len(searchWords)], searchCode(i))
}

// searchCode is the code of a scope's i-th belief.
func searchCode(i int) string { return fmt.Sprintf("KX-%d", 10_000+i) }

// searchText is the fused read's question for the q-th query of sc: near one of its
// beliefs, the question names that belief's code and one of its words; near the crowd,
// it names common words only.
func (sc *searchScope) searchText(q int) string {
	if j := sc.nearOf[q]; j >= 0 {
		return fmt.Sprintf("what about the %s, ticket %s?", searchWords[j%len(searchWords)], searchCode(j))
	}
	return searchQuestion + " " + searchWords[q%len(searchWords)]
}

// named is the id of the current belief query q was drawn near, whose code the fused
// read's question names.
func (sc *searchScope) named(q int) (int64, bool) {
	j := sc.nearOf[q]
	if j < 0 || !sc.active[j] {
		return 0, false
	}
	return sc.ids[j], true
}

// reference computes the exact answers of the scope's timed queries, in parallel.
func (sc *searchScope) reference() [][]searchHit {
	sc.refsOnce.Do(func() {
		qs := sc.queries[searchWarmup:]
		sc.refs = make([][]searchHit, len(qs))
		var wg sync.WaitGroup
		var next atomic.Int64
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < len(qs); i = int(next.Add(1) - 1) {
					for _, j := range dbtest.ExactNearest(qs[i], sc.activeVecs, searchCandidateK) {
						sc.refs[i] = append(sc.refs[i], searchHit{sc.activeIDs[j], dbtest.CosineDistance(qs[i], sc.activeVecs[j])})
					}
				}
			})
		}
		wg.Wait()
	})
	return sc.refs
}

func (w *searchWorld) reportLoad(b *testing.B) {
	b.Helper()
	ctx := context.Background()
	var total, heap, indexes, toast int64
	require.NoError(b, w.pool.QueryRow(ctx, `SELECT pg_total_relation_size(c.oid), pg_relation_size(c.oid),
			pg_indexes_size(c.oid), coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)
		FROM pg_class c WHERE c.oid = 'belief'::regclass`).Scan(&total, &heap, &indexes, &toast))
	// Values moved out of line: above 2 kB a row's longer text values go to TOAST
	// (the vector, of storage MAIN, stays in the row).
	var toastRel string
	var toasted int64
	require.NoError(b, w.pool.QueryRow(ctx, "SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = 'belief'::regclass").Scan(&toastRel))
	require.NoError(b, w.pool.QueryRow(ctx, "SELECT count(DISTINCT chunk_id) FROM "+toastRel).Scan(&toasted))
	rows := w.crowd
	var goRef int64
	for _, sc := range w.scopes {
		rows += sc.size
		goRef += int64(sc.size * w.dim * 4)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(rows), "rows")
	b.ReportMetric(w.load.Seconds(), "load_s")
	b.ReportMetric(float64(rows)/w.load.Seconds(), "rows/s")
	b.ReportMetric(w.vacuum.Seconds(), "vacuum_analyze_s")
	b.ReportMetric(w.reindex.Seconds(), "btree_rebuild_s")
	b.ReportMetric(mb(total), "belief_total_MB")
	b.ReportMetric(mb(heap), "heap_MB")
	b.ReportMetric(mb(indexes), "btree_MB")
	b.ReportMetric(mb(toast), "toast_MB")
	b.ReportMetric(float64(toasted), "toasted_values")
	b.ReportMetric(float64(heap)/float64(rows), "heap_B/row")
	b.ReportMetric(mb(goRef), "go_ref_vectors_MB")
	// What the words ranking keeps (migrations 029 and 030): the tsvector column, and its
	// GIN index, per belief.
	var wordsIndex int64
	var wordsColumn float64
	require.NoError(b, w.pool.QueryRow(ctx, `SELECT pg_relation_size('belief_words_idx'), avg(pg_column_size(words)) FROM belief`).
		Scan(&wordsIndex, &wordsColumn))
	b.ReportMetric(float64(wordsIndex)/float64(rows), "words_index_B/row")
	b.ReportMetric(wordsColumn, "words_column_B/row")
	b.ReportMetric(mb(int64(ms.HeapInuse)), "go_heap_MB")
	b.ReportMetric(0, "ns/op")
}

// indexed says whether sc has an index of its own.
func (w *searchWorld) indexed(b *testing.B, sc *searchScope) bool {
	var ok bool
	require.NoError(b, w.pool.QueryRow(context.Background(),
		"SELECT EXISTS (SELECT 1 FROM scope_vector_index WHERE scope = $1 AND model = $2)", sc.name, w.model).Scan(&ok))
	return ok
}

// buildIndex gives sc its own HNSW index, once, as consolidation's job would, and
// returns its size.
func (w *searchWorld) buildIndex(b *testing.B, sc *searchScope) int64 {
	b.Helper()
	ctx := context.Background()
	if !w.built {
		w.tracer.notices()
		start := time.Now()
		res, err := w.store.IndexScope(ctx, sc.name, w.model)
		require.NoError(b, err)
		w.buildTime = time.Since(start)
		require.Equal(b, []string{"belief"}, res.Created)
		w.buildNotes = w.tracer.notices()
		w.built = true
		b.Logf("IndexScope(%s): %d rows, built in %s; notices: %q", sc.name, res.Rows["belief"],
			w.buildTime.Round(time.Millisecond), w.buildNotes)
	}
	var size int64
	require.NoError(b, w.pool.QueryRow(ctx, `SELECT pg_relation_size(name::regclass) FROM scope_vector_index
		WHERE scope = $1 AND tbl = 'belief' AND model = $2`, sc.name, w.model).Scan(&size))
	return size
}

// A search benchmark's read path.
type readPath string

const (
	readExact   readPath = "exact scan"
	readHalfvec readPath = "halfvec, re-ranked"
	readIndex   readPath = "own HNSW index"
	// readFused is the default read with its question's text: the halfvec read fused
	// with the words and entity rankings (memory/fuse.go).
	readFused readPath = "fused: halfvec, words, entities"
)

// measure times the scope's ranked recalls and candidate reads by path, checks them
// against the exact answer, and explains the ranked read's statement.
func (w *searchWorld) measure(b *testing.B, store *memory.Store, sc *searchScope, path readPath) {
	b.Helper()
	indexed, fused := path == readIndex, path == readFused
	ctx := context.Background()
	refs := sc.reference()
	warm, timed := sc.queries[:searchWarmup], sc.queries[searchWarmup:]
	// text is the question of query q; reads of other paths rank by the vector alone.
	text := func(q int) string {
		if fused {
			return sc.searchText(q)
		}
		return searchQuestion
	}
	rankedBy := func(q []float32, text string, vectorsOnly bool) ([]searchHit, error) {
		rec, err := store.Recall(ctx, memory.RecallQuery{Scope: sc.name, Text: text, Vector: q, EmbedModel: w.model, K: searchRankedK,
			VectorsOnly: vectorsOnly})
		if err != nil {
			return nil, err
		}
		if rec.Mode != memory.RecallCurrent || !rec.Ranked {
			return nil, fmt.Errorf("a %s read, ranked %v", rec.Mode, rec.Ranked)
		}
		return hits(rec.Beliefs), nil
	}
	rankedText := func(q []float32, text string) ([]searchHit, error) { return rankedBy(q, text, !fused) }
	candidatesText := func(q []float32, text string) ([]searchHit, error) {
		if !fused {
			bs, err := store.Nearest(ctx, sc.name, w.model, q, searchCandidateK)
			return hits(bs), err
		}
		bs, err := store.Candidates(ctx, memory.CandidatesQuery{Scope: sc.name, Text: text, Model: w.model, Vector: q, K: searchCandidateK})
		return hits(bs), err
	}

	// The first read finds few of the scope's pages in shared buffers: the COPY and the
	// VACUUM went through a ring of their own, and the reads of other scopes since
	// brought their own pages. Its statements are the ones explained below.
	w.tracer.startCapture()
	start := time.Now()
	_, err := rankedText(warm[0], text(0))
	first := time.Since(start)
	captured := w.tracer.stopCapture()
	require.NoError(b, err)
	for i, q := range warm {
		_, err := rankedText(q, text(i))
		require.NoError(b, err)
		_, err = candidatesText(q, text(i))
		require.NoError(b, err)
	}

	// A fused read's vector read goes just before it, on the same query, so that their
	// ratio is measured side by side whatever else the machine does meanwhile.
	var rankedStats, candidateStats, vectorRanked, vectorCandidate searchStats
	began := time.Now()
	w.tracer.exactScans.Store(0)
	w.tracer.indexScans.Store(0)
	w.tracer.halfScans.Store(0)
	w.tracer.wordsReads.Store(0)
	b.ResetTimer()
	for range b.N {
		for i, q := range timed {
			t := text(searchWarmup + i)
			if fused {
				vectorRanked.read(b, func(q []float32) ([]searchHit, error) { return rankedBy(q, t, true) }, q, refs[i][:min(searchRankedK, len(refs[i]))])
			}
			got := rankedStats.read(b, func(q []float32) ([]searchHit, error) { return rankedText(q, t) }, q, refs[i][:min(searchRankedK, len(refs[i]))])
			if id, ok := sc.named(searchWarmup + i); ok {
				rankedStats.found(got, id)
			}
		}
		for i, q := range timed {
			t := text(searchWarmup + i)
			if fused {
				vectorCandidate.read(b, func(q []float32) ([]searchHit, error) {
					bs, err := store.Nearest(ctx, sc.name, w.model, q, searchCandidateK)
					return hits(bs), err
				}, q, refs[i])
			}
			got := candidateStats.read(b, func(q []float32) ([]searchHit, error) { return candidatesText(q, t) }, q, refs[i])
			if id, ok := sc.named(searchWarmup + i); ok {
				candidateStats.found(got, id)
			}
		}
	}
	b.StopTimer()
	exactScans, indexScans, halfScans := w.tracer.exactScans.Load(), w.tracer.indexScans.Load(), w.tracer.halfScans.Load()
	wordsReads := w.tracer.wordsReads.Load()
	reads := int64(2 * len(timed) * b.N)

	rankedStats.report(b, "ranked")
	candidateStats.report(b, "candidate")
	b.ReportMetric(ms(first), "first_read_ms")
	switch path {
	case readIndex:
		// What an index misses, by the kind of question.
		for _, s := range []struct {
			name string
			st   *searchStats
		}{{"ranked", &rankedStats}, {"candidate", &candidateStats}} {
			own, crowd := s.st.recallBy(sc.nearCrowd[searchWarmup:])
			b.ReportMetric(own, s.name+"_recall_near_own")
			b.ReportMetric(crowd, s.name+"_recall_near_crowd")
		}
		// A read of the scope's index that returned fewer than k is read again exactly.
		b.ReportMetric(float64(exactScans), "exact_fallbacks")
		require.Equal(b, reads, indexScans, "every read asked the scope's index")
	case readHalfvec, readFused:
		if fused {
			require.Equal(b, 2*reads, halfScans, "every read, fused or not, ranked the scope's halfvec copies")
		} else {
			require.Equal(b, reads, halfScans, "every read ranked the scope's halfvec copies")
		}
		require.Zero(b, indexScans+exactScans)
		if fused {
			require.Equal(b, reads, wordsReads, "every fused read ranked the words of its question")
			b.ReportMetric(vectorRanked.pct(50), "vector_ranked_p50_ms")
			b.ReportMetric(vectorCandidate.pct(50), "vector_candidate_p50_ms")
			b.ReportMetric(rankedStats.pct(50)/vectorRanked.pct(50), "ranked_p50_fused/vector")
			b.ReportMetric(candidateStats.pct(50)/vectorCandidate.pct(50), "candidate_p50_fused/vector")
			// What the words add to what the vectors find: the hit rate of the belief whose
			// code the question names, among the reads near one of the scope's beliefs.
			b.ReportMetric(rankedStats.named, "ranked_code_hit")
			b.ReportMetric(candidateStats.named, "candidate_code_hit")
		} else {
			require.Zero(b, wordsReads)
		}
	default:
		require.Equal(b, reads, exactScans, "every read scanned the scope exactly")
		require.Zero(b, indexScans+halfScans)
	}
	b.ReportMetric(0, "ns/op")
	for _, s := range []struct {
		name string
		st   *searchStats
	}{{"ranked", &rankedStats}, {"candidate", &candidateStats}} {
		switch r := s.st.meanRecall(); {
		case path == readExact && r < 1:
			// An exact scan that misses a row is a bug, not a measurement.
			b.Errorf("%s reads of %s: recall %.4f of an exact scan", s.name, sc.name, r)
		case indexed && r < searchIndexRecallTarget:
			// Reported, not failed: a failed benchmark prints no metrics.
			b.Logf("BELOW TARGET: %s reads of %s by its own index: recall %.4f, target %.2f", s.name, sc.name, r, searchIndexRecallTarget)
		case fused:
			// Fusion reorders what the vector ranking found: recall against the vectors'
			// answer is reported, not a target.
		case path == readHalfvec && r < searchHalfvecRecallTarget:
			b.Logf("BELOW TARGET: %s reads of %s by halfvec: recall %.4f, target %.3f", s.name, sc.name, r, searchHalfvecRecallTarget)
		}
	}
	if path == readExact {
		w.anatomy(b, sc, timed[0])
	}
	b.Logf("%s (%d beliefs, %d active), %s: %d reads of each kind from %s to %s; ranked p50 %.2f ms p99 %.2f ms recall %.4f; candidate p50 %.2f ms p99 %.2f ms recall %.4f; first read %.2f ms",
		sc.name, sc.size, len(sc.activeIDs), path, len(timed)*b.N,
		began.Format(time.TimeOnly), time.Now().Format(time.TimeOnly), rankedStats.pct(50), rankedStats.pct(99), rankedStats.meanRecall(),
		candidateStats.pct(50), candidateStats.pct(99), candidateStats.meanRecall(), ms(first))
	plan, err := explainCaptured(ctx, w.pool, captured)
	require.NoError(b, err)
	// One line: a benchmark's log is cut after ten.
	b.Logf("EXPLAIN (ANALYZE, BUFFERS) of the ranked read, 7th execution of the prepared statement: %s", strings.Join(plan, " | "))
}

// searchHit is one row of a read's answer.
type searchHit struct {
	id       int64
	distance float64
}

func hits(bs []memory.Belief) []searchHit {
	out := make([]searchHit, len(bs))
	for i, b := range bs {
		out[i] = searchHit{id: b.ID, distance: math.Inf(1)} // a row not ranked
		if b.Distance != nil {
			out[i].distance = *b.Distance
		}
	}
	return out
}

func hitIDs(hs []searchHit) []int64 {
	ids := make([]int64, len(hs))
	for i, h := range hs {
		ids[i] = h.id
	}
	return ids
}

// searchStats are the latencies and recalls of one kind of read, and how much farther
// its k-th row is than the exact k-th: near zero when what a read misses are near ties.
type searchStats struct {
	lat    []time.Duration
	recall []float64
	excess []float64
	// named is the share of reads that found the belief whose code their question named,
	// of those that named a current one.
	named                 float64
	namedHits, namedReads int
}

// found counts whether got holds id, the belief a question named.
func (s *searchStats) found(got []searchHit, id int64) {
	s.namedReads++
	if slices.ContainsFunc(got, func(h searchHit) bool { return h.id == id }) {
		s.namedHits++
	}
	s.named = float64(s.namedHits) / float64(s.namedReads)
}

func (s *searchStats) read(b *testing.B, read func([]float32) ([]searchHit, error), q []float32, want []searchHit) []searchHit {
	start := time.Now()
	got, err := read(q)
	s.lat = append(s.lat, time.Since(start))
	require.NoError(b, err)
	require.Len(b, got, len(want), "a read returns k beliefs, or every active one")
	s.recall = append(s.recall, dbtest.Recall(hitIDs(got), hitIDs(want)))
	last := len(want) - 1
	s.excess = append(s.excess, got[last].distance/want[last].distance-1)
	return got
}

// pct is the p-th percentile of the latencies, in milliseconds.
func (s *searchStats) pct(p int) float64 {
	lat := slices.Sorted(slices.Values(s.lat))
	return ms(lat[len(lat)*p/100])
}

func (s *searchStats) meanRecall() float64 {
	var sum float64
	for _, r := range s.recall {
		sum += r
	}
	return sum / float64(len(s.recall))
}

// recallBy is the mean recall of the reads whose query is not marked (near the scope's
// own beliefs), then of those marked (near the crowd); reads repeat the queries b.N times.
func (s *searchStats) recallBy(marked []bool) (unmarked, withMark float64) {
	var sum [2]float64
	var n [2]int
	for i, r := range s.recall {
		j := 0
		if marked[i%len(marked)] {
			j = 1
		}
		sum[j] += r
		n[j]++
	}
	return sum[0] / float64(max(n[0], 1)), sum[1] / float64(max(n[1], 1))
}

func (s *searchStats) report(b *testing.B, kind string) {
	b.ReportMetric(s.pct(50), kind+"_p50_ms")
	b.ReportMetric(s.pct(99), kind+"_p99_ms")
	b.ReportMetric(s.meanRecall(), kind+"_recall")
	b.ReportMetric(slices.Min(s.recall), kind+"_min_recall")
	var sum float64
	for _, e := range s.excess {
		sum += e
	}
	b.ReportMetric(100*sum/float64(len(s.excess)), kind+"_kth_distance_excess_%")
}

// anatomy times what an exact read of sc is made of: the walk over the scope's active
// rows (the index and the heap) alone, and with the cosine distance of each row, both
// by an index scan as the read's plan walks them. Medians of 11 runs each.
func (w *searchWorld) anatomy(b *testing.B, sc *searchScope, q []float32) {
	b.Helper()
	ctx := context.Background()
	const where = "FROM belief b WHERE b.scope = $1 AND b.status = 'active' AND b.embed_model = $2"
	var walk, distance []time.Duration
	err := pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off"); err != nil {
			return err
		}
		for i := range 13 {
			var n int
			start := time.Now()
			if err := tx.QueryRow(ctx, "SELECT count(*) "+where, sc.name, w.model).Scan(&n); err != nil {
				return err
			}
			if i >= 2 {
				walk = append(walk, time.Since(start))
			}
			var d float64
			start = time.Now()
			if err := tx.QueryRow(ctx, "SELECT min(b.embedding <=> $3::vector) "+where, sc.name, w.model, pgvector.NewVector(q)).Scan(&d); err != nil {
				return err
			}
			if i >= 2 {
				distance = append(distance, time.Since(start))
			}
			if n != len(sc.activeIDs) {
				return fmt.Errorf("%d active rows counted, %d stored", n, len(sc.activeIDs))
			}
		}
		return nil
	})
	require.NoError(b, err)
	median := func(ds []time.Duration) float64 { return ms(slices.Sorted(slices.Values(ds))[len(ds)/2]) }
	b.ReportMetric(median(walk), "walk_rows_ms")
	b.ReportMetric(median(distance), "walk_rows_with_distance_ms")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// searchTracer counts the nearest-neighbour statements run, exact scans apart from
// index scans, and captures the statements of one read to explain them.
type searchTracer struct {
	exactScans, indexScans, halfScans, wordsReads atomic.Int64

	mu        sync.Mutex
	capturing bool
	captured  []tracedQuery
	notes     []string
}

type tracedQuery struct {
	sql  string
	args []any
}

func (t *searchTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	t.trace(d.SQL, d.Args)
	return ctx
}

// A ranked read sends its statements in one batch, which pgx traces statement by
// statement through BatchTracer, not TraceQueryStart.
func (t *searchTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (t *searchTracer) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	t.trace(d.SQL, d.Args)
}

func (t *searchTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// trace counts a statement of a read by its kind, and captures it when asked.
func (t *searchTracer) trace(sql string, args []any) {
	if strings.Contains(sql, "b.words @@") && !strings.HasPrefix(sql, "EXPLAIN") {
		// A fused read: its text's rankings in the vector read's statement.
		t.wordsReads.Add(1)
	}
	switch {
	case strings.HasPrefix(sql, "EXPLAIN"):
	case strings.Contains(sql, "<=>"):
		// A scope index's statement casts to the model's dimension, as its index does;
		// the exact scan's does not, so that no index can answer it; the default read
		// ranks the halfvec copies.
		switch {
		case strings.Contains(sql, "::vector("):
			t.indexScans.Add(1)
		case strings.Contains(sql, "embedding_half"):
			t.halfScans.Add(1)
		default:
			t.exactScans.Add(1)
		}
	}
	t.mu.Lock()
	if t.capturing {
		t.captured = append(t.captured, tracedQuery{sql: sql, args: args})
	}
	t.mu.Unlock()
}

func (t *searchTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (t *searchTracer) startCapture() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.capturing, t.captured = true, nil
}

func (t *searchTracer) stopCapture() []tracedQuery {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.capturing = false
	return t.captured
}

func (t *searchTracer) notice(msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.notes = append(t.notes, msg)
}

// notices returns the server's notices since the last call.
func (t *searchTracer) notices() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.notes
	t.notes = nil
	return n
}

// explainCaptured runs EXPLAIN (ANALYZE, BUFFERS) on the nearest-neighbour statement of
// a captured read, as the read runs it: in a transaction with the settings the read
// made, and prepared, executed six times first so that the plan shown is the one a
// pooled connection settles on (the generic plan, if PostgreSQL picks it).
func explainCaptured(ctx context.Context, pool *pgxpool.Pool, captured []tracedQuery) ([]string, error) {
	var settings []tracedQuery
	// The nearest-neighbour statement, the last (a fused read's holds its text's
	// rankings too).
	var targets []*tracedQuery
	for i, q := range captured {
		switch {
		case strings.HasPrefix(q.sql, "SET LOCAL "): // memory's setLocal
			settings = append(settings, q)
		case strings.Contains(q.sql, "<=>"):
			targets = []*tracedQuery{&captured[i]}
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("no nearest-neighbour statement among the %d captured", len(captured))
	}
	var plan []string
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for _, s := range settings {
			if _, err := tx.Exec(ctx, s.sql, s.args...); err != nil {
				return err
			}
		}
		for _, target := range targets {
			p, err := dbtest.ExplainPrepared(ctx, tx, "ANALYZE, BUFFERS", target.sql, target.args)
			if err != nil {
				return err
			}
			plan = append(plan, p...)
		}
		return nil
	})
	for i, line := range plan {
		// The query vector, written in the index's statement, would fill the log.
		plan[i] = vectorLiteral.ReplaceAllString(strings.TrimSpace(line), "'[…]'")
	}
	return plan, err
}

var vectorLiteral = regexp.MustCompile(`'\[[^\]]*\]'`)

// explainNearest is the plan of store.Nearest(scope, model, vec, k) on the database at
// url, explained as explainCaptured does.
func explainNearest(b *testing.B, url, scope, model string, vec []float32, k int) []string {
	b.Helper()
	ctx := context.Background()
	tracer := &searchTracer{}
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(b, err)
	cfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(b, err)
	defer pool.Close()
	tracer.startCapture()
	_, err = memory.NewStore(pool, nil).Nearest(ctx, scope, model, vec, k)
	captured := tracer.stopCapture()
	require.NoError(b, err)
	plan, err := explainCaptured(ctx, pool, captured)
	require.NoError(b, err)
	return plan
}

// vectorCodec sends a pgvector.Vector in binary, for the COPY: pgvector-go's own codec
// (its pgx package) needs a module this one does not require.
type vectorCodec struct{}

func (vectorCodec) FormatSupported(f int16) bool { return f == pgx.BinaryFormatCode }
func (vectorCodec) PreferredFormat() int16       { return pgx.BinaryFormatCode }

func (vectorCodec) PlanEncode(_ *pgtype.Map, _ uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(pgvector.Vector); ok && format == pgx.BinaryFormatCode {
		return vectorEncodePlan{}
	}
	return nil
}

func (vectorCodec) PlanScan(*pgtype.Map, uint32, int16, any) pgtype.ScanPlan { return nil }

func (vectorCodec) DecodeDatabaseSQLValue(*pgtype.Map, uint32, int16, []byte) (driver.Value, error) {
	return nil, errors.New("the COPY's vector codec only encodes")
}

func (vectorCodec) DecodeValue(*pgtype.Map, uint32, int16, []byte) (any, error) {
	return nil, errors.New("the COPY's vector codec only encodes")
}

type vectorEncodePlan struct{}

func (vectorEncodePlan) Encode(value any, buf []byte) ([]byte, error) {
	return value.(pgvector.Vector).EncodeBinary(buf)
}
