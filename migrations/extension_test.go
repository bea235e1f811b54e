package migrations_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/migrations"
)

// A database whose owner may not create the vector extension is told what to do, before
// any table is made.
func TestMigrateWithoutTheExtension(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "credo_noext_" + hex.EncodeToString(b)
	admin, err := pgx.Connect(ctx, dbtest.URL())
	require.NoError(t, err)
	for _, sql := range []string{"CREATE ROLE " + name + " LOGIN", "CREATE DATABASE " + name + " OWNER " + name} {
		_, err := admin.Exec(ctx, sql)
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		_, _ = admin.Exec(context.Background(), "DROP ROLE IF EXISTS "+name)
		_ = admin.Close(context.Background())
	})

	u, err := url.Parse(dbtest.URL())
	require.NoError(t, err)
	u.User, u.Path = url.User(name), "/"+name
	pool, err := pgxpool.New(ctx, u.String())
	require.NoError(t, err)
	defer pool.Close()

	err = migrations.Migrate(ctx, pool, nil)
	require.ErrorIs(t, err, migrations.ErrExtension)
	require.ErrorContains(t, err, "CREATE EXTENSION vector")
	var tables int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&tables))
	require.Zero(t, tables, "nothing was created")
}
