package tracing_test

import (
	"context"
	"errors"
	"fmt"
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
)

// A stage is its caller's child; with no recording span in its context it is nothing.
func TestStart(t *testing.T) {
	t.Parallel()
	rec := tracingtest.New(t, false)
	ctx := context.Background()
	_, orphan := tracing.Start(ctx, "extract.plan")
	require.False(t, orphan.IsRecording(), "no span in the context: nothing to be a child of")

	ctx, root := rec.Root(ctx, "beliefs consolidate")
	_, stage := tracing.Start(ctx, "consolidate.plan", tracing.CountKey.Int(3))
	tracing.End(stage, nil)
	root.End()
	spans := rec.Spans(t)
	plan := spans.One(t, "consolidate.plan")
	cmd := spans.One(t, "beliefs consolidate")
	require.Equal(t, cmd.SpanContext.SpanID(), plan.Parent.SpanID())
	require.Equal(t, cmd.SpanContext.TraceID(), plan.SpanContext.TraceID())
	v, ok := tracingtest.Attr(plan, tracing.CountKey)
	require.True(t, ok)
	require.Equal(t, int64(3), v.AsInt64())
}

// An episode's span continues its enqueue's trace when the job that works it runs in
// another one, linked to the job; in the job's own trace, or with nothing carried, it is
// the job's child.
func TestStartFrom(t *testing.T) {
	t.Parallel()
	rec := tracingtest.New(t, false)
	ctx := context.Background()
	enqCtx, enqueue := rec.Root(ctx, "POST /v1/transcripts")
	carried := tracing.Carry(enqCtx)
	require.True(t, strings.HasPrefix(carried, "00-"+enqueue.SpanContext().TraceID().String()+"-"), carried)
	enqueue.End()

	jobCtx, job := rec.Root(ctx, "river.work/credo.extract_scope")
	_, other := tracing.StartFrom(jobCtx, "extract.episode", carried, tracing.EpisodeKey.Int64(7))
	other.End()
	_, own := tracing.StartFrom(jobCtx, "extract.episode", tracing.Carry(jobCtx), tracing.EpisodeKey.Int64(8))
	own.End()
	_, none := tracing.StartFrom(jobCtx, "extract.episode", "", tracing.EpisodeKey.Int64(9))
	none.End()
	_, bad := tracing.StartFrom(jobCtx, "extract.episode", "not a traceparent", tracing.EpisodeKey.Int64(10))
	bad.End()
	job.End()
	_, untraced := tracing.StartFrom(ctx, "extract.episode", carried)
	require.False(t, untraced.IsRecording(), "no job span: tracing is off")

	episodes := map[int64]trace.SpanContext{}
	parents := map[int64]trace.SpanContext{}
	links := map[int64]int{}
	for _, s := range rec.Spans(t).Named("extract.episode") {
		v, _ := tracingtest.Attr(s, tracing.EpisodeKey)
		episodes[v.AsInt64()], parents[v.AsInt64()], links[v.AsInt64()] = s.SpanContext, s.Parent, len(s.Links)
		if v.AsInt64() == 7 {
			require.Equal(t, job.SpanContext().SpanID(), s.Links[0].SpanContext.SpanID(), "linked to the job that worked it")
		}
	}
	require.Equal(t, enqueue.SpanContext().TraceID(), episodes[7].TraceID(), "in its enqueue's trace")
	require.Equal(t, enqueue.SpanContext().SpanID(), parents[7].SpanID())
	require.Equal(t, 1, links[7])
	for _, id := range []int64{8, 9, 10} {
		require.Equal(t, job.SpanContext().TraceID(), episodes[id].TraceID(), "episode %d", id)
		require.Equal(t, job.SpanContext().SpanID(), parents[id].SpanID(), "episode %d", id)
		require.Zero(t, links[id], "episode %d", id)
	}
}

// A failed span says the kind of its error, never its message.
func TestEndNamesTheKind(t *testing.T) {
	t.Parallel()
	rec := tracingtest.New(t, false)
	ctx, root := rec.Root(context.Background(), "root")
	_, chat := tracing.Start(ctx, "extract.chat")
	tracing.End(chat, fmt.Errorf("the user said %q: %w", "my PIN is 4321", llm.ErrMalformedOutput))
	_, other := tracing.Start(ctx, "extract.apply")
	tracing.End(other, errors.New("scope alice: my PIN is 4321"))
	root.End()
	spans := rec.Spans(t)
	for name, kind := range map[string]string{"extract.chat": "malformed_output", "extract.apply": "error"} {
		s := spans.One(t, name)
		require.Equal(t, codes.Error, s.Status.Code)
		require.Equal(t, kind, s.Status.Description)
		v, _ := tracingtest.Attr(s, semconv.ErrorTypeKey)
		require.Equal(t, kind, v.AsString())
		require.NotContains(t, strings.Join(tracingtest.Texts(s), " "), "4321")
	}
}

// What may name a user is dropped before export: the URL's path and query, an error's
// message, another instrumentation's status message, and the scope unless asked for.
func TestRedaction(t *testing.T) {
	t.Parallel()
	for _, recordScope := range []bool{false, true} {
		rec := tracingtest.New(t, recordScope)
		ctx, root := rec.Root(context.Background(), "GET /v1/scopes/{scope}/beliefs",
			semconv.URLPath("/v1/scopes/alice/beliefs"), semconv.URLQuery("scope=alice"), semconv.HTTPRoute("/v1/scopes/{scope}/beliefs"))
		tracing.SetScope(root, "alice")
		_, foreign := rec.Provider().Tracer("github.com/exaring/otelpgx").Start(ctx, "SELECT belief")
		foreign.RecordError(errors.New(`duplicate key value (scope)=(alice)`))
		foreign.SetStatus(codes.Error, `duplicate key value (scope)=(alice)`)
		foreign.SetAttributes(attribute.String("pgx.sql_state", "23505"))
		foreign.End()
		root.End()

		spans := rec.Spans(t)
		r := spans.One(t, "GET /v1/scopes/{scope}/beliefs")
		route, _ := tracingtest.Attr(r, semconv.HTTPRouteKey)
		require.Equal(t, "/v1/scopes/{scope}/beliefs", route.AsString(), "the template stays")
		for _, key := range []attribute.Key{semconv.URLPathKey, semconv.URLQueryKey} {
			_, ok := tracingtest.Attr(r, key)
			require.False(t, ok, key)
		}
		scope, ok := tracingtest.Attr(r, tracing.ScopeKey)
		require.Equal(t, recordScope, ok)
		f := spans.One(t, "SELECT belief")
		require.Equal(t, codes.Error, f.Status.Code)
		require.Empty(t, f.Status.Description)
		require.Len(t, f.Events, 1, "the exception event stays, with its type")
		state, _ := tracingtest.Attr(f, "pgx.sql_state")
		require.Equal(t, "23505", state.AsString())
		require.NotContains(t, strings.Join(tracingtest.Texts(f), " "), "alice")
		if recordScope {
			require.Equal(t, "alice", scope.AsString())
		} else {
			require.NotContains(t, strings.Join(tracingtest.Texts(r), " "), "alice")
		}
	}
}
