package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/tracing/tracingtest"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
)

// openMetrics scrapes m as a scraper that asks for OpenMetrics does.
func openMetrics(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0; charset=utf-8")
	m.Handler().ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Header().Get("Content-Type"), "application/openmetrics-text")
	return rec.Body.String()
}

// A model call's latency carries the trace of its span as an exemplar, when it is
// traced; untraced, it carries none.
func TestLatencyExemplarNamesTheTrace(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	p, err := llm.NewOpenAI(srv.OpenAIConfig())
	require.NoError(t, err)
	ctx := context.Background()

	m := New()
	_, err = m.WrapProvider(p).Embed(ctx, []string{"x"})
	require.NoError(t, err)
	require.NotContains(t, openMetrics(t, m), "trace_id", "no span, no exemplar")

	rec := tracingtest.New(t, false)
	m = New()
	w := rec.WrapProvider(m.WrapProvider(p))
	tctx, root := rec.Root(ctx, "root")
	_, err = w.Embed(tctx, []string{"x"})
	require.NoError(t, err)
	root.End()
	call := rec.Spans(t).One(t, "embeddings "+llmtest.DefaultEmbedModel)
	// The exemplar's labels come from a map: their order is not fixed.
	span, trace := `span_id="`+call.SpanContext.SpanID().String()+`"`, `trace_id="`+call.SpanContext.TraceID().String()+`"`
	require.Regexp(t, `# \{(`+regexp.QuoteMeta(span+","+trace)+`|`+regexp.QuoteMeta(trace+","+span)+`)\}`, openMetrics(t, m))
}
