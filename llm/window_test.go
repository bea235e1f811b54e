package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
)

// chatter is text of about n tokens as a conversation goes: sentences of the size and
// words people use, numbered so that no two lines are the same.
func chatter(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n*4; i++ {
		fmt.Fprintf(&b, "user: On day %d we walked along the river, talked about the garden and the new bakery on the corner.\n", i)
	}
	return b.String()
}

func longRequest(tokens int) llm.ChatRequest {
	return llm.SchemaRequest("Extract durable facts about the user.", chatter(tokens), "extraction", []byte(extractionSchema))
}

func TestOllamaLearnsTheWindowAndSizesNumCtx(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithContextLength(llmtest.DefaultChatModel, 32768))
	p := newProvider(t, llm.ProviderOllama, srv, nil)

	w, err := p.ChatWindow(context.Background())
	require.NoError(t, err)
	require.Equal(t, llm.Window{Tokens: 32768, Source: llm.WindowFromModel}, w)

	for _, c := range []struct{ tokens, numCtx int }{{500, 8192}, {7000, 16384}, {20000, 32768}} {
		_, err := p.Chat(context.Background(), longRequest(c.tokens))
		require.NoError(t, err, "%d tokens", c.tokens)
		got := srv.Chats()[len(srv.Chats())-1]
		require.Equal(t, c.numCtx, got.NumCtx, "a prompt of about %d tokens", c.tokens)
		require.False(t, got.Cut, "the server evaluated the whole prompt")
		require.Equal(t, got.Tokens, got.Evaluated)
		require.Less(t, got.Tokens, got.NumCtx-llm.DefaultAnswerTokens/2, "room for the answer")
		var body struct {
			Options  map[string]any `json:"options"`
			Truncate *bool          `json:"truncate"`
			Shift    *bool          `json:"shift"`
		}
		require.NoError(t, decodeJSON(got.Body, &body))
		require.NotNil(t, body.Truncate)
		require.False(t, *body.Truncate, "a server that would cut refuses instead")
		require.NotNil(t, body.Shift)
		require.False(t, *body.Shift)
		predict, ok := body.Options["num_predict"].(float64)
		require.True(t, ok)
		require.GreaterOrEqual(t, int(predict), llm.DefaultAnswerTokens, "the answer has its room")
		require.GreaterOrEqual(t, got.NumCtx-int(predict), got.Tokens, "and the prompt the rest")
	}
	require.Len(t, srv.Requests(), 4, "one /api/show, then the chats")
}

func TestModelContextCapsTheWindow(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	ol := newProvider(t, llm.ProviderOllama, srv, func(c *llm.Config) { c.Context = 12000 })
	w, err := ol.ChatWindow(context.Background())
	require.NoError(t, err)
	require.Equal(t, llm.Window{Tokens: 12000, Source: llm.WindowFromSetting}, w, "MODEL_CONTEXT caps what the model could take")

	oa := newProvider(t, llm.ProviderOpenAI, srv, nil)
	w, err = oa.ChatWindow(context.Background())
	require.NoError(t, err)
	require.Equal(t, llm.Window{Tokens: llm.DefaultContext, Source: llm.WindowFromDefault}, w, "an OpenAI-compatible server does not say")
}

// A prompt that cannot fit is not sent: the caller cuts it, or fails.
func TestChatRefusesAPromptLongerThanTheWindowWithoutSendingIt(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithContextLength(llmtest.DefaultChatModel, 8192))
	for _, name := range []string{llm.ProviderOllama, llm.ProviderOpenAI} {
		p := newProvider(t, name, srv, nil)
		_, err := p.Chat(context.Background(), longRequest(7000))
		var ce *llm.ContextError
		require.ErrorAs(t, err, &ce, name)
		require.Equal(t, llm.ContextTooLong, ce.Cause)
		require.Equal(t, 8192, ce.Window)
		require.True(t, llm.IsContextLength(err))
		require.False(t, llm.IsRetryable(err), "waiting does not shorten it")
	}
	require.Zero(t, srv.ChatCount())
}

// An OpenAI-compatible server that counts more than credo estimated refuses the prompt
// (400 context_length_exceeded): that is a ContextError, never retried as transient.
func TestOpenAIRefusalForLengthIsAContextError(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithContextLength(llmtest.DefaultChatModel, 16384), llmtest.WithTokenizer(llmtest.Scaled(llmtest.O200k, 3)))
	p := newProvider(t, llm.ProviderOpenAI, srv, func(c *llm.Config) { c.Context = 16384 })
	_, err := p.Chat(context.Background(), longRequest(9000))
	var ce *llm.ContextError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, llm.ContextRefused, ce.Cause)
	require.False(t, llm.IsRetryable(err))
	require.Equal(t, "prompt longer than the model's context window", llm.Kind(err))
	require.Equal(t, 400, srv.Chats()[0].Status)
}

// Ollama before 0.12 cuts a prompt longer than num_ctx silently, keeping its end, and
// reports the window as evaluated: the answer is not used.
func TestOllamaCutIsDetected(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithTokenizer(llmtest.Scaled(llmtest.O200k, 3)))
	srv.Script(llmtest.Reply{Content: `{"reasoning":"","facts":["only the end"]}`})
	p := newProvider(t, llm.ProviderOllama, srv, nil)

	resp, err := p.Chat(context.Background(), longRequest(5000))
	var ce *llm.ContextError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, llm.ContextCut, ce.Cause)
	require.Equal(t, srv.Chats()[0].NumCtx, ce.Evaluated, "the window was filled")
	require.True(t, srv.Chats()[0].Cut)
	require.NotEmpty(t, resp.Content, "the answer comes with the error, for the logs; it is not to be used")

	// The estimator learned how much it was low: the same prompt asks a larger window,
	// and is evaluated whole.
	resp, err = p.Chat(context.Background(), longRequest(5000))
	require.NoError(t, err)
	second := srv.Chats()[1]
	require.False(t, second.Cut)
	require.Greater(t, second.NumCtx, srv.Chats()[0].NumCtx)
	require.Equal(t, second.Tokens, resp.Usage.PromptTokens)
}

// Ollama 0.12 and later honour truncate: false and refuse instead.
func TestOllamaRefusalForLengthIsAContextError(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithTokenizer(llmtest.Scaled(llmtest.O200k, 3)), llmtest.WithOllamaRefusal())
	p := newProvider(t, llm.ProviderOllama, srv, nil)
	_, err := p.Chat(context.Background(), longRequest(5000))
	var ce *llm.ContextError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, llm.ContextRefused, ce.Cause)
	require.False(t, llm.IsRetryable(err))
}

// A count above the estimate that is no cut raises the estimator's margin: a model
// family nobody measured corrects itself.
func TestACountAboveTheEstimateRaisesTheMargin(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.WithTokenizer(llmtest.Scaled(llmtest.O200k, 2)))
	p := newProvider(t, llm.ProviderOpenAI, srv, func(c *llm.Config) { c.Context = 32768 })
	before := p.ChatTokens().Margin()
	req := longRequest(3000)
	_, err := p.Chat(context.Background(), req)
	require.NoError(t, err)
	require.Greater(t, p.ChatTokens().Margin(), before)
	require.GreaterOrEqual(t, p.ChatTokens().Messages(req.Messages), srv.Chats()[0].Tokens, "the estimate is no longer low")
}

// A text longer than the embedding model's window is embedded in pieces, in the same
// call, never cut: Ollama's nomic-embed-text takes 2,048 tokens.
func TestEmbedLongTextInPieces(t *testing.T) {
	t.Parallel()
	for _, name := range []string{llm.ProviderOllama, llm.ProviderOpenAI} {
		srv := llmtest.NewServer(t)
		p := newProvider(t, name, srv, nil)
		long := chatter(20000)
		res, err := p.Embed(context.Background(), []string{"User lives in Porto", long, "User has a parrot"})
		require.NoError(t, err, name)
		require.Len(t, res.Vectors, 3)
		embeds := srv.Embeds()
		require.Len(t, embeds, 1, "%s: one call", name)
		require.Greater(t, len(embeds[0].Inputs), 3, "%s: the long text went in pieces", name)
		require.Zero(t, embeds[0].EmbedCut, "%s: nothing was cut", name)
		require.Equal(t, long, strings.Join(embeds[0].Inputs[1:len(embeds[0].Inputs)-1], ""), "%s: the pieces are the whole text", name)
		require.Equal(t, "User has a parrot", embeds[0].Inputs[len(embeds[0].Inputs)-1])
		var norm float64
		for _, x := range res.Vectors[1] {
			norm += float64(x) * float64(x)
		}
		require.InDelta(t, 1, math.Sqrt(norm), 1e-5, "the pieces' mean has unit length")
	}
}

func TestSplitText(t *testing.T) {
	t.Parallel()
	tok := llm.NewTokens("qwen2.5:7b")
	text := chatter(3000) + strings.Repeat("x", 5000) + "\n" + strings.Repeat("\u65e5\u672c\u8a9e", 400) // Japanese
	parts := llm.SplitText(text, 500, tok)
	require.Equal(t, text, strings.Join(parts, ""))
	for _, p := range parts {
		require.LessOrEqual(t, tok.High(p), 500)
		require.NotEmpty(t, p)
	}
	require.Equal(t, []string{"short"}, llm.SplitText("short", 500, tok))
}

func TestRefusedForLengthWordings(t *testing.T) {
	t.Parallel()
	// What vLLM and llama.cpp's server answer, beside OpenAI's code (tested above).
	for _, msg := range []string{
		"This model's maximum context length is 16384 tokens. However, you requested 17000 tokens",
		"the request exceeds the available context size, try increasing it",
		"the prompt is longer than the context length currently available to the model",
	} {
		srv := llmtest.NewServer(t)
		srv.Script(llmtest.Reply{Status: 400, Body: fmt.Sprintf(`{"error":{"message":%q,"type":"BadRequestError","code":400}}`, msg)})
		p := newProvider(t, llm.ProviderOpenAI, srv, nil)
		_, err := p.Chat(context.Background(), extractionRequest("x"))
		require.True(t, llm.IsContextLength(err), msg)
	}
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.Reply{Status: 400})
	p := newProvider(t, llm.ProviderOpenAI, srv, nil)
	_, err := p.Chat(context.Background(), extractionRequest("x"))
	require.False(t, llm.IsContextLength(err), "another 400 is not about length")
	require.NotErrorIs(t, err, llm.ErrContextLength)
}

func decodeJSON(b []byte, v any) error { return json.Unmarshal(b, v) }
