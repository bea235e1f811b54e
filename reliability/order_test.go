package reliability_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/transcript"
)

// TestOrderIndependence: the same episodes processed one at a time in order, one at a
// time in reverse, all enqueued at once for 8 workers, and arriving shuffled while 3
// workers run end in the same memory: statements, statuses, links, validity intervals,
// the episodes each belief rests on, and revision events that agree with the links.
// Some episodes restate a value said earlier in other words, on a later day.
func TestOrderIndependence(t *testing.T) {
	t.Parallel()
	episodes, restated := withRestatements(movesEpisodes(7, 4, 9), 8)
	require.Positive(t, restated)
	slices.SortStableFunc(episodes, func(a, b transcript.Transcript) int { return a.OccurredAt.Compare(*b.OccurredAt) })
	scopes := scopesOf(episodes)
	reversed := slices.Clone(episodes)
	slices.Reverse(reversed)
	shuffled := slices.Clone(episodes)
	rand.New(rand.NewPCG(3, 1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })

	oneAtATime := func(ts []transcript.Transcript) func(*testing.T, *pipelinetest.Pipeline) {
		return func(t *testing.T, p *pipelinetest.Pipeline) {
			for _, tr := range ts {
				p.Enqueue(t, tr)
				p.Drain(t)
			}
		}
	}
	modes := []struct {
		name    string
		workers int
		run     func(*testing.T, *pipelinetest.Pipeline)
	}{
		{"sequential", 1, oneAtATime(episodes)},
		{"reverse", 1, oneAtATime(reversed)},
		{"concurrent", 8, func(t *testing.T, p *pipelinetest.Pipeline) {
			// The first extractions are held until one of each of the 4 scopes is in
			// flight: the scopes run at once, each one's episodes one at a time.
			first := newBarrier(len(scopes))
			p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
				first.wait()
				return movesAnswer(req)
			})
			p.Enqueue(t, episodes...)
			p.Drain(t)
			require.True(t, first.opened(), "every scope was extracted at once")
			require.Equal(t, len(episodes), p.LLM.ChatCount(),
				"one chat call per episode: extractions of one scope never overlap, so none is asked again")
		}},
		{"shuffled", 3, func(t *testing.T, p *pipelinetest.Pipeline) {
			// Episodes arrive one by one in no order while the workers run: a scope's
			// later days are often extracted before its earlier ones.
			for _, tr := range shuffled {
				p.Enqueue(t, tr)
			}
			p.Drain(t)
		}},
	}

	var (
		mu     sync.Mutex
		shapes = map[string][]string{}
	)
	t.Run("modes", func(t *testing.T) {
		for _, mode := range modes {
			t.Run(mode.name, func(t *testing.T) {
				t.Parallel()
				p := pipelinetest.New(t, &pipelinetest.Options{Workers: mode.workers, MaxAttempts: 10,
					LLMOptions: []llmtest.Option{llmtest.WithLatency(20 * time.Millisecond)}})
				p.LLM.Handle(movesAnswer)
				mode.run(t, p)

				require.Equal(t, len(episodes), count(t, p.Schema.Pool, "SELECT count(*) FROM episode WHERE state = 'applied'"))
				require.Equal(t, len(episodes)-restated, count(t, p.Schema.Pool, "SELECT count(*) FROM belief"))
				require.Equal(t, 0, count(t, p.Schema.Pool, "SELECT count(*) FROM belief_conflict"))
				wantChains(t, p.Store, episodes)
				wantEventsFollowLinks(t, p.Store, scopes)
				mu.Lock()
				defer mu.Unlock()
				shapes[mode.name] = slices.Concat(shape(t, p.Store, scopes), provenance(t, p, scopes))
			})
		}
	})
	if t.Failed() {
		return
	}
	want := shapes["sequential"]
	require.Len(t, want, 2*(len(episodes)-restated)+len(episodes)-len(scopes)*2)
	for _, mode := range modes[1:] {
		require.Equal(t, want, shapes[mode.name], mode.name)
	}
}

// withRestatements adds, for up to n location values of ts, an episode on a later day
// while the value held, saying it again without a date ("I still live in Porto."). It
// returns the episodes and the number added.
func withRestatements(ts []transcript.Transcript, n int) ([]transcript.Transcript, int) {
	type value struct {
		scope, city string
		from        time.Time
	}
	var values []value
	for _, tr := range ts {
		if m := slots[0].said.FindStringSubmatch(tr.Messages[0].Content); m != nil {
			from, err := time.Parse(time.DateOnly, m[2])
			if err != nil {
				panic(err)
			}
			values = append(values, value{tr.Scope, m[1], from})
		}
	}
	slices.SortFunc(values, func(a, b value) int { return cmp.Or(strings.Compare(a.scope, b.scope), a.from.Compare(b.from)) })
	out := slices.Clone(ts)
	added := 0
	for i, v := range values {
		until := v.from.AddDate(0, 0, 60)
		if i+1 < len(values) && values[i+1].scope == v.scope {
			until = values[i+1].from
		}
		days := int(until.Sub(v.from).Hours() / 24)
		if days < 4 || added == n {
			continue
		}
		at := v.from.AddDate(0, 0, days/2).Add(9 * time.Hour)
		out = append(out, pipelinetest.T(v.scope, fmt.Sprintf("%s-still-%02d", v.scope, i), at.Format(time.RFC3339),
			fmt.Sprintf("I still live in %s.", v.city)))
		added++
	}
	return out, added
}

// provenance is, for the scopes, each belief with the episodes it rests on and each
// revision event with the episode credited, ids replaced by statements and external ids.
func provenance(tb testing.TB, p *pipelinetest.Pipeline, scopes []string) []string {
	tb.Helper()
	ctx := context.Background()
	rows, err := p.Schema.Pool.Query(ctx, "SELECT id, external_id FROM episode")
	require.NoError(tb, err)
	external := map[int64]string{}
	var (
		id  int64
		ext string
	)
	for rows.Next() {
		require.NoError(tb, rows.Scan(&id, &ext))
		external[id] = ext
	}
	require.NoError(tb, rows.Err())

	var out []string
	for _, scope := range scopes {
		all, err := p.Store.All(ctx, scope)
		require.NoError(tb, err)
		for _, b := range all {
			var from []string
			for _, id := range b.Episodes {
				from = append(from, external[id])
			}
			out = append(out, fmt.Sprintf("%s|%s|episode=%s|quote=%q|episodes=%q", scope, b.Statement, external[*b.EpisodeID], *b.Quote, from))
		}
		events, err := p.Store.Events(ctx, scope, 0)
		require.NoError(tb, err)
		for _, e := range events {
			out = append(out, fmt.Sprintf("%s|event %s %s → %s|episode=%s|excerpt=%q", scope, e.Action, e.OldStatement,
				deref(e.NewStatement), external[*e.EpisodeID], deref(e.Excerpt)))
		}
	}
	slices.Sort(out)
	return out
}

// wantEventsFollowLinks checks that every supersession link has exactly one supersede
// event, and every supersede event is a link: the few-shot examples never contradict
// the history.
func wantEventsFollowLinks(tb testing.TB, store *memory.Store, scopes []string) {
	tb.Helper()
	ctx := context.Background()
	for _, scope := range scopes {
		all, err := store.All(ctx, scope)
		require.NoError(tb, err)
		links := map[[2]int64]int{}
		for _, b := range all {
			for _, by := range b.SupersededBy {
				links[[2]int64{b.ID, by}] = 0
			}
		}
		events, err := store.Events(ctx, scope, 0)
		require.NoError(tb, err)
		for _, e := range events {
			if e.Action != memory.ActionSupersede {
				continue
			}
			key := [2]int64{e.OldBeliefID, *e.NewBeliefID}
			_, ok := links[key]
			require.True(tb, ok, "%s: event %q → %q is not a link", scope, e.OldStatement, *e.NewStatement)
			links[key]++
		}
		for link, n := range links {
			require.Equal(tb, 1, n, "%s: link %d → %d has %d events", scope, link[0], link[1], n)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}
