package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func insertEpisode(t *testing.T, bundle *testBundle, scope, content, at string) int64 {
	t.Helper()
	var id int64
	err := bundle.schema.Pool.QueryRow(context.Background(), `INSERT INTO episode (scope, external_id, messages, content_hash, occurred_at)
		VALUES ($1, 'conv-' || md5($2), jsonb_build_array(jsonb_build_object('role', 'user', 'content', $2::text)), md5($2), $3)
		RETURNING id`, scope, content, day(at)).Scan(&id)
	require.NoError(t, err)
	return id
}

// insertJob inserts a River job row as River would leave it after failed attempts.
func insertJob(t *testing.T, bundle *testBundle, kind string, args any, errs ...string) int64 {
	t.Helper()
	rawArgs, err := json.Marshal(args)
	require.NoError(t, err)
	var id int64
	err = bundle.schema.Pool.QueryRow(context.Background(), `INSERT INTO river_job (args, kind, max_attempts, queue, state, attempt, errors)
		VALUES ($1, $2, 10, 'extract', 'retryable', coalesce(cardinality($3::text[]), 0),
			(SELECT array_agg(jsonb_build_object('at', now(), 'attempt', o, 'error', e, 'trace', '')) FROM unnest($3::text[]) WITH ORDINALITY AS x(e, o)))
		RETURNING id`, rawArgs, kind, errs).Scan(&id)
	require.NoError(t, err)
	return id
}

// mentions counts, per table of the test's schema, the rows in which any column's text
// contains text, ignoring case.
func mentions(t *testing.T, bundle *testBundle, text string) map[string]int {
	t.Helper()
	return bundle.schema.Mentions(t, text)
}

func TestPurgeErasesEveryCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	const (
		scope  = "user:zanzibar"
		secret = "Zanzibar-7731"
	)
	old := insertEpisode(t, bundle, scope, "My gate code is 1234.", "2026-01-01")
	leaked := insertEpisode(t, bundle, scope, "We changed the gate code to "+secret+" today.", "2026-02-01")
	later := insertEpisode(t, bundle, scope, "New gate code: 5555.", "2026-03-01")
	other := insertEpisode(t, bundle, "user:other", "I live in Oslo.", "2026-01-01")

	at := func(b *Batch, episode int64) *Batch { b.EpisodeID = &episode; return b }
	code := func(statement, quote string) Fact {
		f := embedded(fact(statement, "gate_code", ""), vecLocation)
		f.Quote = quote
		return f
	}
	first := mustApply(t, store, embeddedBatch(at(extraction(scope, "2026-01-01", nil,
		code("User's gate code is 1234", "My gate code is 1234"), embedded(fact("User likes tea", "drink", ""), vecCoffee)), old))).Facts[0].BeliefID
	secretID := mustApply(t, store, embeddedBatch(at(extraction(scope, "2026-02-01", []int64{first},
		resolves(code("User's gate code is "+secret, "changed the gate code to "+secret), 0, ActionSupersede, ReasonTemporal)), leaked))).Facts[0].BeliefID
	last := mustApply(t, store, embeddedBatch(at(extraction(scope, "2026-03-01", []int64{secretID},
		resolves(code("User's gate code is 5555", "New gate code: 5555"), 0, ActionSupersede, ReasonTemporal)), later))).Facts[0].BeliefID
	// A refused guess repeating the secret: its proposal copies the text.
	guess := resolves(fact("User's gate code might be "+secret, "gate_code", ""), 0, ActionSupersede, ReasonTemporal)
	guess.Origin = OriginInferred
	require.Equal(t, OutcomeConflict, mustApply(t, store, at(extraction(scope, "2026-03-02", []int64{last}, guess), later)).Facts[0].Kind)
	mustApply(t, store, at(extraction("user:other", "2026-01-01", nil, fact("User lives in Oslo", "location", "")), other))

	leakedJob := insertJob(t, bundle, "credo.extract", map[string]int64{"episode_id": leaked})
	erroredJob := insertJob(t, bundle, "credo.extract", map[string]int64{"episode_id": later}, "llm: answer quoted \""+secret+"\"")
	keptJob := insertJob(t, bundle, "credo.extract", map[string]int64{"episode_id": old}, "llm: timeout")
	otherJob := insertJob(t, bundle, "credo.extract", map[string]int64{"episode_id": other})
	_, err := bundle.schema.Pool.Exec(ctx, "INSERT INTO consolidation_judgment (scope, signature) VALUES ($1, 'sig')", scope)
	require.NoError(t, err)
	_, err = bundle.schema.Pool.Exec(ctx, "INSERT INTO scope_consolidation (scope, watermark) VALUES ($1, now())", scope)
	require.NoError(t, err)

	require.Equal(t, map[string]int{"belief": 1, "revision_event": 2, "belief_conflict": 1, "episode": 1, "river_job": 1},
		mentions(t, bundle, secret), "the search finds every copy before the purge")

	bundle.clock.Set(day("2026-06-02"))
	purged, err := store.Purge(ctx, Selection{Scope: scope, Match: "zanzibar-7731"})
	require.NoError(t, err)
	require.Empty(t, mentions(t, bundle, secret), "the purged text is nowhere in the database")

	wantCounts := map[string]int64{"belief": 1, "revision_event": 2, "belief_conflict": 1, "episode": 1, "river_job": 2, "consolidation_judgment": 1, "entity": 0, "entity_alias": 0}
	require.Equal(t, PurgedBeliefs, purged.What)
	require.Equal(t, wantCounts, purged.Counts)
	require.Equal(t, 1, purged.Relinked)

	// The chain closes over the gap: 1234 now leads to 5555.
	all := mustAll(t, store, scope)
	require.Equal(t, []string{"User likes tea", "User's gate code is 1234", "User's gate code is 5555"}, statementsOf(all))
	require.Equal(t, []int64{last}, byStatement(t, all, "User's gate code is 1234").SupersededBy)
	require.Equal(t, []int64{first}, byStatement(t, all, "User's gate code is 5555").Supersedes)
	history, err := store.History(ctx, last)
	require.NoError(t, err)
	require.Equal(t, []int64{first, last}, ids(history))
	require.Equal(t, 0, count(t, bundle, "belief WHERE superseded_by NOT IN (SELECT id FROM belief)"))

	var episodes, jobs []int64
	rows, err := bundle.schema.Pool.Query(ctx, "SELECT id FROM episode ORDER BY id")
	require.NoError(t, err)
	episodes, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	require.Equal(t, []int64{old, later, other}, episodes)
	rows, err = bundle.schema.Pool.Query(ctx, "SELECT id FROM river_job ORDER BY id")
	require.NoError(t, err)
	jobs, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	require.Equal(t, []int64{keptJob, otherJob}, jobs)
	require.NotContains(t, jobs, leakedJob)
	require.NotContains(t, jobs, erroredJob)
	require.Equal(t, 1, count(t, bundle, "scope_consolidation"), "a belief purge keeps the scope's watermark")
	require.Equal(t, []string{"User lives in Oslo"}, statementsOf(mustAll(t, store, "user:other")))

	requireTombstone(t, bundle, purged, scope, PurgedBeliefs, wantCounts, secret)
}

// requireTombstone checks the purge's tombstone: what and how many, and no trace of
// the scope or of the words.
func requireTombstone(t *testing.T, bundle *testBundle, purged *Purged, scope, what string, counts map[string]int64, words ...string) {
	t.Helper()
	require.Equal(t, counts, purged.Counts, "the caller gets the counts")
	var (
		gotWhat, row string
		keys         []string
		at           time.Time
	)
	err := bundle.schema.Pool.QueryRow(context.Background(), `SELECT what, to_jsonb(t)::text,
			(SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(to_jsonb(t)) k), created_at FROM purge_tombstone t WHERE id = $1`,
		purged.TombstoneID).Scan(&gotWhat, &row, &keys, &at)
	require.NoError(t, err)
	require.Equal(t, what, gotWhat)
	// Nothing the scope's scope.purged change also holds: no counts, no time of day.
	require.Equal(t, []string{"created_at", "id", "what"}, keys)
	require.Equal(t, at.UTC().Truncate(24*time.Hour), at.UTC(), "the day only")
	requireNoScopeTrace(t, row, scope)
	for _, w := range words {
		require.NotContains(t, row, w)
	}
	require.Equal(t, 1, count(t, bundle, "purge_tombstone"))
}

// Tombstones' ids are random: sequential ones would order them as the change feed
// orders the purges it announces, scope by scope.
func TestTombstoneIDsAreNotSequential(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := setup(t)
	var ids []int64
	for i := range 3 {
		scope := fmt.Sprintf("user:%d", i)
		mustApply(t, store, extraction(scope, "2026-01-05", nil, fact("User likes tea", "drink", "")))
		p, err := store.Purge(ctx, Selection{Scope: scope, Match: "tea"})
		require.NoError(t, err)
		require.Positive(t, p.TombstoneID)
		require.Less(t, p.TombstoneID, int64(1)<<53, "exact as a JSON number")
		ids = append(ids, p.TombstoneID)
	}
	require.False(t, ids[1] == ids[0]+1 && ids[2] == ids[1]+1, "ids %v follow each other", ids)
}

// requireNoScopeTrace checks that a tombstone's row holds neither the scope nor a hash
// of it: a guessable name is matched back from its hash.
func requireNoScopeTrace(t *testing.T, row, scope string) {
	t.Helper()
	sum := sha256.Sum256([]byte(scope))
	for _, trace := range []string{scope, hex.EncodeToString(sum[:])} {
		require.NotContains(t, strings.ToLower(row), strings.ToLower(trace))
	}
}

func TestPurgeByID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	const scope = "user:move"
	nycEpisode := insertEpisode(t, bundle, scope, "I live in New York.", "2026-01-15")
	miamiEpisode := insertEpisode(t, bundle, scope, "I moved to Miami last month.", "2026-03-20")
	nycBatch := extraction(scope, "2026-01-15", nil, fact(nyc, "location", ""), fact("User likes tea", "drink", ""))
	nycBatch.EpisodeID = &nycEpisode
	res := mustApply(t, store, nycBatch)
	nycID, teaID := res.Facts[0].BeliefID, res.Facts[1].BeliefID
	miamiBatch := extraction(scope, "2026-03-20", []int64{nycID}, resolves(fact(miami, "location", "2026-02-20"), 0, ActionSupersede, ReasonTemporal))
	miamiBatch.EpisodeID = &miamiEpisode
	miamiID := mustApply(t, store, miamiBatch).Facts[0].BeliefID
	job := insertJob(t, bundle, "credo.extract", map[string]int64{"episode_id": miamiEpisode})

	purged, err := store.Purge(ctx, Selection{Scope: scope, IDs: []int64{miamiID}})
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"belief": 1, "revision_event": 1, "belief_conflict": 0, "episode": 1, "river_job": 1, "consolidation_judgment": 0, "entity": 0, "entity_alias": 0},
		purged.Counts)
	require.Empty(t, mentions(t, bundle, "Miami"))

	// NYC stays superseded, closed at the move, with no successor: memory no longer
	// knows where the user lives, and does not pretend it is NYC again.
	all := mustAll(t, store, scope)
	require.Equal(t, []int64{nycID, teaID}, ids(all))
	require.Equal(t, StatusSuperseded, all[0].Status)
	require.Nil(t, all[0].SupersededBy)
	require.Equal(t, day("2026-02-20"), *all[0].ValidUntil)
	require.Equal(t, nycEpisode, *all[0].EpisodeID)
	current, err := store.Current(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, []string{"User likes tea"}, statementsOf(current))
	require.Equal(t, 0, count(t, bundle, fmt.Sprintf("river_job WHERE id = %d", job)))

	// A forgotten belief can be purged later.
	_, err = store.Forget(ctx, Selection{Scope: scope, IDs: []int64{teaID}})
	require.NoError(t, err)
	purged, err = store.Purge(ctx, Selection{Scope: scope, Match: "TEA"})
	require.NoError(t, err)
	require.Equal(t, int64(1), purged.Counts["belief"])
	require.Equal(t, int64(1), purged.Counts["episode"], "the transcript tea was drawn from goes with it")
	nycBelief, err := store.Get(ctx, nycID)
	require.NoError(t, err)
	require.Nil(t, nycBelief.EpisodeID, "NYC stays, without its source")
	require.Equal(t, 2, count(t, bundle, "purge_tombstone"))
}

func TestPurgeScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	const scope = "tenant:gone"
	nycID, _ := seedNYCMiami(t, store, bundle, scope)
	episode := insertEpisode(t, bundle, scope, "Still in Miami, still love espresso.", "2026-04-01")
	boston := mustApply(t, store, extraction(scope, "2026-04-02", []int64{nycID},
		resolves(fact("User lives in Boston", "location", ""), 0, ActionSupersede, ReasonTemporal))).Facts[0].BeliefID
	guess := resolves(fact("User lives in Cambridge", "location", ""), 0, ActionSupersede, ReasonTemporal)
	guess.Origin = OriginInferred
	require.Equal(t, OutcomeConflict, mustApply(t, store, extraction(scope, "2026-04-03", []int64{boston}, guess)).Facts[0].Kind)
	insertJob(t, bundle, "credo.extract", map[string]int64{"episode_id": episode})
	insertJob(t, bundle, "credo.consolidate", map[string]string{"scope": scope})
	insertJob(t, bundle, "credo.consolidate_all", map[string]string{}, fmt.Sprintf("consolidate scope %q: llm down", scope))
	running := insertJob(t, bundle, "credo.extract_scope", map[string]string{"scope": scope})
	_, err := bundle.schema.Pool.Exec(ctx, "UPDATE river_job SET state = 'running', attempted_at = now() WHERE id = $1", running)
	require.NoError(t, err)
	_, err = bundle.schema.Pool.Exec(ctx, "INSERT INTO consolidation_judgment (scope, signature) VALUES ($1, 'sig')", scope)
	require.NoError(t, err)
	_, err = bundle.schema.Pool.Exec(ctx, "INSERT INTO scope_consolidation (scope, watermark) VALUES ($1, now())", scope)
	require.NoError(t, err)

	// Another tenant: never touched, though its job error names the same words.
	kept := insertEpisode(t, bundle, "tenant:stays", "I love espresso.", "2026-01-01")
	mustApply(t, store, extraction("tenant:stays", "2026-01-01", nil, fact("User likes espresso", "coffee", "")))
	keptJob := insertJob(t, bundle, "credo.extract", map[string]int64{"episode_id": kept}, "espresso Miami "+scope)
	keptConsolidation := insertJob(t, bundle, "credo.consolidate", map[string]string{"scope": "tenant:stays"}, "error about "+scope)

	require.NotEmpty(t, mentions(t, bundle, scope))
	purged, err := store.Purge(ctx, Selection{Scope: scope, All: true})
	require.NoError(t, err)
	wantCounts := map[string]int64{"belief": 5, "revision_event": 2, "belief_conflict": 1, "episode": 1, "river_job": 3, "entity": 0, "entity_alias": 0,
		"consolidation_judgment": 1, "scope_consolidation": 1, "slot_synonym": 0}
	require.Equal(t, PurgedScope, purged.What)
	require.Equal(t, wantCounts, purged.Counts)
	require.Equal(t, map[string]int{"river_job": 3}, mentions(t, bundle, scope),
		"only the other tenant's own job rows name it, and the scope's running job, let finish")
	require.Equal(t, 1, count(t, bundle, fmt.Sprintf("river_job WHERE id = %d", running)), "a running job is not deleted under it")

	for _, table := range []string{"belief", "revision_event", "belief_conflict", "episode", "consolidation_judgment", "scope_consolidation"} {
		require.Equal(t, 0, count(t, bundle, table+" WHERE scope = '"+scope+"'"), table)
	}
	require.Equal(t, []string{"User likes espresso"}, statementsOf(mustAll(t, store, "tenant:stays")))
	require.Equal(t, 1, count(t, bundle, "episode"))
	require.Equal(t, 2, count(t, bundle, fmt.Sprintf("river_job WHERE id IN (%d, %d)", keptJob, keptConsolidation)))
	requireTombstone(t, bundle, purged, scope, PurgedScope, wantCounts, "Miami", "espresso")

	_, err = store.Purge(ctx, Selection{Scope: scope, All: true})
	require.ErrorIs(t, err, ErrNotFound, "a purged scope is unknown")
}

// A purge by id also erases the episode that restated the belief in other words: its
// reinforcement event names it, though its transcript never holds the statement.
func TestPurgeErasesRestatingEpisodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	const scope = "user:restated"
	first := insertEpisode(t, bundle, scope, "I drink oolong every morning.", "2026-01-02")
	id := mustApply(t, store, &Batch{Scope: scope, Origin: RevisionExtraction, EpisodeID: &first, At: day("2026-01-02"),
		Facts: []Fact{fact("User drinks oolong tea", "drink", "")}}).Facts[0].BeliefID
	again := insertEpisode(t, bundle, scope, "Morning ritual: the usual Taiwanese cup.", "2026-01-10")
	mustApply(t, store, &Batch{Scope: scope, Origin: RevisionExtraction, EpisodeID: &again, At: day("2026-01-10"), Candidates: []int64{id},
		Facts: []Fact{resolves(Fact{Confidence: 0.9, Origin: OriginUserStated}, 0, ActionReinforce, ReasonRestated)}})
	other := insertEpisode(t, bundle, scope, "I live in Lisbon.", "2026-01-11")

	purged, err := store.Purge(ctx, Selection{Scope: scope, IDs: []int64{id}})
	require.NoError(t, err)
	require.EqualValues(t, 2, purged.Counts["episode"], "the stating and the restating transcript")
	require.Empty(t, mentions(t, bundle, "Taiwanese"))
	require.Equal(t, 1, count(t, bundle, fmt.Sprintf("episode WHERE id = %d", other)), "an unrelated transcript stays")
}

// The job of a scope that holds nothing any more (a purge erased it while the job ran)
// leaves no row once it finishes; the job of a scope that holds anything keeps its row.
func TestDropJobOfErasedScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	mustApply(t, store, extraction("user:kept", "2026-01-01", nil, fact(nyc, "location", "")))
	jobs := map[string]int64{}
	for _, scope := range []string{"user:gone", "user:kept"} {
		jobs[scope] = insertJob(t, bundle, "credo.extract_scope", map[string]string{"scope": scope})
		tx, err := bundle.schema.Pool.Begin(ctx)
		require.NoError(t, err)
		dropped, err := store.DropJobOfErasedScope(ctx, tx, jobs[scope], scope)
		require.NoError(t, err)
		require.NoError(t, tx.Commit(ctx))
		require.Equal(t, scope == "user:gone", dropped, scope)
	}
	require.Equal(t, 0, count(t, bundle, fmt.Sprintf("river_job WHERE id = %d", jobs["user:gone"])))
	require.Equal(t, 1, count(t, bundle, fmt.Sprintf("river_job WHERE id = %d", jobs["user:kept"])))
}
