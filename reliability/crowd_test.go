package reliability_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
)

// TestCrowdedScopeMovesOnce: a user who moves ends with one home, while 40,000 beliefs
// of 2,000 other users ("User lives in Boston", nearer to the transcript than anything
// of the user's own) share the database. The extraction prompt must show the user's own
// "User lives in Miami" among its candidates, or nothing supersedes it.
func TestCrowdedScopeMovesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// "moved" lands near "lives", as a real embedding model places them.
	p := pipelinetest.New(t, &pipelinetest.Options{LLMOptions: []llmtest.Option{
		llmtest.WithAnchors(map[string]string{"moved": "lives", "live": "lives"})}})
	model := p.Provider.EmbedModel()
	require.NoError(t, p.Store.EnsureEmbeddingModel(ctx, model, llmtest.DefaultDim))
	vec := func(s string) []float32 {
		return llmtest.EmbedAnchored(s, llmtest.DefaultDim, map[string]string{"moved": "lives", "live": "lives"})
	}

	var crowd []dbtest.Row
	for i := range 40_000 {
		s := "User lives in Boston"
		crowd = append(crowd, dbtest.Row{Scope: fmt.Sprintf("user:%d", i%2000), Statement: s, Attribute: "home_city", Vector: vec(s)})
	}
	dbtest.InsertBeliefs(t, p.Schema.Pool, model, crowd)
	const victim = "user:victim"
	own := []dbtest.Row{{Scope: victim, Statement: "User lives in Miami", Attribute: "home_city", Vector: vec("User lives in Miami")}}
	for i := range 1200 {
		s := fmt.Sprintf("User collects stamp series %d", i)
		own = append(own, dbtest.Row{Scope: victim, Statement: s, Attribute: fmt.Sprintf("collection_%d", i), Vector: vec(s)})
	}
	miami := dbtest.InsertBeliefs(t, p.Schema.Pool, model, own)[0]
	_, err := p.Schema.Pool.Exec(ctx, "ANALYZE belief")
	require.NoError(t, err)

	var shown []string
	p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		fact := pipelinetest.Fact{Statement: "User lives in Boston", Attribute: "home_city", ValidFrom: "2026-11-20",
			Quote: "I moved to Boston this week"}
		for _, c := range candidatesOf(req.Prompt) {
			shown = append(shown, c.Line)
			if strings.HasPrefix(c.Line, "User lives in ") {
				fact.Resolves = &pipelinetest.Resolves{Index: c.Index, Action: "supersede", Reason: "temporal"}
			}
		}
		return llmtest.Reply{Content: pipelinetest.Answer(fact)}
	})
	p.Enqueue(t, pipelinetest.T(victim, "move", "2026-11-24T10:00:00Z", "I moved to Boston this week."))
	p.Drain(t)

	require.Equal(t, 1, p.LLM.ChatCount())
	require.NotEmpty(t, shown, "the prompt shows the user's own beliefs")
	require.True(t, strings.HasPrefix(shown[0], "User lives in Miami"), "the user's own home is the nearest candidate: %v", shown)
	current, err := p.Store.Current(ctx, victim)
	require.NoError(t, err)
	var homes []memory.Belief
	for _, b := range current {
		if b.Attribute == "home_city" {
			homes = append(homes, b)
		}
	}
	require.Len(t, homes, 1, "one home")
	require.Equal(t, "User lives in Boston", homes[0].Statement)
	require.Equal(t, []int64{miami}, homes[0].Supersedes)
}
