package memory

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPurgeSubtree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	seed := func(scope, statement string) {
		ep := insertEpisode(t, bundle, scope, "I said: "+statement, "2026-01-05")
		insertJob(t, bundle, "credo.extract_scope", map[string]any{"scope": scope})
		mustApply(t, store, &Batch{Scope: scope, Origin: RevisionExtraction, EpisodeID: &ep, At: day("2026-01-05"),
			Facts: []Fact{fact(statement, "note", "")}})
	}
	seed("acme/user:1", "Quokka note one")
	seed("acme/user:2", "Quokka note two")
	seed("acme/team:x/user:3", "Quokka note three")
	seed("acme", "Organisation keeps its default")
	seed("acmecorp/user:1", "Another tenant keeps its note")
	insertEpisode(t, bundle, "acme/user:4", "Quokka pending only", "2026-01-06") // a scope with episodes only

	got, err := store.PurgeSubtree(ctx, "acme/")
	require.NoError(t, err)
	scopes := make([]string, len(got.Scopes))
	for i, s := range got.Scopes {
		scopes[i] = s.Scope
		require.Equal(t, PurgedScope, s.What)
		require.Positive(t, s.TombstoneID, "one tombstone per scope")
	}
	require.Equal(t, []string{"acme/team:x/user:3", "acme/user:1", "acme/user:2", "acme/user:4"}, scopes)
	require.EqualValues(t, 3, got.Counts["belief"])
	require.EqualValues(t, 4, got.Counts["episode"])
	require.Empty(t, mentions(t, bundle, "quokka"), "no copy of the subtree's text is left")
	require.Equal(t, 4, count(t, bundle, "purge_tombstone"))

	for _, scope := range []string{"acme", "acmecorp/user:1"} {
		current, err := store.Current(ctx, scope)
		require.NoError(t, err)
		require.Len(t, current, 1, "%s is not under acme/", scope)
	}

	again, err := store.PurgeSubtree(ctx, "acme/")
	require.NoError(t, err)
	require.Empty(t, again.Scopes, "nothing left to erase")
}

// A scope whose last belief and episode went in partial purges is still named by rows
// (its watermark, its user entity, a job): a whole-scope purge, of it or of its subtree,
// erases them, and only then is it unknown.
func TestPurgeWholeScopeEmptiedByPartialPurges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	for _, scope := range []string{"acme/user:zeb", "acme/user:amy"} {
		mustApply(t, store, extraction(scope, "2026-01-05", nil, fact("User's locker is 12", "locker", "")))
		_, err := bundle.schema.Pool.Exec(ctx, "INSERT INTO scope_consolidation (scope, watermark) VALUES ($1, now())", scope)
		require.NoError(t, err)
		insertJob(t, bundle, "credo.consolidate", map[string]string{"scope": scope})
		_, err = store.Purge(ctx, Selection{Scope: scope, Match: "locker"})
		require.NoError(t, err)
		require.Zero(t, count(t, bundle, "belief WHERE scope = '"+scope+"'"))
		require.NotEmpty(t, mentions(t, bundle, scope), "rows still name it")
	}

	scopes, err := store.ErasableScopes(ctx, "acme/")
	require.NoError(t, err)
	require.Equal(t, []string{"acme/user:amy", "acme/user:zeb"}, scopes)

	purged, err := store.Purge(ctx, Selection{Scope: "acme/user:zeb", All: true})
	require.NoError(t, err)
	require.EqualValues(t, 1, purged.Counts["scope_consolidation"])
	require.Empty(t, mentions(t, bundle, "acme/user:zeb"))
	_, err = store.Purge(ctx, Selection{Scope: "acme/user:zeb", All: true})
	require.ErrorIs(t, err, ErrNotFound, "nothing names it any more")

	sub, err := store.PurgeSubtree(ctx, "acme/")
	require.NoError(t, err)
	require.Len(t, sub.Scopes, 1)
	require.Equal(t, "acme/user:amy", sub.Scopes[0].Scope)
	require.Empty(t, mentions(t, bundle, "acme/"))
}

// A subtree purge that starts while an import writes into the subtree waits for it and
// erases what it imported: it never answers that nothing was there while the import
// then commits.
func TestPurgeSubtreeWaitsForAnImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	mustApply(t, store, extraction("src", "2026-01-05", nil, fact("User keeps bees", "hobby", "")))
	sc, _ := exportOf(t, store, "src", "acme/user:new")
	require.NoError(t, store.CheckImport(ctx, []*ScopeImport{sc}))

	tx, err := bundle.schema.Pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = store.ImportTx(ctx, tx, sc, nil)
	require.NoError(t, err)

	type result struct {
		out *SubtreePurged
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := store.PurgeSubtree(ctx, "acme/")
		done <- result{out, err}
	}()
	var got result
	select {
	case got = <-done: // it answered while the import was still writing: wrong
	case <-time.After(500 * time.Millisecond):
		// Still waiting, as it must: the import commits, then the purge goes on.
		require.NoError(t, tx.Commit(ctx))
		got = <-done
	}
	require.NoError(t, got.err)
	require.Len(t, got.out.Scopes, 1, "the import committed first: its scope is erased")
	require.Equal(t, "acme/user:new", got.out.Scopes[0].Scope)
	require.Empty(t, mentions(t, bundle, "acme/user:new"))
}
