package memory

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// said is one episode: on day at, the user says statement in the words of quote.
type said struct{ at, statement, quote string }

// sayAll applies each episode in turn as extraction would, with the scope's active
// beliefs as candidates: a new value supersedes the current one (temporal), the same
// value arrives as restate says (no directive, a reinforce, or a supersede of itself).
func sayAll(t *testing.T, store *Store, bundle *testBundle, scope string, restate Action, episodes []said) {
	t.Helper()
	ctx := context.Background()
	for _, s := range episodes {
		current, err := store.Current(ctx, scope)
		require.NoError(t, err)
		switch {
		case len(current) == 0:
			say(t, store, bundle, scope, s, "", "", "")
		case current[0].Statement != s.statement:
			say(t, store, bundle, scope, s, "", ActionSupersede, ReasonTemporal)
		case restate == ActionReinforce:
			say(t, store, bundle, scope, s, "", ActionReinforce, ReasonRestated)
		case restate == ActionSupersede:
			say(t, store, bundle, scope, s, "", ActionSupersede, ReasonTemporal)
		default:
			say(t, store, bundle, scope, s, "", "", "")
		}
	}
}

// say applies one episode that happened on day at (s.at when empty), whose fact revises
// the scope's current belief as action says (none when empty).
func say(t *testing.T, store *Store, bundle *testBundle, scope string, s said, at string, action Action, reason Reason) *Result {
	t.Helper()
	current, err := store.Current(context.Background(), scope)
	require.NoError(t, err)
	f := fact(s.statement, "location", s.at)
	f.Quote = s.quote
	if action != "" {
		f = resolves(f, 0, action, reason)
	}
	at = cmp.Or(at, s.at)
	b := extraction(scope, at, ids(current), f)
	id := insertEpisode(t, bundle, scope, s.quote, at)
	b.EpisodeID = &id
	return mustApply(t, store, b)
}

// provenance is every belief and revision event of scope with ids replaced by what
// they stand for (statements, episode texts), so that runs in different orders compare.
func provenance(t *testing.T, store *Store, bundle *testBundle, scope string) []string {
	t.Helper()
	ctx := context.Background()
	texts := map[int64]string{}
	rows, err := bundle.schema.Pool.Query(ctx, "SELECT id, messages->0->>'content' FROM episode WHERE scope = $1", scope)
	require.NoError(t, err)
	for rows.Next() {
		var (
			id   int64
			text string
		)
		require.NoError(t, rows.Scan(&id, &text))
		texts[id] = text
	}
	require.NoError(t, rows.Err())
	episode := func(id *int64) string {
		if id == nil {
			return "-"
		}
		return texts[*id]
	}

	all, err := store.All(ctx, scope)
	require.NoError(t, err)
	out := shape(all)
	for _, b := range all {
		var from []string
		for _, id := range b.Episodes {
			from = append(from, texts[id])
		}
		out = append(out, fmt.Sprintf("belief %s: episode=%q quote=%q episodes=%q", b.Statement, episode(b.EpisodeID), *b.Quote, from))
	}
	events, err := store.Events(ctx, scope, 0)
	require.NoError(t, err)
	for _, e := range events {
		next := "-"
		if e.NewStatement != nil {
			next = *e.NewStatement
		}
		out = append(out, fmt.Sprintf("event %s %s → %s: episode=%q excerpt=%q", e.Action, e.OldStatement, next, episode(e.EpisodeID), *e.Excerpt))
	}
	slices.Sort(out)
	return out
}

// A belief said again keeps the earliest start among its statements and lists every
// episode that said it, whatever the order the episodes were processed in and however
// the model marks the restatement.
func TestRestatementOrderIndependence(t *testing.T) {
	t.Parallel()
	const boston = "User lives in Boston"
	jan2 := said{"2026-01-02", miami, "I live in Miami now."}
	jan10 := said{"2026-01-10", miami, "Still in Miami, as I said."}
	moved := said{"2025-06-01", boston, "I live in Boston."}

	for _, restate := range []Action{"", ActionReinforce, ActionSupersede} {
		t.Run("Restate"+string(restate), func(t *testing.T) {
			t.Parallel()
			store, bundle := setup(t)
			ctx := context.Background()

			sayAll(t, store, bundle, "in-order", restate, []said{jan2, jan10})
			sayAll(t, store, bundle, "reverse", restate, []said{jan10, jan2})
			want := provenance(t, store, bundle, "in-order")
			require.Equal(t, want, provenance(t, store, bundle, "reverse"))

			current, err := store.Current(ctx, "reverse")
			require.NoError(t, err)
			require.Len(t, current, 1)
			require.Equal(t, day("2026-01-02"), current[0].ValidFrom, "the earliest statement's start")
			require.Equal(t, 1, current[0].ReinforcedCount)
			require.Len(t, current[0].Episodes, 2, "both episodes support it")
			candidates, err := store.CurrentUpTo(ctx, "reverse", 10)
			require.NoError(t, err)
			require.Nil(t, candidates[0].Episodes, "a writer's read leaves provenance out")
			asOf, err := store.AsOf(ctx, "reverse", day("2026-01-05"))
			require.NoError(t, err)
			require.Equal(t, []string{miami}, statementsOf(asOf), "as-of reads agree")
		})
	}

	t.Run("AfterAMove", func(t *testing.T) {
		t.Parallel()
		store, bundle := setup(t)
		sayAll(t, store, bundle, "in-order", "", []said{moved, jan2, jan10})
		want := provenance(t, store, bundle, "in-order")
		require.Contains(t, want, boston+"|superseded|2025-06-01..2026-01-02|supersedes=[]|by=["+miami+"]|seen=0")
		for i, order := range [][]said{{moved, jan10, jan2}, {jan10, moved, jan2}, {jan10, jan2, moved}, {jan2, jan10, moved}} {
			scope := fmt.Sprintf("order-%d", i)
			sayAll(t, store, bundle, scope, "", order)
			require.Equal(t, want, provenance(t, store, bundle, scope), "order %d", i)
		}
	})

	t.Run("ValueCameBack", func(t *testing.T) {
		t.Parallel()
		// Miami, then Boston, then Miami again: the Miami of 2025 is not the current one
		// said early but history of its own, however the model marks it.
		store, bundle := setup(t)
		early := said{"2025-01-01", miami, "I lived in Miami."}
		back := said{"2026-01-10", miami, "I moved back to Miami."}
		sayAll(t, store, bundle, "in-order", "", []said{early, moved, back})
		want := provenance(t, store, bundle, "in-order")
		require.Contains(t, want, miami+"|superseded|2025-01-01..2025-06-01|supersedes=[]|by=["+boston+"]|seen=0")
		for _, restate := range []Action{"", ActionReinforce, ActionSupersede} {
			// Boston is applied before both Miamis are known: once both are, they are one
			// belief, and a restatement once merged is not split again (docs/design.md).
			for i, order := range [][]said{{moved, back, early}, {back, moved, early}, {moved, early, back}} {
				scope := fmt.Sprintf("marked-%s-order-%d", restate, i)
				sayAll(t, store, bundle, scope, restate, order)
				require.Equal(t, want, provenance(t, store, bundle, scope), "marked %q, order %d", restate, i)
			}
		}
		sayAll(t, store, bundle, "outcome", "", []said{moved, back})
		res := say(t, store, bundle, "outcome", early, "", "", "")
		require.Equal(t, OutcomeBackfilled, res.Facts[0].Kind, "stored as history, not a duplicate")
	})
}

// Revision events agree with the supersession links in every order: a backfill that
// goes between two beliefs rewrites the event that linked them.
func TestBackfillRewritesEvents(t *testing.T) {
	t.Parallel()
	store, bundle := setup(t)
	ctx := context.Background()
	a := said{"2020-01-10", "User lives in Austin", "I live in Austin."}
	b := said{"2022-03-01", "User lives in Boston", "I moved to Boston."}
	c := said{"2024-06-01", "User lives in Chicago", "Now I live in Chicago."}
	orders := [][]said{{a, b, c}, {c, b, a}, {b, a, c}, {b, c, a}, {c, a, b}, {a, c, b}}
	sayAll(t, store, bundle, "order-0", "", orders[0])
	want := provenance(t, store, bundle, "order-0")
	for i, order := range orders[1:] {
		scope := fmt.Sprintf("order-%d", i+1)
		sayAll(t, store, bundle, scope, "", order)
		require.Equal(t, want, provenance(t, store, bundle, scope), "order %d", i+1)

		all, err := store.All(ctx, scope)
		require.NoError(t, err)
		events, err := store.Events(ctx, scope, 0)
		require.NoError(t, err)
		require.Len(t, events, 2, "order %d: one event per link", i+1)
		for _, e := range events {
			old := all[slices.IndexFunc(all, func(x Belief) bool { return x.ID == e.OldBeliefID })]
			require.Equal(t, []int64{*e.NewBeliefID}, old.SupersededBy, "order %d: the event %q → %q is a link", i+1, e.OldStatement, *e.NewStatement)
		}
	}
}

// In random worlds of moves and restatements, every order of the episodes reaches the
// state of the order of their dates.
func TestRestatementsInAnyOrder(t *testing.T) {
	t.Parallel()
	store, bundle := setup(t)
	rng := rand.New(rand.NewPCG(11, 3))
	cities := []string{"Austin", "Boston", "Chicago", "Denver", "El Paso", "Fresno"}
	for world := range 12 {
		// Values a few months apart, each said once more, and some twice, while it held.
		var episodes []said
		start := day("2024-01-01")
		for i, city := range cities[:3+rng.IntN(3)] {
			from := start.AddDate(0, 3*i, rng.IntN(20))
			statement := "User lives in " + city
			episodes = append(episodes, said{from.Format(time.DateOnly), statement, "I moved to " + city + "."})
			for j := range 1 + rng.IntN(2) {
				again := from.AddDate(0, 0, 25+30*j+rng.IntN(5))
				episodes = append(episodes, said{again.Format(time.DateOnly), statement, fmt.Sprintf("Still in %s (%d).", city, j)})
			}
		}
		inOrder := fmt.Sprintf("world-%d", world)
		sayAll(t, store, bundle, inOrder, "", episodes)
		want := provenance(t, store, bundle, inOrder)
		for run := range 3 {
			shuffled := slices.Clone(episodes)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			scope := fmt.Sprintf("world-%d-run-%d", world, run)
			sayAll(t, store, bundle, scope, "", shuffled)
			require.Equal(t, want, provenance(t, store, bundle, scope), "world %d, order %v", world, shuffled)
		}
	}
}

// Rules of placement in a chain that holds beliefs which never held: a restatement never
// moves back past an older belief that held, a backfill never revives a belief retracted
// as never true, nor folds into a forgotten one, and statements of one start keep the
// earliest episode's provenance in any order.
func TestPlacementInChains(t *testing.T) {
	t.Parallel()
	const boston, denver, chicago = "User lives in Boston", "User lives in Denver", "User lives in Chicago"
	ctx := context.Background()

	t.Run("PastABeliefThatNeverHeld", func(t *testing.T) {
		t.Parallel()
		// Boston, then Denver, replaced by Chicago the day it began: Denver never held.
		store, bundle := setup(t)
		const austin = "User lives in Austin"
		for _, scope := range []string{"early", "backfill", "restate"} {
			sayAll(t, store, bundle, scope, "", []said{{"2025-06-01", boston, "I live in Boston."}, {"2025-09-01", denver, "I live in Denver."}})
			say(t, store, bundle, scope, said{"2025-09-01", chicago, "Later that day: Chicago."}, "", ActionSupersede, ReasonTemporal)
		}
		// Chicago said to hold before Boston does not move back past Boston, which held.
		sayAll(t, store, bundle, "early", "", []said{{"2025-01-01", chicago, "I lived in Chicago."}})
		all, err := store.All(ctx, "early")
		require.NoError(t, err)
		require.Equal(t, []string{
			boston + "|superseded|2025-06-01..2025-09-01|supersedes=[" + chicago + "]|by=[" + denver + "]|seen=0",
			chicago + "|active|2025-09-01..-|supersedes=[" + denver + "]|by=[]|seen=0",
			chicago + "|superseded|2025-01-01..2025-06-01|supersedes=[]|by=[" + boston + "]|seen=0",
			denver + "|superseded|2025-09-01..2025-09-01|supersedes=[" + boston + "]|by=[" + chicago + "]|seen=0",
		}, sorted(shape(all)))
		asOf, err := store.AsOf(ctx, "early", day("2025-07-01"))
		require.NoError(t, err)
		require.Equal(t, []string{boston}, statementsOf(asOf))
		// Austin from August goes between Boston and Denver, as it would have in order.
		sayAll(t, store, bundle, "backfill", "", []said{{"2025-08-01", austin, "I lived in Austin from August."}})
		all, err = store.All(ctx, "backfill")
		require.NoError(t, err)
		require.Equal(t, []string{
			austin + "|superseded|2025-08-01..2025-09-01|supersedes=[" + boston + "]|by=[" + denver + "]|seen=0",
			boston + "|superseded|2025-06-01..2025-08-01|supersedes=[]|by=[" + austin + "]|seen=0",
			chicago + "|active|2025-09-01..-|supersedes=[" + denver + "]|by=[]|seen=0",
			denver + "|superseded|2025-09-01..2025-09-01|supersedes=[" + austin + "]|by=[" + chicago + "]|seen=0",
		}, sorted(shape(all)))
		requireEventsFollowLinks(t, store, "backfill")
		// Chicago said to hold since August ends Boston then, past Denver.
		sayAll(t, store, bundle, "restate", "", []said{{"2025-08-01", chicago, "I have lived in Chicago since August."}})
		asOf, err = store.AsOf(ctx, "restate", day("2025-08-15"))
		require.NoError(t, err)
		require.Equal(t, []string{chicago}, statementsOf(asOf))
	})

	t.Run("AfterACorrection", func(t *testing.T) {
		t.Parallel()
		store, bundle := setup(t)
		sayAll(t, store, bundle, "u", "", []said{{"2025-06-01", boston, "I live in Boston."}})
		say(t, store, bundle, "u", said{"2025-09-01", chicago, "I never lived in Boston; Chicago since September."}, "", ActionRetract, ReasonCorrection)
		sayAll(t, store, bundle, "u", "", []said{{"2025-07-01", denver, "I lived in Denver in July."}})
		all, err := store.All(ctx, "u")
		require.NoError(t, err)
		bos := byStatement(t, all, boston)
		require.Equal(t, StatusRetracted, bos.Status)
		require.Equal(t, bos.ValidFrom, *bos.ValidUntil, "Boston never held, and still did not")
		den := byStatement(t, all, denver)
		require.Equal(t, day("2025-09-01"), *den.ValidUntil)
		requireEventsFollowLinks(t, store, "u")
	})

	t.Run("NotIntoAForgottenBelief", func(t *testing.T) {
		t.Parallel()
		store, bundle := setup(t)
		const austin = "User lives in Austin"
		sayAll(t, store, bundle, "u", "", []said{{"2020-01-10", austin, "Austin."}, {"2022-01-10", boston, "Boston."}, {"2024-01-10", chicago, "Chicago."}})
		all, err := store.All(ctx, "u")
		require.NoError(t, err)
		forgotten := byStatement(t, all, boston).ID
		_, err = store.Forget(ctx, Selection{Scope: "u", IDs: []int64{forgotten}})
		require.NoError(t, err)
		res := say(t, store, bundle, "u", said{"2021-01-10", boston, "I live in Boston (2021)."}, "", ActionSupersede, ReasonTemporal)
		require.Equal(t, OutcomeBackfilled, res.Facts[0].Kind, "a new belief, not the forgotten one")
		require.NotEqual(t, forgotten, res.Facts[0].BeliefID)
		asOf, err := store.AsOf(ctx, "u", day("2021-06-01"))
		require.NoError(t, err)
		require.Equal(t, []string{boston}, statementsOf(asOf))
		asOf, err = store.AsOf(ctx, "u", day("2020-06-01"))
		require.NoError(t, err)
		require.Equal(t, []string{austin}, statementsOf(asOf))
		requireEventsFollowLinks(t, store, "u")
	})

	t.Run("SameStartEarliestEpisode", func(t *testing.T) {
		t.Parallel()
		store, bundle := setup(t)
		first := said{"2026-01-01", miami, "I moved to Miami on New Year's day."}
		second := said{"2026-01-01", miami, "Since Jan 1 I live in Miami."}
		// The episodes happen in this order; their facts share one start.
		for _, run := range []struct {
			scope string
			order []said
		}{{"in-order", []said{first, second}}, {"reverse", []said{second, first}}} {
			for i, s := range run.order {
				at, action := "2026-01-02", Action("")
				if s == second {
					at = "2026-01-10"
				}
				if i > 0 {
					action = ActionReinforce
				}
				say(t, store, bundle, run.scope, s, at, action, ReasonRestated)
			}
		}
		require.Equal(t, provenance(t, store, bundle, "in-order"), provenance(t, store, bundle, "reverse"))
	})
}

// requireEventsFollowLinks checks that the scope's visible revision events and its
// links between beliefs that are not forgotten are the same: one event per link.
func requireEventsFollowLinks(t *testing.T, store *Store, scope string) {
	t.Helper()
	ctx := context.Background()
	all, err := store.All(ctx, scope)
	require.NoError(t, err)
	status := map[int64]Status{}
	for _, b := range all {
		status[b.ID] = b.Status
	}
	var links, linked []string
	for _, b := range all {
		for _, next := range b.SupersededBy {
			if b.Status != StatusForgotten && status[next] != StatusForgotten {
				links = append(links, fmt.Sprintf("%d→%d", b.ID, next))
			}
		}
	}
	events, err := store.Events(ctx, scope, 0)
	require.NoError(t, err)
	for _, e := range events {
		if e.NewBeliefID != nil {
			linked = append(linked, fmt.Sprintf("%d→%d", e.OldBeliefID, *e.NewBeliefID))
		}
	}
	require.ElementsMatch(t, links, linked, "links and the events that record them")
}

func sorted(xs []string) []string {
	slices.Sort(xs)
	return xs
}

// An event a backfill rewrites, or records between other beliefs, loses the writer's
// vector, which was of another text: it is embedded again from its own.
func TestBackfilledEventsAreEmbeddedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	const austin, boston, chicago = "User lives in Austin", "User lives in Boston", "User lives in Chicago"
	say := func(statement, at, quote string, event []float32) {
		current, err := store.Current(ctx, "u")
		require.NoError(t, err)
		f := fact(statement, "location", at)
		f.Quote, f.Embedding = quote, []float32{1, 0, 0}
		if len(current) > 0 {
			f = resolves(f, 0, ActionSupersede, ReasonTemporal)
			f.EventEmbedding = event
		}
		b := extraction("u", at, ids(current), f)
		b.EmbedModel = "m3"
		mustApply(t, store, b)
	}
	say(austin, "2020-01-10", "I live in Austin.", nil)
	say(chicago, "2024-06-01", "Now I live in Chicago.", nil)
	// A reader finds the event Austin → Chicago unembedded and embeds it after a backfill
	// rewrote it: the vector of the old text is not stored.
	stale, err := store.Unembedded(ctx, "u", "m3", 10)
	require.NoError(t, err)
	require.Len(t, stale, 1)
	say(boston, "2022-03-01", "I moved to Boston.", []float32{0, 0, 1})
	stored, err := store.SetEmbeddings(ctx, "m3", stale, [][]float32{{1, 1, 0}})
	require.NoError(t, err)
	require.Zero(t, stored, "the event's text changed since it was read")

	pending, err := store.Unembedded(ctx, "u", "m3", 10)
	require.NoError(t, err)
	var texts []string
	for _, u := range pending {
		if u.Event {
			texts = append(texts, u.Text)
		}
	}
	require.ElementsMatch(t, []string{
		EventText(austin, "I moved to Boston.", boston),
		EventText(boston, "Now I live in Chicago.", chicago),
	}, texts)
	var embedded int
	require.NoError(t, bundle.schema.Pool.QueryRow(ctx, "SELECT count(*) FROM revision_event WHERE embedding IS NOT NULL").Scan(&embedded))
	require.Zero(t, embedded, "no event keeps a vector of another text")
}

// SetEmbeddings never waits on a row a writer holds: the row stays unembedded, for the
// next reader, and the writer and the reader never deadlock.
func TestSetEmbeddingsSkipsLockedRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	mustApply(t, store, extraction("u", "2026-01-02", nil, fact("User lives in Miami", "location", "")))
	require.NoError(t, store.EnsureEmbeddingModel(ctx, "m3", 3))
	pending, err := store.Unembedded(ctx, "u", "m3", 10)
	require.NoError(t, err)
	require.Len(t, pending, 1)

	tx, err := bundle.schema.Pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, "SELECT 1 FROM belief WHERE scope = 'u' AND id = $1 FOR UPDATE", pending[0].ID)
	require.NoError(t, err)
	quick, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	stored, err := store.SetEmbeddings(quick, "m3", pending, [][]float32{{1, 0, 0}})
	require.NoError(t, err, "returns without waiting")
	require.Zero(t, stored)
	require.NoError(t, tx.Rollback(ctx))

	left, err := store.Unembedded(ctx, "u", "m3", 10)
	require.NoError(t, err)
	require.Equal(t, pending, left, "the held row is embedded next time")
	stored, err = store.SetEmbeddings(ctx, "m3", left, [][]float32{{1, 0, 0}})
	require.NoError(t, err)
	require.Equal(t, 1, stored)
	left, err = store.Unembedded(ctx, "u", "m3", 10)
	require.NoError(t, err)
	require.Empty(t, left)
}
