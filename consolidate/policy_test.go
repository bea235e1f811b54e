package consolidate

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
)

// The operator's instructions of a scope's policy reach its consolidation prompts, in
// the system message, and no other scope's.
func TestRunScopeTellsTheModelThePolicysInstructions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, bundle := setup(t)
	const instructions = "ACME-POLICY: keep where people live."
	_, err := bundle.store.SetPolicy(ctx, memory.Policy{ScopePrefix: "acme/", Instructions: instructions})
	require.NoError(t, err)
	for _, scope := range []string{"acme/user:1", "globex/user:1"} {
		bundle.add(t, scope, memory.RevisionExtraction, fact(miami, "location", "2026-01-10"), fact(florida, "location", "2026-02-01"))
	}
	bundle.llm.Handle(judge(miami, florida, "duplicate"))

	for _, scope := range []string{"acme/user:1", "globex/user:1"} {
		_, err := w.RunScope(ctx, scope)
		require.NoError(t, err)
	}
	chats := bundle.llm.Chats()
	require.Len(t, chats, 2)
	require.Contains(t, chats[0].Messages[0].Content, "<operator_instructions>\n  "+instructions+"\n</operator_instructions>")
	require.Contains(t, chats[0].Prompt, "Scope: acme/user:1")
	require.NotContains(t, chats[0].Messages[1].Content, instructions)
	require.Contains(t, chats[1].Prompt, "Scope: globex/user:1")
	require.NotContains(t, chats[1].Prompt, "operator_instructions")
}
