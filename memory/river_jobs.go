package memory

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// The only SQL on River's table, river_job, is here. River's schema is not a public
// contract, and everything else reads and writes jobs through River's client; erasure
// cannot. A purge must take every job row that names the scope or quotes its words
// (arguments, metadata, errors, tags), in the purge's own transaction, under the scope's
// lock, and memory holds no River client; River's JobDeleteManyTx could only take the
// same filter as raw SQL (Where), which would move the statement, not remove it.
// Curation and a job of an erased scope go with them. A River upgrade that changes
// river_job is checked here, and by memory's purge tests.

// riverJobs deletes the jobs of purged episodes (and, for a scope, the jobs of the
// scope), and jobs mentioning the purged text. The jobs of episodes redacted later go
// too: only jobs of earlier versions name an episode, all they do is make sure the
// scope has its job (as Reconcile does), and their errors may quote the transcript,
// purged words included, where the search for the purged text would miss them. A job
// of another scope, known by its episode or its scope argument, is that scope's
// business and is never touched. A running job of the scope is let finish (it finds
// nothing left and completes; River's cleaner removes it later): deleting its row under
// it would let a second job of the scope start beside it. A job of the scope also goes
// when it mentions a purged quote: its errors may quote the model's answer.
func (p *purge) riverJobs(ctx context.Context) error {
	episodes := make([]string, len(p.episodes))
	for i, id := range p.episodes {
		episodes[i] = strconv.FormatInt(id, 10)
	}
	foreign, err := p.foreignJobEpisodes(ctx)
	if err != nil {
		return err
	}
	return p.exec(ctx, "river_job", `DELETE FROM river_job j WHERE NOT (j.state = 'running' AND j.args->>'scope' = $1)
		AND (j.args->>'episode_id' = ANY($2)
		OR ($4 AND j.args->>'scope' = $1)
		OR (coalesce(j.args->>'scope', $1) = $1
			AND NOT coalesce(`+jobEpisode+` = ANY($6), false)
			AND (`+mentionsJSON("j.args", "$3")+`
				OR `+mentionsJSON("j.metadata", "$3")+`
				OR `+mentionsJSON("to_jsonb(j.errors)", "$3")+`
				OR `+mentionsText("array_to_string(j.tags, ' ')", "$3")+`))
		OR (j.args->>'scope' = $1 AND (`+mentionsJSON("j.metadata", "$5")+` OR `+mentionsJSON("to_jsonb(j.errors)", "$5")+`)))`,
		p.sel.Scope, episodes, p.needles, p.sel.All, p.purgedQuotes(), foreign)
}

// jobEpisode is the episode a River job j names in its arguments, or NULL.
const jobEpisode = `CASE WHEN j.args->>'episode_id' ~ '^[0-9]{1,18}$' THEN (j.args->>'episode_id')::bigint END`

// foreignJobEpisodes is the episodes of other scopes named by jobs that riverJobs could
// take for the purged scope's (no scope argument, or this one): their jobs are left
// alone. River's table is the coordinator's, the episodes are sharded: the jobs are read
// first, and the episodes they name, found on any shard, only when there are some (jobs
// of earlier versions, which named their episode): otherwise nothing leaves the scope.
func (p *purge) foreignJobEpisodes(ctx context.Context) ([]int64, error) {
	rows, err := p.tx.Query(ctx, `SELECT DISTINCT `+jobEpisode+` FROM river_job j
		WHERE coalesce(j.args->>'scope', $1) = $1 AND `+jobEpisode+` IS NOT NULL`, p.sel.Scope)
	if err != nil {
		return nil, fmt.Errorf("read the episodes of jobs: %w", err)
	}
	named, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(named) == 0 {
		return nil, err
	}
	rows, err = p.tx.Query(ctx, "SELECT id FROM episode WHERE id = ANY($1) AND scope <> $2", named, p.sel.Scope)
	if err != nil {
		return nil, fmt.Errorf("find the scopes of jobs' episodes: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// riverJobs removes the jobs of the removed episodes, found by River's index on args
// (an id as a JSON number or string). A running job is let finish, as Purge does: it
// finds its episode gone.
func (c *curation) riverJobs(ctx context.Context) error {
	args := make([]string, 0, 2*len(c.out.EpisodeIDs))
	for _, id := range c.out.EpisodeIDs {
		n := strconv.FormatInt(id, 10)
		args = append(args, `{"episode_id": `+n+`}`, `{"episode_id": "`+n+`"}`)
	}
	return c.exec(ctx, "river_job", "DELETE FROM river_job WHERE args @> ANY($1::jsonb[]) AND state <> 'running'", args)
}

// DropJobOfErasedScope deletes the row of job, a job of scope just completed in tx, when
// the scope holds no episode and no belief any more: a purge erased it while the job
// ran, and let the job finish rather than delete its row under it. The row, whose
// arguments name the scope, then goes with the job instead of staying until River's
// cleaner removes it a day later. River finds no row to mark completed, and skips it.
func (s *Store) DropJobOfErasedScope(ctx context.Context, tx pgx.Tx, jobID int64, scope string) (bool, error) {
	tag, err := tx.Exec(ctx, `DELETE FROM river_job WHERE id = $1
		AND NOT EXISTS (SELECT 1 FROM episode WHERE scope = $2) AND NOT EXISTS (SELECT 1 FROM belief WHERE scope = $2)`,
		jobID, scope)
	if err != nil {
		return false, fmt.Errorf("drop job %d of erased scope: %w", jobID, err)
	}
	return tag.RowsAffected() > 0, nil
}

// jobScopes is the scopes that River's jobs name in their scope argument, as q asks
// (namedScopes), of the jobs a purge of the scope deletes: not a running one, let
// finish, nor a completed one, which River's cleaner removes. River's table is the
// coordinator's on Citus: a statement of its own. One scope is found by River's GIN
// index on args.
func jobScopes(ctx context.Context, tx pgx.Tx, q ScopeNames) ([]string, error) {
	sql, arg := `SELECT DISTINCT args->>'scope' FROM river_job
		WHERE starts_with(args->>'scope', $1) AND state NOT IN ('running', 'completed')`, q.Prefix
	if q.Scope != "" {
		sql, arg = `SELECT $1::text WHERE EXISTS (SELECT 1 FROM river_job
			WHERE args @> jsonb_build_object('scope', $1::text) AND state NOT IN ('running', 'completed'))`, q.Scope
	}
	rows, err := tx.Query(ctx, sql, arg)
	if err != nil {
		return nil, fmt.Errorf("scopes of jobs: %w", err)
	}
	scopes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("scopes of jobs: %w", err)
	}
	return scopes, nil
}
