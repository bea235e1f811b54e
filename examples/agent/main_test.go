package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
)

// The example agent runs its loop against a real worker's API: the pipeline through
// River and the wire-level fake, served over HTTP with a key.
func TestAgentLoop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pipelinetest.New(t, nil)
	p.LLM.OnPrompt("I moved to Miami last month", llmtest.Reply{Content: pipelinetest.Answer(
		pipelinetest.Fact{Statement: "User lives in Miami", Attribute: "location"})})
	srv, err := api.New(ctx, api.Config{Store: p.Store, Pool: p.Pool(), Jobs: p.Client, Embed: p.Provider, Chat: p.Provider, RateLimit: -1})
	require.NoError(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	_, key, err := api.CreateKey(ctx, p.Schema.Pool, "agent", []string{"user:"}, []api.Right{api.RightWrite, api.RightRead})
	require.NoError(t, err)

	a := &agent{api: ts.URL, key: key, http: ts.Client(), poll: 20 * time.Millisecond}
	var out bytes.Buffer
	require.NoError(t, a.run(ctx, "user:ana", &out))
	require.True(t, strings.HasPrefix(out.String(), "System: You are a helpful assistant."))
	require.Contains(t, out.String(), "- User lives in Miami (since ")
	require.Contains(t, out.String(), "User: Any tips for the weather where I live?")

	bad := &agent{api: ts.URL, key: "credo_wrong", http: ts.Client(), poll: 20 * time.Millisecond}
	require.ErrorContains(t, bad.run(ctx, "user:ana", &out), "unauthorized")
}
