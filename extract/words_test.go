package extract_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
)

// A transcript that names a code reaches the belief that holds it, where an embedding
// blind to codes ranks it among look-alikes: the order's belief is among the K shown, so
// the cancellation applies (issue 49's case: 40 beliefs, K 8).
func TestCodeReachesCandidates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const k, scope = 8, "user:orders"
	blind := func(text string) []float32 { return llmtest.EmbedBlindToCodes(text, llmtest.DefaultDim) }
	p := pipelinetest.New(t, &pipelinetest.Options{Extract: func(c *extract.Config) { c.MaxCandidates = k },
		LLMOptions: []llmtest.Option{llmtest.WithEmbedFunc(blind)}})
	items := []string{"a lamp", "a kettle", "two chairs", "a rug", "a mirror", "a shelf", "a clock", "a vase", "a desk mat", "a fan"}
	var facts []memory.Fact
	for i := range 39 {
		s := fmt.Sprintf("User's order KX-%d is %s, arriving soon", 1000+i*37, items[i%len(items)])
		if i >= 30 {
			s = fmt.Sprintf("User enjoys hobby number %d on weekends", i)
		}
		facts = append(facts, memory.Fact{Statement: s, Attribute: fmt.Sprintf("order_%d", i), Confidence: 0.9,
			Origin: memory.OriginUserStated, Embedding: blind(s)})
	}
	const target = "User's order KX-5521 is a standing desk, arriving soon"
	facts = append(facts, memory.Fact{Statement: target, Attribute: "order_5521", Confidence: 0.9, Origin: memory.OriginUserStated,
		Embedding: blind(target)})
	_, err := p.Store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionOperator, At: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), Facts: facts, EmbedModel: p.Provider.EmbedModel()})
	require.NoError(t, err)

	const said = "Cancel order KX-5521, please."
	near, err := p.Store.Nearest(ctx, scope, p.Provider.EmbedModel(), blind(said), k)
	require.NoError(t, err)
	for _, b := range near {
		require.NotEqual(t, target, b.Statement, "the case needs an embedding that misses the order: vectors alone do")
	}

	p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		if !strings.Contains(req.Prompt, "] "+target+" (") {
			return llmtest.Reply{Content: pipelinetest.Answer()}
		}
		return llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: "User cancelled order KX-5521",
			Attribute: "order_5521", Quote: said,
			Resolves: &pipelinetest.Resolves{Index: candidateIndex(t, req.Prompt, target), Action: "retract", Reason: "temporal"}})}
	})
	p.Enqueue(t, pipelinetest.T(scope, "cancel", "2026-03-20T14:00:00Z", said))
	p.Drain(t)

	var prompts []string
	for _, c := range p.LLM.Chats() {
		if !c.Verification() {
			prompts = append(prompts, c.Prompt)
		}
	}
	require.Len(t, prompts, 1)
	require.Contains(t, prompts[0], "] "+target+" (", "the order's belief is among the candidates")
	held, err := p.Store.Conflicts(ctx, scope, false)
	require.NoError(t, err)
	require.Empty(t, held)
	current, err := p.Store.Current(ctx, scope)
	require.NoError(t, err)
	for _, b := range current {
		require.NotEqual(t, target, b.Statement, "the cancellation applied")
	}
}
