package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// insertTranscript inserts an applied episode with messages, as Enqueue stores them.
func insertTranscript(t *testing.T, bundle *testBundle, scope, externalID string, messages ...map[string]any) int64 {
	t.Helper()
	raw, err := json.Marshal(messages)
	require.NoError(t, err)
	var id int64
	err = bundle.schema.Pool.QueryRow(context.Background(), `INSERT INTO episode (scope, external_id, messages, content_hash, occurred_at, state)
		VALUES ($1, $2, $3::jsonb, md5($3::jsonb::text), '2026-01-01', 'applied') RETURNING id`, scope, externalID, raw).Scan(&id)
	require.NoError(t, err)
	return id
}

func userSays(content string) map[string]any {
	return map[string]any{"role": "user", "content": content}
}

func quoted(f Fact, quote string) Fact { f.Quote = quote; return f }

func from(episode int64, b *Batch) *Batch { b.EpisodeID = &episode; return b }

// restating reinforces candidate index, quoting the episode.
func restating(index int, quote string) Fact {
	return resolves(Fact{Confidence: 0.9, Origin: OriginUserStated, Quote: quote}, index, ActionReinforce, ReasonRestated)
}

func belief(t *testing.T, store *Store, id int64) *Belief {
	t.Helper()
	b, err := store.Get(context.Background(), id)
	require.NoError(t, err)
	return b
}

func episodeRow(t *testing.T, bundle *testBundle, id int64) (messages, hash string) {
	t.Helper()
	err := bundle.schema.Pool.QueryRow(context.Background(), "SELECT messages::text, content_hash FROM episode WHERE id = $1", id).
		Scan(&messages, &hash)
	require.NoError(t, err)
	return messages, hash
}

// An episode that states a purged fact and a kept one loses the purged quote and stays,
// with everything else it said, as the kept belief's source.
func TestPurgeRedactsEpisodeOfKeptBelief(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	const scope = "user:ana"
	ep := insertTranscript(t, bundle, scope, "conv-0102",
		map[string]any{"role": "user", "name": "ana", "at": "2026-01-02T10:00:00Z",
			"content": "I moved to \"Zagreb\" last spring.\nAlso, I adore cardamom buns."},
		map[string]any{"role": "assistant", "content": "Noted: cardamom buns it is."})
	res := mustApply(t, store, from(ep, extraction(scope, "2026-01-02", nil,
		quoted(fact("User lives in Zagreb", "location", ""), `moved to "ZAGREB" last spring`),
		quoted(fact("User likes cardamom buns", "food", ""), "I adore cardamom buns"))))
	zagreb, buns := res.Facts[0].BeliefID, res.Facts[1].BeliefID
	_, err := bundle.schema.Pool.Exec(ctx, "UPDATE episode SET last_error = 'llm: timeout' WHERE id = $1", ep)
	require.NoError(t, err)
	job := insertJob(t, bundle, "credo.extract", map[string]int64{"episode_id": ep})
	_, hash := episodeRow(t, bundle, ep)
	require.Contains(t, mentions(t, bundle, "Zagreb"), "episode", "the transcript holds the words before the purge")

	at := day("2026-06-02").Add(14*time.Hour + 3*time.Minute + 22*time.Second + 123456*time.Microsecond)
	bundle.clock.Set(at)
	purged, err := store.Purge(ctx, Selection{Scope: scope, IDs: []int64{zagreb}})
	require.NoError(t, err)
	require.EqualValues(t, 1, purged.Counts["belief"])
	require.EqualValues(t, 0, purged.Counts["episode"], "the episode is not deleted")
	require.EqualValues(t, 1, purged.Counts["episode_redacted"])
	require.Empty(t, mentions(t, bundle, "Zagreb"), "the purged words are nowhere in the database")
	requireTombstone(t, bundle, purged, scope, PurgedBeliefs, purged.Counts, "Zagreb")
	// The tombstone says on which day, not when: the purge's time is on the rows it left
	// in the scope (the episode's redacted_at below), and would tie the tombstone to it.
	var created time.Time
	require.NoError(t, bundle.schema.Pool.QueryRow(ctx, "SELECT created_at FROM purge_tombstone WHERE id = $1", purged.TombstoneID).Scan(&created))
	require.Equal(t, day("2026-06-02"), created.UTC(), "the day of the purge, in UTC")

	got, err := store.Episode(ctx, ep)
	require.NoError(t, err)
	require.Equal(t, []EpisodeMessage{
		{Role: "user", Name: "ana", Content: "I [redacted].\nAlso, I adore cardamom buns."},
		{Role: "assistant", Content: "Noted: cardamom buns it is."},
	}, got.Messages)
	require.NotNil(t, got.RedactedAt)
	require.Equal(t, at, *got.RedactedAt)
	require.Nil(t, got.LastError, "an error may quote the transcript")
	messages, gotHash := episodeRow(t, bundle, ep)
	require.JSONEq(t, `[{"role": "user", "name": "ana", "at": "2026-01-02T10:00:00Z", "content": "I [redacted].\nAlso, I adore cardamom buns."},
		{"role": "assistant", "content": "Noted: cardamom buns it is."}]`, messages, "every other key stays")
	require.NotEqual(t, hash, gotHash, "the original hash would confirm guesses of the purged words")
	listed, err := store.Episodes(ctx, EpisodeQuery{Scope: scope})
	require.NoError(t, err)
	require.Len(t, listed, 1)
	require.Equal(t, got.RedactedAt, listed[0].RedactedAt)

	require.Equal(t, &ep, belief(t, store, buns).EpisodeID, "the kept belief keeps its source")
	require.Zero(t, count(t, bundle, fmt.Sprintf("river_job WHERE id = %d", job)), "the episode's job goes, as for a deleted one")
}

// A purge by match replaces the match wherever the transcript says it, besides the quotes.
func TestPurgeRedactsByMatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	const scope = "user:ana"
	ep := insertTranscript(t, bundle, scope, "conv-0102",
		userSays("I moved to Zagreb last spring. Also, I adore cardamom buns."),
		map[string]any{"role": "assistant", "content": "ZAGREB is lovely; enjoy the buns!"})
	other := insertTranscript(t, bundle, scope, "conv-0103", userSays("I work as a nurse."))
	res := mustApply(t, store, from(ep, extraction(scope, "2026-01-02", nil,
		quoted(fact("User lives in Zagreb", "location", ""), "I moved to Zagreb last spring"),
		quoted(fact("User likes cardamom buns", "food", ""), "I adore cardamom buns"))))
	buns := res.Facts[1].BeliefID
	nurse := mustApply(t, store, from(other, extraction(scope, "2026-01-03", nil,
		quoted(fact("User is a nurse", "job", ""), "I work as a nurse")))).Facts[0].BeliefID

	purged, err := store.Purge(ctx, Selection{Scope: scope, Match: "zagreb"})
	require.NoError(t, err)
	require.EqualValues(t, 1, purged.Counts["belief"])
	require.EqualValues(t, 0, purged.Counts["episode"])
	require.EqualValues(t, 1, purged.Counts["episode_redacted"])
	require.Empty(t, mentions(t, bundle, "Zagreb"))
	requireTombstone(t, bundle, purged, scope, PurgedBeliefs, purged.Counts, "Zagreb")

	got, err := store.Episode(ctx, ep)
	require.NoError(t, err)
	require.Equal(t, []EpisodeMessage{
		{Role: "user", Content: "[redacted]. Also, I adore cardamom buns."},
		{Role: "assistant", Content: "[redacted] is lovely; enjoy the buns!"},
	}, got.Messages)
	require.NotNil(t, got.RedactedAt)
	require.Equal(t, &ep, belief(t, store, buns).EpisodeID)

	untouched, err := store.Episode(ctx, other)
	require.NoError(t, err)
	require.Nil(t, untouched.RedactedAt, "an episode the purge did not select is not redacted")
	require.Equal(t, "I work as a nurse.", untouched.Messages[0].Content)
	require.Equal(t, &other, belief(t, store, nurse).EpisodeID)
}

// An episode that restated a purged belief is redacted when a kept belief comes from it,
// whether it stated the kept belief or restated it too.
func TestPurgeRedactsReinforcingEpisode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	const scope = "user:ana"
	first := insertTranscript(t, bundle, scope, "conv-1", userSays("I live in Zagreb. I adore cardamom buns."))
	res := mustApply(t, store, from(first, extraction(scope, "2026-01-02", nil,
		quoted(fact("User lives in Zagreb", "location", ""), "I live in Zagreb"),
		quoted(fact("User likes cardamom buns", "food", ""), "I adore cardamom buns"))))
	zagreb, buns := res.Facts[0].BeliefID, res.Facts[1].BeliefID
	stating := insertTranscript(t, bundle, scope, "conv-2", userSays("Still in Zagreb, and I bake on Sundays now."))
	sundays := mustApply(t, store, from(stating, extraction(scope, "2026-01-10", []int64{zagreb},
		restating(0, "still in zagreb"), quoted(fact("User bakes on Sundays", "hobby", ""), "I bake on Sundays")))).Facts[1].BeliefID
	restated := insertTranscript(t, bundle, scope, "conv-3", userSays("Zagreb winters are long, but the buns help."))
	mustApply(t, store, from(restated, extraction(scope, "2026-01-20", []int64{zagreb, buns},
		restating(0, "Zagreb winters are long"), restating(1, "the buns help"))))

	purged, err := store.Purge(ctx, Selection{Scope: scope, IDs: []int64{zagreb}})
	require.NoError(t, err)
	require.EqualValues(t, 0, purged.Counts["episode"])
	require.EqualValues(t, 3, purged.Counts["episode_redacted"], "each episode also supports a kept belief")
	require.Empty(t, mentions(t, bundle, "Zagreb"))

	for id, want := range map[int64]string{first: "[redacted]. I adore cardamom buns.",
		stating: "[redacted], and I bake on Sundays now.", restated: "[redacted], but the buns help."} {
		got, err := store.Episode(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, got.Messages[0].Content)
		require.NotNil(t, got.RedactedAt)
	}
	require.Equal(t, &first, belief(t, store, buns).EpisodeID)
	require.Equal(t, &stating, belief(t, store, sundays).EpisodeID)
	require.Equal(t, 1, count(t, bundle, fmt.Sprintf("revision_event WHERE action = 'reinforce' AND episode_id = %d AND old_belief_id = %d",
		restated, buns)), "the kept belief's restatement still names its episode")
}

// A redaction that cannot be complete deletes the episode, as a purge always did; the
// kept belief loses its source.
func TestPurgeDeletesEpisodeItCannotRedact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, external, content, quote string
		sel                            func(purged int64) Selection
	}{
		{name: "paraphrased quote", external: "conv-1", content: "I moved to Zagreb last spring. I adore cardamom buns.",
			quote: "I relocated to Zagreb", sel: func(id int64) Selection { return Selection{IDs: []int64{id}} }},
		{name: "no quote", external: "conv-1", content: "I moved to Zagreb last spring. I adore cardamom buns.",
			sel: func(id int64) Selection { return Selection{IDs: []int64{id}} }},
		{name: "external id", external: "zagreb-notes", content: "I moved to Zagreb last spring. I adore cardamom buns.",
			quote: "I moved to Zagreb", sel: func(int64) Selection { return Selection{Match: "Zagreb"} }},
		// The match is in the marker itself: the replaced transcript still holds it.
		{name: "match in the marker", external: "conv-1", content: "I acted in Zagreb last spring. I adore cardamom buns.",
			quote: "I acted in Zagreb", sel: func(int64) Selection { return Selection{Match: "acted"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store, bundle := setup(t)
			const scope = "user:ana"
			ep := insertTranscript(t, bundle, scope, tc.external, userSays(tc.content))
			res := mustApply(t, store, from(ep, extraction(scope, "2026-01-02", nil,
				quoted(fact("User lives in Zagreb", "location", ""), tc.quote),
				quoted(fact("User likes cardamom buns", "food", ""), "I adore cardamom buns"))))
			sel := tc.sel(res.Facts[0].BeliefID)
			sel.Scope = scope

			purged, err := store.Purge(ctx, sel)
			require.NoError(t, err)
			require.EqualValues(t, 1, purged.Counts["belief"])
			require.EqualValues(t, 1, purged.Counts["episode"])
			require.NotContains(t, purged.Counts, "episode_redacted")
			require.Zero(t, count(t, bundle, "episode"))
			require.Empty(t, mentions(t, bundle, "Zagreb"))
			require.Nil(t, belief(t, store, res.Facts[1].BeliefID).EpisodeID, "the kept belief loses its source")
		})
	}
}

// An episode that supports only purged beliefs is deleted; another episode is left as
// it was.
func TestPurgeDeletesEpisodeOfPurgedBeliefsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	const scope = "user:ana"
	ep := insertTranscript(t, bundle, scope, "conv-1", userSays("I moved to Zagreb last spring."))
	zagreb := mustApply(t, store, from(ep, extraction(scope, "2026-01-02", nil,
		quoted(fact("User lives in Zagreb", "location", ""), "I moved to Zagreb last spring")))).Facts[0].BeliefID
	other := insertTranscript(t, bundle, scope, "conv-2", userSays("I adore cardamom buns."))
	buns := mustApply(t, store, from(other, extraction(scope, "2026-01-03", nil,
		quoted(fact("User likes cardamom buns", "food", ""), "I adore cardamom buns")))).Facts[0].BeliefID
	before, _ := episodeRow(t, bundle, other)

	purged, err := store.Purge(ctx, Selection{Scope: scope, IDs: []int64{zagreb}})
	require.NoError(t, err)
	require.EqualValues(t, 1, purged.Counts["episode"])
	require.NotContains(t, purged.Counts, "episode_redacted")
	require.Zero(t, count(t, bundle, fmt.Sprintf("episode WHERE id = %d", ep)))
	require.Empty(t, mentions(t, bundle, "Zagreb"))

	after, _ := episodeRow(t, bundle, other)
	require.Equal(t, before, after)
	require.Zero(t, count(t, bundle, "episode WHERE redacted_at IS NOT NULL"))
	require.Equal(t, &other, belief(t, store, buns).EpisodeID)
}

func TestRedactText(t *testing.T) {
	t.Parallel()
	compile := func(spans ...string) []*regexp.Regexp {
		out := make([]*regexp.Regexp, len(spans))
		for i, s := range spans {
			out[i] = regexp.MustCompile("(?i)" + regexp.QuoteMeta(s))
		}
		return out
	}
	for _, tc := range []struct {
		text  string
		spans []string
		want  string
		found []bool
	}{
		{"no match here", []string{"zagreb"}, "no match here", []bool{false}},
		{"xAAAy", []string{"aa"}, "x[redacted]y", []bool{true}},
		{"abc def ghi!", []string{"abc def", "DEF GHI"}, "[redacted]!", []bool{true, true}},
		{"Zagreb, zagreb and ZAGREB.", []string{"zagreb", "nurse"}, "[redacted], [redacted] and [redacted].", []bool{true, false}},
		{"Grüße aus ZÜRICH (a.b)", []string{"zürich (A.B)"}, "Grüße aus [redacted]", []bool{true}},
	} {
		found := make([]bool, len(tc.spans))
		require.Equal(t, tc.want, redactText(tc.text, compile(tc.spans...), found), tc.text)
		require.Equal(t, tc.found, found, tc.text)
	}
}

// A transcript that is not an array of objects, or misses a quote, is not redacted.
func TestRedactMessagesRefuses(t *testing.T) {
	t.Parallel()
	_, ok, err := redactMessages([]byte(`{"content": "Zagreb"}`), nil, []string{"Zagreb"})
	require.NoError(t, err)
	require.False(t, ok)
	_, ok, err = redactMessages([]byte(`[{"role": "user", "content": "Zagreb"}]`), []string{"Split"}, []string{"Zagreb"})
	require.NoError(t, err)
	require.False(t, ok)
	out, ok, err := redactMessages([]byte(`[{"role": "user", "content": "Zagreb <&> \"x\"", "name": null}]`), []string{"\"X\""}, []string{"Zagreb"})
	require.NoError(t, err)
	require.True(t, ok)
	require.JSONEq(t, `[{"role": "user", "content": "[redacted] <&> [redacted]", "name": null}]`, string(out))
}

// A kept belief whose quote overlaps the purged one keeps its quote without the purged
// words: they are nowhere, and its quote is still found in the redacted transcript.
func TestPurgeScrubsOverlappingQuotes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	const scope = "user:ana"
	ep := insertTranscript(t, bundle, scope, "conv-1", userSays("I have a dog named Rex, and my gate code is 4417."))
	res := mustApply(t, store, from(ep, extraction(scope, "2026-01-02", nil,
		quoted(fact("User has a dog named Rex", "pet", ""), "I have a dog named Rex, and my gate code is 4417"),
		quoted(fact("User's gate code is 4417", "gate_code", ""), "my gate code is 4417"))))
	dog, code := res.Facts[0].BeliefID, res.Facts[1].BeliefID

	purged, err := store.Purge(ctx, Selection{Scope: scope, IDs: []int64{code}})
	require.NoError(t, err)
	require.EqualValues(t, 1, purged.Counts[CountRedactedEpisodes], "the first transcript stays for the dog")
	require.Empty(t, mentions(t, bundle, "gate code is 4417"), "neither the transcript nor the dog's quote keeps the purged quote")
	kept := belief(t, store, dog)
	require.Equal(t, "I have a dog named Rex, and [redacted]", *kept.Quote)
	got, err := store.Episode(ctx, ep)
	require.NoError(t, err)
	require.Contains(t, got.Messages[0].Content, *kept.Quote, "the kept quote is still found in its transcript")
}

// A kept quote that shares only part of the purged span loses that part, in both
// directions; review items and scope jobs that quote the purged span go.
func TestPurgeScrubsWhatQuotesThePurgedSpan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const scope = "user:ana"
	for _, tc := range []struct {
		name, said, purged, kept, want string
	}{
		{"KeptStartsInside", "My gate code is 4417 and I have a dog named Rex.", "My gate code is 4417",
			"code is 4417 and I have a dog named Rex", "[redacted] and I have a dog named Rex"},
		{"KeptEndsInside", "I have a dog named Rex, my gate code is 4417.", "Rex, my gate code is 4417",
			"I have a dog named Rex", "I have a dog named [redacted]"},
		{"Unicode", "Ich heiße Åsa, mein Code ist 4417.", "Åsa, mein Code ist 4417",
			"Ich heiße Åsa", "Ich heiße [redacted]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store, bundle := setup(t)
			prior := mustApply(t, store, extraction(scope, "2026-01-01", nil, fact("User's door is blue", "door", ""))).Facts[0].BeliefID
			ep := insertTranscript(t, bundle, scope, "conv-1", userSays(tc.said))
			guess := resolves(quoted(fact("User may have repainted the door", "door", ""), tc.purged), 0, ActionSupersede, ReasonTemporal)
			guess.Origin = OriginInferred
			res := mustApply(t, store, from(ep, extraction(scope, "2026-01-02", []int64{prior},
				quoted(fact("User's gate code is 4417", "gate_code", ""), tc.purged),
				quoted(fact("User has a dog", "pet", ""), tc.kept), guess)))
			require.Equal(t, OutcomeConflict, res.Facts[2].Kind, "a refused proposal quotes the purged span")
			insertJob(t, bundle, "credo.extract_scope", map[string]string{"scope": scope}, `llm: bad answer: {"quote": "`+tc.purged+`"}`)

			_, err := store.Purge(ctx, Selection{Scope: scope, IDs: []int64{res.Facts[0].BeliefID}})
			require.NoError(t, err)
			require.Empty(t, mentions(t, bundle, "4417"), "the purged span is nowhere")
			kept := belief(t, store, res.Facts[1].BeliefID)
			require.Equal(t, tc.want, *kept.Quote)
			got, err := store.Episode(ctx, ep)
			require.NoError(t, err)
			require.NotNil(t, got.RedactedAt)
			require.Contains(t, got.Messages[0].Content, *kept.Quote, "the kept quote is still found in its transcript")
		})
	}
}

// The redacted transcript's content hash is not the original's: with it, the original
// hash would confirm a guess of the purged words.
func TestPurgeRedactionDropsTheOriginalHash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	const scope = "user:ana"
	ep := insertTranscript(t, bundle, scope, "conv-1", userSays("My gate code is 4417. I have a dog named Rex."))
	_, original := episodeRow(t, bundle, ep)
	res := mustApply(t, store, from(ep, extraction(scope, "2026-01-02", nil,
		quoted(fact("User's gate code is 4417", "gate_code", ""), "My gate code is 4417"),
		quoted(fact("User has a dog named Rex", "pet", ""), "I have a dog named Rex"))))
	_, err := store.Purge(ctx, Selection{Scope: scope, IDs: []int64{res.Facts[0].BeliefID}})
	require.NoError(t, err)
	_, hash := episodeRow(t, bundle, ep)
	require.NotEqual(t, original, hash)
	require.Regexp(t, `^redacted:[0-9a-f]{64}$`, hash)
	require.Empty(t, mentions(t, bundle, original), "the original hash is nowhere")
}

// A kept quote copied with case folding that widens one character and narrows another
// has the length of its copy but not its offsets: all of it goes, not a shifted span.
func TestScrubQuoteMisalignedCopy(t *testing.T) {
	t.Parallel()
	patterns, err := spanPatterns([]string{"PIN is 5521"}, nil)
	require.NoError(t, err)
	require.Equal(t, "[redacted]", scrubQuote("s dog PIN iſ", newScrubSource(patterns, []string{"ſ dog PIN is 5521"})))
	require.Equal(t, "[redacted] dog", scrubQuote("PIN is 5521 dog", newScrubSource(patterns, []string{"pin IS 5521 DOG"})))
	require.Equal(t, "a dog [redacted]", scrubQuote("a dog PIN", newScrubSource(patterns, []string{"A DOG pin is 5521"})))
}
