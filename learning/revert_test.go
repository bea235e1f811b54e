package learning_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
)

// A reverted revision is a negative example of its scope: the next similar extraction
// is shown that an operator undid it, and why.
func TestRevertTeachesItsScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	for _, scope := range []string{"tenant:a", "tenant:b"} {
		sup := b.supersede(t, scope, memory.RevisionExtraction, memory.ReasonTemporal, b.believe(t, scope, darkRoast),
			darkRoast, decaf, "I'll have a decaf")
		if scope == "tenant:a" {
			_, err := b.p.Store.Revert(ctx, memory.RevertParams{EventID: sup.EventID, Note: "the decaf was for a guest"})
			require.NoError(t, err)
		}
	}

	say := "I'll have a decaf tonight, my friend is visiting."
	b.p.Enqueue(t, pipelinetest.T("tenant:a", "a1", "2026-04-01T09:00:00Z", say),
		pipelinetest.T("tenant:b", "b1", "2026-04-01T09:00:00Z", say))
	b.p.Drain(t)

	prompts := b.promptsOf("tenant:a", "tenant:b")
	require.Contains(t, prompts["tenant:a"], "Believed: "+darkRoast+"\n  Said: I'll have a decaf\n"+
		`  Wrong: an operator reverted it: "`+decaf+`" did not supersede "`+darkRoast+`", because the decaf was for a guest`)
	require.Contains(t, prompts["tenant:b"], "Changed to: "+decaf, "a revision that stands is an ordinary example")
	require.NotContains(t, prompts["tenant:b"], "Wrong:", "another tenant's revert teaches nothing here")
}
