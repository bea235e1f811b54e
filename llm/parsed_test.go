package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
)

func TestChatParsed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := llmtest.NewServer(t)
	p, err := llm.NewOpenAI(srv.OpenAIConfig())
	require.NoError(t, err)
	req := llm.ChatRequest{SchemaName: "extraction", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	parse := func(content string) (string, error) {
		if !strings.Contains(content, "good") {
			return "", errors.Join(llm.ErrMalformedOutput, errors.New("not good"))
		}
		return content, nil
	}

	srv.Script(llmtest.Reply{Content: `{"x": "bad"}`}, llmtest.Reply{Content: `{"x": "good"}`})
	var attempts []llm.Attempt
	got, err := llm.ChatParsed(ctx, p, req, 2, parse, func(a llm.Attempt) { attempts = append(attempts, a) })
	require.NoError(t, err)
	require.JSONEq(t, `{"x": "good"}`, got)
	require.Len(t, attempts, 2)
	require.True(t, attempts[0].Retrying)
	chats := srv.Chats()
	require.Len(t, chats, 2)
	require.Contains(t, chats[1].Prompt, "That answer was rejected")
	require.Contains(t, chats[1].Prompt, "not good")

	// Bounded: a model that never answers well fails after retries+1 calls.
	srv.Reset()
	srv.Script(llmtest.Reply{Content: `{"x": "bad"}`})
	_, err = llm.ChatParsed(ctx, p, req, 1, parse, nil)
	require.ErrorIs(t, err, llm.ErrMalformedOutput)
	require.Len(t, srv.Chats(), 2)

	// Other errors are the caller's to retry: no second call.
	srv.Reset()
	srv.Script(llmtest.Reply{Status: 503})
	_, err = llm.ChatParsed(ctx, p, req, 2, parse, nil)
	require.True(t, llm.IsRetryable(err))
	require.Len(t, srv.Chats(), 1)
}
