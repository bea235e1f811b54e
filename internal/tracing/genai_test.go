package tracing_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/credohq/credo/internal/tracing"
	"github.com/credohq/credo/internal/tracing/tracingtest"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
)

// A model call is a client span by the GenAI conventions: operation, provider, model,
// tokens and finish reason, the kind of a failure, and neither prompt nor answer.
func TestModelCallSpans(t *testing.T) {
	t.Parallel()
	for _, name := range []string{llm.ProviderOpenAI, llm.ProviderOllama} {
		srv := llmtest.NewServer(t)
		var (
			p   llm.Provider
			err error
		)
		if name == llm.ProviderOpenAI {
			p, err = llm.NewOpenAI(srv.OpenAIConfig())
		} else {
			p, err = llm.NewOllama(srv.OllamaConfig())
		}
		require.NoError(t, err)
		rec := tracingtest.New(t, false)
		wrapped := rec.WrapProvider(p)
		ctx, root := rec.Root(context.Background(), "root")

		srv.Script(llmtest.Reply{Content: `{"facts":["the secret answer"]}`, PromptTokens: 120, CompletionTokens: 7},
			llmtest.Reply{Status: http.StatusServiceUnavailable})
		req := llm.SchemaRequest("system", "the secret prompt", "extraction", json.RawMessage(`{"type":"object"}`))
		_, err = wrapped.Chat(ctx, req)
		require.NoError(t, err)
		_, err = wrapped.Chat(ctx, req)
		require.Error(t, err)
		_, err = wrapped.Embed(ctx, []string{"the secret text", "another"})
		require.NoError(t, err)
		// What it does not trace is the provider's own: the window, the names.
		w, err := wrapped.ChatWindow(ctx)
		require.NoError(t, err)
		require.Positive(t, w.Tokens)
		require.Equal(t, name, wrapped.Name())
		root.End()

		spans := rec.Spans(t)
		chats := spans.Named("chat " + llmtest.DefaultChatModel)
		require.Len(t, chats, 2, "%s: %v", name, spans.Names())
		ok, failed := chats[0], chats[1]
		require.Equal(t, trace.SpanKindClient, ok.SpanKind)
		host, port, err := net.SplitHostPort(strings.TrimPrefix(srv.URL(), "http://"))
		require.NoError(t, err)
		portNumber, err := strconv.Atoi(port)
		require.NoError(t, err)
		for key, want := range map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": name, "gen_ai.request.model": llmtest.DefaultChatModel,
			"gen_ai.usage.input_tokens": int64(120), "gen_ai.usage.output_tokens": int64(7), "gen_ai.output.type": "json",
			// Two model servers tell apart by where they are; temperature 0 is sent, so recorded.
			"server.address": host, "server.port": int64(portNumber), "gen_ai.request.temperature": float64(0),
		} {
			v, found := tracingtest.Attr(ok, attribute.Key(key))
			require.True(t, found, "%s: %s", name, key)
			require.Equal(t, want, v.AsInterface(), "%s: %s", name, key)
		}
		if name == llm.ProviderOpenAI {
			id, found := tracingtest.Attr(ok, semconv.GenAIResponseIDKey)
			require.True(t, found, "the completion's id")
			require.True(t, strings.HasPrefix(id.AsString(), "chatcmpl-"), id.AsString())
		} else {
			// Ollama's answer has a limit (num_predict); OpenAI's requests send none.
			limit, found := tracingtest.Attr(ok, semconv.GenAIRequestMaxTokensKey)
			require.True(t, found, "max_tokens")
			require.Positive(t, limit.AsInt64())
		}
		require.Equal(t, codes.Error, failed.Status.Code)
		kind, _ := tracingtest.Attr(failed, semconv.ErrorTypeKey)
		require.Equal(t, "503", kind.AsString(), "a low-cardinality code")
		// The model server gets the trace: its own spans continue it.
		for _, r := range srv.Chats() {
			require.Contains(t, r.Traceparent, root.SpanContext().TraceID().String(), "%s: traceparent", name)
		}
		embedSpan := spans.One(t, "embeddings "+llmtest.DefaultEmbedModel)
		addr, _ := tracingtest.Attr(embedSpan, semconv.ServerAddressKey)
		require.Equal(t, host, addr.AsString())

		embed := spans.One(t, "embeddings "+llmtest.DefaultEmbedModel)
		op, _ := tracingtest.Attr(embed, semconv.GenAIOperationNameKey)
		require.Equal(t, "embeddings", op.AsString())
		n, _ := tracingtest.Attr(embed, tracing.CountKey)
		require.Equal(t, int64(2), n.AsInt64())
		dim, _ := tracingtest.Attr(embed, semconv.GenAIEmbeddingsDimensionCountKey)
		require.Equal(t, int64(llmtest.DefaultDim), dim.AsInt64())

		for _, s := range spans {
			require.NotContains(t, strings.Join(tracingtest.Texts(s), " "), "secret", "%s: span %s", name, s.Name)
		}
	}
}
