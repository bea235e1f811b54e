package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	ollama "github.com/ollama/ollama/api"
)

// DefaultOllamaURL is where Ollama listens out of the box.
const DefaultOllamaURL = "http://127.0.0.1:11434"

// Ollama is a Provider speaking Ollama's native API (/api/chat, /api/embed).
type Ollama struct {
	client     *ollama.Client
	server     *url.URL
	chatModel  string
	embedModel string
	*chatSizing
	embedSizing *embedSizing
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
	p := &Ollama{
		server:     u,
		client:     ollama.NewClient(u, cfg.httpClient()),
		chatModel:  cfg.ChatModel,
		embedModel: cfg.EmbedModel,
	}
	p.chatSizing = newChatSizing(ProviderOllama, cfg, func(ctx context.Context) (int, error) { return p.contextLength(ctx, p.chatModel) })
	p.embedSizing = newEmbedSizing(cfg, func(ctx context.Context) (int, error) { return p.contextLength(ctx, p.embedModel) })
	return p, nil
}

// contextLength is the context length model was trained with, from its metadata
// (/api/show, model_info["<architecture>.context_length"]): Ollama runs a model with
// num_ctx, at most this. 0 when the server does not say.
func (p *Ollama) contextLength(ctx context.Context, model string) (int, error) {
	res, err := p.client.Show(ctx, &ollama.ShowRequest{Model: model})
	if err != nil {
		err = wrapErr(ctx, ProviderOllama, "show model", err)
		// A model not pulled, or a server that does not answer now, fails the call as
		// the chat itself would; a server that cannot say (not Ollama's own, an
		// answer of another shape) leaves the setting or the default.
		if code, ok := statusCode(err); ok && code == http.StatusNotFound || IsRetryable(err) || ctx.Err() != nil {
			return 0, err
		}
		return 0, nil
	}
	arch, _ := res.ModelInfo["general.architecture"].(string)
	n, _ := res.ModelInfo[arch+".context_length"].(float64)
	return int(n), nil
}

var _ Described = (*Ollama)(nil)

// Server is the model server's host and port.
func (p *Ollama) Server() (string, int) { return serverOf(p.server) }

// Temperature is 0, always sent.
func (p *Ollama) Temperature() (float64, bool) { return 0, true }

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
	fit, err := p.fit(ctx, req.Messages)
	if err != nil {
		return ChatResponse{}, err
	}
	// num_ctx holds the prompt and the answer, so that Ollama never cuts the prompt (it
	// keeps its end, silently); num_predict keeps the answer inside it. truncate and
	// shift false make a server that would cut refuse instead (Ollama 0.12 and later;
	// older ones ignore them, and check catches their cut).
	no := false
	creq := &ollama.ChatRequest{
		Model:    p.chatModel,
		Messages: msgs,
		Stream:   &no,
		Format:   req.Schema, // nil: omitted, free text
		Options:  map[string]any{"temperature": 0, "num_ctx": fit.numCtx, "num_predict": fit.numPredict},
		Truncate: &no,
		Shift:    &no,
	}

	// Even with stream false the client reads the body as NDJSON and calls
	// back per line; accumulate in case a server streams anyway.
	var (
		content strings.Builder
		final   ollama.ChatResponse
		done    bool
	)
	err = p.client.Chat(ctx, creq, func(r ollama.ChatResponse) error {
		content.WriteString(r.Message.Content)
		if r.Done {
			final, done = r, true
		}
		return nil
	})
	if err != nil {
		return ChatResponse{}, p.chatError(ctx, fit, err)
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
		MaxTokens:    fit.numPredict,
	}
	if out.Model == "" {
		out.Model = p.chatModel
	}
	if err := p.check(fit, out.Usage.PromptTokens); err != nil {
		return out, err
	}
	if err := checkChatOutput(ProviderOllama, req, out.Content, out.FinishReason); err != nil {
		return out, err
	}
	return out, nil
}

// chatError is err of a chat call sized by fit, a ContextError when the server refused
// the prompt for its length.
func (p *Ollama) chatError(ctx context.Context, fit chatFit, err error) error {
	err = wrapErr(ctx, ProviderOllama, "chat", err)
	if se, ok := errors.AsType[*StatusError](err); ok && refusedForLength(se, "", "") {
		return &ContextError{Provider: ProviderOllama, Cause: ContextRefused, Estimated: fit.estimate, Window: fit.window.Tokens, Err: err}
	}
	return err
}

// Embed embeds inputs in one /api/embed call.
func (p *Ollama) Embed(ctx context.Context, inputs []string) (EmbedResponse, error) {
	if p.embedModel == "" {
		return EmbedResponse{}, errors.New("llm: ollama embed: no EmbedModel configured")
	}
	if len(inputs) == 0 {
		return EmbedResponse{Model: p.embedModel}, nil
	}

	batch, err := p.embedSizing.split(ctx, inputs)
	if err != nil {
		return EmbedResponse{}, err
	}
	// truncate false: a text longer than the model's window is refused, never cut.
	no := false
	resp, err := p.client.Embed(ctx, &ollama.EmbedRequest{Model: p.embedModel, Input: batch.texts, Truncate: &no})
	if err != nil {
		return EmbedResponse{}, wrapErr(ctx, ProviderOllama, "embed", err)
	}
	if err := checkVectors(ProviderOllama, len(batch.texts), resp.Embeddings); err != nil {
		return EmbedResponse{}, err
	}

	model := resp.Model
	if model == "" {
		model = p.embedModel
	}
	return EmbedResponse{
		Vectors: batch.join(resp.Embeddings),
		Model:   model,
		Usage:   Usage{PromptTokens: resp.PromptEvalCount},
	}, nil
}
