package learning_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/operator"
	"github.com/credohq/credo/pipelinetest"
)

// refused stores an inferred statement in scope, then an extraction's attempt to
// supersede it that the engine refuses (the user stated the target), and returns the
// review item.
func (b *testBundle) refused(t *testing.T, scope string) *memory.Conflict {
	t.Helper()
	ctx := context.Background()
	id := b.believe(t, scope, darkRoast)
	res, err := b.p.Store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, Candidates: []int64{id},
		Facts: []memory.Fact{{Statement: decaf, Attribute: "coffee", Kind: memory.KindPreference, Confidence: 0.6,
			Origin: memory.OriginInferred, Quote: "coffee keeps me up",
			Resolves: &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}}}})
	require.NoError(t, err)
	require.Equal(t, memory.OutcomeConflict, res.Facts[0].Kind)
	item, err := b.p.Store.Conflict(ctx, res.Facts[0].ConflictID)
	require.NoError(t, err)
	return item
}

// promptsOf is the last extraction prompt of each of scopes, by scope.
func (b *testBundle) promptsOf(scopes ...string) map[string]string {
	out := map[string]string{}
	for _, c := range b.p.LLM.Chats() {
		for _, scope := range scopes {
			if strings.Contains(c.Prompt, "\nScope: "+scope+"\n") {
				out[scope] = c.Prompt
			}
		}
	}
	return out
}

// An operator's dismissal is a few-shot example of its scope: later extractions see
// that the change was refused, ranked like operator corrections.
func TestDismissalTeachesItsScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	ops := operator.New(operator.Config{Store: b.p.Store, Embed: b.p.Provider, EmbedModel: b.p.Provider.EmbedModel()})
	_, err := ops.Resolve(ctx, operator.Owner, b.refused(t, "tenant:a").ID, memory.VerdictDismiss, "the user still drinks dark roast")
	require.NoError(t, err)
	b.refused(t, "tenant:b") // open, not decided: no example

	say := "Coffee keeps me up at night, but I love a dark roast."
	b.p.Enqueue(t, pipelinetest.T("tenant:a", "a1", "2026-04-01T09:00:00Z", say),
		pipelinetest.T("tenant:b", "b1", "2026-04-01T09:00:00Z", say))
	b.p.Drain(t)

	prompts := b.promptsOf("tenant:a", "tenant:b")
	require.Contains(t, prompts["tenant:a"], "Believed: "+darkRoast+"\n  Said: coffee keeps me up\n  Kept: an operator refused to supersede it with \""+decaf+"\"")
	require.NotContains(t, prompts["tenant:b"], "Past revisions", "an open item teaches nothing, and never another tenant")
}
