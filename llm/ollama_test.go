package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
)

func TestOllamaChat(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.Reply{Content: `{"reasoning":"","facts":["works at Acme"]}`, PromptTokens: 200, CompletionTokens: 15})
	p := newProvider(t, llm.ProviderOllama, srv, nil)
	require.Equal(t, "ollama", p.Name())

	req := extractionRequest("I started at Acme today.")
	resp, err := p.Chat(context.Background(), req)
	require.NoError(t, err)
	require.JSONEq(t, `{"reasoning":"","facts":["works at Acme"]}`, resp.Content)
	require.Equal(t, llm.Usage{PromptTokens: 200, CompletionTokens: 15}, resp.Usage)
	require.Equal(t, llmtest.DefaultChatModel, resp.Model)
	require.Equal(t, "stop", resp.FinishReason)

	chats := srv.Chats()
	require.Len(t, chats, 1)
	got := chats[0]
	require.Equal(t, llm.ProviderOllama, got.Provider)
	require.Equal(t, "/api/chat", got.Path)
	require.Equal(t, llmtest.DefaultChatModel, got.Model)
	require.Equal(t, req.Messages, got.Messages)
	require.JSONEq(t, extractionSchema, string(got.Schema), "schema goes out as format")
	require.Empty(t, got.SchemaName, "ollama has no schema name")
	require.NotNil(t, got.Stream)
	require.False(t, *got.Stream)
	require.NotNil(t, got.Temperature)
	require.Zero(t, *got.Temperature)

	var body map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(got.Body, &body))
	require.NotContains(t, body, "keep_alive", "keep_alive left to the server default")
}

func TestOllamaChatWithoutSchema(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.Reply{Content: "plain text"})
	p := newProvider(t, llm.ProviderOllama, srv, nil)

	resp, err := p.Chat(context.Background(), llm.ChatRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	require.NoError(t, err)
	require.Equal(t, "plain text", resp.Content)
	require.Nil(t, srv.Chats()[0].Schema)
	require.NotContains(t, string(srv.Chats()[0].Body), `"format"`)
}

func TestOllamaEmbed(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t) // default dimension
	p := newProvider(t, llm.ProviderOllama, srv, nil)

	inputs := []string{"User lives in Miami", "User works at Acme", "User likes tea", "User has a cat"}
	resp, err := p.Embed(context.Background(), inputs)
	require.NoError(t, err)
	require.Equal(t, llmtest.DefaultEmbedModel, resp.Model)
	require.Len(t, resp.Vectors, len(inputs))
	for i, in := range inputs {
		require.Len(t, resp.Vectors[i], llmtest.DefaultDim)
		require.Equal(t, llmtest.Embed(in, llmtest.DefaultDim), resp.Vectors[i], "vector %d out of order", i)
	}
	require.Positive(t, resp.Usage.PromptTokens)

	embeds := srv.Embeds()
	require.Len(t, embeds, 1, "one call per batch")
	require.Equal(t, "/api/embed", embeds[0].Path)
	require.Equal(t, inputs, embeds[0].Inputs)
}

// The ollama client treats an empty body as success, even on a 5xx; the
// provider must not mistake that for an empty answer.
func TestOllamaEmptyBodyIsRetryable(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusOK, http.StatusBadGateway} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			if r.URL.Path == "/api/show" {
				_, _ = io.WriteString(w, `{"model_info": {}}`) // no context length: the default window
				return
			}
			w.WriteHeader(status)
		}))
		t.Cleanup(srv.Close)
		p, err := llm.NewOllama(llm.Config{BaseURL: srv.URL, ChatModel: "m"})
		require.NoError(t, err)

		_, err = p.Chat(context.Background(), extractionRequest("x"))
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "status %d", status)
		require.True(t, llm.IsRetryable(err))
	}
}

func TestOllamaInStreamError(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.Reply{Status: http.StatusInternalServerError, Body: `{"error":"model runner has unexpectedly stopped"}`})
	p := newProvider(t, llm.ProviderOllama, srv, nil)

	_, err := p.Chat(context.Background(), extractionRequest("x"))
	statusErr, ok := errors.AsType[*llm.StatusError](err)
	require.True(t, ok, "%T: %v", err, err)
	require.Equal(t, "model runner has unexpectedly stopped", statusErr.Message)
	require.True(t, llm.IsRetryable(err))
}
