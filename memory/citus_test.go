//go:build citus

package memory

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/internal/testclock"
)

// TestCitusRouter: every per-scope path of the store is a single-shard (router) query
// or transaction on Citus. The store runs on a pool where any multi-shard query is an
// error (citus.multi_task_query_log_level = error), so a query that forgets its scope
// fails here.
func TestCitusRouter(t *testing.T) {
	dbtest.RequireCitus(t)
	ctx := context.Background()
	schema := dbtest.New(t)
	clock := testclock.New(day("2026-06-01"))
	store := NewStore(schema.RouterPool(t), &Config{Now: clock.Now})
	const scope, model = "acme/user:1", "m"
	// Registering a model writes a reference table: once, before the per-scope paths.
	require.NoError(t, NewStore(schema.Pool, nil).EnsureEmbeddingModel(ctx, model, 3))

	embedded := func(f Fact, vec ...float32) Fact {
		f.Embedding = vec
		return f
	}
	batch := func(at string, candidates []int64, facts ...Fact) *Batch {
		b := extraction(scope, at, candidates, facts...)
		b.EmbedModel = model
		return b
	}

	// Extraction: apply, then the candidates of the next episode, then a revision.
	first := mustApply(t, store, batch("2026-01-15", nil,
		embedded(fact(nyc, "location", ""), 1, 0, 0),
		embedded(fact("User likes tea", "drink", ""), 0, 1, 0)))
	nycID := first.Facts[0].BeliefID
	near, err := store.Nearest(ctx, scope, model, []float32{1, 0.1, 0}, 5)
	require.NoError(t, err)
	require.Equal(t, nycID, near[0].ID)
	_, err = store.ActiveWithAttributes(ctx, scope, []string{"location"}, nil, 5)
	require.NoError(t, err)
	_, err = store.NearestEvents(ctx, scope, model, []float32{1, 0, 0}, 3)
	require.NoError(t, err)
	// A belief concluded from the first home: its review item opens when that goes.
	coast := fact("User lives on the east coast", "coast", "")
	coast.Origin, coast.DependsOn = OriginInferred, []int{0}
	mustApply(t, store, batch("2026-01-16", []int64{nycID}, embedded(coast, 0, 0, 1)))
	second := mustApply(t, store, batch("2026-03-20", []int64{nycID},
		embedded(resolves(fact(miami, "location", "2026-02-20"), 0, ActionSupersede, ReasonTemporal), 0.9, 0.1, 0)))
	require.Equal(t, OutcomeSuperseded, second.Facts[0].Kind)

	// A supersession dated before the scope's head is placed in the chain, which is read
	// recursively on the scope's shard.
	const other = "acme/user:9"
	home := mustApply(t, store, extraction(other, "2026-01-15", nil, fact(nyc, "location", ""))).Facts[0].BeliefID
	mustApply(t, store, extraction(other, "2026-03-20", []int64{home}, resolves(fact(miami, "location", "2026-02-20"), 0, ActionSupersede, ReasonTemporal)))
	placed := mustApply(t, store, extraction(other, "2026-04-01", []int64{home},
		resolves(fact("User lives in Boston", "location", "2026-02-01"), 0, ActionSupersede, ReasonTemporal)))
	require.Equal(t, OutcomeBackfilled, placed.Facts[0].Kind)

	// Reads of the scope.
	for name, read := range map[string]func() ([]Belief, error){
		"current": func() ([]Belief, error) { return store.Current(ctx, scope) },
		"all":     func() ([]Belief, error) { return store.All(ctx, scope) },
		"as of":   func() ([]Belief, error) { return store.AsOf(ctx, scope, day("2026-02-01")) },
		"known":   func() ([]Belief, error) { return store.KnownAt(ctx, scope, day("2026-06-02")) },
	} {
		bs, err := read()
		require.NoError(t, err, name)
		require.NotEmpty(t, bs, name)
	}
	events, err := store.Events(ctx, scope, 0)
	require.NoError(t, err)
	require.Len(t, events, 1)
	items, err := store.Conflicts(ctx, scope, false)
	require.NoError(t, err)
	require.Len(t, items, 1, "the east coast's basis changed")
	_, err = store.Snapshot(ctx, scope)
	require.NoError(t, err)
	rec, err := store.Recall(ctx, RecallQuery{Scope: scope, Text: "where does the user live?", Vector: []float32{1, 0, 0}, EmbedModel: model})
	require.NoError(t, err)
	require.NotEmpty(t, rec.Beliefs)
	// An inherited read is one router query per ancestor.
	_, err = store.Recall(ctx, RecallQuery{Scope: scope, Text: "where does the user live?", Vector: []float32{1, 0, 0}, EmbedModel: model, Inherit: true})
	require.NoError(t, err)

	history, err := store.Recall(ctx, RecallQuery{Scope: scope, Text: "where did the user live?", Vector: []float32{1, 0, 0},
		EmbedModel: model, History: true})
	require.NoError(t, err)
	require.Len(t, history.Beliefs, 4, "both homes, chained, the coast and the tea")

	// The inspector's and the CLI's reads of the scope.
	ids := []int64{nycID, second.Facts[0].BeliefID}
	about, err := store.EventsAbout(ctx, scope, ids)
	require.NoError(t, err)
	require.Len(t, about, 1)
	_, err = store.Episodes(ctx, EpisodeQuery{Scope: scope})
	require.NoError(t, err)
	_, _, err = store.Unprocessed(ctx, scope)
	require.NoError(t, err)
	_, err = store.Unembedded(ctx, scope, model, 10)
	require.NoError(t, err)
	_, err = store.ScopeIndexDue(ctx, scope, model)
	require.NoError(t, err)

	// Consolidation's reads of the scope.
	_, err = store.Neighbors(ctx, NeighborQuery{Scope: scope, Model: model, Seeds: []int64{second.Facts[0].BeliefID}, K: 3, MaxDistance: 1})
	require.NoError(t, err)
	_, err = store.ChangedSince(ctx, scope, model, day("2026-01-01"), 10)
	require.NoError(t, err)
	_, err = store.Flagged(ctx, scope, 10)
	require.NoError(t, err)
	// Its count of a scope's common words, here of a scope grown past MaxTermBeliefs.
	const grown = "acme/user:7"
	notes := make([]dbtest.Row, MaxTermBeliefs+1)
	for i := range notes {
		notes[i] = dbtest.Row{Scope: grown, Statement: "User keeps note " + strconv.Itoa(i), Vector: []float32{0, 1, 0}}
	}
	dbtest.InsertBeliefs(t, schema.Pool, model, notes)
	common, err := store.CountCommonWords(ctx, grown)
	require.NoError(t, err)
	require.True(t, common.Counted)
	// Extraction's candidates, fused with the transcript's words and entities.
	_, err = store.Candidates(ctx, CandidatesQuery{Scope: scope, Text: "I moved to Miami", Model: model, Vector: []float32{1, 0, 0}, K: 5})
	require.NoError(t, err)

	// Resolving a review item.
	// With the scope, as the API and the inspector know it, the whole decision is the
	// scope's transaction; without it the scope is first found by id on every shard.
	_, err = store.Decide(ctx, Decision{ID: items[0].ID, Verdict: VerdictDismiss})
	require.ErrorContains(t, err, "multi-task query", "a lookup by id alone reads every shard")
	decided, err := store.Decide(ctx, Decision{ID: items[0].ID, Scope: scope, Verdict: VerdictDismiss, Note: "still east"})
	require.NoError(t, err)
	require.Equal(t, "resolved", decided.Item.Status)

	// The audit of the scope.
	audit, err := store.Audit(ctx, AuditQuery{Scope: scope})
	require.NoError(t, err)
	require.NotEmpty(t, audit.Revisions)

	// Lookups by id: an id's scope is found by one index probe on each shard (ScopeOf,
	// the one multi-shard read, bounded by the shard count), then every read names it.
	for _, what := range []string{OfBelief, OfEpisode, OfItem, OfEvent} {
		_, err := store.ScopeOf(ctx, what, 1)
		require.ErrorContains(t, err, "multi-task query", "%s: an id alone reads every shard", what)
	}
	// A shard of a few rows is read whole, cheaper than its index: seq scans are priced
	// out, on the shards too, so the plan shows whether an index serves the probe.
	tx, err := schema.Pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	require.NoError(t, setLocal(ctx, tx, setting{"enable_seqscan", "off"}))
	rows, err := tx.Query(ctx, "EXPLAIN SELECT scope FROM belief WHERE id = 1")
	require.NoError(t, err)
	planLines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.NoError(t, tx.Rollback(ctx))
	plan := strings.Join(planLines, "\n")
	require.Contains(t, plan, "Task Count: 4", "one task per shard")
	require.Contains(t, plan, "belief_id_idx", "each an index probe")
	b, err := store.GetIn(ctx, scope, nycID)
	require.NoError(t, err)
	require.Equal(t, nycID, b.ID)
	chain, err := store.HistoryIn(ctx, scope, nycID)
	require.NoError(t, err)
	require.Len(t, chain, 2, "the recursive read of the chain stays on the shard")
	_, err = store.EventIn(ctx, scope, events[0].ID)
	require.NoError(t, err)
	_, err = store.ConflictIn(ctx, scope, items[0].ID)
	require.NoError(t, err)
	_, err = store.EpisodeIn(ctx, scope, 1)
	require.ErrorIs(t, err, ErrNotFound, "no episode here, and no other shard asked")
	// A revert whose caller checked the event's visibility names its scope, and is the
	// scope's transaction alone; without it, its scope is found as above.
	_, err = store.Revert(ctx, RevertParams{EventID: events[0].ID, Note: "never moved"})
	require.ErrorContains(t, err, "multi-task query")
	reverted, err := store.Revert(ctx, RevertParams{EventID: events[0].ID, Scope: scope, Note: "never moved"})
	require.NoError(t, err)
	require.Equal(t, events[0].ID, *reverted.Revert.Reverts)

	// Forget.
	_, err = store.Forget(ctx, Selection{Scope: scope, Match: "tea"})
	require.NoError(t, err)

	// Purge of beliefs, then of the whole scope.
	_, err = store.Purge(ctx, Selection{Scope: scope, Match: "Miami"})
	require.NoError(t, err)
	purged, err := store.Purge(ctx, Selection{Scope: scope, All: true})
	require.NoError(t, err)
	require.NotZero(t, purged.Counts["belief"])
}

// TestCitusSpanning: the operations that span scopes, and may ask every shard, work on
// the cluster: the curator over the scopes with history to remove, and the purge of a
// subtree of scopes, whose shards differ.
func TestCitusSpanning(t *testing.T) {
	dbtest.RequireCitus(t)
	ctx := context.Background()
	schema := dbtest.New(t)
	clock := testclock.New(day("2026-06-01"))
	store := NewStore(schema.Pool, &Config{Now: clock.Now})
	scopes := []string{"acme/user:1", "acme/user:2", "acme/user:3", "acme/user:4", "acme/user:5", "acme/user:6", "other/user:1"}
	acme := scopes[:6]
	for _, scope := range scopes {
		first := mustApply(t, store, extraction(scope, "2026-01-15", nil, fact(nyc, "location", ""))).Facts[0].BeliefID
		mustApply(t, store, extraction(scope, "2026-03-20", []int64{first}, resolves(fact(miami, "location", "2026-02-20"), 0, ActionSupersede, ReasonTemporal)))
	}
	var nodes int
	require.NoError(t, schema.Pool.QueryRow(ctx, `SELECT count(DISTINCT nodeport) FROM citus_shards
		WHERE shardid IN (SELECT get_shard_id_for_distribution_column($1::regclass, s) FROM unnest($2::text[]) s)`,
		schema.Name+".belief", scopes).Scan(&nodes))
	require.Equal(t, 2, nodes, "the scopes lie on both workers")

	// The consolidation sweep finds the scopes changed since their last pass.
	require.NoError(t, pgx.BeginFunc(ctx, schema.Pool, func(tx pgx.Tx) error {
		changed, err := ChangedScopesTx(ctx, tx)
		require.NoError(t, err)
		require.Equal(t, scopes, changed, "every scope, in order")
		return nil
	}))

	// The curator: a year on, each scope's retired home is history to remove.
	clock.Set(day("2027-06-01"))
	curated, err := store.Curate(ctx, 30*24*time.Hour, false, "other/user:1")
	require.NoError(t, err)
	require.Len(t, curated.Scopes, len(acme), "every scope but the one kept")
	for _, scope := range scopes {
		all, err := store.All(ctx, scope)
		require.NoError(t, err)
		want := 1
		if scope == "other/user:1" {
			want = 2
		}
		require.Len(t, all, want, scope)
	}

	// The subtree purge: every scope under the prefix, on whichever shard.
	found, err := store.SubtreeScopes(ctx, "acme/")
	require.NoError(t, err)
	require.ElementsMatch(t, acme, found)
	purged, err := store.PurgeSubtree(ctx, "acme/")
	require.NoError(t, err)
	require.Len(t, purged.Scopes, len(acme))
	for _, scope := range scopes {
		all, err := store.All(ctx, scope)
		require.NoError(t, err)
		require.Equal(t, scope == "other/user:1", len(all) > 0, scope)
	}
}
