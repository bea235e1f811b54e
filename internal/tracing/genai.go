package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/credohq/credo/llm"
)

// WrapProvider returns p with a span for each Chat and Embed call, by the GenAI
// semantic conventions: the operation, the provider, the server (address and port), the
// model asked and the one that answered, the temperature and the answer's token limit
// sent, the response's id, the tokens, the finish reason, and the kind of a failure (a
// low-cardinality code). Neither the prompt
// nor the answer is recorded. Off, it returns p itself. Wrap it outside
// metrics.WrapProvider, so that the latency's exemplar names the model call's span.
func (t *Tracing) WrapProvider(p llm.Provider) llm.Provider {
	if p == nil || !t.Enabled() {
		return p
	}
	return &provider{Provider: p}
}

// provider embeds llm.Provider, so what it does not trace (the window, the names) is
// the wrapped provider's.
type provider struct{ llm.Provider }

func (p *provider) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	ctx, span := p.start(ctx, semconv.GenAIOperationNameChat, p.ChatModel(),
		semconv.GenAIOutputTypeKey.String(outputType(req)), attribute.Int("credo.prompt.messages", len(req.Messages)))
	if d, ok := p.Provider.(llm.Described); ok && span.IsRecording() {
		if t, sent := d.Temperature(); sent {
			span.SetAttributes(semconv.GenAIRequestTemperature(t)) // 0 too: it is sent
		}
	}
	resp, err := p.Provider.Chat(ctx, req)
	if span.IsRecording() {
		span.SetAttributes(semconv.GenAIUsageInputTokens(resp.Usage.PromptTokens), semconv.GenAIUsageOutputTokens(resp.Usage.CompletionTokens))
		if resp.ID != "" {
			span.SetAttributes(semconv.GenAIResponseID(resp.ID))
		}
		if resp.MaxTokens > 0 {
			span.SetAttributes(semconv.GenAIRequestMaxTokens(resp.MaxTokens))
		}
		if resp.Model != "" {
			span.SetAttributes(semconv.GenAIResponseModel(resp.Model))
		}
		if resp.FinishReason != "" {
			span.SetAttributes(semconv.GenAIResponseFinishReasons(resp.FinishReason))
		}
	}
	End(span, err)
	return resp, err
}

func (p *provider) Embed(ctx context.Context, inputs []string) (llm.EmbedResponse, error) {
	ctx, span := p.start(ctx, semconv.GenAIOperationNameEmbeddings, p.EmbedModel(), CountKey.Int(len(inputs)))
	resp, err := p.Provider.Embed(ctx, inputs)
	if span.IsRecording() {
		span.SetAttributes(semconv.GenAIUsageInputTokens(resp.Usage.PromptTokens))
		if resp.Model != "" {
			span.SetAttributes(semconv.GenAIResponseModel(resp.Model))
		}
		if len(resp.Vectors) > 0 {
			span.SetAttributes(semconv.GenAIEmbeddingsDimensionCount(len(resp.Vectors[0])))
		}
	}
	End(span, err)
	return resp, err
}

// start starts a model call's span, named "{operation} {model}" as the conventions say.
func (p *provider) start(ctx context.Context, op attribute.KeyValue, model string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, noop.Span{}
	}
	attrs = append(attrs, op, semconv.GenAIProviderNameKey.String(p.Name()), semconv.GenAIRequestModel(model))
	if d, ok := p.Provider.(llm.Described); ok {
		// Two model servers of one model tell apart by where they are.
		address, port := d.Server()
		attrs = append(attrs, semconv.ServerAddress(address), semconv.ServerPort(port))
	}
	return child(ctx, op.Value.AsString()+" "+model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// outputType is json for a schema-constrained answer, text otherwise.
func outputType(req llm.ChatRequest) string {
	if req.Schema != nil {
		return "json"
	}
	return "text"
}
