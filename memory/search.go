package memory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
)

// A scope's nearest-neighbour reads compare every one of its rows, at any size (reads
// of current beliefs compare halfvec copies first, then the nearest exactly), unless
// Config.ExactSearchLimit sets a size above which a scope gets an HNSW index of its own
// (IndexScope): faster on a scope of tens of thousands of rows, but approximate.
// Measured on 100,000 synthetic 768-dimension vectors, such an index found 0.88 to 0.99
// of the true nearest (BENCHMARKS.md), under the recall of 0.98 promised above 10,000
// rows, so exact is the default and the index an operator's choice.

// Nearest-neighbour reads of a scope use one strategy (docs/design.md): an exact scan
// of the scope's own rows, through the (scope, ...) btree indexes, sorted by distance;
// for its current beliefs, a ranking of their halfvec copies from a covering index of
// the scope's entries, the nearest re-ranked exactly; or, for a scope above the exact
// limit, an HNSW index that holds only that scope's rows, checked to return k rows and
// else replaced by the exact scan. No index shared by scopes exists, so what other
// scopes hold can change neither the answer nor the plan that finds it.

// searchTable is a table whose rows carry an embedding and are searched per scope.
type searchTable string

const (
	searchBeliefs searchTable = "belief"
	searchEvents  searchTable = "revision_event"
)

// nearestQuery is one nearest-neighbour read of one scope.
type nearestQuery struct {
	table searchTable
	scope string
	// where is the filter on the table's rows, aliased b, with the scope in $1 and the
	// rest of args numbered after it. It must include "b.scope = $1".
	where string
	args  []any // args[0] is the scope
	model string
	vec   []float32
	k     int
	// text, when set, fuses the words and entity rankings of a text into the read's
	// statement (textRanksSQL): beliefs only.
	text string
}

// vectorOnly is q without its text: a read again after the batch's (nearestRead.finish)
// is of the vector ranking alone, the text's being read already.
func (q nearestQuery) vectorOnly() nearestQuery {
	q.text = ""
	return q
}

// nearest reads the k rows of q nearest to its vector, nearest first and then by id,
// so that the answer is one whatever the plan: columns of the table's row b, then its
// cosine distance as "distance", each scanned by scan. One round trip, unless the scope
// has an index of its own.
func nearest[T any](ctx context.Context, s *Store, q nearestQuery, columns string, scan pgx.RowToFunc[T]) ([]T, error) {
	r, err := newNearestRead(ctx, s, q, columns, scan)
	if err != nil {
		return nil, err
	}
	if err := sendQueued(ctx, s.db, r.queue); err != nil {
		return nil, err
	}
	return r.finish(ctx)
}

// nearestRead is nearest in two steps, so that its first round trip can carry other
// reads: queue puts on a batch the read of a scope without an index of its own (the
// exact scan, or the halfvec ranking) and whether the scope has one; finish, once the
// batch is sent, reads the scope's index when it has one.
type nearestRead[T any] struct {
	s       *Store
	q       nearestQuery
	columns string
	scan    pgx.RowToFunc[T]
	dim     int
	indexed bool
	rows    []T
}

// newNearestRead checks q. A read of no row (k 0) queues nothing and finds nothing.
func newNearestRead[T any](ctx context.Context, s *Store, q nearestQuery, columns string, scan pgx.RowToFunc[T]) (*nearestRead[T], error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	if q.k <= 0 {
		return &nearestRead[T]{q: q}, nil
	}
	dim, err := s.embeddingDim(ctx, s.db, q.model)
	if err != nil {
		return nil, err
	}
	if err := sameDim(q.model, len(q.vec), dim); err != nil {
		return nil, err
	}
	return &nearestRead[T]{s: s, q: q, columns: columns, scan: scan, dim: dim}, nil
}

// queue queues the read on b. The scan answers nothing when the scope has an index of
// its own: its guard is a one-time filter, checked before the scan starts.
func (r *nearestRead[T]) queue(b *pgx.Batch) {
	if r.q.k <= 0 {
		return
	}
	queueScopeIndexed(b, r.q.table, r.q.scope, r.q.model, &r.indexed)
	sql, args := r.scanSQL(true)
	b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
		var err error
		r.rows, err = pgx.CollectRows(rows, r.scan)
		return err
	})
}

// scanSQL is the read of a scope without an index of its own: the halfvec ranking where
// the scope's current beliefs have copies, else the exact scan.
func (r *nearestRead[T]) scanSQL(guarded bool) (string, []any) {
	q := r.q
	if !guarded {
		q = q.vectorOnly()
	}
	if !r.s.fullScan && q.activeBeliefs() && halfvecFits(r.dim, q.scope, q.model) {
		return q.halfvecSQL(r.columns, guarded)
	}
	return q.exactSQL(r.columns, guarded)
}

// finish is the read's answer, once the batch queue used was sent.
func (r *nearestRead[T]) finish(ctx context.Context) ([]T, error) {
	switch {
	case r.q.k <= 0:
		return nil, nil
	case !r.indexed && len(r.rows) > 0:
		return r.rows, nil
	case !r.indexed:
		// Nothing found: the scope may hold nothing, or its index's registration came or
		// went between the lookup and the guarded scan (two statements, two snapshots),
		// which then answered nothing. The scan unguarded tells which.
		sql, args := r.scanSQL(false)
		return r.read(ctx, sql, args)
	}
	var out []T
	err := pgx.BeginTxFunc(ctx, r.s.db, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		// ef_search is how many candidates the index keeps while it walks: a scope's
		// own index of tens of thousands of rows needs more than the default 40 for
		// recall near 1. relaxed_order goes on past rows the filter drops (other
		// statuses) until k pass.
		err := setLocal(ctx, tx, setting{"hnsw.ef_search", strconv.Itoa(scopeIndexCandidates(r.q.k))},
			setting{"hnsw.iterative_scan", "relaxed_order"})
		if err != nil {
			return fmt.Errorf("configure the scope's index scan: %w", err)
		}
		sql, args := r.q.indexSQL(r.columns, r.dim)
		rows, err := tx.Query(ctx, sql, args...)
		if err == nil {
			out, err = pgx.CollectRows(rows, r.scan)
		}
		return err
	})
	if err != nil || len(out) >= r.q.k {
		return out, err
	}
	// Fewer than k: the scope may hold fewer, or the index stopped early. The exact scan
	// tells which.
	sql, args := r.q.vectorOnly().exactSQL(r.columns, false)
	return r.read(ctx, sql, args)
}

// read runs one statement of the read alone.
func (r *nearestRead[T]) read(ctx context.Context, sql string, args []any) ([]T, error) {
	rows, err := r.s.db.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, r.scan)
}

// The bounds of migration 020's halfvec copy of a belief's vector: it exists where its
// covering index entry (scope, model, id and 2 bytes a dimension) fits btree's 2,704
// bytes, the names counted in characters (at most 4 bytes each in any server
// encoding). The migration's generated column states the same bound.
const (
	maxHalfvecDim       = 1024
	maxHalfvecNameChars = 125
)

// halfvecFits says whether the beliefs of scope embedded with model, of dim dimensions,
// carry a halfvec copy.
func halfvecFits(dim int, scope, model string) bool {
	return dim <= maxHalfvecDim && utf8.RuneCountInString(scope)+utf8.RuneCountInString(model) <= maxHalfvecNameChars
}

// unitHalfvec is v made unit length, as halfvec: the query's side of the copies the
// migration stores, which are of unit vectors, so that no component leaves halfvec's
// range. A zero vector stays zero (its distances are NaN either way).
func unitHalfvec(v []float32) pgvector.HalfVector {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return pgvector.NewHalfVector(v)
	}
	norm := math.Sqrt(sum)
	u := make([]float32, len(v))
	for i, x := range v {
		u[i] = float32(float64(x) / norm)
	}
	return pgvector.NewHalfVector(u)
}

// activeBeliefs says that q reads the scope's active beliefs and nothing else: the rows
// the halfvec index holds.
func (q nearestQuery) activeBeliefs() bool { return q.table == searchBeliefs && q.where == currentView }

// halfvecCandidates is how many of the nearest by halfvec are re-ranked exactly. On the
// benchmark's clustered scopes the true k nearest sat within the first k + 1 of the
// halfvec order, from 1,000 to 100,000 beliefs (BENCHMARKS.md row 6e): 4k leaves room
// for data less kind than that. A scope of no more active beliefs is ranked exactly.
func halfvecCandidates(k int) int { return 4 * k }

// halfvecSQL ranks the scope's active beliefs by the halfvec copies of their vectors,
// read from the covering index alone (its entries lie side by side, where the rows lie
// among other scopes' rows), then re-ranks the nearest halfvecCandidates(k) by their
// full vectors, exactly, and keeps k. The query's halfvec is a parameter of its own: a
// conversion written in the statement would run once a row under a generic plan. The
// re-rank is a lateral lookup by key, which a plan cannot turn into a scan of the
// scope. Ties are broken by id at both stages, as exactSQL does.
func (q nearestQuery) halfvecSQL(columns string, guarded bool) (string, []any) {
	n := len(q.args)
	ranked := fmt.Sprintf(`SELECT c.id, x.distance FROM (
				SELECT b.id FROM belief b
				WHERE %s AND b.embed_model = $%d AND b.embedding_half IS NOT NULL%s
				ORDER BY b.embedding_half <=> $%d::halfvec, b.id LIMIT $%d) c
			CROSS JOIN LATERAL (SELECT x.embedding <=> $%d::vector AS distance FROM belief x
				WHERE x.scope = $1 AND x.id = c.id OFFSET 0) x
			ORDER BY x.distance, c.id LIMIT $%d`,
		q.where, n+1, q.guard(guarded, n+1), n+2, n+3, n+4, n+5)
	return q.joinBack(columns, ranked, append(append([]any{}, q.args...), q.model, unitHalfvec(q.vec), halfvecCandidates(q.k),
		pgvector.NewVector(q.vec), q.k), n+4, n+1)
}

// joinBack is the statement that reads the rows of ranked (their id and distance, its
// arguments args, the query vector in the argument numbered vec and the model in model)
// with their columns, nearest first; with q.text, fused with its words and entity
// rankings (textRanksSQL) in the same statement, each row saying where it ranked.
func (q nearestQuery) joinBack(columns, ranked string, args []any, vec, model int) (string, []any) {
	if q.text == "" {
		return fmt.Sprintf(`SELECT %s, n.distance AS distance FROM (%s) n
			JOIN %s b ON b.scope = $1 AND b.id = n.id ORDER BY n.distance, b.id`, columns, ranked, q.table), args
	}
	distance := fmt.Sprintf("CASE WHEN b.embed_model = $%d THEN b.embedding <=> $%d::vector END", model, vec)
	ranks, textArgs := textRanksSQL(q.where, q.text, q.k, len(args)+1, distance)
	// A belief only the text found is read only if it can be among the k that fuse
	// keeps: when the vector ranking has k beliefs, its fused score must reach the
	// similarity of the k-th, which each of the k reaches at least.
	fused := fmt.Sprintf("%g * greatest(0, least(1, 1 - coalesce(%s, 1))) + %g * coalesce(c.score, 0) + %g * (c.erank IS NOT NULL)::int",
		WeightVector, distance, WeightWords, WeightEntity)
	return fmt.Sprintf(`WITH n AS MATERIALIZED (SELECT r.id, r.distance, row_number() OVER (ORDER BY r.distance, r.id) AS rank FROM (%[1]s) r),
		%[2]s,
		c AS (SELECT coalesce(n.id, s.id, e.id) AS id, n.rank AS vrank, n.distance, s.score, s.rank AS wrank, e.rank AS erank
			FROM n FULL JOIN s ON s.id = n.id FULL JOIN e ON e.id = coalesce(n.id, s.id)),
		bar AS MATERIALIZED (SELECT CASE WHEN count(*) = $%[6]d THEN %[7]g * greatest(0, least(1, 1 - max(n.distance))) END AS fused FROM n)
		SELECT %[3]s, c.vrank AS vector_rank, c.score AS words, c.wrank AS words_rank, c.erank AS entity_rank,
			coalesce(c.distance, %[4]s) AS distance
		FROM c JOIN belief b ON b.scope = $1 AND b.id = c.id
		WHERE c.vrank IS NOT NULL OR %[5]s >= coalesce((SELECT fused FROM bar), 0)
		ORDER BY c.vrank NULLS LAST, b.id`, ranked, ranks, columns, distance, fused, len(args)+len(textArgs)+1, WeightVector),
		append(append(args, textArgs...), q.k)
}

// exactSQL ranks every row of q by distance. The distance is computed without the cast
// an HNSW index is built on and sorted with the id as second key, so that no plan can
// answer it from an index: it is exact by construction. Only the k nearest are joined
// back for their columns.
func (q nearestQuery) exactSQL(columns string, guarded bool) (string, []any) {
	n := len(q.args)
	// The join back names the scope too: on Citus it stays on the scope's shard.
	ranked := fmt.Sprintf(`SELECT b.id, b.embedding <=> $%d::vector AS distance FROM %s b
			WHERE %s AND b.embed_model = $%d%s ORDER BY distance, b.id LIMIT $%d`,
		n+1, q.table, q.where, n+2, q.guard(guarded, n+2), n+3)
	return q.joinBack(columns, ranked, append(append([]any{}, q.args...), pgvector.NewVector(q.vec), q.model, q.k), n+1, n+2)
}

// guard is, when guarded, the condition that the scope has no index of its own on q's
// table for the model (parameter model): uncorrelated, so PostgreSQL checks it once,
// before the scan, and a scope with an index is not scanned. It names the scope: on
// Citus it runs on the scope's shard.
func (q nearestQuery) guard(guarded bool, model int) string {
	if !guarded {
		return ""
	}
	return fmt.Sprintf(` AND NOT EXISTS (SELECT 1 FROM scope_vector_index WHERE scope = $1 AND tbl = '%s' AND model = $%d)`,
		q.table, model)
}

// indexSQL asks the scope's own HNSW index for a candidate list many times k, then keeps
// the k nearest of it: the true k nearest are far likelier among an approximate top few
// hundred than among an approximate top k. The scope and the model are written into the
// statement as literals so that the partial index's predicate is proven by any plan,
// custom or generic.
func (q nearestQuery) indexSQL(columns string, dim int) (string, []any) {
	cast := fmt.Sprintf("::vector(%d)", dim)
	n := len(q.args)
	distance := fmt.Sprintf("b.embedding%s <=> $%d%s", cast, n+1, cast)
	// Only the k kept are joined back for their columns.
	sql := fmt.Sprintf(`SELECT %s, n.distance AS distance FROM (
			SELECT id, distance FROM (
				SELECT b.id, %s AS distance FROM %s b
				WHERE b.scope = %s AND b.embed_model = %s AND %s ORDER BY %s LIMIT $%d) c
			ORDER BY distance, id LIMIT $%d) n
		JOIN %s b ON b.scope = %s AND b.id = n.id ORDER BY n.distance, b.id`,
		columns, distance, q.table, quoteLiteral(q.scope), quoteLiteral(q.model), q.where, distance, n+2, n+3, q.table,
		quoteLiteral(q.scope))
	return sql, append(append([]any{}, q.args...), pgvector.NewVector(q.vec), scopeIndexCandidates(q.k), q.k)
}

// scopeIndexCandidates is how many rows a scope's own index is asked for, and its
// hnsw.ef_search: pgvector's most, 1,000, whatever k. Measured on 100,000 synthetic
// vectors of 768 dimensions, 1,000 found 0.94 of the true 10 nearest where 400 found
// 0.88, for about twice the time (BENCHMARKS.md).
func scopeIndexCandidates(int) int { return 1000 }

// scopeIndexed says whether the scope has an index of its own on table for model.
func scopeIndexed(ctx context.Context, db batchSender, table searchTable, scope, model string) (bool, error) {
	var ok bool
	if err := sendQueued(ctx, db, func(b *pgx.Batch) { queueScopeIndexed(b, table, scope, model, &ok) }); err != nil {
		return false, err
	}
	return ok, nil
}

// queueScopeIndexed queues scopeIndexed's read on b, into ok once b is sent.
func queueScopeIndexed(b *pgx.Batch, table searchTable, scope, model string, ok *bool) {
	b.Queue(`SELECT EXISTS (SELECT 1 FROM scope_vector_index
		WHERE scope = $1 AND tbl = $2 AND model = $3)`, scope, string(table), model).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(ok); err != nil {
			return fmt.Errorf("look up the vector index of %q: %w", scope, err)
		}
		return nil
	})
}

// ScopeIndexResult says what IndexScope did.
type ScopeIndexResult struct {
	// Rows counts the scope's rows embedded with the model, per table.
	Rows map[string]int
	// Created and Dropped name the tables whose scope index was built or removed.
	Created, Dropped []string
}

// IndexScope gives scope an HNSW index of its own on each table where it holds more
// than the exact limit of rows embedded with model, and removes that index where it
// holds fewer than half the limit (a scope that shrank, or was purged): between the two
// nothing changes, so a scope near the limit is not indexed and dropped by turns. The
// index is built CONCURRENTLY, so writers of every scope go on meanwhile; it can take
// minutes for a large scope (BENCHMARKS.md), so a worker runs it as a job of its own
// (see ScopeIndexDue). An index is named at random, and a build cut short leaves a drop
// to do (DropErasedIndexes) rather than an index nobody knows of. Callers
// for one scope take turns. A model never registered has nothing to index.
func (s *Store) IndexScope(ctx context.Context, scope, model string) (*ScopeIndexResult, error) {
	res := &ScopeIndexResult{Rows: map[string]int{}}
	dim, err := s.embeddingDim(ctx, s.pool, model)
	if errors.Is(err, ErrEmbeddingModel) {
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("index scope %q: %w", scope, err)
	}
	defer conn.Release()
	// A session lock, as CREATE INDEX CONCURRENTLY cannot run in a transaction.
	lockKey := "credo:scope_index:" + scope
	if err := trySessionLock(ctx, conn, lockKey); err != nil {
		return nil, fmt.Errorf("index scope %q: %w", scope, err)
	}
	defer func() {
		// Released before the connection goes back to the pool, even when ctx is done.
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext($1))", lockKey)
	}()
	states, err := s.scopeIndexStates(ctx, conn, scope, model)
	if err != nil {
		return nil, err
	}
	for _, st := range states {
		res.Rows[string(st.table)] = st.rows
		switch st.change(s.exactLimit) {
		case indexBuild:
			built, err := s.buildScopeIndex(ctx, conn, st.table, scope, model, dim)
			if err != nil {
				return nil, fmt.Errorf("index scope %q: %w", scope, err)
			}
			if built {
				res.Created = append(res.Created, string(st.table))
			}
		case indexDrop:
			// Unregistered first, in the transaction that records the drop to do: from
			// then on reads scan exactly, and the index goes even if this call does not
			// get to drop it.
			err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				names, err := unregisterScopeIndexes(ctx, tx, scope, st.table, model)
				if err != nil {
					return err
				}
				return recordIndexDrops(ctx, tx, names)
			})
			if err != nil {
				return nil, fmt.Errorf("index scope %q: %w", scope, err)
			}
			if _, err := s.DropErasedIndexes(ctx); err != nil {
				return nil, fmt.Errorf("index scope %q: %w", scope, err)
			}
			res.Dropped = append(res.Dropped, string(st.table))
		}
	}
	return res, nil
}

// scopeLockPoll is how often a session lock held by another session is tried again.
const scopeLockPoll = 50 * time.Millisecond

// trySessionLock takes the session advisory lock of key, trying again until it is free.
// It polls rather than waits: a statement waiting for the lock holds a snapshot, and the
// CREATE INDEX CONCURRENTLY of the session that holds the lock waits for every older
// snapshot to end, a deadlock.
func trySessionLock(ctx context.Context, conn querier, key string) error {
	for {
		var ok bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock(hashtext($1))", key).Scan(&ok); err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(scopeLockPoll):
		}
	}
}

// ScopeIndexDue says whether IndexScope would build or drop an index of scope for
// model: two counts on the scope's btree indexes, cheap enough for every consolidation
// pass.
func (s *Store) ScopeIndexDue(ctx context.Context, scope, model string) (bool, error) {
	if _, err := s.embeddingDim(ctx, s.db, model); errors.Is(err, ErrEmbeddingModel) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	states, err := s.scopeIndexStates(ctx, s.db, scope, model)
	if err != nil {
		return false, err
	}
	for _, st := range states {
		if st.change(s.exactLimit) != indexKeep {
			return true, nil
		}
	}
	return false, nil
}

// scopeIndexState is what a scope holds in one table, for one model.
type scopeIndexState struct {
	table      searchTable
	rows       int
	registered bool
}

type indexChange int

const (
	indexKeep indexChange = iota
	indexBuild
	indexDrop
)

func (st scopeIndexState) change(limit int) indexChange {
	switch {
	case limit <= 0 && st.registered:
		return indexDrop // scopes' own indexes were turned off
	case limit <= 0:
		return indexKeep
	case st.rows > limit && !st.registered:
		return indexBuild
	case st.rows < limit/2 && st.registered:
		return indexDrop
	}
	return indexKeep
}

func (s *Store) scopeIndexStates(ctx context.Context, db querier, scope, model string) ([]scopeIndexState, error) {
	var out []scopeIndexState
	for _, table := range []searchTable{searchBeliefs, searchEvents} {
		st := scopeIndexState{table: table}
		err := db.QueryRow(ctx, fmt.Sprintf(`SELECT (SELECT count(*) FROM %s WHERE scope = $1 AND embed_model = $2),
			EXISTS (SELECT 1 FROM scope_vector_index WHERE scope = $1 AND tbl = $3 AND model = $2)`, table),
			scope, model, string(table)).Scan(&st.rows, &st.registered)
		if err != nil {
			return nil, fmt.Errorf("index scope %q: count %s: %w", scope, table, err)
		}
		out = append(out, st)
	}
	return out, nil
}

// The build parameters of a scope's own HNSW index.
const (
	scopeIndexM              = 32
	scopeIndexEfConstruction = 128
)

// buildScopeIndex builds the scope's index on table under a random name, then registers
// it, and reports whether it did. The name is recorded as a drop to do before the build
// starts, and the record goes when the index is registered: a build cut short (a crash,
// a cancel) leaves an index that DropErasedIndexes removes. The session lock of the name,
// held from before the record to the end, keeps DropErasedIndexes off a build in
// progress. The index is registered under the scope's lock, only if the scope still
// holds the rows: a purge that committed during the build leaves no registration, and
// the index is dropped at once.
func (s *Store) buildScopeIndex(ctx context.Context, conn *pgxpool.Conn, table searchTable, scope, model string, dim int) (bool, error) {
	name, err := scopeIndexName(table)
	if err != nil {
		return false, err
	}
	if err := trySessionLock(ctx, conn, indexLockKey(name)); err != nil {
		return false, err
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext($1))", indexLockKey(name))
	}()
	if err := recordIndexDrops(ctx, conn, []string{name}); err != nil {
		return false, err
	}
	ident := pgx.Identifier{name}.Sanitize()
	// A graph larger than maintenance_work_mem is built on disk, many times slower;
	// 512 MB holds a scope of 100,000 vectors of 768 dimensions. Denser links than
	// pgvector's defaults (m 16, ef_construction 64) buy the recall a scope's reads
	// promise (BENCHMARKS.md) for a slower build, which runs in the background.
	if _, err := conn.Exec(ctx, "SET maintenance_work_mem = '512MB'"); err != nil {
		return false, err
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "RESET maintenance_work_mem") }()
	sql := fmt.Sprintf(`CREATE INDEX CONCURRENTLY %s ON %s USING hnsw ((embedding::vector(%d)) vector_cosine_ops)
		WITH (m = %d, ef_construction = %d) WHERE scope = %s AND embed_model = %s`,
		ident, table, dim, scopeIndexM, scopeIndexEfConstruction, quoteLiteral(scope), quoteLiteral(model))
	err = retryingDeadlocks(ctx, func() error {
		// A build that a deadlock aborted leaves an invalid index of the name.
		if _, err := conn.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+ident); err != nil {
			return err
		}
		_, err := conn.Exec(ctx, sql)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("build %s: %w", name, err)
	}
	var registered bool
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		erased, err := ScopeErasedTx(ctx, tx, scope)
		if err != nil || erased {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO scope_vector_index (scope, tbl, model, name) VALUES ($1, $2, $3, $4)
			ON CONFLICT (scope, tbl, model) DO NOTHING`, scope, string(table), model, name)
		if err != nil {
			return err
		}
		if registered = tag.RowsAffected() == 1; !registered {
			return nil // another build registered its own: this one goes
		}
		_, err = tx.Exec(ctx, "DELETE FROM scope_index_drop WHERE name = $1", name)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("register %s: %w", name, err)
	}
	if !registered {
		if err := dropIndex(ctx, conn, name); err != nil {
			return false, err
		}
	}
	return registered, nil
}

// IndexedScopes is the scopes that have an index of their own, for model.
func (s *Store) IndexedScopes(ctx context.Context, model string) ([]string, error) {
	rows, err := s.db.Query(ctx, "SELECT DISTINCT scope FROM scope_vector_index WHERE model = $1 ORDER BY scope", model)
	if err != nil {
		return nil, fmt.Errorf("indexed scopes: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// scopeIndexName is a new random name for a scope's index on table: nothing in it can
// be recomputed from the scope's name.
func scopeIndexName(table searchTable) (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("name a scope index: %w", err)
	}
	return string(table) + "_scope_" + hex.EncodeToString(b) + "_idx", nil
}

// errNoScope guards a nearestQuery built without its scope condition.
var errNoScope = errors.New("a nearest-neighbour read must be bound to its scope")

func (q nearestQuery) check() error {
	if q.scope == "" || len(q.args) == 0 || q.args[0] != any(q.scope) || !strings.Contains(q.where, "b.scope = $1") {
		return errNoScope
	}
	return nil
}
