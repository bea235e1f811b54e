package reliability_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/transcript"
)

// TestSubtreePurgeDuringExtraction erases an organisation's subtree while its scopes'
// extractions are in flight (their chat calls under way): nothing of the subtree is left
// or re-created afterwards, and the scope outside it is extracted in full.
func TestSubtreePurgeDuringExtraction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pipelinetest.New(t, &pipelinetest.Options{Workers: 4,
		LLMOptions: []llmtest.Option{llmtest.WithLatency(150 * time.Millisecond)}})
	p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		said := transcriptOf(req.Prompt)
		word := "koala"
		if strings.Contains(req.Prompt, "Scope: acme/") {
			word = "wombat"
		}
		return llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{
			Statement: fmt.Sprintf("User saw a %s (%s)", word, strings.TrimSpace(said)), Attribute: "sighting"})}
	})
	var ts []transcript.Transcript
	for _, scope := range []string{"acme/user:1", "acme/user:2", "acme/team:x/user:3", "other/user:1"} {
		for i := range 3 {
			ts = append(ts, pipelinetest.T(scope, fmt.Sprintf("c%d", i), fmt.Sprintf("2026-01-0%dT10:00:00Z", i+1),
				fmt.Sprintf("Note %d of %s.", i, scope)))
		}
	}
	p.Enqueue(t, ts...)
	require.Eventually(t, func() bool { return p.LLM.ChatCount() >= 3 }, 10*time.Second, 5*time.Millisecond,
		"extractions are under way")

	got, err := p.Store.PurgeSubtree(ctx, "acme/")
	require.NoError(t, err)
	require.Len(t, got.Scopes, 3)
	p.Drain(t)

	require.Empty(t, p.Schema.Mentions(t, "wombat"), "an extraction in flight stores nothing of a purged scope")
	require.Empty(t, p.Schema.Mentions(t, "Note 0 of acme"), "no transcript of the subtree is left")
	require.Empty(t, p.Schema.Mentions(t, "acme/"), "no row names a scope of the subtree, the job rows of extractions in flight included")
	other, err := p.Store.Current(ctx, "other/user:1")
	require.NoError(t, err)
	require.Len(t, other, 3, "the scope outside the subtree is extracted in full")
	scopes, err := p.Store.SubtreeScopes(ctx, "acme/")
	require.NoError(t, err)
	require.Empty(t, scopes, "nothing re-created")
}
