package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// flag is one change of basis beliefs to propagate to what was concluded from them.
type flag struct {
	// scope holds the bases and what rests on them: a dependency never leaves its scope.
	scope string
	bases []int64
	// keepTarget names the basis in each item; false when the basis is being purged,
	// so that no item points at a deleted belief.
	keepTarget bool
	origin     RevisionOrigin
	// reason is the basis's revision reason, nil when it was forgotten or purged.
	reason *Reason
	// change says what happened to the basis, e.g. "superseded by belief 12".
	change string
	now    time.Time
}

// flagDependents flags every active belief concluded from one of f.bases (and not one
// of them) for review, and opens one basis_changed item per changed basis, unless one is
// open already. A flagged belief's updated_at moves, so the next consolidation sweep
// takes its scope and asks the model whether it still holds.
func flagDependents(ctx context.Context, tx pgx.Tx, f flag) error {
	sql, args := f.statement()
	if _, err := tx.Exec(ctx, sql, args...); err != nil {
		return f.failed(err)
	}
	return nil
}

// statement is the one statement that flags what rests on f.bases.
//
// It is the one data-modifying CTE left, and it is safe on Citus, where a CTE's write is
// lost when its outer statement is pruned to no shard (an outer WHERE that a NULL
// parameter folds to false, as "id = NULL" does): the outer statement reads the CTE's
// own rows and names nothing but the scope and the bases, never NULL, so Citus runs
// the whole statement on the scope's shard (TestCitusRouterExtraction). Split in two, the
// INSERT ... SELECT would be planned over every shard (a multi-task query). Any other
// write is its own statement.
func (f flag) statement() (string, []any) {
	detail := "its basis, belief %s, was " + f.change
	if !f.keepTarget {
		detail = "a belief it was concluded from was " + f.change
	}
	return `WITH flagged AS (
			UPDATE belief b SET needs_review = true, updated_at = $2
			FROM belief_dependency d
			WHERE d.scope = $7 AND b.scope = $7 AND d.basis_id = ANY($1) AND b.id = d.belief_id
				AND b.status = 'active' AND NOT b.id = ANY($1)
			RETURNING b.id, b.scope
		)
		INSERT INTO belief_conflict (scope, kind, origin, action, reason, belief_id, target_belief_id, detail, created_at)
		SELECT f.scope, 'basis_changed', $3, 'retract', $4, f.id, CASE WHEN $5 THEN d.basis_id END,
			format($6, d.basis_id), $2
		FROM flagged f JOIN belief_dependency d ON d.scope = $7 AND d.belief_id = f.id AND d.basis_id = ANY($1)
		WHERE NOT $5 OR NOT EXISTS (SELECT 1 FROM belief_conflict c
			WHERE c.scope = $7 AND c.belief_id = f.id AND c.target_belief_id = d.basis_id AND c.status = 'open')`,
		[]any{f.bases, f.now, f.origin, f.reason, f.keepTarget, detail, f.scope}
}

func (f flag) failed(err error) error {
	return fmt.Errorf("flag beliefs concluded from %v: %w", f.bases, err)
}

// closeItemsSQL closes the open basis_changed items of scope $4 about the beliefs $1,
// with resolution $2 at $3; clearFlagsSQL clears those beliefs' flags. Two statements,
// not a data-modifying CTE (see flag.statement).
const (
	closeItemsSQL = `UPDATE belief_conflict SET status = 'resolved', resolution = $2, resolved_at = $3
		WHERE scope = $4 AND belief_id = ANY($1) AND kind = 'basis_changed' AND status = 'open'`
	clearFlagsSQL = "UPDATE belief SET needs_review = false WHERE scope = $2 AND id = ANY($1) AND needs_review"
)

// closeItems closes the open basis_changed items about the beliefs ids, which left
// memory with resolution, and clears their flags.
func closeItems(ctx context.Context, tx pgx.Tx, scope string, ids []int64, resolution ItemResolution, now time.Time) error {
	batch := &pgx.Batch{}
	batch.Queue(closeItemsSQL, ids, resolution, now, scope)
	batch.Queue(clearFlagsSQL, ids, scope)
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("close review items of %v: %w", ids, err)
	}
	return nil
}

// Flagged is an active belief awaiting review because bases of it changed.
type Flagged struct {
	Belief Belief
	Bases  []ChangedBasis
}

// ChangedBasis is what happened to one basis of a flagged belief. The text of a
// forgotten or purged basis is not given: forgetting hides it from every prompt.
type ChangedBasis struct {
	// ID is the basis, nil once purged.
	ID        *int64
	Statement string
	// Status is superseded, retracted, forgotten, erased when purged, or active when
	// an operator's revert restored it.
	Status string
	// Now is what replaced a superseded basis, with NowID, if anything did.
	Now   string
	NowID *int64
}

// Flagged is up to limit inferred beliefs of scope flagged for review, oldest item
// first, with their changed bases: what consolidation asks the model about. Beliefs
// the user stated are left to an operator, as the engine would refuse consolidation's
// verdict on them anyway.
func (s *Store) Flagged(ctx context.Context, scope string, limit int) ([]Flagged, error) {
	rows, err := s.db.Query(ctx, `WITH items AS (
			SELECT c.belief_id, min(c.id) AS first FROM belief_conflict c JOIN belief b ON b.scope = $1 AND b.id = c.belief_id
			WHERE c.scope = $1 AND c.kind = 'basis_changed' AND c.status = 'open' AND b.status = 'active' AND b.origin = 'inferred'
			GROUP BY c.belief_id ORDER BY first LIMIT $2
		)
		SELECT c.belief_id, c.target_belief_id, CASE WHEN t.status IN ('superseded', 'retracted', 'active') THEN t.statement ELSE '' END,
			coalesce(t.status, 'erased'), n.id, coalesce(n.statement, '')
		FROM items i JOIN belief_conflict c ON c.scope = $1 AND c.belief_id = i.belief_id AND c.kind = 'basis_changed' AND c.status = 'open'
		LEFT JOIN belief t ON t.scope = $1 AND t.id = c.target_belief_id
		LEFT JOIN belief n ON n.scope = $1 AND n.id = t.superseded_by AND t.status = 'superseded' AND n.status <> 'forgotten'
		ORDER BY i.first, c.id`, scope, limit)
	if err != nil {
		return nil, fmt.Errorf("flagged beliefs of %q: %w", scope, err)
	}
	var (
		order []int64
		bases = map[int64][]ChangedBasis{}
	)
	var (
		id int64
		cb ChangedBasis
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &cb.ID, &cb.Statement, &cb.Status, &cb.NowID, &cb.Now}, func() error {
		if _, ok := bases[id]; !ok {
			order = append(order, id)
		}
		bases[id] = append(bases[id], cb)
		cb = ChangedBasis{} // the next row scans into fresh pointers
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("flagged beliefs of %q: %w", scope, err)
	}
	if len(order) == 0 {
		return nil, nil
	}
	bs, err := s.queryCandidates(ctx, "b.scope = $1 AND b.id = ANY($2)", scope, order)
	if err != nil {
		return nil, fmt.Errorf("flagged beliefs of %q: %w", scope, err)
	}
	byID := map[int64]Belief{}
	for _, b := range bs {
		byID[b.ID] = b
	}
	out := make([]Flagged, 0, len(order))
	for _, id := range order {
		if b, ok := byID[id]; ok {
			out = append(out, Flagged{Belief: b, Bases: bases[id]})
		}
	}
	return out, nil
}
