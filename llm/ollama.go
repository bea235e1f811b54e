package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	ollama "github.com/ollama/ollama/api"
)

// DefaultOllamaURL is where Ollama listens out of the box.
const DefaultOllamaURL = "http://127.0.0.1:11434"

// Ollama is a Provider speaking Ollama's native API (/api/chat, /api/embed).
type Ollama struct {
	client     *ollama.Client
	chatModel  string
	embedModel string
}

var _ Provider = (*Ollama)(nil)

// NewOllama returns a native Ollama provider. cfg.BaseURL is the server root
// (no /api or /v1 suffix); empty means DefaultOllamaURL. cfg.APIKey is
// ignored.
func NewOllama(cfg Config) (*Ollama, error) {
	if err := cfg.validate(ProviderOllama); err != nil {
		return nil, err
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultOllamaURL
	}
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil {
		return nil, fmt.Errorf("llm: ollama: parsing BaseURL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: ollama: BaseURL %q must be http(s)://host[:port]", base)
	}
	return &Ollama{
		client:     ollama.NewClient(u, cfg.httpClient()),
		chatModel:  cfg.ChatModel,
		embedModel: cfg.EmbedModel,
	}, nil
}

// Name is ProviderOllama.
func (p *Ollama) Name() string { return ProviderOllama }

// ChatModel is the model Chat asks.
func (p *Ollama) ChatModel() string { return p.chatModel }

// EmbedModel is the model Embed asks.
func (p *Ollama) EmbedModel() string { return p.embedModel }

// Chat runs one non-streaming /api/chat call at temperature 0 with the
// schema as format. As with OpenAI.Chat, the response accompanies an
// ErrMalformedOutput error.
func (p *Ollama) Chat(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	if err := checkChatRequest(ProviderOllama, p.chatModel, req); err != nil {
		return ChatResponse{}, err
	}

	msgs := make([]ollama.Message, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = ollama.Message{Role: m.Role, Content: m.Content}
	}
	stream := false
	creq := &ollama.ChatRequest{
		Model:    p.chatModel,
		Messages: msgs,
		Stream:   &stream,
		Format:   req.Schema, // nil: omitted, free text
		Options:  map[string]any{"temperature": 0},
	}

	// Even with stream false the client reads the body as NDJSON and calls
	// back per line; accumulate in case a server streams anyway.
	var (
		content strings.Builder
		final   ollama.ChatResponse
		done    bool
	)
	err := p.client.Chat(ctx, creq, func(r ollama.ChatResponse) error {
		content.WriteString(r.Message.Content)
		if r.Done {
			final, done = r, true
		}
		return nil
	})
	if err != nil {
		return ChatResponse{}, wrapErr(ctx, ProviderOllama, "chat", err)
	}
	if !done {
		// The client returns nil for an empty body, even with a 5xx status,
		// so a missing final message is a broken exchange, not a model
		// answer: report it as a retryable unexpected EOF.
		return ChatResponse{}, wrapErr(ctx, ProviderOllama, "chat", fmt.Errorf("response ended without done message: %w", io.ErrUnexpectedEOF))
	}

	out := ChatResponse{
		Content:      content.String(),
		Usage:        Usage{PromptTokens: final.PromptEvalCount, CompletionTokens: final.EvalCount},
		Model:        final.Model,
		FinishReason: final.DoneReason,
	}
	if out.Model == "" {
		out.Model = p.chatModel
	}
	if err := checkChatOutput(ProviderOllama, req, out.Content, out.FinishReason); err != nil {
		return out, err
	}
	return out, nil
}

// Embed embeds inputs in one /api/embed call.
func (p *Ollama) Embed(ctx context.Context, inputs []string) (EmbedResponse, error) {
	if p.embedModel == "" {
		return EmbedResponse{}, errors.New("llm: ollama embed: no EmbedModel configured")
	}
	if len(inputs) == 0 {
		return EmbedResponse{Model: p.embedModel}, nil
	}

	resp, err := p.client.Embed(ctx, &ollama.EmbedRequest{Model: p.embedModel, Input: inputs})
	if err != nil {
		return EmbedResponse{}, wrapErr(ctx, ProviderOllama, "embed", err)
	}
	if err := checkVectors(ProviderOllama, len(inputs), resp.Embeddings); err != nil {
		return EmbedResponse{}, err
	}

	model := resp.Model
	if model == "" {
		model = p.embedModel
	}
	return EmbedResponse{
		Vectors: resp.Embeddings,
		Model:   model,
		Usage:   Usage{PromptTokens: resp.PromptEvalCount},
	}, nil
}
