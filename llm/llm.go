// Package llm is credo's narrow interface to language models: one structured
// (JSON Schema constrained) chat call per transcript and batched embeddings.
//
// Two providers are implemented: OpenAI, which speaks the OpenAI HTTP API and
// so covers OpenAI itself, vLLM, llama.cpp server, LM Studio and Ollama's /v1
// endpoints; and Ollama, which speaks Ollama's native API. Both run at
// temperature 0 so that re-running an extraction is as repeatable as the
// server allows.
package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// DefaultTimeout bounds a single HTTP call when Config.Timeout is zero. Local
// 7B models can take a minute on a long transcript, so it is generous.
const DefaultTimeout = 120 * time.Second

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one chat turn.
type Message struct {
	Role    string // RoleSystem, RoleUser or RoleAssistant
	Content string
}

// ChatRequest is a chat call whose answer must conform to Schema.
type ChatRequest struct {
	Messages []Message

	// SchemaName names the schema for providers that want one (OpenAI's
	// response_format.json_schema.name). Defaults to "response".
	SchemaName string

	// Schema is a JSON Schema object the provider enforces as structured
	// output. Nil asks for free text. OpenAI sends it with strict: true,
	// which on api.openai.com requires every object to list all its
	// properties as required and set additionalProperties to false.
	Schema json.RawMessage
}

// SchemaRequest is the request of a system and a user message whose answer follows
// schema, named name: how every prompt of credo's pipeline is sent.
func SchemaRequest(system, user, name string, schema json.RawMessage) ChatRequest {
	return ChatRequest{
		Messages:   []Message{{Role: RoleSystem, Content: system}, {Role: RoleUser, Content: user}},
		SchemaName: name,
		Schema:     schema,
	}
}

// Usage is token accounting as reported by the server.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
}

// ChatResponse is a successful chat answer. Content is the raw model output;
// when a schema was requested it is valid JSON (otherwise Chat fails with
// ErrMalformedOutput) but not validated against the schema.
type ChatResponse struct {
	Content      string
	Usage        Usage
	Model        string
	FinishReason string
	// ID is the server's id of the completion, when it gives one (OpenAI's API).
	ID string
	// MaxTokens is the limit on the answer's tokens sent with the request (Ollama's
	// num_predict); 0 when none was sent.
	MaxTokens int
}

// EmbedResponse holds one vector per input, in input order, all of the same
// dimension.
type EmbedResponse struct {
	Vectors [][]float32
	Model   string
	Usage   Usage
}

// Chatter runs structured chat completions.
type Chatter interface {
	Chat(ctx context.Context, req ChatRequest) (ChatResponse, error)
}

// Embedder embeds a batch of texts in one call.
type Embedder interface {
	Embed(ctx context.Context, inputs []string) (EmbedResponse, error)
}

// Provider is a configured model server.
type Provider interface {
	Chatter
	Embedder
	Sizer

	// Name is "openai" or "ollama".
	Name() string
	ChatModel() string
	EmbedModel() string
}

// Described is a provider that says, for traces, where its model server is and the
// temperature its chat requests carry; both providers are.
type Described interface {
	// Server is the model server's host and port.
	Server() (address string, port int)
	// Temperature is the temperature sent with each chat request; false when none is
	// sent (a model that refuses one).
	Temperature() (float64, bool)
}

// Provider names.
const (
	ProviderOpenAI = "openai"
	ProviderOllama = "ollama"
)

// Config configures a provider.
type Config struct {
	// BaseURL is the server root. OpenAI: the API base including /v1, e.g.
	// http://localhost:8000/v1 (empty means api.openai.com). Ollama: the
	// server root, e.g. http://localhost:11434 (empty means that).
	BaseURL string

	// APIKey is sent as a bearer token by the OpenAI provider; ignored by
	// Ollama.
	APIKey string

	ChatModel  string
	EmbedModel string

	// Timeout bounds each HTTP call, including reading the body. Zero means
	// DefaultTimeout.
	Timeout time.Duration

	// Context is the chat model's window in tokens (MODEL_CONTEXT): on Ollama, a cap on
	// the model's own context length, which the server tells; on other servers the
	// window, DefaultContext when zero.
	Context int
	// EmbedContext is the embedding model's window (EMBED_CONTEXT): likewise a cap on
	// Ollama, the window elsewhere, DefaultEmbedContext when zero. A longer text is
	// embedded in pieces (see Embed).
	EmbedContext int
	// AnswerTokens is the room kept in the window for an answer; zero means
	// DefaultAnswerTokens.
	AnswerTokens int

	// HTTPClient is optional. It is copied, not mutated; its Timeout is
	// replaced by Timeout when that is set, or by DefaultTimeout when both
	// are zero. Without a Transport, the provider keeps up to 100 idle
	// connections to the server, one per concurrent worker.
	HTTPClient *http.Client
}

// httpClient returns the client a provider should use: never nil, never
// without a timeout, never the caller's instance (so setting the timeout
// doesn't leak into code sharing it).
func (c Config) httpClient() *http.Client {
	var hc http.Client
	if c.HTTPClient != nil {
		hc = *c.HTTPClient
	}
	switch {
	case c.Timeout > 0:
		hc.Timeout = c.Timeout
	case hc.Timeout == 0:
		hc.Timeout = DefaultTimeout
	}
	next := hc.Transport
	if next == nil {
		next = newTransport()
	}
	hc.Transport = limitedTransport{next: next, limit: MaxResponseBytes}
	return &hc
}

func (c Config) validate(provider string) error {
	if c.ChatModel == "" && c.EmbedModel == "" {
		return fmt.Errorf("llm: %s: config needs ChatModel or EmbedModel", provider)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("llm: %s: negative Timeout %s", provider, c.Timeout)
	}
	if c.Context < 0 || c.EmbedContext < 0 || c.AnswerTokens < 0 {
		return fmt.Errorf("llm: %s: negative Context, EmbedContext or AnswerTokens", provider)
	}
	if c.Context > 0 && c.answerTokens() >= c.Context {
		return fmt.Errorf("llm: %s: a window of %d tokens leaves no room for a prompt beside %d for the answer", provider, c.Context, c.answerTokens())
	}
	return nil
}

func (c Config) answerTokens() int {
	if c.AnswerTokens > 0 {
		return c.AnswerTokens
	}
	return DefaultAnswerTokens
}

// defaultSchemaName is used when ChatRequest.SchemaName is empty; OpenAI
// rejects a json_schema without a name.
const defaultSchemaName = "response"

func checkChatRequest(provider, model string, req ChatRequest) error {
	if model == "" {
		return fmt.Errorf("llm: %s chat: no ChatModel configured", provider)
	}
	if len(req.Messages) == 0 {
		return fmt.Errorf("llm: %s chat: no messages", provider)
	}
	if req.Schema != nil && !json.Valid(req.Schema) {
		return fmt.Errorf("llm: %s chat: schema %q is not valid JSON", provider, req.SchemaName)
	}
	return nil
}

// checkChatOutput turns outputs a caller can't use into ErrMalformedOutput
// errors. finishReason is the provider's raw value ("length" on both APIs
// means the token limit cut the answer).
func checkChatOutput(provider string, req ChatRequest, content, finishReason string) error {
	switch finishReason {
	case "length":
		return fmt.Errorf("llm: %s chat: %w (finish_reason %q after %d bytes)", provider, ErrTruncated, finishReason, len(content))
	case "content_filter":
		return fmt.Errorf("llm: %s chat: output withheld by content filter: %w", provider, ErrMalformedOutput)
	}
	if req.Schema != nil {
		if content == "" {
			return fmt.Errorf("llm: %s chat: empty output: %w", provider, ErrMalformedOutput)
		}
		if !json.Valid([]byte(content)) {
			return fmt.Errorf("llm: %s chat: output is not valid JSON: %w", provider, ErrMalformedOutput)
		}
	}
	return nil
}

// checkVectors makes sure a batch answer lines up with its inputs; a short or
// ragged batch would silently attach vectors to the wrong statements.
func checkVectors(provider string, n int, vecs [][]float32) error {
	if len(vecs) != n {
		return fmt.Errorf("llm: %s embed: got %d vectors for %d inputs: %w", provider, len(vecs), n, ErrMalformedOutput)
	}
	dim := 0
	for i, v := range vecs {
		if len(v) == 0 {
			return fmt.Errorf("llm: %s embed: vector %d is empty: %w", provider, i, ErrMalformedOutput)
		}
		if i == 0 {
			dim = len(v)
			continue
		}
		if len(v) != dim {
			return fmt.Errorf("llm: %s embed: vector %d has dimension %d, vector 0 has %d: %w", provider, i, len(v), dim, ErrMalformedOutput)
		}
	}
	return nil
}
