package main

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/tracing/tracingtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
)

// With the OTEL_* variables set, one transcript posted to the API gives one trace,
// exported over OTLP when the worker stops: the request, the job, the model call with
// its tokens, and the apply. Nothing exported holds the transcript's words or its scope.
//
// Not parallel: the SDK reads the variables from the process's environment.
func TestOneTraceFromRequestToMemory(t *testing.T) {
	rcv := tracingtest.NewReceiver(t)
	b := setup(t)
	maps.Copy(b.env, rcv.Setenv(t))
	const scope, words = "user-5e1f0c", "I moved to Zanzibar in June."
	b.llm.Handle(func(req llmtest.Request) llmtest.Reply {
		return llmtest.Reply{PromptTokens: 250, CompletionTokens: 20,
			Content: pipelinetest.Answer(pipelinetest.Fact{Statement: "The user lives in Zanzibar.", Attribute: "location"})}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrs, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- run(ctx, nil, b.getenv, io.Discard, func(addr string) { addrs <- addr }) }()
	addr := <-addrs

	body, err := json.Marshal(map[string]any{"scope": scope, "id": "t1", "occurred_at": "2026-06-20T10:00:00Z",
		"messages": []map[string]string{{"role": "user", "content": words}, {"role": "assistant", "content": "Noted."}}})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v1/transcripts", strings.NewReader(string(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	res, err = http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Eventually(t, func() bool { return b.episodes(t)["applied"] == 1 }, 30*time.Second, 20*time.Millisecond)
	cancel()
	require.NoError(t, <-done)

	spans := rcv.Spans()
	byName := map[string][]tracingtest.Span{}
	byID := map[string]tracingtest.Span{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
		byID[s.SpanID] = s
	}
	post := byName["POST /v1/transcripts"]
	require.Len(t, post, 1, "%v", names(spans))
	trace := post[0].TraceID
	require.Equal(t, "/v1/transcripts", post[0].Attributes["http.route"])
	require.Equal(t, "credo-test", post[0].Service, "OTEL_SERVICE_NAME names the service")
	inTrace := func(name string) tracingtest.Span {
		t.Helper()
		for _, s := range byName[name] {
			if s.TraceID == trace {
				return s
			}
		}
		require.Failf(t, "missing span", "no %q in the request's trace among %v", name, names(spans))
		return tracingtest.Span{}
	}
	job := inTrace("river.work/credo.extract_scope")
	require.Equal(t, "river.insert_many", byID[job.ParentSpanID].Name, "the job is the child of its insert")
	episode := inTrace("extract.episode")
	require.Equal(t, job.SpanID, episode.ParentSpanID)
	chat := inTrace("chat " + llmtest.DefaultChatModel)
	require.Equal(t, "250", chat.Attributes["gen_ai.usage.input_tokens"])
	require.Equal(t, "20", chat.Attributes["gen_ai.usage.output_tokens"])
	require.Equal(t, "ollama", chat.Attributes["gen_ai.provider.name"])
	inTrace("extract.apply")
	inTrace("INSERT episode")
	require.Empty(t, byName["GET /healthz"], "probes are not traced")

	for _, secret := range []string{"Zanzibar", scope} {
		require.False(t, rcv.Received([]byte(secret)), "%q was exported", secret)
	}
}

func names(spans []tracingtest.Span) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name
	}
	return out
}
