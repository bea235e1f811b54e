package reliability_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/pipelinetest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/transcript"
)

// TestOrderIndependence: the same episodes processed one at a time in order, one at a
// time in reverse, and all at once by 8 workers end in the same beliefs: statements,
// statuses, links and validity intervals.
func TestOrderIndependence(t *testing.T) {
	t.Parallel()
	episodes := movesEpisodes(7, 4, 9)
	scopes := scopesOf(episodes)
	reversed := slices.Clone(episodes)
	slices.Reverse(reversed)

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
			// The first 8 extractions are held until all 8 are in flight: with 4 scopes,
			// some of them overlap in a scope for sure.
			first := newBarrier(8)
			p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
				first.wait()
				return movesAnswer(req)
			})
			p.Enqueue(t, episodes...)
			p.Drain(t)
			require.True(t, first.opened(), "8 extractions were in flight at once")
			t.Logf("%d chat calls for %d episodes", p.LLM.ChatCount(), len(episodes))
			require.Greater(t, p.LLM.ChatCount(), len(episodes),
				"an extraction that overlapped another of its scope was asked again")
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
				require.Equal(t, len(episodes), count(t, p.Schema.Pool, "SELECT count(*) FROM belief"))
				require.Equal(t, 0, count(t, p.Schema.Pool, "SELECT count(*) FROM belief_conflict"))
				wantChains(t, p.Store, episodes)
				mu.Lock()
				defer mu.Unlock()
				shapes[mode.name] = shape(t, p.Store, scopes)
			})
		}
	})
	if t.Failed() {
		return
	}
	want := shapes["sequential"]
	require.Len(t, want, len(episodes))
	require.Equal(t, want, shapes["reverse"], "reverse order")
	require.Equal(t, want, shapes["concurrent"], "8 concurrent workers")
}
