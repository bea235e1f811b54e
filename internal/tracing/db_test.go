package tracing_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/internal/tracing"
	"github.com/credohq/credo/internal/tracing/tracingtest"
)

func TestStatementName(t *testing.T) {
	t.Parallel()
	for sql, want := range map[string]string{
		"SELECT id, statement FROM belief WHERE scope = $1":                                   "SELECT belief",
		"\n\t\tselect count(*) from credo.episode where scope = $1":                           "SELECT credo.episode",
		"INSERT INTO episode (scope, messages) VALUES ($1, $2)":                               "INSERT episode",
		"UPDATE episode SET state = 'applied' WHERE id = $1":                                  "UPDATE episode",
		"DELETE FROM belief WHERE scope = $1":                                                 "DELETE belief",
		"WITH x AS (SELECT 1) SELECT * FROM x":                                                "WITH x",
		"SELECT EXISTS (SELECT 1 FROM episode WHERE scope = $1)":                              "SELECT episode",
		"SELECT count(pg_advisory_xact_lock(k)) FROM (SELECT DISTINCT hashtext(s) AS k) AS x": "SELECT",
		"SELECT 1": "SELECT",
		"-- name: JobGetAvailable :many\nWITH locked_jobs AS (SELECT * FROM river_job)":                                       "JobGetAvailable",
		"/* a comment */ DELETE FROM river_job WHERE id = $1":                                                                 "DELETE river_job",
		"CREATE INDEX CONCURRENTLY belief_scope_ab12_idx ON belief USING hnsw ((embedding::vector(8))) WHERE scope = 'alice'": "CREATE INDEX",
		"SET maintenance_work_mem = '512MB'":                                                                                  "SET",
		"SELECT * FROM unnest($1::text[]) AS s":                                                                               "SELECT unnest",
		"SELECT * FROM 'alice'":                                                                                               "SELECT",
		"":                                                                                                                    "SQL",
		"'alice'":                                                                                                             "SQL",
	} {
		require.Equal(t, want, tracing.StatementName(sql), sql)
	}
}

// The statements run under a span are its children, named for what they do, with
// neither their arguments nor their text; those under none are not traced.
func TestPoolTracing(t *testing.T) {
	t.Parallel()
	schema := dbtest.New(t)
	rec := tracingtest.New(t, false)
	ctx := context.Background()
	pc, err := pgxpool.ParseConfig(schema.URL)
	require.NoError(t, err)
	rec.ConfigurePool(pc)
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	require.NoError(t, err)
	defer pool.Close()

	var n int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM episode WHERE scope = $1", "untraced-scope").Scan(&n))
	require.Empty(t, rec.Spans(t), "no span: no trace")

	tctx, root := rec.Root(ctx, "beliefs episodes")
	require.NoError(t, pool.QueryRow(tctx, "SELECT count(*) FROM episode WHERE scope = $1", "alice").Scan(&n))
	root.End()
	spans := rec.Spans(t)
	s := spans.One(t, "SELECT episode")
	require.Equal(t, root.SpanContext().SpanID(), s.Parent.SpanID())
	texts := strings.Join(tracingtest.Texts(s), " ")
	require.NotContains(t, texts, "alice")
	require.NotContains(t, texts, "WHERE", "the statement's text is not recorded")
}
