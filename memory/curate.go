package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// Curated is what one Curate run removed, or would remove on a dry run.
type Curated struct {
	DryRun bool `json:"dry_run"`
	// RetiredBefore is the cut: beliefs retired before it were due.
	RetiredBefore time.Time `json:"retired_before"`
	// Scopes are the curated scopes, in scope order; empty when nothing was due.
	Scopes []CuratedScope `json:"scopes"`
}

// CuratedScope is what Curate removed from one scope, in one transaction.
type CuratedScope struct {
	Scope string `json:"scope"`
	// BeliefIDs are the beliefs removed and EpisodeIDs the episodes removed with them,
	// ascending.
	BeliefIDs  []int64 `json:"belief_ids"`
	EpisodeIDs []int64 `json:"episode_ids"`
	// Counts is the number of rows removed per table; the tombstone does not keep it.
	Counts map[string]int64 `json:"counts"`
	// Relinked counts the kept beliefs whose successor was removed, which now lead to
	// the next kept belief of their chain, or to none.
	Relinked int `json:"relinked"`
	// TombstoneID is the scope's tombstone; 0 on a dry run.
	TombstoneID int64 `json:"tombstone_id"`
}

// Total is the number of rows removed from table over every scope.
func (c *Curated) Total(table string) int64 {
	var n int64
	for _, s := range c.Scopes {
		n += s.Counts[table]
	}
	return n
}

// Curate purges history older than retain: every superseded, retracted or forgotten
// belief retired before now - retain, with every row that copied its text. Active
// beliefs are never touched. Each scope goes in its own transaction holding the scope's
// lock, and gets one tombstone (PurgedHistory) with its counts:
//   - the beliefs, with their embeddings and dependency rows; a kept belief whose
//     successor goes is relinked to the next kept one of its chain, or to none;
//   - the revision events and review items that name them. An open item about an
//     active belief whose basis goes stays open, without the basis's id, so that no
//     review is lost;
//   - the episodes that produced them, or caused revisions or review items about them,
//     once no kept belief comes from the episode (and it is not pending), with the
//     River jobs of those episodes that are not running; such an episode that a kept
//     belief still comes from is redacted as a purge by id redacts it (their quotes and
//     statements become [redacted], in it and in what kept rows copied of them), or
//     removed when that cannot be complete;
//   - the scope's consolidation judgments, which may have judged them.
//
// A dry run goes the same way and rolls each scope back: it reports exactly what a run
// at the same time would remove, and removes nothing. A scope that fails is reported in
// the error and the others are still curated; the result holds what was done. The
// scopes in keep are left alone: the operator-curated examples scope holds no user
// data, and its history is what teaches every scope.
func (s *Store) Curate(ctx context.Context, retain time.Duration, dryRun bool, keep ...string) (*Curated, error) {
	if retain <= 0 {
		return nil, fmt.Errorf("curate history: the retention period must be positive, not %s", retain)
	}
	now := s.clock()
	out := &Curated{DryRun: dryRun, RetiredBefore: now.Add(-retain), Scopes: []CuratedScope{}}
	scopes, err := dueScopes(ctx, s.pool, out.RetiredBefore)
	if err != nil {
		return out, err
	}
	var errs []error
	for _, scope := range scopes {
		if slices.Contains(keep, scope) {
			continue
		}
		c := &curation{scope: scope, before: out.RetiredBefore, now: now, dryRun: dryRun,
			out: &CuratedScope{Scope: scope, Counts: map[string]int64{}}}
		if err := c.run(ctx, s); err != nil {
			errs = append(errs, fmt.Errorf("curate history of %q: %w", scope, err))
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if len(c.out.BeliefIDs) > 0 {
			out.Scopes = append(out.Scopes, *c.out)
		}
	}
	return out, errors.Join(errs...)
}

// dueScopes is the scopes holding beliefs retired before the cut, in order. It reads
// belief_retired_at_idx: the due beliefs only, which the run removes.
func dueScopes(ctx context.Context, db querier, before time.Time) ([]string, error) {
	rows, err := db.Query(ctx, `SELECT DISTINCT scope FROM belief
		WHERE status <> 'active' AND retired_at < $1 ORDER BY scope`, before)
	if err != nil {
		return nil, fmt.Errorf("find scopes with history to curate: %w", err)
	}
	scopes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("find scopes with history to curate: %w", err)
	}
	return scopes, nil
}

// curation is the transaction of one scope of a Curate run.
type curation struct {
	tx          pgx.Tx
	scope       string
	before, now time.Time
	dryRun      bool
	out         *CuratedScope

	// sources are the episodes the removed beliefs came from, or whose revision events
	// or review items named them: the episodes to remove once nothing kept comes from
	// them.
	sources []int64
	// redaction redacts the curated beliefs' words in the source episodes that stay, as a
	// purge of those beliefs by id does.
	redaction *purge
}

// run curates the scope, and commits unless it is a dry run or nothing was due (a
// concurrent run may have curated the scope since it was listed).
func (c *curation) run(ctx context.Context, s *Store) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	// The end of a dry run, or of a failed one; a no-op after Commit.
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	c.tx = tx
	c.redaction = &purge{store: s, tx: tx, sel: Selection{Scope: c.scope}, now: c.now,
		out: &Purged{What: PurgedHistory, Counts: c.out.Counts}}
	if err := lockScope(ctx, tx, c.scope); err != nil {
		return err
	}
	if err := c.findBeliefs(ctx); err != nil || len(c.out.BeliefIDs) == 0 {
		return err
	}
	for _, step := range []func(context.Context) error{c.findSources, c.findQuotes, c.keepOpenItems, c.events, c.conflicts, c.relink,
		c.deleteBeliefs, c.entities, c.redactKept, c.deleteEpisodes, c.riverJobs, c.consolidation} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	if c.dryRun {
		return nil
	}
	if c.out.TombstoneID, err = writeTombstone(ctx, tx, PurgedHistory, c.now); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// findBeliefs selects the scope's beliefs retired before the cut, under the lock: a
// belief retired meanwhile by a writer is only due later.
func (c *curation) findBeliefs(ctx context.Context) error {
	rows, err := c.tx.Query(ctx, `SELECT id FROM belief WHERE scope = $1 AND status <> 'active' AND retired_at < $2
		ORDER BY id`, c.scope, c.before)
	if err != nil {
		return fmt.Errorf("find retired beliefs: %w", err)
	}
	if c.out.BeliefIDs, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
		return fmt.Errorf("find retired beliefs: %w", err)
	}
	return nil
}

func (c *curation) findSources(ctx context.Context) error {
	// Every statement of a curation names its scope: on Citus it stays on the scope's shard.
	rows, err := c.tx.Query(ctx, `SELECT episode_id FROM belief WHERE scope = $2 AND id = ANY($1)
		UNION SELECT episode_id FROM revision_event WHERE scope = $2 AND (old_belief_id = ANY($1) OR new_belief_id = ANY($1))
		UNION SELECT episode_id FROM belief_conflict WHERE scope = $2 AND (target_belief_id = ANY($1) OR belief_id = ANY($1))`,
		c.out.BeliefIDs, c.scope)
	if err != nil {
		return fmt.Errorf("find source episodes: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[*int64])
	if err != nil {
		return fmt.Errorf("find source episodes: %w", err)
	}
	for _, id := range ids {
		if id != nil {
			c.sources = append(c.sources, *id)
		}
	}
	return nil
}

// findQuotes reads, before the beliefs and their events go, their statements and what
// they quoted of each source episode: the spans a redaction of a kept episode replaces.
func (c *curation) findQuotes(ctx context.Context) error {
	p := c.redaction
	p.beliefs, p.sel.IDs = c.out.BeliefIDs, c.out.BeliefIDs
	if err := p.findNeedles(ctx); err != nil {
		return err
	}
	// The sources that hold their words: those they were drawn from or that restated
	// them, and those whose transcript holds a statement.
	rows, err := c.tx.Query(ctx, `SELECT e.id FROM episode e WHERE e.scope = $2 AND e.id = ANY($1) AND e.state <> 'pending'
			AND (e.id IN (SELECT episode_id FROM belief WHERE scope = $2 AND id = ANY($3))
				OR e.id IN (SELECT episode_id FROM revision_event WHERE scope = $2 AND action = 'reinforce' AND old_belief_id = ANY($3))
				OR `+mentionsJSON("e.messages", "$4")+`)
		ORDER BY e.id`, c.sources, c.scope, c.out.BeliefIDs, p.needles)
	if err != nil {
		return fmt.Errorf("read source episodes: %w", err)
	}
	if p.episodes, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
		return fmt.Errorf("read source episodes: %w", err)
	}
	return p.findQuotes(ctx)
}

// redactKept redacts the curated beliefs' words in the source episodes that kept beliefs
// still come from, and in the kept beliefs' quotes and events' excerpts copied from
// them, as a purge does ("every copy of their text"); such an episode that cannot be
// redacted completely is deleted with the others.
func (c *curation) redactKept(ctx context.Context) error {
	if err := c.redaction.scrubKept(ctx); err != nil {
		return err
	}
	return c.redaction.redactEpisodes(ctx)
}

// keepOpenItems unlinks the open review items of kept beliefs from the bases that go:
// the belief still awaits its review (and keeps its needs_review flag), and the item
// names no removed id, in its columns or its detail.
func (c *curation) keepOpenItems(ctx context.Context) error {
	// Concatenation, not format(): Citus refuses a STABLE function of a column in an UPDATE.
	_, err := c.tx.Exec(ctx, `UPDATE belief_conflict i SET target_belief_id = NULL,
			detail = 'a belief it was concluded from was ' || t.status
		FROM belief t
		WHERE i.scope = $2 AND t.scope = $2 AND t.id = i.target_belief_id AND t.id = ANY($1)
			AND i.kind = 'basis_changed' AND i.status = 'open' AND NOT i.belief_id = ANY($1)`, c.out.BeliefIDs, c.scope)
	if err != nil {
		return fmt.Errorf("keep open review items: %w", err)
	}
	return nil
}

func (c *curation) events(ctx context.Context) error {
	return c.exec(ctx, "revision_event", "DELETE FROM revision_event WHERE scope = $2 AND (old_belief_id = ANY($1) OR new_belief_id = ANY($1))",
		c.out.BeliefIDs, c.scope)
}

func (c *curation) conflicts(ctx context.Context) error {
	return c.exec(ctx, "belief_conflict", "DELETE FROM belief_conflict WHERE scope = $2 AND (target_belief_id = ANY($1) OR belief_id = ANY($1))",
		c.out.BeliefIDs, c.scope)
}

func (c *curation) relink(ctx context.Context) error {
	n, err := relinkOver(ctx, c.tx, c.scope, c.out.BeliefIDs, c.now)
	c.out.Relinked = n
	return err
}

// entities erases the entities no belief is about any more, with their names.
func (c *curation) entities(ctx context.Context) error {
	return dropEntities(ctx, dropParams{Scope: c.scope}, c.exec)
}

// deleteBeliefs removes the beliefs; their dependency rows go with them (ON DELETE
// CASCADE).
func (c *curation) deleteBeliefs(ctx context.Context) error {
	return c.exec(ctx, "belief", "DELETE FROM belief WHERE scope = $2 AND id = ANY($1)", c.out.BeliefIDs, c.scope)
}

// deleteEpisodes removes the source episodes no kept belief comes from, and those that
// held the removed beliefs' words and could not be redacted. A pending episode stays: it
// is still to be extracted.
func (c *curation) deleteEpisodes(ctx context.Context) error {
	rows, err := c.tx.Query(ctx, `SELECT e.id FROM episode e WHERE e.id = ANY($1) AND e.scope = $2 AND e.state <> 'pending'
			AND NOT e.id = ANY($3)
			AND (e.id = ANY($4) OR NOT EXISTS (SELECT 1 FROM belief b WHERE b.scope = $2 AND b.episode_id = e.id))
		ORDER BY e.id FOR UPDATE`, c.sources, c.scope, append([]int64{}, c.redaction.redacted...), append([]int64{}, c.redaction.episodes...))
	if err != nil {
		return fmt.Errorf("purge episode: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("purge episode: %w", err)
	}
	// The events and review items that came from them stay, without the link.
	if err := unlinkEpisodes(ctx, c.tx, c.scope, ids); err != nil {
		return err
	}
	if _, err := c.tx.Exec(ctx, "DELETE FROM episode WHERE scope = $1 AND id = ANY($2)", c.scope, ids); err != nil {
		return fmt.Errorf("purge episode: %w", err)
	}
	c.out.EpisodeIDs = ids
	c.out.Counts["episode"] += int64(len(ids))
	return nil
}

// consolidation forgets the scope's judged clusters, as a purge does: a cluster judged
// while a removed belief was current named it.
func (c *curation) consolidation(ctx context.Context) error {
	if err := forgetCommonWords(ctx, c.tx, c.scope); err != nil {
		return err
	}
	return c.exec(ctx, "consolidation_judgment", "DELETE FROM consolidation_judgment WHERE scope = $1", c.scope)
}

func (c *curation) exec(ctx context.Context, table, sql string, args ...any) error {
	tag, err := c.tx.Exec(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("purge %s: %w", table, err)
	}
	c.out.Counts[table] += tag.RowsAffected()
	return nil
}
