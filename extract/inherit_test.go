package extract_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
)

// An organisation's beliefs are read through inheritance only: extraction in a user's
// scope never shows them as candidates, so it can never revise them, and the user's
// own value lives beside the organisation's.
func TestExtractionNeverShowsAncestors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pipelinetest.New(t, nil)
	_, err := p.Store.Apply(ctx, &memory.Batch{Scope: "acme", Origin: memory.RevisionOperator, Facts: []memory.Fact{{
		Statement: "Team chats on Slack", Attribute: "chat_tool", Confidence: 1, Origin: memory.OriginAuthoritative}}})
	require.NoError(t, err)
	p.LLM.OnPrompt("I use Signal", llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: "User chats on Signal", Attribute: "chat_tool"})})

	p.Enqueue(t, pipelinetest.T("acme/user:1", "c1", "2026-02-01T10:00:00Z", "I use Signal for chat."))
	p.Drain(t)
	chats := p.LLM.Chats()
	require.Len(t, chats, 1)
	require.NotContains(t, chats[0].Prompt, "Slack", "no ancestor belief is a candidate")

	org, err := p.Store.Current(ctx, "acme")
	require.NoError(t, err)
	require.Equal(t, "Team chats on Slack", org[0].Statement, "the organisation's value is untouched")
	inherited, err := p.Store.Inherited(ctx, "acme/user:1", p.Store.Current)
	require.NoError(t, err)
	require.Len(t, inherited, 1)
	require.Equal(t, "User chats on Signal", inherited[0].Statement, "the user's value wins its slot")
}
