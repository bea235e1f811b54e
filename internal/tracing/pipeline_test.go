package tracing_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/internal/tracing"
	"github.com/credohq/credo/internal/tracing/tracingtest"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/transcript"
)

// One trace shows a transcript from its enqueue to memory, across the queue: the
// enqueue, the job it inserted, the episode's extraction with its model call and its
// apply. An episode that waited in the backlog of a job another enqueue inserted is in
// its own enqueue's trace, linked to that job. No span holds the transcript's text, its
// statements or its scope.
func TestTraceAcrossTheQueue(t *testing.T) {
	t.Parallel()
	rec := tracingtest.New(t, false)
	p := pipelinetest.New(t, &pipelinetest.Options{
		Middleware: rec.RiverMiddleware(),
		Extract: func(c *extract.Config) {
			c.Chat, c.Embed = rec.WrapProvider(c.Chat.(llm.Provider)), rec.WrapProvider(c.Embed.(llm.Provider))
		},
	})
	started, release := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(release) })
	p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		if strings.Contains(req.Prompt, "I moved to Lisbon") {
			// The first episode holds its job until the second is enqueued.
			select {
			case started <- struct{}{}:
			default:
			}
			<-release
		}
		return llmtest.Reply{PromptTokens: 321, CompletionTokens: 12,
			Content: pipelinetest.Answer(pipelinetest.Fact{Statement: "The user lives in Lisbon.", Attribute: "location"})}
	})
	const scope = "user-7f3a9c"
	first := enqueue(t, rec, p, "POST first", pipelinetest.T(scope, "a", "2026-03-01T10:00:00Z", "I moved to Lisbon last week."))
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		require.Fail(t, "the first episode's model call never came")
	}
	second := enqueue(t, rec, p, "POST second", pipelinetest.T(scope, "b", "2026-03-02T10:00:00Z", "My sister Ana visits in May."))
	once.Do(func() { close(release) })
	p.Drain(t)
	require.Equal(t, "applied", p.Episode(t, second.id).State)

	spans := rec.Spans(t)
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s
	}
	parent := func(s tracetest.SpanStub) tracetest.SpanStub {
		p, ok := byID[s.Parent.SpanID()]
		require.True(t, ok, "the parent of %s is exported", s.Name)
		return p
	}
	// The first transcript: request, enqueue, insert, job, episode, model call, apply.
	episodes := map[int64]tracetest.SpanStub{}
	for _, s := range spans.Named("extract.episode") {
		v, _ := tracingtest.Attr(s, tracing.EpisodeKey)
		episodes[v.AsInt64()] = s
	}
	ep1 := episodes[first.id]
	job := parent(ep1)
	require.Equal(t, "river.work/credo.extract_scope", job.Name)
	insert := parent(job)
	require.Equal(t, "river.insert_many", insert.Name)
	enq := parent(insert)
	require.Equal(t, "extract.enqueue", enq.Name)
	require.Equal(t, "POST first", parent(enq).Name)
	require.Equal(t, first.trace, ep1.SpanContext.TraceID())
	chat := childNamed(t, spans, ep1, "chat "+llmtest.DefaultChatModel)
	tokens, _ := tracingtest.Attr(chat, "gen_ai.usage.input_tokens")
	require.Equal(t, int64(321), tokens.AsInt64())
	out, _ := tracingtest.Attr(chat, "gen_ai.usage.output_tokens")
	require.Equal(t, int64(12), out.AsInt64())
	childNamed(t, spans, ep1, "extract.apply")

	// The second, worked by the first's job: in its own trace, linked to the job.
	ep2 := episodes[second.id]
	require.Equal(t, second.trace, ep2.SpanContext.TraceID())
	enq2 := parent(ep2)
	require.Equal(t, "extract.enqueue", enq2.Name)
	require.Equal(t, "POST second", parent(enq2).Name)
	require.Len(t, ep2.Links, 1)
	require.Equal(t, job.SpanContext.SpanID(), ep2.Links[0].SpanContext.SpanID())
	childNamed(t, spans, ep2, "chat "+llmtest.DefaultChatModel)
	childNamed(t, spans, ep2, "extract.apply")

	for _, s := range spans {
		texts := strings.Join(tracingtest.Texts(s), " ")
		for _, secret := range []string{"Lisbon", "Ana", scope} {
			require.NotContains(t, texts, secret, "span %s", s.Name)
		}
	}
}

// enqueued is a transcript enqueued under a root span.
type enqueued struct {
	id    int64
	trace trace.TraceID
}

func enqueue(t *testing.T, rec *tracingtest.Recorder, p *pipelinetest.Pipeline, name string, tr transcript.Transcript) enqueued {
	t.Helper()
	ctx, root := rec.Root(context.Background(), name)
	defer root.End()
	var res *extract.EnqueueResult
	require.NoError(t, pgx.BeginFunc(ctx, p.Pool(), func(tx pgx.Tx) error {
		var err error
		res, err = extract.Enqueue(ctx, tx, p.Client, []transcript.Transcript{tr}, time.Now(), nil)
		return err
	}))
	return enqueued{id: res.EpisodeIDs[0], trace: root.SpanContext().TraceID()}
}

// childNamed is the descendant of span called name; it fails when there is none.
func childNamed(t *testing.T, spans tracingtest.Spans, span tracetest.SpanStub, name string) tracetest.SpanStub {
	t.Helper()
	below := map[trace.SpanID]bool{span.SpanContext.SpanID(): true}
	for grew := true; grew; {
		grew = false
		for _, s := range spans {
			if below[s.Parent.SpanID()] && !below[s.SpanContext.SpanID()] {
				below[s.SpanContext.SpanID()], grew = true, true
			}
		}
	}
	for _, s := range spans.Named(name) {
		if below[s.SpanContext.SpanID()] {
			return s
		}
	}
	require.Failf(t, "no span below", "%s has no %s below it", span.Name, name)
	return tracetest.SpanStub{}
}
