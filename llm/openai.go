package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// OpenAI is a Provider for any server speaking the OpenAI HTTP API (OpenAI,
// vLLM, llama.cpp server, LM Studio, Ollama's /v1).
type OpenAI struct {
	client     *openai.Client
	server     *url.URL
	chatModel  string
	embedModel string
	*chatSizing
	embedSizing *embedSizing
}

var _ Provider = (*OpenAI)(nil)

// NewOpenAI returns an OpenAI-API provider. cfg.BaseURL includes the /v1
// prefix, e.g. http://localhost:8000/v1.
func NewOpenAI(cfg Config) (*OpenAI, error) {
	if err := cfg.validate(ProviderOpenAI); err != nil {
		return nil, err
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	}
	var doer openai.HTTPDoer = cfg.httpClient()
	if sendsTemperature(cfg.ChatModel) {
		doer = zeroTemperature{next: doer}
	}
	oc.HTTPClient = doer
	// An OpenAI-compatible server does not say its model's window: MODEL_CONTEXT does.
	server, err := url.Parse(oc.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("llm: openai: parsing BaseURL: %w", err)
	}
	return &OpenAI{
		server:      server,
		client:      openai.NewClientWithConfig(oc),
		chatModel:   cfg.ChatModel,
		embedModel:  cfg.EmbedModel,
		chatSizing:  newChatSizing(ProviderOpenAI, cfg, nil),
		embedSizing: newEmbedSizing(cfg, nil),
	}, nil
}

var _ Described = (*OpenAI)(nil)

// Server is the model server's host and port.
func (p *OpenAI) Server() (string, int) { return serverOf(p.server) }

// Temperature is 0, sent unless the model refuses a temperature.
func (p *OpenAI) Temperature() (float64, bool) { return 0, sendsTemperature(p.chatModel) }

// Name is ProviderOpenAI.
func (p *OpenAI) Name() string { return ProviderOpenAI }

// ChatModel is the model Chat asks.
func (p *OpenAI) ChatModel() string { return p.chatModel }

// EmbedModel is the model Embed asks.
func (p *OpenAI) EmbedModel() string { return p.embedModel }

// Chat runs one non-streaming chat completion at temperature 0 with
// response_format json_schema (strict) when req.Schema is set.
//
// When the answer is unusable (ErrMalformedOutput, including ErrTruncated)
// the response is returned alongside the error so callers can log the
// content and account for the tokens spent.
func (p *OpenAI) Chat(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	if err := checkChatRequest(ProviderOpenAI, p.chatModel, req); err != nil {
		return ChatResponse{}, err
	}

	fit, err := p.fit(ctx, req.Messages)
	if err != nil {
		return ChatResponse{}, err
	}
	msgs := make([]openai.ChatCompletionMessage, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
	}
	creq := openai.ChatCompletionRequest{
		Model:    p.chatModel,
		Messages: msgs,
		// Temperature 0 is what we want but is omitted by go-openai;
		// zeroTemperature puts it back on the wire.
		Temperature: 0,
	}
	if req.Schema != nil {
		name := req.SchemaName
		if name == "" {
			name = defaultSchemaName
		}
		creq.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name:   name,
				Schema: req.Schema, // json.RawMessage is a json.Marshaler: sent verbatim
				Strict: true,
			},
		}
	}

	resp, err := p.client.CreateChatCompletion(ctx, creq)
	if err != nil {
		return ChatResponse{}, p.chatError(ctx, fit, err)
	}

	out := ChatResponse{
		ID:    resp.ID,
		Model: resp.Model,
		Usage: Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens},
	}
	if out.Model == "" {
		out.Model = p.chatModel
	}
	if len(resp.Choices) == 0 {
		return out, fmt.Errorf("llm: openai chat: no choices in response: %w", ErrTruncated)
	}
	choice := resp.Choices[0]
	out.Content = choice.Message.Content
	out.FinishReason = string(choice.FinishReason)
	if err := p.check(fit, out.Usage.PromptTokens); err != nil {
		return out, err
	}
	if choice.Message.Refusal != "" {
		return out, fmt.Errorf("llm: openai chat: model refused (%q): %w", choice.Message.Refusal, ErrMalformedOutput)
	}
	if err := checkChatOutput(ProviderOpenAI, req, out.Content, out.FinishReason); err != nil {
		return out, err
	}
	return out, nil
}

// chatError is err of a chat call sized by fit, a ContextError when the server refused
// the prompt for its length (OpenAI: code context_length_exceeded; vLLM and llama.cpp's
// server say it in words or a type of their own), which no retry fixes.
func (p *OpenAI) chatError(ctx context.Context, fit chatFit, err error) error {
	var code, kind string
	if e, ok := errors.AsType[*openai.APIError](err); ok {
		code, kind = fmt.Sprint(e.Code), e.Type
	}
	err = wrapErr(ctx, ProviderOpenAI, "chat", err)
	if se, ok := errors.AsType[*StatusError](err); ok && refusedForLength(se, code, kind) {
		return &ContextError{Provider: ProviderOpenAI, Cause: ContextRefused, Estimated: fit.estimate, Window: fit.window.Tokens, Err: err}
	}
	return err
}

// Embed embeds inputs in a single /embeddings call, asking for float
// encoding: it is the API default that every compatible server implements,
// whereas base64 is undocumented and not universally supported.
func (p *OpenAI) Embed(ctx context.Context, inputs []string) (EmbedResponse, error) {
	if p.embedModel == "" {
		return EmbedResponse{}, errors.New("llm: openai embed: no EmbedModel configured")
	}
	if len(inputs) == 0 {
		return EmbedResponse{Model: p.embedModel}, nil
	}

	batch, err := p.embedSizing.split(ctx, inputs)
	if err != nil {
		return EmbedResponse{}, err
	}
	resp, err := p.client.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{
		Input:          batch.texts,
		Model:          openai.EmbeddingModel(p.embedModel),
		EncodingFormat: openai.EmbeddingEncodingFormatFloat,
	})
	if err != nil {
		return EmbedResponse{}, wrapErr(ctx, ProviderOpenAI, "embed", err)
	}

	// Order by the index field rather than trusting array order.
	vecs := make([][]float32, len(batch.texts))
	if len(resp.Data) != len(batch.texts) {
		return EmbedResponse{}, fmt.Errorf("llm: openai embed: got %d vectors for %d inputs: %w", len(resp.Data), len(batch.texts), ErrMalformedOutput)
	}
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(vecs) || vecs[d.Index] != nil {
			return EmbedResponse{}, fmt.Errorf("llm: openai embed: bad or duplicate index %d: %w", d.Index, ErrMalformedOutput)
		}
		vecs[d.Index] = d.Embedding
	}
	if err := checkVectors(ProviderOpenAI, len(batch.texts), vecs); err != nil {
		return EmbedResponse{}, err
	}

	model := string(resp.Model)
	if model == "" {
		model = p.embedModel
	}
	return EmbedResponse{
		Vectors: batch.join(vecs),
		Model:   model,
		Usage:   Usage{PromptTokens: resp.Usage.PromptTokens},
	}, nil
}

// sendsTemperature reports whether the model accepts a temperature. OpenAI's
// reasoning models reject anything but the default, and go-openai refuses
// non-default values for them client-side too (reasoning_validator.go).
func sendsTemperature(model string) bool {
	for _, prefix := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(model, prefix) {
			return false
		}
	}
	return true
}

// zeroTemperature adds "temperature": 0 to chat completion bodies.
//
// go-openai's ChatCompletionRequest.Temperature is a float32 tagged
// omitempty, so 0 never reaches the server (sashabaranov/go-openai#9, open
// since 2021), which then uses its own default: 1 for OpenAI, typically
// 0.7-0.8 for vLLM, llama.cpp and Ollama. The maintainers' workaround,
// math.SmallestNonzeroFloat32, goes out as 1e-45 and relies on each server
// treating a denormal as greedy (llama.cpp divides logits by it); splicing a
// literal 0 into the JSON does not.
type zeroTemperature struct {
	next openai.HTTPDoer
}

func (z zeroTemperature) Do(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || !strings.HasSuffix(req.URL.Path, "/chat/completions") {
		return z.next.Do(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	body = withZeroTemperature(body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return z.next.Do(req)
}

// withZeroTemperature returns body with "temperature":0 as its first field
// unless body already sets a temperature or isn't a JSON object.
func withZeroTemperature(body []byte) []byte {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return body
	}
	if _, ok := fields["temperature"]; ok {
		return body
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	out := make([]byte, 0, len(trimmed)+17)
	out = append(out, `{"temperature":0`...)
	if len(fields) > 0 {
		out = append(out, ',')
	}
	return append(out, trimmed[1:]...)
}
