package learning_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pgvector/pgvector-go"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/learning"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
)

const (
	darkRoast = "User prefers dark roast coffee"
	decaf     = "User prefers decaf coffee"
)

type testBundle struct {
	p         *pipelinetest.Pipeline
	retriever *learning.Retriever
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	bundle := &testBundle{}
	bundle.p = pipelinetest.New(t, &pipelinetest.Options{Extract: func(c *extract.Config) {
		bundle.retriever = learning.NewRetriever(c.Store, 0, "")
		c.Examples = bundle.retriever
	}})
	return bundle
}

func (b *testBundle) embed(text string) []float32 { return llmtest.Embed(text, llmtest.DefaultDim) }

// believe stores statement in scope as the user's.
func (b *testBundle) believe(t *testing.T, scope, statement string) int64 {
	t.Helper()
	res, err := b.p.Store.Apply(context.Background(), &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction,
		EmbedModel: b.p.Provider.EmbedModel(),
		Facts: []memory.Fact{{Statement: statement, Attribute: "coffee", Kind: memory.KindPreference, Confidence: 0.9,
			Origin: memory.OriginUserStated, Embedding: b.embed(statement)}}})
	require.NoError(t, err)
	return res.Facts[0].BeliefID
}

// correct is an operator's correction of belief id, as `beliefs correct` applies it.
func (b *testBundle) correct(t *testing.T, scope string, id int64, old, statement string) {
	t.Helper()
	b.supersede(t, scope, memory.RevisionOperator, memory.ReasonCorrection, id, old, statement, "operator correction")
}

// supersede supersedes belief id, which says old, by statement, from the words quote,
// with the vectors an extraction or an operator stores, and returns the revision.
func (b *testBundle) supersede(t *testing.T, scope string, origin memory.RevisionOrigin, reason memory.Reason, id int64,
	old, statement, quote string) memory.Outcome {
	t.Helper()
	res, err := b.p.Store.Apply(context.Background(), &memory.Batch{Scope: scope, Origin: origin,
		Candidates: []int64{id}, EmbedModel: b.p.Provider.EmbedModel(),
		Facts: []memory.Fact{{Statement: statement, Attribute: "coffee", Kind: memory.KindPreference, Confidence: 1,
			Origin: memory.OriginUserStated, Quote: quote, Embedding: b.embed(statement),
			EventEmbedding: b.embed(memory.EventText(old, quote, statement)),
			Resolves:       &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: reason}}}})
	require.NoError(t, err)
	require.Equal(t, memory.OutcomeSuperseded, res.Facts[0].Kind)
	return res.Facts[0]
}

func TestOperatorCorrectionTeachesItsScopeOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.correct(t, "tenant:a", b.believe(t, "tenant:a", darkRoast), darkRoast, decaf)
	b.believe(t, "tenant:b", darkRoast)

	say := "Can you suggest a coffee? I love a dark roast in the morning."
	b.p.Enqueue(t, pipelinetest.T("tenant:a", "a1", "2026-04-01T09:00:00Z", say),
		pipelinetest.T("tenant:b", "b1", "2026-04-01T09:00:00Z", say))
	b.p.Drain(t)

	chats := b.p.LLM.Chats()
	require.Len(t, chats, 2)
	prompts := map[string]string{}
	for _, c := range chats {
		scope := "tenant:a"
		if strings.Contains(c.Prompt, "Scope: tenant:b") {
			scope = "tenant:b"
		}
		prompts[scope] = c.Prompt
	}
	require.Contains(t, prompts["tenant:a"], "Believed: "+darkRoast)
	require.Contains(t, prompts["tenant:a"], "Changed to: "+decaf+" (supersede, correction)")
	require.NotContains(t, prompts["tenant:b"], "decaf", "one tenant's examples never reach another's prompt")
	require.NotContains(t, prompts["tenant:b"], "Past revisions")
}

func TestExamplesStayBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	id := b.believe(t, "user:1", darkRoast)

	// Thousands of past revisions, written directly: the engine's rules are not the subject here.
	const n = 3000
	olds, vecs := make([]string, n), make([]string, n)
	for i := range n {
		olds[i] = fmt.Sprintf("User prefers coffee blend %d", i)
		vecs[i] = pgvector.NewVector(b.embed(memory.EventText(olds[i], "I switched coffee blends", darkRoast))).String()
	}
	_, err := b.p.Schema.Pool.Exec(ctx, `INSERT INTO revision_event (scope, action, reason, origin, old_belief_id,
			old_statement, new_statement, excerpt, embedding, embed_model, created_at)
		SELECT 'user:1', 'supersede', 'temporal', 'extraction', $1, o, $2, 'I switched coffee blends', v::vector, $3, now()
		FROM unnest($4::text[], $5::text[]) AS u(o, v)`, id, darkRoast, b.p.Provider.EmbedModel(), olds, vecs)
	require.NoError(t, err)

	b.p.Enqueue(t, pipelinetest.T("user:1", "c1", "2026-04-01T09:00:00Z", "I switched coffee blends again, dark roast now."))
	b.p.Drain(t)
	chats := b.p.LLM.Chats()
	require.Len(t, chats, 1)
	require.Equal(t, learning.DefaultExamples, strings.Count(chats[0].Prompt, "- Believed: "),
		"a fixed number of examples however many events exist")
}

func TestForgottenBeliefsAreNoExample(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	id := b.believe(t, "user:1", darkRoast)
	b.correct(t, "user:1", id, darkRoast, decaf)
	all, err := b.p.Store.All(ctx, "user:1")
	require.NoError(t, err)
	_, err = b.p.Store.Forget(ctx, memory.Selection{Scope: "user:1", IDs: []int64{all[0].ID, all[1].ID}})
	require.NoError(t, err)

	b.p.Enqueue(t, pipelinetest.T("user:1", "c1", "2026-04-01T09:00:00Z", "Any coffee tips? I love a dark roast."))
	b.p.Drain(t)
	chats := b.p.LLM.Chats()
	require.Len(t, chats, 1)
	require.NotContains(t, chats[0].Prompt, "decaf", "a forgotten belief reaches no prompt, not even as an example")
	require.NotContains(t, chats[0].Prompt, darkRoast)
}
