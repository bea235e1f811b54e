package memory

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// What a purge tombstone says was purged.
const (
	PurgedBeliefs = "beliefs"
	PurgedScope   = "scope"
	// PurgedHistory is a run of Curate: beliefs retired longer ago than the retention
	// period.
	PurgedHistory = "history"
)

// Purged is what Purge removed.
type Purged struct {
	// What is PurgedBeliefs or PurgedScope.
	What string
	// Counts is the number of rows removed per table; the tombstone does not keep it.
	Counts map[string]int64
	// Relinked is the number of beliefs whose successor was purged and that now lead to
	// the next surviving belief of their chain, or to none.
	Relinked    int
	TombstoneID int64
	// IndexesLeft says the scope's own vector indexes, whose definitions name it, could
	// not be dropped at once (another index build held the table): the worker drops
	// them, at its next consolidation sweep.
	IndexesLeft bool
}

// Purge erases the selected beliefs and every copy of their content, for good, in one
// transaction holding the scope's lock. A purge of All erases the whole scope, whatever
// names it (namedScopes; ErrNotFound when nothing does): its beliefs, revision events,
// conflicts, episodes, entities, consolidation state, River jobs, the announcer's rows,
// and its own vector indexes, whose drop is recorded in the transaction and done once
// it committed (dropErasedIndexesNow; the worker finishes what is left).
//
// A purge of some beliefs erases:
//   - the beliefs, with their embeddings; beliefs they superseded are relinked to the
//     next surviving belief of the chain, so no id dangles;
//   - the revision events and conflicts that name them, and those of the scope whose
//     text contains the purged text (the Match, or the statements of the IDs); with an
//     event, the revert that reverted it, or the event a revert reverted;
//   - the episodes they were extracted from, those that restated them in other words
//     (their reinforcement events name the episode), and those of the scope whose
//     transcript contains the purged text: a transcript holds the same words;
//   - the River jobs of those episodes, and jobs whose args, errors, metadata or tags
//     contain the purged text, unless they belong to another scope;
//   - the scope's consolidation judgments, which may have judged them;
//   - the purged text in the statements of the beliefs that stay (a belief concluded
//     from a purged one may quote it), replaced with [redacted].
//
// Such an episode that a kept belief still comes from (extracted from it, or restated
// by it) is redacted instead of deleted, when that can be complete: every occurrence of
// the purged beliefs' quotes from it, of their reinforcements' excerpts from it and of
// the purged text is replaced with [redacted] in its messages, its last error is
// cleared and its redacted_at set. If a quote is not in the transcript word for word
// (nothing then tells where the purged words are), or the purged text is still found
// after the replacement, or its external id holds the purged text, it is deleted. Other
// beliefs extracted from a deleted episode stay, without their episode_id. Either way,
// the kept beliefs' quotes and kept events' excerpts from such an episode lose the same
// spans: a model's quotes may overlap.
//
// One purge_tombstone row, of a random id, records that a purge happened and on which
// day, never the scope, what was purged or the counts (deleted rows per table, and
// episode_redacted and belief_redacted when rows were redacted), which Purged gives. Deleted rows, and the old versions of redacted ones, leave the
// disk when Postgres vacuums.
func (s *Store) Purge(ctx context.Context, sel Selection) (*Purged, error) {
	out, indexes, err := s.purge(ctx, sel)
	if err != nil {
		return nil, err
	}
	if indexes > 0 {
		out.IndexesLeft = !s.dropErasedIndexesNow(ctx)
	}
	return out, nil
}

// purge is Purge but for the drop of the erased scope's indexes, which it leaves to do
// (scope_index_drop) and counts.
func (s *Store) purge(ctx context.Context, sel Selection) (*Purged, int, error) {
	if err := sel.normalize(); err != nil {
		return nil, 0, err
	}
	var p *purge
	err := s.inTxRetryingDeadlocks(ctx, func(tx pgx.Tx) error {
		p = &purge{store: s, tx: tx, sel: sel, now: s.clock(), out: &Purged{What: PurgedBeliefs, Counts: map[string]int64{}}}
		if sel.All {
			p.out.What = PurgedScope
		}
		return p.run(ctx)
	})
	if err != nil && sel.All {
		return nil, 0, fmt.Errorf("purge scope %q: %w", sel.Scope, err)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("purge beliefs of %q: %w", sel.Scope, err)
	}
	return p.out, p.indexes, nil
}

// dropErasedIndexesNow drops the indexes left to drop, and says whether none is left.
// It is not cancelled with the caller, whose purge's indexes name the scope, and waits
// at most indexDropWait: what it cannot drop now (another index build holds the
// table) the worker drops at its next sweep (DropErasedIndexes).
func (s *Store) dropErasedIndexesNow(ctx context.Context) bool {
	dropCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.indexDropWait)
	defer cancel()
	res, err := s.DropErasedIndexes(dropCtx)
	return err == nil && res.Left == 0
}

// purge is one Purge's transaction.
type purge struct {
	store *Store
	tx    pgx.Tx
	sel   Selection
	now   time.Time
	out   *Purged

	beliefs []int64
	// episodes are the episodes the purge selected, redacted those of them it redacted
	// instead of deleting, and quotes what each said of the purged beliefs.
	episodes []int64
	redacted []int64
	quotes   map[int64]*episodeQuotes
	// needles are the purged text, matched case-insensitively in what was copied.
	needles []string
	// entity is the key of the entity a purge by entity erases.
	entity string
	// indexes counts the scope's own indexes a scope purge unregistered.
	indexes int
}

// defaultIndexDropWait bounds how long Purge waits to drop an erased scope's indexes
// itself: a drop waits for any index build on the table, which may take minutes.
const defaultIndexDropWait = 30 * time.Second

func (p *purge) run(ctx context.Context) error {
	if err := lockScope(ctx, p.tx, p.sel.Scope); err != nil {
		return err
	}
	if p.sel.All {
		// A scope that partial purges emptied is still erasable whole: any row naming it is.
		named, err := p.store.namedScopes(ctx, p.tx, ScopeNames{Scope: p.sel.Scope})
		if err != nil {
			return err
		}
		if len(named) == 0 {
			return fmt.Errorf("scope %q: %w", p.sel.Scope, ErrNotFound)
		}
	} else if len(p.sel.IDs) == 0 {
		err := checkScope(ctx, p.tx, p.sel.Scope,
			"SELECT 1 FROM belief WHERE scope = $1 UNION ALL SELECT 1 FROM episode WHERE scope = $1")
		if err != nil {
			return err
		}
	}
	var err error
	if p.beliefs, err = selectBeliefs(ctx, p.tx, p.sel); err != nil {
		return err
	}
	if err := p.findNeedles(ctx); err != nil {
		return err
	}
	if err := p.findEpisodes(ctx); err != nil {
		return err
	}
	if err := p.findQuotes(ctx); err != nil {
		return err
	}
	// redactEpisodes runs once the purged beliefs and their events are gone: what still
	// names an episode then is what stays. scrubKept reads the transcripts before they
	// are redacted.
	if p.sel.Entity != "" {
		e, err := findEntity(ctx, p.tx, p.sel.Scope, p.sel.Entity)
		if err != nil {
			return err
		}
		p.entity = e.Key
	}
	for _, step := range []func(context.Context) error{p.riverJobs, p.events, p.conflicts, p.redactSurvivors, p.dependents, p.relink, p.deleteBeliefs,
		p.entities, p.scrubKept, p.redactEpisodes, p.deleteEpisodes, p.consolidation, p.scopeIndexes} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	if err := p.tombstone(ctx); err != nil {
		return err
	}
	purged := Change{Scope: p.sel.Scope, Kind: ChangeScopePurged, At: p.now, Purged: p.out.Counts, All: p.sel.All}
	if p.sel.All {
		return p.store.announceTx(ctx, p.tx, []Change{purged})
	}
	// The items that flagged the survivors concluded from what went.
	return p.store.announceReviewTx(ctx, p.tx, p.sel.Scope, p.now, purged)
}

func (p *purge) findNeedles(ctx context.Context) error {
	switch {
	case p.sel.Match != "":
		p.needles = []string{p.sel.Match}
	case p.sel.All:
		// Everything of the scope goes by its scope column; the scope's name is what
		// other rows, such as River's error texts, may have copied.
		p.needles = []string{p.sel.Scope}
	default:
		rows, err := p.tx.Query(ctx, "SELECT DISTINCT statement FROM belief WHERE scope = $2 AND id = ANY($1)", p.beliefs, p.sel.Scope)
		if err != nil {
			return fmt.Errorf("read statements: %w", err)
		}
		if p.needles, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return fmt.Errorf("read statements: %w", err)
		}
	}
	return nil
}

func (p *purge) findEpisodes(ctx context.Context) error {
	query, args := "SELECT id FROM episode WHERE scope = $1 ORDER BY id", []any{p.sel.Scope}
	if !p.sel.All {
		args = append(args, p.beliefs, p.needles)
		query = `SELECT e.id FROM episode e WHERE e.scope = $1 AND (
				e.id IN (SELECT episode_id FROM belief WHERE scope = $1 AND id = ANY($2))
				OR e.id IN (SELECT episode_id FROM revision_event WHERE scope = $1 AND action = 'reinforce' AND old_belief_id = ANY($2))
				OR ` + mentionsJSON("e.messages", "$3") + `
				OR ` + mentionsText("e.external_id", "$3") + `
				OR ` + mentionsText("e.last_error", "$3") + `)
			ORDER BY e.id`
	}
	rows, err := p.tx.Query(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("find episodes: %w", err)
	}
	if p.episodes, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
		return fmt.Errorf("find episodes: %w", err)
	}
	return nil
}

// events deletes the events that name a purged belief or copy the purged text, each
// with its pair: a revert and the event it reverted are one record (the revert's note
// says why the revision was wrong), so erasing either erases both, and no reverted_by or
// reverts names an event that is gone.
func (p *purge) events(ctx context.Context) error {
	// The scope's events only: those of its beliefs are of it too (the keys say so).
	return p.exec(ctx, "revision_event", `WITH hit AS (
			SELECT e.id, e.reverts, e.reverted_by FROM revision_event e WHERE e.scope = $1 AND (
				e.old_belief_id = ANY($2) OR e.new_belief_id = ANY($2) OR $4
				OR `+mentionsText("e.old_statement", "$3")+`
				OR `+mentionsText("e.new_statement", "$3")+`
				OR `+mentionsText("e.excerpt", "$3")+`
				OR `+mentionsText("e.rationale", "$3")+`)
		)
		DELETE FROM revision_event d WHERE d.scope = $1 AND (d.id IN (SELECT id FROM hit)
			OR d.id IN (SELECT reverts FROM hit) OR d.id IN (SELECT reverted_by FROM hit))`,
		p.sel.Scope, p.beliefs, p.needles, p.sel.All)
}

// conflicts deletes the review items of purged beliefs, those that mention the purged
// text, and those of a selected episode that quote a purged belief.
func (p *purge) conflicts(ctx context.Context) error {
	return p.exec(ctx, "belief_conflict", `DELETE FROM belief_conflict c WHERE c.scope = $1 AND (
		c.target_belief_id = ANY($2) OR c.belief_id = ANY($2) OR $4
			OR `+mentionsJSON("c.proposed", "$3")+`
			OR `+mentionsText("c.detail", "$3")+`
		OR (c.episode_id = ANY($5) AND (`+mentionsJSON("c.proposed", "$6")+` OR `+mentionsText("c.detail", "$6")+`)))`,
		p.sel.Scope, p.beliefs, p.needles, p.sel.All, p.episodes, p.purgedQuotes())
}

// redactSurvivors replaces the purged text in the statements of the beliefs that stay,
// before they are flagged: a belief concluded from a purged one may quote it ("...
// (User's locker code is 5190-KX)"), and its statement goes on to review prompts,
// webhooks (built from the rows when sent) and extraction prompts. A statement that
// changed loses its vector, which was of the purged words: the scope's next extraction
// or read embeds it again.
func (p *purge) redactSurvivors(ctx context.Context) error {
	if p.sel.All || len(p.needles) == 0 {
		return nil
	}
	rows, err := p.tx.Query(ctx, `SELECT id, statement FROM belief b WHERE b.scope = $1 AND NOT b.id = ANY($2)
		AND `+mentionsText("b.statement", "$3"), p.sel.Scope, p.beliefs, p.needles)
	if err != nil {
		return fmt.Errorf("find statements quoting the purged text: %w", err)
	}
	type copied struct {
		ID        int64
		Statement string
	}
	found, err := pgx.CollectRows(rows, pgx.RowToStructByPos[copied])
	if err != nil || len(found) == 0 {
		return err
	}
	patterns, err := spanPatterns(nil, p.needles)
	if err != nil {
		return err
	}
	for _, c := range found {
		_, err := p.tx.Exec(ctx, `UPDATE belief SET statement = $2, embedding = NULL, embed_model = NULL, updated_at = $3
			WHERE scope = $4 AND id = $1`, c.ID, redactText(c.Statement, patterns, nil), p.now, p.sel.Scope)
		if err != nil {
			return fmt.Errorf("redact the statement of %d: %w", c.ID, err)
		}
	}
	p.out.Counts[CountRedactedBeliefs] = int64(len(found))
	return nil
}

// dependents flags the surviving beliefs concluded from purged ones, with items that
// name no purged id (the dependency rows go with the beliefs), and clears the flag of
// beliefs whose every open item went with the purged text.
func (p *purge) dependents(ctx context.Context) error {
	if p.sel.All {
		return nil
	}
	err := flagDependents(ctx, p.tx, flag{scope: p.sel.Scope, bases: p.beliefs, origin: RevisionOperator, change: "erased", now: p.now})
	if err != nil {
		return err
	}
	_, err = p.tx.Exec(ctx, `UPDATE belief b SET needs_review = false WHERE b.scope = $1 AND b.needs_review
		AND NOT EXISTS (SELECT 1 FROM belief_conflict c WHERE c.scope = $1 AND c.belief_id = b.id AND c.status = 'open')`, p.sel.Scope)
	if err != nil {
		return fmt.Errorf("clear review flags: %w", err)
	}
	return nil
}

// relink points every surviving belief whose successor is purged at the first surviving
// belief after it, or at none: the chain closes over the gap, and no id dangles.
func (p *purge) relink(ctx context.Context) error {
	n, err := relinkOver(ctx, p.tx, p.sel.Scope, p.beliefs, p.now)
	p.out.Relinked += n
	return err
}

// relinkOver points every belief outside removed whose successor is in removed at the
// first belief after it that is not, or at none, and returns how many it relinked. Call
// it before deleting removed.
func relinkOver(ctx context.Context, tx pgx.Tx, scope string, removed []int64, now time.Time) (int, error) {
	rows, err := tx.Query(ctx, "SELECT id, superseded_by FROM belief WHERE scope = $2 AND id = ANY($1)", removed, scope)
	if err != nil {
		return 0, fmt.Errorf("read links: %w", err)
	}
	next := map[int64]*int64{}
	var (
		id int64
		by *int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &by}, func() error { next[id] = by; return nil }); err != nil {
		return 0, fmt.Errorf("read links: %w", err)
	}
	rows, err = tx.Query(ctx, "SELECT id, superseded_by FROM belief WHERE scope = $2 AND superseded_by = ANY($1) AND NOT id = ANY($1) ORDER BY id",
		removed, scope)
	if err != nil {
		return 0, fmt.Errorf("read predecessors: %w", err)
	}
	type link struct{ ID, By int64 }
	links, err := pgx.CollectRows(rows, pgx.RowToStructByPos[link])
	if err != nil {
		return 0, fmt.Errorf("read predecessors: %w", err)
	}
	for _, l := range links {
		successor := &l.By
		for range 1000 {
			n, gone := next[*successor]
			if !gone {
				break
			}
			if successor = n; successor == nil {
				break
			}
		}
		if _, err := tx.Exec(ctx, "UPDATE belief SET superseded_by = $2, updated_at = $3 WHERE scope = $4 AND id = $1",
			l.ID, successor, now, scope); err != nil {
			return 0, fmt.Errorf("relink belief %d: %w", l.ID, err)
		}
	}
	return len(links), nil
}

// entities erases from the registry what no belief is about any more (dropEntities):
// the entity a purge by entity names too; a scope purge erases the registry.
func (p *purge) entities(ctx context.Context) error {
	return dropEntities(ctx, dropParams{Scope: p.sel.Scope, All: p.sel.All, Key: p.entity}, p.exec)
}

// dropParams says which entities of Scope dropEntities erases beside those no belief is
// about: every one (All), or the one of Key.
type dropParams struct {
	Scope string
	All   bool
	Key   string
}

// dropEntities erases the entities of a scope that no belief is about (the user aside:
// every scope has them) and those p names, with their names and the same_entity
// proposals that name what went; exec runs each statement and counts its rows by table.
// An entity's names are what was said of someone: they go with the last belief about
// them, whoever erased it (a purge, the curator).
func dropEntities(ctx context.Context, p dropParams, exec func(ctx context.Context, table, sql string, args ...any) error) error {
	if err := exec(ctx, "entity", `DELETE FROM entity e WHERE e.scope = $1 AND ($2 OR e.key = $3
			OR (e.key <> 'user' AND NOT EXISTS (SELECT 1 FROM belief b WHERE b.scope = $1 AND b.entity = e.key)))`,
		p.Scope, p.All, p.Key); err != nil {
		return err
	}
	if err := exec(ctx, "entity_alias", `DELETE FROM entity_alias a WHERE a.scope = $1
			AND NOT EXISTS (SELECT 1 FROM entity e WHERE e.scope = $1 AND e.key = a.entity)`, p.Scope); err != nil {
		return err
	}
	return exec(ctx, "belief_conflict", `DELETE FROM belief_conflict c WHERE c.scope = $1 AND c.cause = 'same_entity'
		AND NOT (EXISTS (SELECT 1 FROM entity_alias a WHERE a.scope = $1 AND a.alias = c.proposed->'merge'->>'into')
			AND EXISTS (SELECT 1 FROM entity_alias a WHERE a.scope = $1 AND a.alias = c.proposed->'merge'->>'other'))`, p.Scope)
}

func (p *purge) deleteBeliefs(ctx context.Context) error {
	return p.exec(ctx, "belief", "DELETE FROM belief WHERE scope = $2 AND id = ANY($1)", p.beliefs, p.sel.Scope)
}

// deleteEpisodes deletes the selected episodes that were not redacted, once the rows
// that came from them no longer name them.
func (p *purge) deleteEpisodes(ctx context.Context) error {
	deleted := slices.DeleteFunc(slices.Clone(p.episodes), func(id int64) bool { return slices.Contains(p.redacted, id) })
	if err := unlinkEpisodes(ctx, p.tx, p.sel.Scope, deleted); err != nil {
		return err
	}
	return p.exec(ctx, "episode", "DELETE FROM episode WHERE scope = $1 AND id = ANY($2)", p.sel.Scope, deleted)
}

// unlinkEpisodes clears the references of scope's beliefs, events and review items to
// the episodes ids, which are about to be deleted. The keys naming an episode only
// check: Citus allows no ON DELETE SET NULL on a key that includes the scope.
func unlinkEpisodes(ctx context.Context, tx pgx.Tx, scope string, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	batch := &pgx.Batch{}
	for _, table := range []string{"belief", "revision_event", "belief_conflict"} {
		batch.Queue("UPDATE "+table+" SET episode_id = NULL WHERE scope = $1 AND episode_id = ANY($2)", scope, ids)
	}
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("unlink episodes %v: %w", ids, err)
	}
	return nil
}

// consolidation forgets the scope's judged clusters, which may include purged beliefs;
// a scope purge also drops its learned slot synonyms and its watermark, the last row
// that names it.
func (p *purge) consolidation(ctx context.Context) error {
	if err := p.exec(ctx, "consolidation_judgment", "DELETE FROM consolidation_judgment WHERE scope = $1", p.sel.Scope); err != nil {
		return err
	}
	// The scope's common words are counted again by the next pass, without the purged.
	if err := forgetCommonWords(ctx, p.tx, p.sel.Scope); err != nil {
		return err
	}
	if !p.sel.All {
		return nil
	}
	// The slot synonyms the scope learned name its slots: they go with it.
	if err := p.exec(ctx, "slot_synonym", "DELETE FROM slot_synonym WHERE scope = $1", p.sel.Scope); err != nil {
		return err
	}
	return p.exec(ctx, "scope_consolidation", "DELETE FROM scope_consolidation WHERE scope = $1", p.sel.Scope)
}

func (p *purge) tombstone(ctx context.Context) error {
	id, err := writeTombstone(ctx, p.tx, p.out.What, p.now)
	p.out.TombstoneID = id
	return err
}

// writeTombstone records that rows were purged: what, and on which day (UTC), with no
// trace of the scope. A scope's name is guessable (user:1234), so a hash of it, even
// salted with a secret in the same database, would give it back to whoever reads the
// database; the caller gets the tombstone's id and the counts, to keep the link to the
// scope elsewhere. The day, not the time: the purge's time is also on rows it leaves in
// the scope (a redacted episode's redacted_at, a relinked belief's updated_at), and on
// the scope.purged change a partial purge announces. No counts: that change, which
// names the scope, carries them. A random id: sequential ids would order tombstones as
// the feed orders purges (it overrides the column's identity, which Citus cannot drop
// from a reference table). It stays below 2^53, which JSON numbers hold exactly.
func writeTombstone(ctx context.Context, tx pgx.Tx, what string, now time.Time) (int64, error) {
	y, m, d := now.UTC().Date()
	for {
		n, err := rand.Int(rand.Reader, big.NewInt(1<<53-1))
		if err != nil {
			return 0, fmt.Errorf("write tombstone: %w", err)
		}
		id := n.Int64() + 1
		tag, err := tx.Exec(ctx, `INSERT INTO purge_tombstone (id, what, created_at) OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3)
			ON CONFLICT (id) DO NOTHING`, id, what, time.Date(y, m, d, 0, 0, 0, 0, time.UTC))
		if err != nil {
			return 0, fmt.Errorf("write tombstone: %w", err)
		}
		if tag.RowsAffected() == 1 {
			return id, nil
		}
	}
}

func (p *purge) exec(ctx context.Context, table, sql string, args ...any) error {
	tag, err := p.tx.Exec(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("purge %s: %w", table, err)
	}
	p.out.Counts[table] += tag.RowsAffected()
	return nil
}

// mentionsText is SQL that is true when the text expression contains one of needles (a
// text[] parameter), ignoring case. NULL mentions nothing.
func mentionsText(expr, needles string) string {
	return fmt.Sprintf("EXISTS (SELECT 1 FROM unnest(%s::text[]) n WHERE strpos(lower(%s), lower(n)) > 0)", needles, expr)
}

// mentionsJSON is mentionsText for a jsonb expression: its text form, and each string in
// it unescaped, since a needle with quotes or newlines is escaped in the text form.
func mentionsJSON(expr, needles string) string {
	return fmt.Sprintf(`EXISTS (SELECT 1 FROM unnest(%[2]s::text[]) n WHERE strpos(lower(%[1]s::text), lower(n)) > 0
		OR EXISTS (SELECT 1 FROM jsonb_path_query(%[1]s, 'strict $.**') v
			WHERE jsonb_typeof(v) = 'string' AND strpos(lower(v #>> '{}'), lower(n)) > 0))`, expr, needles)
}
