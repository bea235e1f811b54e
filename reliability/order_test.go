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
// time in reverse, and all enqueued at once for 8 workers end in the same beliefs:
// statements, statuses, links and validity intervals.
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
