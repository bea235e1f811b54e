package migrations_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/migrations"
)

// TestScopeKeysMigration: migration 010 moves a database the previous version filled to
// keys that lead with scope, keeps every row, fills each dependency's scope from its
// belief, and goes down and up again.
func TestScopeKeysMigration(t *testing.T) {
	t.Parallel()
	dbtest.SkipOnCitus(t, preCitusSchema)
	ctx := context.Background()
	schema := dbtest.New(t)
	db := schema.Pool
	require.NoError(t, migrations.MigrateDownTo(ctx, db, 9))

	// What the previous version held: two scopes, each with an episode, a superseded
	// belief and its successor, a belief concluded from the successor, the revision
	// event, and a review item.
	for _, scope := range []string{"user:1", "user:2"} {
		_, err := db.Exec(ctx, `WITH ep AS (
				INSERT INTO episode (scope, messages, content_hash, occurred_at, state)
				VALUES ($1, '[]', 'h', now(), 'applied') RETURNING id
			), next AS (
				INSERT INTO belief (scope, subject, attribute, kind, statement, confidence, origin, valid_from, recorded_at, last_seen_at, episode_id)
				SELECT $1, 'user', 'home', 'attribute', 'User lives in Miami', 0.9, 'user_stated', now(), now(), now(), ep.id FROM ep RETURNING id
			), old AS (
				INSERT INTO belief (scope, subject, attribute, kind, statement, status, confidence, origin, valid_from, valid_until, recorded_at, retired_at, last_seen_at, superseded_by, episode_id)
				SELECT $1, 'user', 'home', 'attribute', 'User lives in Boston', 'superseded', 0.9, 'user_stated', now(), now(), now(), now(), now(), next.id, ep.id FROM next, ep RETURNING id
			), concluded AS (
				INSERT INTO belief (scope, subject, attribute, kind, statement, confidence, origin, valid_from, recorded_at, last_seen_at)
				VALUES ($1, 'user', 'climate', 'attribute', 'User lives somewhere warm', 0.6, 'inferred', now(), now(), now()) RETURNING id
			), dep AS (
				INSERT INTO belief_dependency (belief_id, basis_id) SELECT concluded.id, next.id FROM concluded, next
			), ev AS (
				INSERT INTO revision_event (scope, action, reason, origin, old_belief_id, new_belief_id, old_statement, new_statement, episode_id, created_at)
				SELECT $1, 'supersede', 'correction', 'extraction', old.id, next.id, 'User lives in Boston', 'User lives in Miami', ep.id, now() FROM old, next, ep
			)
			INSERT INTO belief_conflict (scope, kind, origin, action, reason, belief_id, target_belief_id, detail, episode_id, created_at)
			SELECT $1, 'basis_changed', 'extraction', 'retract', 'correction', concluded.id, next.id, 'its basis changed', ep.id, now()
			FROM concluded, next, ep`, scope)
		require.NoError(t, err)
	}
	// Columns later migrations add (011's progress, 015's trace, 017's redactions, 020's
	// halfvec, 021's entity, 029's words) are left out: what 010 kept is compared.
	const snapshot = `SELECT (SELECT jsonb_agg(to_jsonb(e) - 'progress_message' - 'progress_offset' - 'trace_parent' - 'redactions' ORDER BY id) FROM episode e),
		(SELECT jsonb_agg(to_jsonb(b) - 'embedding_half' - 'entity' - 'words' ORDER BY id) FROM belief b),
		(SELECT jsonb_agg(to_jsonb(r) ORDER BY id) FROM revision_event r),
		(SELECT jsonb_agg(to_jsonb(c) ORDER BY id) FROM belief_conflict c),
		(SELECT jsonb_agg(jsonb_build_object('belief_id', belief_id, 'basis_id', basis_id) ORDER BY belief_id, basis_id) FROM belief_dependency)`
	read := func() []string {
		out := make([]string, 5)
		row := db.QueryRow(ctx, snapshot)
		require.NoError(t, row.Scan(&out[0], &out[1], &out[2], &out[3], &out[4]))
		return out
	}
	before := read()

	require.NoError(t, migrations.Migrate(ctx, db, nil))
	require.Equal(t, before, read(), "every row kept as it was")

	var mismatched int
	require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM belief_dependency d JOIN belief b ON b.id = d.belief_id
		WHERE d.scope IS DISTINCT FROM b.scope`).Scan(&mismatched))
	require.Zero(t, mismatched, "each dependency has its belief's scope")

	keys := func() map[string]string {
		rows, err := db.Query(ctx, `SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint
			WHERE connamespace = $1::regnamespace AND contype IN ('p', 'f')`, schema.Name)
		require.NoError(t, err)
		type constraint struct{ Name, Def string }
		defs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[constraint])
		require.NoError(t, err)
		out := map[string]string{}
		for _, d := range defs {
			out[d.Name] = d.Def
		}
		return out
	}
	got := keys()
	for _, table := range []string{"episode", "belief", "revision_event", "belief_conflict"} {
		require.Equal(t, "PRIMARY KEY (scope, id)", got[table+"_pkey"], table)
	}
	require.Equal(t, "PRIMARY KEY (scope, belief_id, basis_id)", got["belief_dependency_pkey"])
	require.Equal(t, "FOREIGN KEY (scope, episode_id) REFERENCES episode(scope, id)", got["belief_episode_id_fkey"])
	require.Equal(t, "FOREIGN KEY (scope, basis_id) REFERENCES belief(scope, id) ON DELETE CASCADE", got["belief_dependency_basis_id_fkey"])
	for name, def := range got {
		// A reference to a scope-less (reference) table, such as a session's key, has no
		// scope to carry.
		if strings.HasPrefix(def, "FOREIGN KEY") && !strings.Contains(def, "REFERENCES api_key(") {
			require.Contains(t, def, "FOREIGN KEY (scope, ", "%s stays in its scope", name)
		}
	}

	// A reference to another scope's row is refused now.
	var otherBelief int64
	require.NoError(t, db.QueryRow(ctx, "SELECT min(id) FROM belief WHERE scope = 'user:2'").Scan(&otherBelief))
	_, err := db.Exec(ctx, "UPDATE belief SET superseded_by = $1 WHERE scope = 'user:1' AND superseded_by IS NOT NULL", otherBelief)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	require.Equal(t, "23503", pgErr.Code, "foreign_key_violation")

	// An episode is removed only once nothing names it (memory clears the references).
	_, err = db.Exec(ctx, "DELETE FROM episode WHERE scope = 'user:1'")
	require.ErrorAs(t, err, &pgErr)
	require.Equal(t, "23503", pgErr.Code, "foreign_key_violation")

	// Down and up again: every row still there.
	kept := read()
	require.NoError(t, migrations.MigrateDownTo(ctx, db, 9))
	require.Equal(t, kept, read())
	require.Equal(t, "PRIMARY KEY (id)", keys()["belief_pkey"])
	require.NoError(t, migrations.Migrate(ctx, db, nil))
	require.Equal(t, kept, read())
	pending, err := migrations.Pending(ctx, db)
	require.NoError(t, err)
	require.Empty(t, pending)
}
