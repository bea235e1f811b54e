package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	ollama "github.com/ollama/ollama/api"
	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
)

const extractionSchema = `{
  "type": "object",
  "properties": {
    "reasoning": {"type": "string"},
    "facts": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["reasoning", "facts"],
  "additionalProperties": false
}`

func extractionRequest(transcript string) llm.ChatRequest {
	return llm.ChatRequest{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "Extract durable facts about the user."},
			{Role: llm.RoleUser, Content: transcript},
		},
		SchemaName: "extraction",
		Schema:     json.RawMessage(extractionSchema),
	}
}

// newProvider builds the named provider against srv; mutate adjusts the
// config first.
func newProvider(t *testing.T, name string, srv *llmtest.Server, mutate func(*llm.Config)) llm.Provider {
	t.Helper()
	var (
		p   llm.Provider
		err error
	)
	switch name {
	case llm.ProviderOpenAI:
		cfg := srv.OpenAIConfig()
		if mutate != nil {
			mutate(&cfg)
		}
		p, err = llm.NewOpenAI(cfg)
	case llm.ProviderOllama:
		cfg := srv.OllamaConfig()
		if mutate != nil {
			mutate(&cfg)
		}
		p, err = llm.NewOllama(cfg)
	default:
		t.Fatalf("unknown provider %q", name)
	}
	require.NoError(t, err)
	return p
}

var providers = []string{llm.ProviderOpenAI, llm.ProviderOllama}

// The behaviour below is the same for both providers and asserted for each.

func TestStatusErrors(t *testing.T) {
	t.Parallel()
	for _, provider := range providers {
		for _, tc := range []struct {
			status    int
			retryable bool
		}{
			{http.StatusInternalServerError, true},
			{http.StatusServiceUnavailable, true},
			{http.StatusTooManyRequests, true},
			{http.StatusRequestTimeout, true},
			{http.StatusBadRequest, false},
			{http.StatusUnauthorized, false},
			{http.StatusNotFound, false},
		} {
			t.Run(fmt.Sprintf("%s/%d", provider, tc.status), func(t *testing.T) {
				t.Parallel()
				srv := llmtest.NewServer(t)
				srv.Script(llmtest.Reply{Status: tc.status})
				srv.FailEmbeds(tc.status, 1)
				p := newProvider(t, provider, srv, nil)

				_, chatErr := p.Chat(context.Background(), extractionRequest("hi"))
				_, embedErr := p.Embed(context.Background(), []string{"hi"})
				for _, err := range []error{chatErr, embedErr} {
					require.Error(t, err)
					require.Equal(t, tc.retryable, llm.IsRetryable(err), "%v", err)
					require.False(t, llm.IsMalformed(err))
					statusErr, ok := errors.AsType[*llm.StatusError](err)
					require.True(t, ok, "want *llm.StatusError, got %T: %v", err, err)
					require.Equal(t, tc.status, statusErr.StatusCode)
					require.Equal(t, provider, statusErr.Provider)
					require.Equal(t, tc.retryable, statusErr.Retryable())
				}
				require.Contains(t, chatErr.Error(), "llm: "+provider+" chat: ")
				require.Contains(t, embedErr.Error(), "llm: "+provider+" embed: ")
			})
		}
	}
}

func TestTimeoutIsRetryable(t *testing.T) {
	t.Parallel()
	for _, provider := range providers {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Script(llmtest.Reply{Content: `{}`, Delay: 10 * time.Second})
			p := newProvider(t, provider, srv, func(c *llm.Config) { c.Timeout = 100 * time.Millisecond })

			start := time.Now()
			_, err := p.Chat(context.Background(), extractionRequest("slow"))
			require.Error(t, err)
			require.Less(t, time.Since(start), 5*time.Second, "timeout not applied")
			require.True(t, llm.IsRetryable(err), "%v", err)
			require.NotErrorIs(t, err, context.Canceled)
		})
	}
}

func TestCallerCancelIsNotRetryable(t *testing.T) {
	t.Parallel()
	for _, provider := range providers {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Script(llmtest.Reply{Content: `{}`, Delay: 10 * time.Second})
			p := newProvider(t, provider, srv, nil)

			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			_, err := p.Chat(ctx, extractionRequest("cancel me"))
			require.ErrorIs(t, err, context.Canceled)
			require.False(t, llm.IsRetryable(err), "%v", err)
		})
	}
}

func TestTruncatedOutput(t *testing.T) {
	t.Parallel()
	for _, provider := range providers {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Script(llmtest.Reply{Content: `{"reasoning":"the user sa`, FinishReason: "length", CompletionTokens: 9})
			p := newProvider(t, provider, srv, nil)

			resp, err := p.Chat(context.Background(), extractionRequest("long transcript"))
			require.ErrorIs(t, err, llm.ErrTruncated)
			require.ErrorIs(t, err, llm.ErrMalformedOutput)
			require.True(t, llm.IsMalformed(err))
			require.False(t, llm.IsRetryable(err))
			require.Contains(t, err.Error(), "truncated")
			// The partial answer comes back for logging and accounting.
			require.Equal(t, `{"reasoning":"the user sa`, resp.Content) //nolint:testifylint // cut short, it is not JSON
			require.Equal(t, 9, resp.Usage.CompletionTokens)
			require.Equal(t, "length", resp.FinishReason)
		})
	}
}

func TestInvalidJSONOutputIsMalformed(t *testing.T) {
	t.Parallel()
	for _, provider := range providers {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Script(llmtest.Reply{Content: "Sure! Here are the facts: none."}, llmtest.Reply{Content: ""})
			p := newProvider(t, provider, srv, nil)

			_, err := p.Chat(context.Background(), extractionRequest("x"))
			require.ErrorIs(t, err, llm.ErrMalformedOutput)
			require.NotErrorIs(t, err, llm.ErrTruncated)

			_, err = p.Chat(context.Background(), extractionRequest("x"))
			require.ErrorIs(t, err, llm.ErrMalformedOutput, "empty output")

			// Without a schema, free text is fine.
			resp, err := p.Chat(context.Background(), llm.ChatRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
			require.NoError(t, err)
			require.Empty(t, resp.Content)
		})
	}
}

func TestEmbedValidatesVectors(t *testing.T) {
	t.Parallel()
	for _, provider := range providers {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			// Dimension follows the text length: a ragged batch.
			srv := llmtest.NewServer(t, llmtest.WithEmbedFunc(func(text string) []float32 {
				return make([]float32, len(text))
			}))
			p := newProvider(t, provider, srv, nil)

			_, err := p.Embed(context.Background(), []string{"ab", "abc"})
			require.ErrorIs(t, err, llm.ErrMalformedOutput)
			require.Contains(t, err.Error(), "dimension")

			_, err = p.Embed(context.Background(), []string{""})
			require.ErrorIs(t, err, llm.ErrMalformedOutput, "zero-length vector")

			resp, err := p.Embed(context.Background(), []string{"ab", "cd"})
			require.NoError(t, err)
			require.Len(t, resp.Vectors, 2)
		})
	}
}

func TestEmbedFailsThenRecovers(t *testing.T) {
	t.Parallel()
	for _, provider := range providers {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.FailEmbeds(http.StatusServiceUnavailable, 2)
			p := newProvider(t, provider, srv, nil)

			for range 2 {
				_, err := p.Embed(context.Background(), []string{"a"})
				require.True(t, llm.IsRetryable(err), "%v", err)
			}
			resp, err := p.Embed(context.Background(), []string{"a"})
			require.NoError(t, err)
			require.Len(t, resp.Vectors, 1)
			require.Equal(t, 3, srv.EmbedCount())
		})
	}
}

func TestEmbedEmptyBatchMakesNoCall(t *testing.T) {
	t.Parallel()
	for _, provider := range providers {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			p := newProvider(t, provider, srv, nil)
			resp, err := p.Embed(context.Background(), nil)
			require.NoError(t, err)
			require.Empty(t, resp.Vectors)
			require.Zero(t, srv.EmbedCount())
		})
	}
}

func TestConnectionRefusedIsRetryable(t *testing.T) {
	t.Parallel()
	// A port that was just listening and no longer is.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()

	openaiP, err := llm.NewOpenAI(llm.Config{BaseURL: dead.URL + "/v1", ChatModel: "m", EmbedModel: "e"})
	require.NoError(t, err)
	ollamaP, err := llm.NewOllama(llm.Config{BaseURL: dead.URL, ChatModel: "m", EmbedModel: "e"})
	require.NoError(t, err)

	for _, p := range []llm.Provider{openaiP, ollamaP} {
		_, err := p.Chat(context.Background(), extractionRequest("x"))
		require.ErrorIs(t, err, syscall.ECONNREFUSED)
		require.True(t, llm.IsRetryable(err), "%s: %v", p.Name(), err)
		_, err = p.Embed(context.Background(), []string{"x"})
		require.True(t, llm.IsRetryable(err), "%s: %v", p.Name(), err)
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	_, err := llm.NewOpenAI(llm.Config{})
	require.Error(t, err)
	_, err = llm.NewOllama(llm.Config{ChatModel: "m", BaseURL: "localhost:11434"})
	require.Error(t, err, "scheme-less URL")
	_, err = llm.NewOllama(llm.Config{ChatModel: "m", Timeout: -time.Second})
	require.Error(t, err)

	// A chat-only provider refuses to embed, locally.
	p, err := llm.NewOllama(llm.Config{ChatModel: "m"})
	require.NoError(t, err)
	_, err = p.Embed(context.Background(), []string{"x"})
	require.ErrorContains(t, err, "EmbedModel")
	_, err = p.Chat(context.Background(), llm.ChatRequest{Messages: []llm.Message{{Role: "user", Content: "x"}}, Schema: json.RawMessage(`{"type":`)})
	require.ErrorContains(t, err, "not valid JSON")
}

func TestConfigHTTPClientNotMutated(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.Reply{Content: `{}`, Delay: 10 * time.Second})
	hc := &http.Client{}
	p := newProvider(t, llm.ProviderOllama, srv, func(c *llm.Config) {
		c.HTTPClient = hc
		c.Timeout = 50 * time.Millisecond
	})
	_, err := p.Chat(context.Background(), extractionRequest("x"))
	require.True(t, llm.IsRetryable(err), "%v", err)
	require.Zero(t, hc.Timeout)
}

func TestIsRetryable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", errors.New("boom"), false},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), false},
		{"canceled beats deadline", fmt.Errorf("%w (%w)", context.DeadlineExceeded, context.Canceled), false},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), true},
		{"eof", fmt.Errorf("x: %w", io.EOF), true},
		{"unexpected eof", io.ErrUnexpectedEOF, true},
		{"refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"malformed", fmt.Errorf("x: %w", llm.ErrMalformedOutput), false},
		{"truncated", llm.ErrTruncated, false},
		{"StatusError 502", &llm.StatusError{Provider: "openai", StatusCode: 502}, true},
		{"StatusError 422", &llm.StatusError{Provider: "openai", StatusCode: 422}, false},
		{"openai APIError 503", &openai.APIError{HTTPStatusCode: 503}, true},
		{"openai APIError 400", &openai.APIError{HTTPStatusCode: 400}, false},
		{"openai RequestError 429", fmt.Errorf("x: %w", &openai.RequestError{HTTPStatusCode: 429}), true},
		{"ollama StatusError 500", ollama.StatusError{StatusCode: 500}, true},
		{"ollama StatusError 404", ollama.StatusError{StatusCode: 404}, false},
		{"ollama AuthorizationError", ollama.AuthorizationError{StatusCode: 401}, false},
		// A status answer is classified by its status even if the body read
		// also hit EOF.
		{"status beats eof", fmt.Errorf("%w (%w)", &llm.StatusError{StatusCode: 400}, io.EOF), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, llm.IsRetryable(tc.err))
		})
	}
}
