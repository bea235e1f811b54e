package memory

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpenItemsCountsWhatConflictsLists(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := setup(t)
	refuse := func(scope string, attribute ...string) (belief int64) {
		attr := "plan"
		if len(attribute) > 0 {
			attr = attribute[0]
		}
		auth := fact("Account "+attr+" is Pro", attr, "2026-01-01")
		auth.Origin = OriginAuthoritative
		belief = mustApply(t, store, &Batch{Scope: scope, Origin: RevisionOperator, Facts: []Fact{auth}}).Facts[0].BeliefID
		res := mustApply(t, store, extraction(scope, "2026-05-01", []int64{belief},
			resolves(fact("Account "+attr+" is Free", attr, ""), 0, ActionSupersede, ReasonTemporal)))
		require.Equal(t, OutcomeConflict, res.Facts[0].Kind)
		require.NotZero(t, res.Facts[0].ConflictID)
		return belief
	}
	refuse("org/a")
	refuse("org/a", "tier")
	forgottenTarget := refuse("org/b")
	refuse("other")

	counts, err := store.OpenItems(ctx, "org/")
	require.NoError(t, err)
	require.Equal(t, map[string]int{"org/a": 2, "org/b": 1}, counts)

	// An item about a forgotten belief leaves the queue and the count alike.
	_, err = store.Forget(ctx, Selection{Scope: "org/b", IDs: []int64{forgottenTarget}})
	require.NoError(t, err)
	counts, err = store.OpenItems(ctx, "")
	require.NoError(t, err)
	require.Equal(t, map[string]int{"org/a": 2, "other": 1}, counts)
	for scope, n := range counts {
		open, err := store.Conflicts(ctx, scope, false)
		require.NoError(t, err)
		require.Len(t, open, n, scope)
	}
}

func TestEventsAboutAChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	nycID, miamiID := seedNYCMiami(t, store, bundle, "u")
	mustApply(t, store, extraction("u", "2026-04-01", nil, fact("User plays chess", "hobby", "")))

	evs, err := store.EventsAbout(ctx, "u", []int64{nycID, miamiID})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, nycID, evs[0].OldBeliefID)
	require.Equal(t, miamiID, *evs[0].NewBeliefID)
	none, err := store.EventsAbout(ctx, "other", []int64{nycID, miamiID})
	require.NoError(t, err)
	require.Empty(t, none, "another scope's events are not read")

	_, err = store.Forget(ctx, Selection{Scope: "u", IDs: []int64{miamiID}})
	require.NoError(t, err)
	evs, err = store.EventsAbout(ctx, "u", []int64{nycID})
	require.NoError(t, err)
	require.Empty(t, evs, "the event quotes a forgotten belief")
}

func TestEpisodeWithItsTranscript(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	older := insertEpisode(t, bundle, "u", "I live in New York.", "2026-01-10")
	newer := insertEpisode(t, bundle, "u", "I moved to Miami.", "2026-03-20")
	insertEpisode(t, bundle, "v", "I live in Oslo.", "2026-02-01")
	_, err := bundle.schema.Pool.Exec(ctx, "UPDATE episode SET state = 'failed', attempts = 3, last_error = 'model down' WHERE id = $1", older)
	require.NoError(t, err)

	eps, err := store.Episodes(ctx, EpisodeQuery{Scope: "u"})
	require.NoError(t, err)
	require.Equal(t, []int64{newer, older}, []int64{eps[0].ID, eps[1].ID}, "the latest conversation first")
	require.Empty(t, eps[0].Messages, "a list leaves transcripts out")
	failed, err := store.Episodes(ctx, EpisodeQuery{Scope: "u", State: EpisodeFailed})
	require.NoError(t, err)
	require.Len(t, failed, 1)
	require.Equal(t, "model down", *failed[0].LastError)
	require.Equal(t, 3, failed[0].Attempts)

	ep, err := store.Episode(ctx, newer)
	require.NoError(t, err)
	require.Equal(t, "u", ep.Scope)
	require.Equal(t, EpisodePending, ep.State)
	require.Equal(t, []EpisodeMessage{{Role: "user", Content: "I moved to Miami."}}, ep.Messages)
	_, err = store.Episode(ctx, newer+100)
	require.ErrorIs(t, err, ErrNotFound)
}

// FromEpisode lists what a transcript stated and what it restated, but no forgotten
// belief and nothing of another episode.
func TestFromEpisode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	first := insertEpisode(t, bundle, "u", "I live in Miami and like tea.", "2026-01-02")
	b := extraction("u", "2026-01-02", nil, fact(miami, "location", ""), fact("User likes tea", "drink", ""))
	b.EpisodeID = &first
	res := mustApply(t, store, b)
	miamiID, tea := res.Facts[0].BeliefID, res.Facts[1].BeliefID
	second := insertEpisode(t, bundle, "u", "Still in Miami. I bake now.", "2026-01-10")
	b = extraction("u", "2026-01-10", []int64{miamiID}, resolves(fact(miami, "location", ""), 0, ActionReinforce, ReasonRestated),
		fact("User bakes", "hobby", ""))
	b.EpisodeID = &second
	bakes := mustApply(t, store, b).Facts[1].BeliefID
	_, err := store.Forget(ctx, Selection{Scope: "u", IDs: []int64{tea}})
	require.NoError(t, err)

	from, err := store.FromEpisode(ctx, "u", first)
	require.NoError(t, err)
	require.Equal(t, []int64{miamiID}, ids(from), "tea is forgotten")
	from, err = store.FromEpisode(ctx, "u", second)
	require.NoError(t, err)
	require.ElementsMatch(t, []int64{miamiID, bakes}, ids(from), "restated and stated")
	from, err = store.FromEpisode(ctx, "other", second)
	require.NoError(t, err)
	require.Empty(t, from, "another scope's read finds nothing")
}
