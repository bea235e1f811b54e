package api

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
)

// A purge by id through the API erases the purged belief's words from the transcript
// it shares with a belief that stays: the transcript is redacted, not deleted, and says
// so; the kept belief still cites it.
func TestPurgeRedactsASharedTranscript(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("tenant:a/", RightWrite, RightRead, RightPurge)
	const (
		scope  = "tenant:a/user:1"
		secret = "4417-zebra"
	)
	h.p.LLM.OnPrompt("gate code", llmtest.Reply{Content: pipelinetest.Answer(
		pipelinetest.Fact{Statement: "User's gate code is " + secret, Attribute: "gate_code", Quote: "my gate code is " + secret},
		pipelinetest.Fact{Statement: "User has a dog named Rex", Attribute: "pet", Quote: "a dog named Rex"})})
	var enq Enqueued
	h.ok("POST", "/v1/transcripts", key, record(scope, "c1", "2026-01-15T10:00:00Z",
		"I have a dog named Rex, and my gate code is "+secret+"."), 202, &enq)
	h.p.Drain(t)

	var all Beliefs
	h.ok("GET", "/v1/beliefs?scope="+url.QueryEscape(scope), key, nil, 200, &all)
	require.Len(t, all.Beliefs, 2)
	code, dog := all.Beliefs[0], all.Beliefs[1]
	if dog.Attribute == "gate_code" {
		code, dog = dog, code
	}

	var purged Forgotten
	h.ok("POST", "/v1/forget", key, map[string]any{"scope": scope, "ids": []int64{code.ID}, "purge": true}, 200, &purged)
	require.EqualValues(t, 1, purged.Purged.Counts["episode_redacted"])
	require.Zero(t, purged.Purged.Counts["episode"], "the transcript stays for the dog")
	require.Empty(t, h.p.Schema.Mentions(t, secret), "the code is nowhere")

	var ep Episode
	h.ok("GET", fmt.Sprintf("/v1/episodes/%d", enq.EpisodeIDs[0]), key, nil, 200, &ep)
	require.NotNil(t, ep.RedactedAt)
	h.ok("GET", "/v1/beliefs?scope="+url.QueryEscape(scope), key, nil, 200, &all)
	require.Len(t, all.Beliefs, 1)
	require.Equal(t, dog.ID, all.Beliefs[0].ID)
	require.Equal(t, enq.EpisodeIDs[0], *all.Beliefs[0].EpisodeID)
	require.Equal(t, []int64{enq.EpisodeIDs[0]}, all.Beliefs[0].Episodes)
}
