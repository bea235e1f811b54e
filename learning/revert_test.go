package learning_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/pipelinetest"
	"github.com/credohq/credo/memory"
)

// A reverted revision is a negative example of its scope: the next similar extraction
// is shown that an operator undid it, and why.
func TestRevertTeachesItsScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	for _, scope := range []string{"tenant:a", "tenant:b"} {
		id := b.believe(t, scope, darkRoast)
		res, err := b.p.Store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, Candidates: []int64{id},
			EmbedModel: b.p.Provider.EmbedModel(),
			Facts: []memory.Fact{{Statement: decaf, Attribute: "coffee", Kind: memory.KindPreference, Confidence: 0.9,
				Origin: memory.OriginUserStated, Quote: "I'll have a decaf", Embedding: b.embed(decaf),
				EventEmbedding: b.embed(memory.EventText(darkRoast, "I'll have a decaf", decaf)),
				Resolves:       &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}}}})
		require.NoError(t, err)
		require.Equal(t, memory.OutcomeSuperseded, res.Facts[0].Kind)
		if scope == "tenant:a" {
			_, err = b.p.Store.Revert(ctx, memory.RevertParams{EventID: res.Facts[0].EventID, Note: "the decaf was for a guest"})
			require.NoError(t, err)
		}
	}

	say := "I'll have a decaf tonight, my friend is visiting."
	b.p.Enqueue(t, pipelinetest.T("tenant:a", "a1", "2026-04-01T09:00:00Z", say),
		pipelinetest.T("tenant:b", "b1", "2026-04-01T09:00:00Z", say))
	b.p.Drain(t)

	prompts := map[string]string{}
	for _, c := range b.p.LLM.Chats() {
		if strings.Contains(c.Prompt, "Scope: tenant:b") {
			prompts["tenant:b"] = c.Prompt
		} else {
			prompts["tenant:a"] = c.Prompt
		}
	}
	require.Contains(t, prompts["tenant:a"], "Believed: "+darkRoast+"\n  Said: I'll have a decaf\n"+
		`  Wrong: an operator reverted it: "`+decaf+`" did not supersede "`+darkRoast+`", because the decaf was for a guest`)
	require.Contains(t, prompts["tenant:b"], "Changed to: "+decaf, "a revision that stands is an ordinary example")
	require.NotContains(t, prompts["tenant:b"], "Wrong:", "another tenant's revert teaches nothing here")
}
