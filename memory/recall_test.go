package memory

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestIsHistorical(t *testing.T) {
	t.Parallel()
	for _, q := range []string{
		"Where does the user live before the move?",
		"Where did the user live before?",
		"Where did they use to work?",
		"What did the user USED TO eat for breakfast?",
		"What was the user's original plan?",
		"Where did the user previously work?",
		"Back when the user lived in New York, what did they do?",
		"Does the user still live in NYC?",
		"Is he 'still' at Acme?",
		"Where was the user formerly employed?",
		"What did the user think at first?",
		"Does the user not drink coffee anymore?",
		"Does the user no longer work at Acme?",
		"What did the user say earlier about their job?",
		"What did the user do in the past?",
		"What was their job two years ago?",
		"Who is the user's ex-wife?",
		"How has the user's job changed?",
		"Where had the user moved from?",
		"What were the user’s previous employers?",
	} {
		require.True(t, IsHistorical(q), q)
	}
	for _, q := range []string{
		"What is the user's current address?",
		"Where does the user live?",
		"Where does the user work now?",
		"Is the user a beforehand planner?",
		"Does the user like pastries?",
		"What is the user's earliest meeting today?",
		"Does the user enjoy stillness?",
		"What is the user's first name?",
		"How old is the user?",
		"Which exhibition does the user want to see?",
		"",
	} {
		require.False(t, IsHistorical(q), q)
	}
}

const tinyModel = "tiny"

// Directions of the toy embedding space of the recall tests.
var (
	vecLocation = []float32{1, 0, 0}
	vecCoffee   = []float32{0.1, 1, 0}
	vecPet      = []float32{0, 0, 1}
)

func embedded(f Fact, v []float32) Fact {
	f.Embedding = v
	return f
}

func embeddedBatch(b *Batch) *Batch {
	b.EmbedModel = tinyModel
	return b
}

// seedNYCMiami stores NYC (known 2026-01-16), then Miami superseding it (valid from
// 2026-02-20, known 2026-03-21), with a coffee and a pet belief beside them.
func seedNYCMiami(t *testing.T, store *Store, bundle *testBundle, scope string) (nycID, miamiID int64) {
	t.Helper()
	bundle.clock.Set(day("2026-01-16"))
	res := mustApply(t, store, embeddedBatch(extraction(scope, "2026-01-15", nil,
		embedded(fact(nyc, "location", ""), []float32{1, 0.1, 0}),
		embedded(fact("User likes espresso", "coffee", ""), vecCoffee),
		embedded(fact("User has a dog", "pet", ""), vecPet))))
	nycID = res.Facts[0].BeliefID
	bundle.clock.Set(day("2026-03-21"))
	res = mustApply(t, store, embeddedBatch(extraction(scope, "2026-03-20", []int64{nycID},
		resolves(embedded(fact(miami, "location", "2026-02-20"), []float32{1, 0, 0.1}), 0, ActionSupersede, ReasonTemporal))))
	require.Equal(t, OutcomeSuperseded, res.Facts[0].Kind)
	return nycID, res.Facts[0].BeliefID
}

func recall(t *testing.T, store *Store, q RecallQuery) *Recollection {
	t.Helper()
	rec, err := store.Recall(context.Background(), q)
	require.NoError(t, err)
	return rec
}

func statementsInOrder(bs []Belief) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Statement
	}
	return out
}

func TestRecallNYCMiami(t *testing.T) {
	t.Parallel()
	store, bundle := setup(t)
	const scope = "user:recall"
	nycID, miamiID := seedNYCMiami(t, store, bundle, scope)
	ranked := func(text string, k int) RecallQuery {
		return RecallQuery{Scope: scope, Text: text, Vector: vecLocation, EmbedModel: tinyModel, K: k}
	}

	t.Run("Current", func(t *testing.T) {
		t.Parallel()
		rec := recall(t, store, ranked("What is the user's current address?", 1))
		require.Equal(t, RecallCurrent, rec.Mode)
		require.False(t, rec.AutoHistory)
		require.True(t, rec.Ranked)
		require.Equal(t, []string{miami}, statementsInOrder(rec.Beliefs))
		require.NotNil(t, rec.Beliefs[0].Distance)

		rec = recall(t, store, ranked("Where does the user live?", 0))
		require.Equal(t, []string{miami, "User likes espresso", "User has a dog"}, statementsInOrder(rec.Beliefs), "nearest first")
	})

	t.Run("AutoHistory", func(t *testing.T) {
		t.Parallel()
		rec := recall(t, store, ranked("Where did the user live before the move?", 1))
		require.Equal(t, RecallHistory, rec.Mode)
		require.True(t, rec.AutoHistory)
		// One belief ranked, its whole chain answered, oldest first.
		require.Equal(t, []int64{nycID, miamiID}, ids(rec.Beliefs))
		require.Equal(t, StatusSuperseded, rec.Beliefs[0].Status)
		require.Equal(t, day("2026-02-20"), *rec.Beliefs[0].ValidUntil)
		require.Equal(t, []int64{miamiID}, rec.Beliefs[0].SupersededBy)
		require.Equal(t, StatusActive, rec.Beliefs[1].Status)
		for _, b := range rec.Beliefs {
			require.NotNil(t, b.Distance, b.Statement)
		}
	})

	t.Run("HistoryOnRequest", func(t *testing.T) {
		t.Parallel()
		q := ranked("Where does the user live?", 3)
		q.History = true
		rec := recall(t, store, q)
		require.Equal(t, RecallHistory, rec.Mode)
		require.False(t, rec.AutoHistory)
		// NYC and Miami rank first and second: one chain, listed once, then espresso.
		require.Equal(t, []string{nyc, miami, "User likes espresso"}, statementsInOrder(rec.Beliefs))
	})

	t.Run("AsOf", func(t *testing.T) {
		t.Parallel()
		for at, want := range map[string]string{"2026-02-01": nyc, "2026-03-01": miami, "2026-06-01": miami} {
			q := ranked("Where did the user live before the move?", 1)
			q.AsOf = new(day(at))
			rec := recall(t, store, q)
			require.Equal(t, RecallAsOf, rec.Mode, "an explicit time wins over the wording")
			require.False(t, rec.AutoHistory)
			require.Equal(t, []string{want}, statementsInOrder(rec.Beliefs), "as of %s", at)
		}
		q := ranked("", 0)
		q.AsOf = new(day("2026-01-01"))
		require.Empty(t, recall(t, store, q).Beliefs)
	})

	t.Run("KnownAt", func(t *testing.T) {
		t.Parallel()
		// On 2026-03-01 Miami was already true, but memory still believed NYC.
		for at, want := range map[string]string{"2026-03-01": nyc, "2026-04-01": miami} {
			q := ranked("Where does the user live?", 1)
			q.KnownAt = new(day(at))
			rec := recall(t, store, q)
			require.Equal(t, RecallKnownAt, rec.Mode)
			require.Equal(t, []string{want}, statementsInOrder(rec.Beliefs), "known at %s", at)
		}
	})

	t.Run("Unranked", func(t *testing.T) {
		t.Parallel()
		rec := recall(t, store, RecallQuery{Scope: scope})
		require.Equal(t, RecallCurrent, rec.Mode)
		require.False(t, rec.Ranked)
		require.Equal(t, []string{"User likes espresso", miami, "User has a dog"}, statementsInOrder(rec.Beliefs), "by attribute")
		require.Nil(t, rec.Beliefs[0].Distance)

		rec = recall(t, store, RecallQuery{Scope: scope, Text: "Where did the user live before?"})
		require.Equal(t, RecallHistory, rec.Mode)
		require.True(t, rec.AutoHistory)
		require.Equal(t, []string{"User likes espresso", nyc, miami, "User has a dog"}, statementsInOrder(rec.Beliefs))
	})

	t.Run("Invalid", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		at := new(day("2026-03-01"))
		for name, q := range map[string]RecallQuery{
			"no scope":           {Scope: " "},
			"as of and known at": {Scope: scope, AsOf: at, KnownAt: at},
			"history and as of":  {Scope: scope, History: true, AsOf: at},
			"vector, no model":   {Scope: scope, Vector: vecLocation},
			"negative k":         {Scope: scope, K: -1},
			"huge k":             {Scope: scope, K: MaxRecallK + 1},
		} {
			_, err := store.Recall(ctx, q)
			require.ErrorIs(t, err, ErrRecallQuery, name)
		}
		_, err := store.Recall(ctx, RecallQuery{Scope: scope, Vector: []float32{1, 0}, EmbedModel: tinyModel})
		require.ErrorIs(t, err, ErrEmbeddingModel)
	})
}

// A fact retracted with no replacement has no current head: history still finds it.
func TestRecallHistoryFindsRetracted(t *testing.T) {
	t.Parallel()
	store, _ := setup(t)
	kafka := mustApply(t, store, embeddedBatch(extraction("team:1", "2026-02-01", nil,
		embedded(fact("Team is migrating to Kafka", "plan", ""), []float32{1, 0, 0}),
		embedded(fact("Team uses Postgres", "database", ""), []float32{0, 1, 0})))).Facts[0].BeliefID
	mustApply(t, store, extraction("team:1", "2026-03-01", []int64{kafka},
		resolves(Fact{Confidence: 0.9, Origin: OriginUserStated}, 0, ActionRetract, ReasonTemporal)))

	q := RecallQuery{Scope: "team:1", Text: "Is the team migrating to Kafka?", Vector: []float32{1, 0, 0}, EmbedModel: tinyModel, K: 1}
	require.Equal(t, []string{"Team uses Postgres"}, statementsInOrder(recall(t, store, q).Beliefs))
	q.Text = "Was the team migrating to Kafka before?"
	rec := recall(t, store, q)
	require.True(t, rec.AutoHistory)
	require.Equal(t, []string{"Team is migrating to Kafka"}, statementsInOrder(rec.Beliefs))
	require.Equal(t, StatusRetracted, rec.Beliefs[0].Status)
}

func TestRecallJobChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	junior := step{"2020-01-10", "User is a junior developer at Acme", "2020-01-10"}
	senior := step{"2022-03-01", "User is a senior developer at Acme", "2022-03-01"}
	lead := step{"2024-06-01", "User is a tech lead at Globex", "2024-06-01"}

	// Learned in order, one step a day after it happened, and learned backwards: the
	// valid-time views agree; known time tells what memory believed when.
	for name, order := range map[string][]step{"InOrder": {junior, senior, lead}, "Backwards": {lead, senior, junior}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, bundle := setup(t)
			const scope = "user:career"
			// Memory learns each step the day after it happened, or the day after the
			// step before, whichever is later.
			var learned time.Time
			for _, s := range order {
				learned = maxTime(learned, day(s.at)).Add(24 * time.Hour)
				bundle.clock.Set(learned)
				applySteps(t, store, scope, []step{s})
			}

			rec := recall(t, store, RecallQuery{Scope: scope, Text: "What is the user's job?"})
			require.Equal(t, RecallCurrent, rec.Mode)
			require.Equal(t, []string{lead.statement}, statementsInOrder(rec.Beliefs))

			rec = recall(t, store, RecallQuery{Scope: scope, Text: "What did the user do before becoming a tech lead?"})
			require.Equal(t, RecallHistory, rec.Mode)
			require.True(t, rec.AutoHistory)
			require.Equal(t, []string{junior.statement, senior.statement, lead.statement}, statementsInOrder(rec.Beliefs))

			for at, want := range map[string]string{"2021-01-01": junior.statement, "2023-01-01": senior.statement, "2025-01-01": lead.statement} {
				rec := recall(t, store, RecallQuery{Scope: scope, AsOf: new(day(at))})
				require.Equal(t, []string{want}, statementsInOrder(rec.Beliefs), "as of %s", at)
			}

			known := func(at string) []string {
				return statementsInOrder(recall(t, store, RecallQuery{Scope: scope, KnownAt: new(day(at))}).Beliefs)
			}
			if name == "InOrder" {
				require.Equal(t, []string{junior.statement}, known("2021-01-01"))
				require.Equal(t, []string{senior.statement}, known("2023-01-01"))
			} else {
				// Learned the tech lead first: memory never believed the older jobs
				// current, they went straight into history.
				require.Equal(t, []string{lead.statement}, known("2024-06-03"))
				require.Empty(t, known("2024-06-01"))
			}
			require.Equal(t, []string{lead.statement}, known("2026-01-01"))

			current := recall(t, store, RecallQuery{Scope: scope}).Beliefs[0]
			history, err := store.History(ctx, current.ID)
			require.NoError(t, err)
			require.Equal(t, []string{junior.statement, senior.statement, lead.statement}, statementsInOrder(history))
			middle, err := store.History(ctx, history[1].ID)
			require.NoError(t, err)
			require.Equal(t, ids(history), ids(middle), "the chain through any member is the same")
		})
	}
}

// Ranked history over a chain of three: one nearest belief brings its whole chain.
func TestRecallJobChainRanked(t *testing.T) {
	t.Parallel()
	store, _ := setup(t)
	const scope = "user:career"
	var prev []int64
	for i, s := range []struct{ at, statement string }{
		{"2020-01-10", "User is a junior developer at Acme"},
		{"2022-03-01", "User is a senior developer at Acme"},
		{"2024-06-01", "User is a tech lead at Globex"},
	} {
		f := embedded(fact(s.statement, "job", s.at), []float32{1, float32(i) / 10, 0})
		if prev != nil {
			f = resolves(f, 0, ActionSupersede, ReasonTemporal)
		}
		prev = []int64{mustApply(t, store, embeddedBatch(extraction(scope, s.at, prev, f))).Facts[0].BeliefID}
	}
	mustApply(t, store, embeddedBatch(extraction(scope, "2024-07-01", nil, embedded(fact("User has a cat", "pet", ""), vecPet))))

	query := func(text string) *Recollection {
		return recall(t, store, RecallQuery{Scope: scope, Text: text, Vector: []float32{1, 0, 0}, EmbedModel: tinyModel, K: 1})
	}
	require.Equal(t, []string{"User is a tech lead at Globex"}, statementsInOrder(query("Where does the user work?").Beliefs))
	rec := query("Where did the user work originally?")
	require.True(t, rec.AutoHistory)
	require.Equal(t, []string{"User is a junior developer at Acme", "User is a senior developer at Acme", "User is a tech lead at Globex"},
		statementsInOrder(rec.Beliefs))
	require.Equal(t, []int64{rec.Beliefs[1].ID}, rec.Beliefs[2].Supersedes)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Every scope shares a model's index: a crowd of nearer vectors in another scope must
// not hide a scope's own beliefs from its ranked reads.
func TestRecallBesideACrowdedScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	require.NoError(t, store.EnsureEmbeddingModel(ctx, tinyModel, 3))
	// Both scopes are big enough for the planner to rank by the index. The vectors
	// sweep half a circle, the crowd's first: every one of them is nearer to the
	// question than any of the scope's own.
	_, err := bundle.schema.Pool.Exec(ctx, `INSERT INTO belief (scope, subject, attribute, kind, statement, confidence, origin,
			valid_from, recorded_at, last_seen_at, embedding, embed_model)
		SELECT CASE WHEN g <= 3000 THEN 'user:crowd' ELSE 'user:mine' END, 'user', 'location', 'attribute',
			'User fact ' || g, 0.9, 'user_stated', now(), now(), now(),
			('[' || cos(g * pi() / 6000) || ',' || sin(g * pi() / 6000) || ',' || 0.01 * (g % 7) || ']')::vector, $1
		FROM generate_series(1, 6000) g`, tinyModel)
	require.NoError(t, err)
	_, err = bundle.schema.Pool.Exec(ctx, "ANALYZE belief")
	require.NoError(t, err)

	for _, history := range []bool{false, true} {
		rec := recall(t, store, RecallQuery{Scope: "user:mine", Vector: vecLocation, EmbedModel: tinyModel, K: 3, History: history})
		require.Len(t, rec.Beliefs, 3, "history %v", history)
		for _, b := range rec.Beliefs {
			require.Equal(t, "user:mine", b.Scope)
		}
	}
	near, err := store.Nearest(ctx, "user:mine", tinyModel, vecLocation, 5)
	require.NoError(t, err)
	require.Len(t, near, 5)
}
