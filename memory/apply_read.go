package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// The reads of the revision engine (apply.go), inside its transaction.

// lockAndCheck takes the scope's lock, then checks under it that every candidate still
// exists in the scope and that the scope gained no active belief since b.Seen, and reads
// ahead what the first decisions need: one round trip, as the statements are sent
// together and each after the lock runs once the lock is held (each statement reads
// what is committed when it starts).
func (a *applier) lockAndCheck(ctx context.Context) error {
	b := a.b
	latest := int64(-1) // no snapshot: nothing counts as unseen
	if b.Seen != nil {
		latest = b.Seen.Latest
	}
	batch := &pgx.Batch{}
	if !a.peek {
		batch.Queue(lockScopeSQL, b.Scope)
	}
	// Every subquery names the scope: on Citus the check runs on the scope's shard alone.
	// Only when something is missing does checkElsewhere look at other scopes.
	batch.Queue(`SELECT
			(SELECT count(*) FROM belief WHERE scope = $2 AND id = ANY($1)),
			(SELECT count(*) FROM belief WHERE $3 >= 0 AND scope = $2 AND id > $3 AND status = 'active'),
			$4::bigint IS NULL OR EXISTS (SELECT 1 FROM episode WHERE scope = $2 AND id = $4)`,
		b.Candidates, b.Scope, latest, b.EpisodeID)
	ahead := a.queueReadAhead(batch)
	guarded := a.queueGuardReads(batch)
	named := a.queueEntityRead(batch)
	br := a.tx.SendBatch(ctx, batch)
	defer br.Close()
	if !a.peek {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("lock scope %q: %w", b.Scope, err)
		}
	}
	var (
		inScope, unseen int
		episodeInScope  bool
	)
	if err := br.QueryRow().Scan(&inScope, &unseen, &episodeInScope); err != nil {
		return fmt.Errorf("check candidates: %w", err)
	}
	if err := ahead.read(br); err != nil {
		return err
	}
	if err := guarded(br); err != nil {
		return err
	}
	if err := named(br); err != nil {
		return err
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("check candidates: %w", err)
	}
	if want := len(uniq(b.Candidates)); inScope != want || !episodeInScope {
		if err := checkElsewhere(ctx, a.tx, b, inScope, want); err != nil {
			return err
		}
	}
	if unseen > 0 {
		return fmt.Errorf("%w: %d active beliefs of %q appeared since the writer read it", ErrStale, unseen, b.Scope)
	}
	a.ahead = ahead
	return nil
}

// lock is the clause that locks the rows a read returns, none when the applier only
// peeks (Store.Questions).
func (a *applier) lock() string {
	if a.peek {
		return ""
	}
	return " FOR UPDATE"
}

// readAhead is what the batch's first decisions read, read with the scope's lock: the
// candidates its directives name, and the active beliefs that say what its facts
// without a directive say. It holds until the batch first writes; then each read is
// made when it is needed, as the writes may have changed what it reads.
type readAhead struct {
	targets map[int64]*target
	// duplicates maps a normalized statement to its oldest active belief, nil if none.
	duplicates map[string]*target
	ids        []int64
	statements []string
}

// queueReadAhead queues the reads ahead into batch.
func (a *applier) queueReadAhead(batch *pgx.Batch) *readAhead {
	ahead := &readAhead{targets: map[int64]*target{}, duplicates: map[string]*target{}}
	name := func(i int) {
		if i >= 0 && i < len(a.b.Candidates) {
			ahead.ids = append(ahead.ids, a.b.Candidates[i])
		}
	}
	for _, f := range a.b.Facts {
		switch {
		case f.Confidence < a.store.floor: // rejected before anything is read
		case f.Resolves != nil:
			name(f.Resolves.Index)
		default:
			ahead.statements = append(ahead.statements, normStatement(f.Statement))
		}
	}
	for _, r := range a.b.Resolutions {
		name(r.Index)
		if r.ReplacedBy != nil {
			name(*r.ReplacedBy)
		}
	}
	ahead.ids = uniq(ahead.ids)
	if len(ahead.ids) > 0 {
		batch.Queue("SELECT "+targetColumns+" FROM belief WHERE scope = $2 AND id = ANY($1)"+a.lock(), ahead.ids, a.b.Scope)
	}
	if len(ahead.statements) > 0 {
		var forms []string
		for _, n := range ahead.statements {
			forms = append(forms, n, n+".")
		}
		batch.Queue("SELECT lower(statement), "+targetColumns+` FROM belief
			WHERE scope = $1 AND status = 'active' AND lower(statement) = ANY($2) ORDER BY id`+a.lock(), a.b.Scope, forms)
	}
	return ahead
}

// read reads the results of the reads queueReadAhead queued.
func (r *readAhead) read(br pgx.BatchResults) error {
	if len(r.ids) > 0 {
		rows, err := br.Query()
		if err != nil {
			return fmt.Errorf("load candidates: %w", err)
		}
		ts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*target, error) { return scanTarget(row) })
		if err != nil {
			return fmt.Errorf("load candidates: %w", err)
		}
		for _, t := range ts {
			r.targets[t.ID] = t
		}
	}
	if len(r.statements) == 0 {
		return nil
	}
	rows, err := br.Query()
	if err != nil {
		return fmt.Errorf("look up duplicates: %w", err)
	}
	type match struct {
		lower string
		t     *target
	}
	matches, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (match, error) {
		var m match
		t, err := scanTarget(row, &m.lower)
		m.t = t
		return m, err
	})
	if err != nil {
		return fmt.Errorf("look up duplicates: %w", err)
	}
	for _, n := range r.statements {
		// As activeDuplicate: the oldest of the statement's forms, if it says the same.
		var dup *target
		if i := slices.IndexFunc(matches, func(m match) bool { return m.lower == n || m.lower == n+"." }); i >= 0 &&
			normStatement(matches[i].t.Statement) == n {
			dup = matches[i].t
		}
		r.duplicates[n] = dup
	}
	return nil
}

// queueGuardReads queues what the containment guards measure with: the vectors of the
// beliefs the batch's directives would retire (and of consolidation's replacements), and
// the destructive revisions its episode applied before (its earlier segments). It
// returns what reads their results, in queue order.
func (a *applier) queueGuardReads(batch *pgx.Batch) func(pgx.BatchResults) error {
	g, b := a.guard, a.b
	ids := g.destructive(b)
	if len(ids) == 0 {
		return func(pgx.BatchResults) error { return nil }
	}
	batch.Queue(`SELECT id, embedding FROM belief WHERE scope = $1 AND id = ANY($2) AND embed_model = $3 AND embedding IS NOT NULL`,
		b.Scope, ids, b.EmbedModel)
	batch.Queue(`SELECT slot, synonym FROM slot_synonym WHERE scope = $1`, b.Scope)
	counted := b.Origin == RevisionExtraction && b.EpisodeID != nil
	if counted {
		// The episode's earlier segments, and the scope's episodes within a day of its
		// time, whenever they were extracted: a mass revision split over episodes counts
		// as one.
		batch.Queue(`SELECT count(*) FILTER (WHERE e.episode_id = $2), count(*)
			FROM revision_event e JOIN episode ep ON ep.scope = e.scope AND ep.id = e.episode_id
			WHERE e.scope = $1 AND ep.scope = $1 AND e.origin = 'extraction' AND e.action IN ('supersede', 'retract')
				AND ep.occurred_at > $3::timestamptz - interval '24 hours' AND ep.occurred_at < $3::timestamptz + interval '24 hours'`,
			b.Scope, *b.EpisodeID, b.At)
	}
	return func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return fmt.Errorf("read the targets' vectors: %w", err)
		}
		for rows.Next() {
			var (
				id  int64
				vec pgvector.Vector
			)
			if err := rows.Scan(&id, &vec); err != nil {
				rows.Close()
				return fmt.Errorf("read the targets' vectors: %w", err)
			}
			g.vectors[id] = vec.Slice()
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read the targets' vectors: %w", err)
		}
		rows, err = br.Query()
		if err != nil {
			return fmt.Errorf("read the slot synonyms: %w", err)
		}
		g.slots = synonyms{}
		for rows.Next() {
			var p [2]string
			if err := rows.Scan(&p[0], &p[1]); err != nil {
				rows.Close()
				return fmt.Errorf("read the slot synonyms: %w", err)
			}
			g.slots[p] = true
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read the slot synonyms: %w", err)
		}
		if counted {
			if err := br.QueryRow().Scan(&g.prior, &g.day); err != nil {
				return fmt.Errorf("count the episode's revisions: %w", err)
			}
		}
		return nil
	}
}

// checkElsewhere tells why candidates or the episode were not found in b's scope: rows
// of another scope (ErrScope), or candidates purged since they were shown (ErrStale). It
// reads every scope, so it runs only on this rare path, never on a good batch.
func checkElsewhere(ctx context.Context, tx pgx.Tx, b *Batch, inScope, want int) error {
	var found int
	var foreignEpisode bool
	err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM belief WHERE id = ANY($1)),
			EXISTS (SELECT 1 FROM episode WHERE id = $3 AND scope <> $2)`,
		b.Candidates, b.Scope, b.EpisodeID).Scan(&found, &foreignEpisode)
	if err != nil {
		return fmt.Errorf("check candidates: %w", err)
	}
	if inScope != found {
		return fmt.Errorf("%w: %d candidates, %d in scope %q", ErrScope, found, inScope, b.Scope)
	}
	if foreignEpisode {
		// Provenance of another scope would let a purge of this one rewrite it.
		return fmt.Errorf("%w: episode %d is not of scope %q", ErrScope, *b.EpisodeID, b.Scope)
	}
	if found != want {
		// Purged since they were shown: the writer decides again from what is left.
		return fmt.Errorf("%w: %d of %d candidates no longer exist", ErrStale, want-found, want)
	}
	// The episode is gone (purged): the belief's key to it fails as it always did.
	return nil
}

func uniq(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// target is the part of a belief revision decisions need.
type target struct {
	ID           int64
	Statement    string
	Attribute    string
	Status       Status
	Origin       Origin
	Kind         Kind
	Confidence   float64
	ValidFrom    time.Time
	ValidUntil   *time.Time
	SupersededBy *int64
	// EpisodeID and Quote are where it was first said.
	EpisodeID *int64
	Quote     *string
	// Entity is the key of the entity it is about.
	Entity string
}

const targetColumns = "id, statement, attribute, status, origin, kind, confidence, valid_from, valid_until, superseded_by, episode_id, quote, entity"

// scanTarget scans targetColumns, after the columns before the row leads with.
func scanTarget(row pgx.Row, before ...any) (*target, error) {
	var t target
	dest := slices.Concat(before, []any{&t.ID, &t.Statement, &t.Attribute, &t.Status, &t.Origin, &t.Kind, &t.Confidence, &t.ValidFrom,
		&t.ValidUntil, &t.SupersededBy, &t.EpisodeID, &t.Quote, &t.Entity})
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	t.ValidFrom = t.ValidFrom.UTC()
	return &t, nil
}

// load reads belief id of the batch's scope and locks it.
func (a *applier) load(ctx context.Context, id int64) (*target, error) {
	if t, ok := a.ahead.target(id); ok {
		return t, nil
	}
	var t *target
	err := a.send(ctx, fmt.Sprintf("load belief %d", id), "SELECT "+targetColumns+" FROM belief WHERE scope = $2 AND id = $1 FOR UPDATE",
		[]any{id, a.b.Scope}, func(br pgx.BatchResults) (err error) {
			t, err = scanTarget(br.QueryRow())
			return err
		})
	return t, err
}

// target is belief id as read ahead, if it was and nothing was written since.
func (r *readAhead) target(id int64) (*target, bool) {
	if r == nil {
		return nil, false
	}
	t, ok := r.targets[id]
	return t, ok
}

// activeDuplicate is the oldest active belief of the scope with statement, locked, or
// nil when there is none.
//
//nolint:nilnil // no duplicate is the common case, not an error
func (a *applier) activeDuplicate(ctx context.Context, statement string) (*target, error) {
	n := normStatement(statement)
	if a.ahead != nil {
		if t, ok := a.ahead.duplicates[n]; ok {
			return t, nil
		}
	}
	var t *target
	err := a.send(ctx, "look up duplicate", "SELECT "+targetColumns+` FROM belief
		WHERE scope = $1 AND status = 'active' AND lower(statement) IN ($2, $2 || '.')
		ORDER BY id LIMIT 1 FOR UPDATE`, []any{a.b.Scope, n}, func(br pgx.BatchResults) (err error) {
		t, err = scanTarget(br.QueryRow())
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if normStatement(t.Statement) != n {
		return nil, nil
	}
	return t, nil
}

// episodeBefore is whether episode x happened before episode y (by occurred_at, then id).
func (a *applier) episodeBefore(ctx context.Context, x, y int64) (bool, error) {
	var before bool
	err := a.queryRow(ctx, fmt.Sprintf("order episodes %d and %d", x, y), `SELECT coalesce((SELECT (ex.occurred_at, ex.id) < (ey.occurred_at, ey.id)
		FROM episode ex, episode ey WHERE ex.scope = $3 AND ex.id = $1 AND ey.scope = $3 AND ey.id = $2), false)`,
		[]any{x, y, a.b.Scope}, &before)
	return before, err
}

// chainOf reads the chain that leads into head. Each step names the scope: a chain never
// leaves it, and Citus runs a recursive query only on one shard.
func (a *applier) chainOf(ctx context.Context, head int64) (*chain, error) {
	var members []*target
	err := a.send(ctx, fmt.Sprintf("load chain of belief %d", head), `
		WITH RECURSIVE chain AS (
			SELECT id, 0 AS depth FROM belief WHERE scope = $2 AND id = $1
			UNION ALL
			SELECT b.id, c.depth + 1 FROM belief b JOIN chain c ON b.superseded_by = c.id WHERE b.scope = $2 AND c.depth < 1000
		)
		SELECT `+targetColumns+` FROM belief WHERE id IN (SELECT id FROM chain) AND scope = $2 ORDER BY valid_from, id`,
		[]any{head, a.b.Scope}, func(br pgx.BatchResults) error {
			rows, err := br.Query()
			if err != nil {
				return err
			}
			members, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (*target, error) { return scanTarget(row) })
			return err
		})
	if err != nil {
		return nil, err
	}
	return newChain(members), nil
}
