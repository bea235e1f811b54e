package memory

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// retain is the retention period of the curation tests: 90 days.
const retain = 90 * 24 * time.Hour

// curateBundle is a scope with history of every kind, retired long ago and lately.
type curateBundle struct {
	*testBundle
	store *Store

	nyc, timeZone, initech, code, boston, tea, miami, blue, green, philly, cat int64

	// Episodes: nycEp produced only NYC; guessEp only a refused guess about NYC; jobEp
	// only Initech; codeEp the gate code, and is still pending; bostonEp Boston and the
	// current tea; miamiEp the current Miami; quitEp retracted Initech, storing nothing.
	nycEp, guessEp, jobEp, codeEp, bostonEp, miamiEp, quitEp int64
	// Jobs: of nycEp, quitEp (its id as a string), bostonEp, jobEp (running), the scope.
	nycJob, quitJob, bostonJob, runningJob, scopeJob int64
}

// The statements curation must remove from every table.
const (
	bostonStatement  = "User lives in Boston"
	newarkStatement  = "User lives in Newark"
	initechStatement = "User works at Initech"
	codeStatement    = "User's gate code is 4417"
	catStatement     = "User has a cat"
)

func setupCurate(t *testing.T) *curateBundle {
	t.Helper()
	store, bundle := setup(t)
	b := &curateBundle{testBundle: bundle, store: store}
	const scope = "user:ana"
	// at applies batch at clock time day(at), from episode ep unless it is 0.
	at := func(when string, ep int64, batch *Batch) *Result {
		t.Helper()
		bundle.clock.Set(day(when))
		if ep != 0 {
			batch.EpisodeID = &ep
		}
		return mustApply(t, store, batch)
	}
	episode := func(content, when string) int64 {
		t.Helper()
		id := insertEpisode(t, bundle, scope, content, when)
		_, err := bundle.schema.Pool.Exec(context.Background(), "UPDATE episode SET state = 'applied' WHERE id = $1", id)
		require.NoError(t, err)
		return id
	}

	b.nycEp = episode("I live in New York.", "2025-01-10")
	b.nyc = at("2025-01-10", b.nycEp, extraction(scope, "2025-01-10", nil, fact(nyc, "location", ""))).Facts[0].BeliefID
	tz := fact("User's time zone is US Eastern", "time_zone", "")
	tz.Origin, tz.DependsOn = OriginInferred, []int{0}
	b.timeZone = at("2025-01-12", 0, extraction(scope, "2025-01-12", []int64{b.nyc}, tz)).Facts[0].BeliefID
	b.guessEp = episode("Maybe I will end up in Newark.", "2025-01-15")
	guess := resolves(fact(newarkStatement, "location", ""), 0, ActionSupersede, ReasonTemporal)
	guess.Origin = OriginInferred
	require.Equal(t, OutcomeConflict, at("2025-01-15", b.guessEp, extraction(scope, "2025-01-15", []int64{b.nyc}, guess)).Facts[0].Kind)
	b.jobEp = episode("I work at Initech.", "2025-01-20")
	b.initech = at("2025-01-20", b.jobEp, extraction(scope, "2025-01-20", nil, fact(initechStatement, "employer", ""))).Facts[0].BeliefID
	b.codeEp = insertEpisode(t, bundle, scope, "My gate code is 4417.", "2025-01-25")
	b.code = at("2025-01-25", b.codeEp, extraction(scope, "2025-01-25", nil, fact(codeStatement, "gate_code", ""))).Facts[0].BeliefID

	b.bostonEp = episode("I moved to Boston. I like tea.", "2025-02-10")
	boston := fact(bostonStatement, "location", "2025-02-01")
	boston.Quote = "I moved to Boston"
	res := at("2025-02-10", b.bostonEp, extraction(scope, "2025-02-10", []int64{b.nyc},
		resolves(boston, 0, ActionSupersede, ReasonTemporal), fact("User likes tea", "drink", "")))
	b.boston, b.tea = res.Facts[0].BeliefID, res.Facts[1].BeliefID
	b.miamiEp = episode("I moved to Miami.", "2025-03-10")
	b.miami = at("2025-03-10", b.miamiEp, extraction(scope, "2025-03-10", []int64{b.boston},
		resolves(fact(miami, "location", "2025-03-01"), 0, ActionSupersede, ReasonTemporal))).Facts[0].BeliefID
	b.quitEp = episode("I left Initech.", "2025-04-01")
	at("2025-04-01", b.quitEp, extraction(scope, "2025-04-01", []int64{b.initech},
		resolves(Fact{Confidence: 0.9, Origin: OriginUserStated}, 0, ActionRetract, ReasonTemporal)))
	bundle.clock.Set(day("2025-04-02"))
	_, err := store.Forget(context.Background(), Selection{Scope: scope, IDs: []int64{b.code}})
	require.NoError(t, err)

	// History retired within the period: blue (superseded lately), and Philadelphia,
	// learned lately as older than NYC, so stored superseded by NYC.
	b.blue = at("2025-06-01", 0, extraction(scope, "2025-06-01", nil, fact("User's favorite color is blue", "color", ""))).Facts[0].BeliefID
	b.green = at("2026-05-20", 0, extraction(scope, "2026-05-20", []int64{b.blue},
		resolves(fact("User's favorite color is green", "color", ""), 0, ActionSupersede, ReasonTemporal))).Facts[0].BeliefID
	res = at("2026-05-25", 0, extraction(scope, "2026-05-25", []int64{b.miami},
		resolves(fact("User lives in Philadelphia", "location", "2024-06-01"), 0, ActionSupersede, ReasonTemporal)))
	require.Equal(t, OutcomeBackfilled, res.Facts[0].Kind)
	require.Equal(t, b.nyc, res.Facts[0].TargetID)
	b.philly = res.Facts[0].BeliefID

	// Another scope with old history, and one with none.
	b.cat = at("2025-01-10", 0, extraction("user:bob", "2025-01-10", nil, fact(catStatement, "pet", ""))).Facts[0].BeliefID
	at("2025-02-01", 0, extraction("user:bob", "2025-02-01", []int64{b.cat},
		resolves(Fact{Confidence: 0.9, Origin: OriginUserStated}, 0, ActionRetract, ReasonCorrection)))
	at("2025-01-10", 0, extraction("user:carol", "2025-01-10", nil, fact("User lives in Oslo", "location", "")))

	b.nycJob = insertJob(t, bundle, "credo.extract", map[string]int64{"episode_id": b.nycEp}, "llm: timeout")
	b.quitJob = insertJob(t, bundle, "credo.extract", map[string]string{"episode_id": strconv.FormatInt(b.quitEp, 10)})
	b.bostonJob = insertJob(t, bundle, "credo.extract", map[string]int64{"episode_id": b.bostonEp})
	b.runningJob = insertJob(t, bundle, "credo.extract", map[string]int64{"episode_id": b.jobEp})
	b.scopeJob = insertJob(t, bundle, "credo.extract_scope", map[string]string{"scope": scope})
	_, err = bundle.schema.Pool.Exec(context.Background(), "UPDATE river_job SET state = 'running', attempted_at = now() WHERE id = $1", b.runningJob)
	require.NoError(t, err)

	bundle.clock.Set(day("2026-06-01"))
	return b
}

// rows is every row of every table of the test's schema, as text, by table.
func (b *curateBundle) rows(t *testing.T) map[string][]string {
	t.Helper()
	ctx := context.Background()
	rows, err := b.schema.Pool.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY 1`, b.schema.Name)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	out := map[string][]string{}
	for _, table := range tables {
		var texts []string
		err := b.schema.Pool.QueryRow(ctx, "SELECT coalesce(array_agg(t::text ORDER BY t::text), '{}') FROM "+
			pgx.Identifier{table}.Sanitize()+" t").Scan(&texts)
		require.NoError(t, err)
		out[table] = texts
	}
	return out
}

// beliefRows is each belief's row as JSON, by id.
func (b *curateBundle) beliefRows(t *testing.T) map[int64]string {
	t.Helper()
	rows, err := b.schema.Pool.Query(context.Background(), "SELECT id, to_jsonb(b)::text FROM belief b")
	require.NoError(t, err)
	out := map[int64]string{}
	var (
		id  int64
		row string
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &row}, func() error { out[id] = row; return nil })
	require.NoError(t, err)
	return out
}

func (b *curateBundle) ids(t *testing.T, query string) []int64 {
	t.Helper()
	rows, err := b.schema.Pool.Query(context.Background(), query)
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	return ids
}

func TestCurate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupCurate(t)
	purged := []string{nyc, bostonStatement, newarkStatement, initechStatement, codeStatement, catStatement}
	for _, s := range purged {
		require.NotEmpty(t, mentions(t, b.testBundle, s), "the search finds %q before", s)
	}
	// Consolidation judged clusters of user:ana's history while it was current, and one
	// of user:carol, which has no history to curate.
	oslo := b.ids(t, "SELECT id FROM belief WHERE scope = 'user:carol'")
	for _, c := range []JudgmentClaim{{Scope: "user:ana", Signature: "ana", Members: []int64{b.nyc, b.boston}},
		{Scope: "user:carol", Signature: "carol", Members: oslo}} {
		require.NoError(t, b.store.InTx(ctx, func(tx pgx.Tx) error {
			claim, err := ClaimJudgmentTx(ctx, tx, c)
			require.Equal(t, Claimed, claim)
			return err
		}))
	}
	before, beliefsBefore := b.rows(t), b.beliefRows(t)

	dry, err := b.store.Curate(ctx, retain, true)
	require.NoError(t, err)
	require.Equal(t, before, b.rows(t), "a dry run changes nothing")
	require.True(t, dry.DryRun)
	require.Equal(t, day("2026-03-03"), dry.RetiredBefore)

	kept, err := b.store.Curate(ctx, retain, true, "user:ana")
	require.NoError(t, err)
	require.NotEmpty(t, kept.Scopes)
	for _, sc := range kept.Scopes {
		require.NotEqual(t, "user:ana", sc.Scope, "a kept scope (the examples scope) is left alone")
	}

	got, err := b.store.Curate(ctx, retain, false)
	require.NoError(t, err)
	require.False(t, got.DryRun)
	ana := CuratedScope{Scope: "user:ana",
		BeliefIDs:  []int64{b.nyc, b.initech, b.code, b.boston},
		EpisodeIDs: []int64{b.nycEp, b.guessEp, b.jobEp, b.quitEp},
		Counts: map[string]int64{"belief": 4, "revision_event": 4, "belief_conflict": 1, "episode": 4, "river_job": 2,
			"consolidation_judgment": 1, "entity": 0, "entity_alias": 0, CountRedactedEpisodes: 1},
		Relinked: 1}
	bob := CuratedScope{Scope: "user:bob", BeliefIDs: []int64{b.cat}, EpisodeIDs: []int64{},
		Counts: map[string]int64{"belief": 1, "revision_event": 1, "belief_conflict": 0, "episode": 0, "river_job": 0,
			"consolidation_judgment": 0, "entity": 0, "entity_alias": 0}}
	require.Equal(t, []CuratedScope{ana, bob}, dry.Scopes, "the dry run lists what the run removes")
	require.Len(t, got.Scopes, 2)
	for i, s := range got.Scopes {
		require.Positive(t, s.TombstoneID)
		s.TombstoneID = 0
		require.Equal(t, dry.Scopes[i], s)
	}
	require.Equal(t, int64(5), got.Total("belief"))

	for _, s := range purged {
		require.Empty(t, mentions(t, b.testBundle, s), "%q is nowhere in the database", s)
	}
	// The transcript tea still comes from no longer says what Boston quoted of it.
	require.Empty(t, mentions(t, b.testBundle, "moved to Boston"))
	var redacted string
	require.NoError(t, b.schema.Pool.QueryRow(ctx, "SELECT messages->0->>'content' FROM episode WHERE id = $1", b.bostonEp).Scan(&redacted))
	require.Equal(t, "[redacted]. I like tea.", redacted)

	// Current beliefs and history within the period are untouched; Philadelphia, whose
	// successor NYC went, now leads to Miami.
	after := b.beliefRows(t)
	for _, id := range []int64{b.nyc, b.initech, b.code, b.boston, b.cat} {
		require.NotContains(t, after, id)
		delete(beliefsBefore, id)
	}
	require.Len(t, after, len(beliefsBefore))
	for id, row := range beliefsBefore {
		if id != b.philly {
			require.Equal(t, row, after[id], "belief %d", id)
		}
	}
	philly, err := b.store.Get(ctx, b.philly)
	require.NoError(t, err)
	require.Equal(t, StatusSuperseded, philly.Status)
	require.Equal(t, []int64{b.miami}, philly.SupersededBy)
	require.Equal(t, day("2025-01-10"), *philly.ValidUntil, "its valid time is what it was")
	require.Zero(t, count(t, b.testBundle, "belief WHERE superseded_by NOT IN (SELECT id FROM belief)"))
	history, err := b.store.History(ctx, b.miami)
	require.NoError(t, err)
	require.Equal(t, []int64{b.philly, b.miami}, ids(history))

	// The time zone still awaits its review, from an item that names no removed belief.
	var (
		target *int64
		detail string
	)
	require.NoError(t, b.schema.Pool.QueryRow(ctx, `SELECT target_belief_id, detail FROM belief_conflict
		WHERE belief_id = $1 AND status = 'open'`, b.timeZone).Scan(&target, &detail))
	require.Nil(t, target)
	require.Equal(t, "a belief it was concluded from was superseded", detail)
	tz, err := b.store.Get(ctx, b.timeZone)
	require.NoError(t, err)
	require.True(t, tz.NeedsReview)
	require.Nil(t, tz.DependsOn, "its dependency went with the basis")

	// The judgments of the curated scope went, which may have judged what was removed;
	// the other scope's stays.
	judged, err := b.schema.Pool.Query(ctx, "SELECT scope FROM consolidation_judgment")
	require.NoError(t, err)
	scopes, err := pgx.CollectRows(judged, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"user:carol"}, scopes)

	// Episodes: those a current belief comes from stay, and the pending one; so do their
	// jobs, the running one and the scope's.
	require.Equal(t, []int64{b.codeEp, b.bostonEp, b.miamiEp}, b.ids(t, "SELECT id FROM episode ORDER BY id"))
	require.Equal(t, []int64{b.bostonJob, b.runningJob, b.scopeJob}, b.ids(t, "SELECT id FROM river_job ORDER BY id"))

	// One tombstone per scope, with no counts and no trace of the scope.
	rows, err := b.schema.Pool.Query(ctx, "SELECT id, what, to_jsonb(t)::text FROM purge_tombstone t")
	require.NoError(t, err)
	type tombstone struct {
		ID        int64
		What, Row string
	}
	tombs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[tombstone])
	require.NoError(t, err)
	require.Len(t, tombs, 2)
	for _, s := range got.Scopes {
		i := slices.IndexFunc(tombs, func(ts tombstone) bool { return ts.ID == s.TombstoneID })
		require.NotEqual(t, -1, i)
		require.Equal(t, PurgedHistory, tombs[i].What)
		require.NotContains(t, tombs[i].Row, "counts")
		requireNoScopeTrace(t, tombs[i].Row, s.Scope)
	}

	again, err := b.store.Curate(ctx, retain, false)
	require.NoError(t, err)
	require.Empty(t, again.Scopes, "a second run finds nothing")
	require.Equal(t, 2, count(t, b.testBundle, "purge_tombstone"))

	// Later, the history retired lately is due in its turn; current beliefs never are.
	b.clock.Set(day("2026-09-01"))
	later, err := b.store.Curate(ctx, retain, false)
	require.NoError(t, err)
	require.Len(t, later.Scopes, 1)
	require.Equal(t, []int64{b.blue, b.philly}, later.Scopes[0].BeliefIDs)
	require.Empty(t, later.Scopes[0].EpisodeIDs)
	var active []int64
	for _, bl := range mustAll(t, b.store, "user:ana") {
		require.Equal(t, StatusActive, bl.Status)
		active = append(active, bl.ID)
	}
	require.ElementsMatch(t, []int64{b.timeZone, b.tea, b.miami, b.green}, active)
}

func TestCurateBadPeriod(t *testing.T) {
	t.Parallel()
	store, _ := setup(t)
	for _, d := range []time.Duration{0, -time.Hour} {
		_, err := store.Curate(context.Background(), d, false)
		require.ErrorContains(t, err, "retention period must be positive")
	}
}
