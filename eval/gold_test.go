package eval_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
)

// goldEmbedder is the wire-level fake's embedder, as the eval command's tests use it.
func goldEmbedder(t *testing.T) llm.Embedder {
	t.Helper()
	srv := llmtest.NewServer(t)
	provider, err := llm.NewOpenAI(srv.OpenAIConfig())
	require.NoError(t, err)
	return provider
}

// The gold labels answer every shipped scenario, and through the real pipeline
// (enqueue, extraction jobs, consolidation, the review of dependents, recall) score
// 1.0 on every metric: no expectation of the set asks for what a correct answer cannot
// give. It runs against whatever CREDO_TEST_DATABASE_URL names, a Citus coordinator
// included, and is the baseline a cluster's run must match.
func TestGoldScoresEveryScenario(t *testing.T) {
	t.Parallel()
	scenarios, err := eval.Shipped()
	require.NoError(t, err)
	labels, err := eval.ShippedLabels()
	require.NoError(t, err)
	gold, err := eval.NewGold(scenarios, labels, nil, 0)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := eval.Run(ctx, scenarios, eval.Config{DatabaseURL: dbtest.URL(), Chat: gold, Embed: goldEmbedder(t),
		EmbedModel: llmtest.DefaultEmbedModel, Learning: true, Workers: 8})
	require.NoError(t, err)

	var failed []string
	for _, s := range res.Scenarios {
		for _, e := range s.Errors {
			failed = append(failed, fmt.Sprintf("%s: error: %s", s.Name, e))
		}
		for _, ep := range s.Episodes {
			if ep.Error != "" {
				failed = append(failed, fmt.Sprintf("%s/%s: %s", s.Name, ep.Transcript, ep.Error))
			}
		}
		for _, c := range s.Checks {
			if !c.Pass {
				failed = append(failed, fmt.Sprintf("%s: %s %s: want %s, got %s; seen %s", s.Name, c.Kind, c.Expect, c.Want, c.Got,
					strings.Join(c.Seen, " | ")))
			}
		}
		for _, o := range s.Revisions {
			if o.Reverted > 0 {
				failed = append(failed, fmt.Sprintf("%s: an operator would revert %d of the %s revisions", s.Name, o.Reverted, o.Origin))
			}
		}
	}
	require.Empty(t, failed, "\n"+strings.Join(failed, "\n"))
	require.Zero(t, gold.Stats(), "every target shown, every flagged belief labeled")
	m := res.Total
	require.Equal(t, len(scenarios), m.Scenarios)
	require.Zero(t, m.Failed)
	require.Zero(t, m.Errors)
	for name, v := range map[string]*float64{
		"supersede precision": m.Supersede.Precision, "supersede recall": m.Supersede.Recall,
		"retract precision": m.Retract.Precision, "retract recall": m.Retract.Recall,
		"keep precision": m.Keep.Precision, "keep recall": m.Keep.Recall,
		"current": m.Current.Accuracy, "history": m.History.Accuracy, "dependencies": m.Dependencies.Accuracy,
		"questions": m.Questions.Accuracy,
	} {
		require.NotNil(t, v, name)
		require.Equal(t, 1.0, *v, name)
	}
	require.NotEmpty(t, m.Revisions)
	for _, o := range m.Revisions {
		require.Equal(t, 1.0, *o.Precision, o.Origin)
	}
	// One extraction call per episode, and now and then a second opinion, which the
	// gold model gives as the labels do.
	calls := gold.Calls()
	episodes := 0
	for _, s := range scenarios {
		episodes += len(s.Transcripts)
	}
	require.Equal(t, episodes, calls.Extraction)
	require.Zero(t, calls.Refused)
	require.InDelta(t, 1.0, m.Cost.ChatCallsPerEpisode, 0.05)
	require.InDelta(t, float64(calls.Extraction+calls.Verification)/float64(episodes), m.Cost.ChatCallsPerEpisode, 0.01)
}
