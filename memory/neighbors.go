package memory

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"
)

// Changes is what changed in a scope after a watermark: the seeds of a consolidation
// pass.
type Changes struct {
	// IDs are the active beliefs embedded with the model whose updated_at is in
	// (since, UpTo], oldest change first.
	IDs []int64
	// UpTo is the newest change covered, over every active belief whatever its
	// embedding, so that a watermark moved to it also passes beliefs that have no
	// vector of the model to compare; zero when nothing changed.
	UpTo time.Time
	// More says that active beliefs changed after UpTo remain: the limit cut the list.
	More bool
}

// ChangedSince is the active beliefs of scope changed after since (zero: ever), at most
// about limit of them (0: all), oldest change first. The limit is soft: every belief
// changed at the same instant as the last one is included, so that UpTo can serve as
// a watermark without skipping a belief that shares its timestamp.
func (s *Store) ChangedSince(ctx context.Context, scope, model string, since time.Time, limit int) (*Changes, error) {
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	// The (scope, updated_at) index serves both the cut and the rows under it.
	rows, err := s.db.Query(ctx, `
		WITH cut AS (
			SELECT max(updated_at) AS t FROM (
				SELECT updated_at FROM belief
				WHERE scope = $1 AND status = 'active' AND updated_at > $3
				ORDER BY updated_at LIMIT $4) l
		), more AS (
			SELECT EXISTS (SELECT 1 FROM belief x
				WHERE x.scope = $1 AND x.status = 'active' AND x.updated_at > (SELECT t FROM cut)) AS m
		)
		SELECT b.id, b.updated_at, coalesce(b.embed_model = $2, false), more.m
		FROM cut CROSS JOIN more
		JOIN belief b ON b.scope = $1 AND b.status = 'active' AND b.updated_at > $3 AND b.updated_at <= cut.t
		ORDER BY b.updated_at, b.id`, scope, model, since, lim)
	if err != nil {
		return nil, fmt.Errorf("changed beliefs of %q: %w", scope, err)
	}
	ch := &Changes{}
	var (
		id              int64
		at              time.Time
		embedded, after bool
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &at, &embedded, &after}, func() error {
		if embedded {
			ch.IDs = append(ch.IDs, id)
		}
		if at.After(ch.UpTo) {
			ch.UpTo = at.UTC()
		}
		ch.More = after
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("changed beliefs of %q: %w", scope, err)
	}
	return ch, nil
}

// Neighbor is an active belief near a seed.
type Neighbor struct {
	Seed, ID int64
	// Distance is the cosine distance between the two embeddings (1 - similarity).
	Distance float64
}

// NeighborQuery asks for the near neighbours of many beliefs of one scope at once.
type NeighborQuery struct {
	Scope string
	// Model is the embedding model compared in; seeds embedded with another model
	// have no neighbours.
	Model string
	Seeds []int64
	// K bounds the neighbours of one seed, nearest first.
	K int
	// MaxDistance keeps neighbours at a cosine distance of at most this.
	MaxDistance float64
	// SameSubject keeps only neighbours about the seed's subject (compared without
	// case): two beliefs about different people never revise each other.
	SameSubject bool
}

// neighborChunk bounds the seeds of one statement: small enough that a pass of a
// thousand seeds keeps every connection of neighborConns busy, large enough that a
// chunk's round trips are noise beside its search.
const neighborChunk = 256

// neighborConns bounds the pooled connections one Neighbors call searches on at once.
// The search is work in one server backend, so two backends take about half the time;
// on the two-core benchmark machine four were no faster than two. The pool is shared
// with River and extraction, and no connection is held across an LLM call (Neighbors
// makes none).
const neighborConns = 2

// Neighbors is, for every seed of q, its up to K nearest active beliefs of the scope
// other than itself, within MaxDistance; ordered by seed, then distance, then id. The
// search is the one every nearest-neighbour read of a scope uses (see nearest): an
// exact comparison with each of the scope's active beliefs, or, for a scope above the
// exact limit, a probe of the scope's own HNSW index. Chunks of seeds are searched in
// parallel on up to neighborConns pooled connections (one connection when the store
// runs on one, see On), each chunk in its own read-only transaction. Under READ
// COMMITTED every statement took its own snapshot before too, so splitting the
// transaction changes what the chunks can see in no way.
func (s *Store) Neighbors(ctx context.Context, q NeighborQuery) ([]Neighbor, error) {
	if len(q.Seeds) == 0 || q.K <= 0 {
		return nil, nil
	}
	dim, err := s.embeddingDim(ctx, s.db, q.Model)
	if err != nil {
		return nil, err
	}
	indexed, err := scopeIndexed(ctx, s.db, searchBeliefs, q.Scope, q.Model)
	if err != nil {
		return nil, err
	}
	sql := neighborExactSQL
	if indexed {
		sql = neighborIndexSQL(q.Scope, q.Model, dim)
	}
	// Sorted, so that the result is ordered by seed across chunks too.
	chunks := slices.Collect(slices.Chunk(slices.Sorted(slices.Values(q.Seeds)), neighborChunk))
	found := make([][]Neighbor, len(chunks))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.neighborConns())
	for i, seeds := range chunks {
		g.Go(func() error {
			ns, err := s.probe(gctx, sql, q, seeds)
			found[i] = ns
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("neighbours in %q: %w", q.Scope, err)
	}
	return slices.Concat(found...), nil
}

// neighborEfSearch is hnsw.ef_search of a probe of a scope's own index.
const neighborEfSearch = 200

// neighborConns is how many connections Neighbors may use at once: one when the store
// runs on a single connection, which cannot run two statements at a time.
func (s *Store) neighborConns() int {
	if s.db != Conn(s.pool) {
		return 1
	}
	return neighborConns
}

// neighborExactSQL compares each seed of a chunk with every active belief of the scope:
// exact by construction, as no index orders the distance. The scope's rows are read once
// a chunk, each compared with the chunk's seeds, which stay in cache: the other way
// round, a seed at a time over the scope's rows kept aside, spilled a large scope's
// vectors to disk and read them back for every seed (BENCHMARKS.md, row 5c). The K
// nearest within MaxDistance are kept, then those about another subject are dropped, as
// the index probe does.
const neighborExactSQL = `WITH s AS MATERIALIZED (
		SELECT b.id, b.subject, b.embedding FROM belief b
		WHERE b.id = ANY($4) AND b.scope = $1 AND b.embed_model = $2
	), near AS (
		SELECT s.id AS seed, x.id, x.embedding <=> s.embedding AS distance,
			lower(x.subject) = lower(s.subject) AS same_subject
		FROM belief x CROSS JOIN s
		WHERE x.scope = $1 AND x.status = 'active' AND x.embed_model = $2
			AND x.id <> s.id AND x.embedding <=> s.embedding <= $5
	)
	SELECT seed, id, distance FROM (
		SELECT seed, id, distance, same_subject,
			row_number() OVER (PARTITION BY seed ORDER BY distance, id) AS rank
		FROM near) n
	WHERE rank <= $3 AND (NOT $6 OR same_subject)
	ORDER BY seed, distance, id`

// neighborIndexSQL probes the scope's own HNSW index once per seed. The scope and the
// model are literals, so that the partial index's predicate is proven by any plan.
func neighborIndexSQL(scope, model string, dim int) string {
	cast := fmt.Sprintf("::vector(%d)", dim)
	return `SELECT s.id, n.id, n.distance
		FROM belief s CROSS JOIN LATERAL (
			SELECT b.id, b.subject, b.embedding` + cast + ` <=> s.embedding` + cast + ` AS distance
			FROM belief b
			WHERE b.scope = ` + quoteLiteral(scope) + ` AND b.embed_model = ` + quoteLiteral(model) + `
				AND b.status = 'active' AND b.id <> s.id
			ORDER BY b.embedding` + cast + ` <=> s.embedding` + cast + `
			LIMIT $3) n
		WHERE s.id = ANY($4) AND s.scope = $1 AND s.embed_model = $2
			AND n.distance <= $5 AND (NOT $6 OR lower(n.subject) = lower(s.subject))
		ORDER BY s.id, n.distance, n.id`
}

// probe finds the neighbours of one chunk of seeds in a read-only transaction of its
// own.
func (s *Store) probe(ctx context.Context, sql string, q NeighborQuery, seeds []int64) ([]Neighbor, error) {
	var out []Neighbor
	err := pgx.BeginTxFunc(ctx, s.db, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		// Set for this transaction only, in one round trip:
		// - hnsw.ef_search and hnsw.iterative_scan: for a scope's own index; the exact
		//   statement uses no index. A probe per seed keeps neighbourEfSearch
		//   candidates, fewer than a read's (see nearest): a pass probes a thousand
		//   seeds, and a neighbour missed now is found from its own side or next pass.
		// - work_mem: the exact statement sorts the pairs within MaxDistance by seed;
		//   a scope of near-duplicates has many, kept in memory rather than on disk.
		// - jit: on a large scope the estimate crosses jit_above_cost, and compiling
		//   each chunk costs more than the search it would speed up.
		err := setLocal(ctx, tx, setting{"hnsw.ef_search", strconv.Itoa(neighborEfSearch)},
			setting{"hnsw.iterative_scan", "relaxed_order"}, setting{"work_mem", "64MB"}, setting{"jit", "off"})
		if err != nil {
			return fmt.Errorf("configure the neighbour query: %w", err)
		}
		rows, err := tx.Query(ctx, sql, q.Scope, q.Model, q.K, seeds, q.MaxDistance, q.SameSubject)
		if err != nil {
			return err
		}
		var n Neighbor
		_, err = pgx.ForEachRow(rows, []any{&n.Seed, &n.ID, &n.Distance}, func() error {
			out = append(out, n)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("probe %d seeds: %w", len(seeds), err)
	}
	return out, nil
}

// BeliefsByID is, for a writer, the beliefs of scope with the given ids, whatever their
// status, ordered by id; unknown ids and those of other scopes are left out. Their
// Episodes are not read. Naming the scope keeps the read on its shard on Citus.
func (s *Store) BeliefsByID(ctx context.Context, scope string, ids []int64) ([]Belief, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	bs, err := s.queryCandidates(ctx, "b.scope = $1 AND b.id = ANY($2) ORDER BY b.id", scope, ids)
	if err != nil {
		return nil, fmt.Errorf("beliefs by id: %w", err)
	}
	return bs, nil
}
