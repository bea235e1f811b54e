package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
)

func TestOpenAIChat(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.Reply{Content: `{"reasoning":"r","facts":["lives in Miami"]}`, PromptTokens: 321, CompletionTokens: 12})
	p := newProvider(t, llm.ProviderOpenAI, srv, nil)
	require.Equal(t, "openai", p.Name())
	require.Equal(t, llmtest.DefaultChatModel, p.ChatModel())
	require.Equal(t, llmtest.DefaultEmbedModel, p.EmbedModel())

	req := extractionRequest("I just moved to Miami.")
	resp, err := p.Chat(context.Background(), req)
	require.NoError(t, err)
	require.JSONEq(t, `{"reasoning":"r","facts":["lives in Miami"]}`, resp.Content)
	require.Equal(t, llm.Usage{PromptTokens: 321, CompletionTokens: 12}, resp.Usage)
	require.Equal(t, llmtest.DefaultChatModel, resp.Model)
	require.Equal(t, "stop", resp.FinishReason)

	chats := srv.Chats()
	require.Len(t, chats, 1)
	got := chats[0]
	require.Equal(t, llm.ProviderOpenAI, got.Provider)
	require.Equal(t, "/v1/chat/completions", got.Path)
	require.Equal(t, llmtest.DefaultChatModel, got.Model)
	require.Equal(t, req.Messages, got.Messages)
	require.Equal(t, "Extract durable facts about the user.\nI just moved to Miami.", got.Prompt)
	require.Equal(t, "extraction", got.SchemaName)
	require.JSONEq(t, extractionSchema, string(got.Schema))
	require.NotNil(t, got.Strict)
	require.True(t, *got.Strict)
	require.NotNil(t, got.Temperature, "temperature must be sent explicitly, not omitted")
	require.Zero(t, *got.Temperature)

	var body struct {
		Temperature    *float64 `json:"temperature"`
		Stream         bool     `json:"stream"`
		ResponseFormat struct {
			Type string `json:"type"`
		} `json:"response_format"`
	}
	require.NoError(t, json.Unmarshal(got.Body, &body))
	require.Equal(t, "json_schema", body.ResponseFormat.Type)
	require.False(t, body.Stream)
}

func TestOpenAIChatDefaultUsageAndSchemaName(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	p := newProvider(t, llm.ProviderOpenAI, srv, nil)

	req := extractionRequest("0123456789abcdef")
	req.SchemaName = ""
	resp, err := p.Chat(context.Background(), req)
	require.NoError(t, err)
	require.JSONEq(t, llmtest.DefaultContent, resp.Content)
	// Counted by the fake's tokenizer, the chat template's markers included.
	require.Equal(t, llm.Usage{PromptTokens: srv.CountPrompt(req.Messages), CompletionTokens: len(llmtest.O200k(llmtest.DefaultContent))}, resp.Usage)
	require.Equal(t, "response", srv.Chats()[0].SchemaName)
}

func TestOpenAIChatWithoutSchema(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.Reply{Content: "hello"})
	p := newProvider(t, llm.ProviderOpenAI, srv, nil)

	resp, err := p.Chat(context.Background(), llm.ChatRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	require.NoError(t, err)
	require.Equal(t, "hello", resp.Content)
	got := srv.Chats()[0]
	require.Nil(t, got.Schema)
	require.NotContains(t, string(got.Body), "response_format")
}

func TestOpenAIReasoningModelOmitsTemperature(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	p := newProvider(t, llm.ProviderOpenAI, srv, func(c *llm.Config) { c.ChatModel = "o3-mini" })

	_, err := p.Chat(context.Background(), extractionRequest("x"))
	require.NoError(t, err)
	require.Nil(t, srv.Chats()[0].Temperature)
}

func TestOpenAIChatNoChoices(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.Reply{Body: `{"id":"x","object":"chat.completion","model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":0}}`})
	p := newProvider(t, llm.ProviderOpenAI, srv, nil)

	resp, err := p.Chat(context.Background(), extractionRequest("x"))
	require.ErrorIs(t, err, llm.ErrTruncated)
	require.Contains(t, err.Error(), "no choices")
	require.Equal(t, 5, resp.Usage.PromptTokens)
}

func TestOpenAIChatRefusal(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.Reply{Body: `{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"","refusal":"I can't help with that."},"finish_reason":"stop"}]}`})
	p := newProvider(t, llm.ProviderOpenAI, srv, nil)

	_, err := p.Chat(context.Background(), extractionRequest("x"))
	require.ErrorIs(t, err, llm.ErrMalformedOutput)
	require.Contains(t, err.Error(), "refused")
}

func TestOpenAINonOpenAIErrorBody(t *testing.T) {
	t.Parallel()
	// vLLM and proxies may answer errors with bodies go-openai can't parse
	// as an OpenAI error; the status must still come through.
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.Reply{Status: 502, Body: "<html>Bad Gateway</html>"})
	p := newProvider(t, llm.ProviderOpenAI, srv, nil)

	_, err := p.Chat(context.Background(), extractionRequest("x"))
	statusErr, ok := errors.AsType[*llm.StatusError](err)
	require.True(t, ok, "%T: %v", err, err)
	require.Equal(t, 502, statusErr.StatusCode)
	require.Contains(t, statusErr.Message, "Bad Gateway")
	require.True(t, llm.IsRetryable(err))
}

func TestOpenAIEmbed(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithDim(48))
	p := newProvider(t, llm.ProviderOpenAI, srv, nil)

	inputs := []string{"User lives in Miami", "User works at Acme", "User likes tea"}
	resp, err := p.Embed(context.Background(), inputs)
	require.NoError(t, err)
	require.Equal(t, llmtest.DefaultEmbedModel, resp.Model)
	require.Len(t, resp.Vectors, len(inputs))
	for i, in := range inputs {
		require.Len(t, resp.Vectors[i], 48)
		require.Equal(t, llmtest.Embed(in, 48), resp.Vectors[i], "vector %d out of order", i)
	}
	require.Positive(t, resp.Usage.PromptTokens)

	embeds := srv.Embeds()
	require.Len(t, embeds, 1, "one call per batch")
	require.Equal(t, "/v1/embeddings", embeds[0].Path)
	require.Equal(t, inputs, embeds[0].Inputs)
	require.Equal(t, "float", embeds[0].EncodingFormat)
	require.Equal(t, llmtest.DefaultEmbedModel, embeds[0].Model)
}
