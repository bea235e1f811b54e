package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/tracing/tracingtest"
)

// With the OTEL_* variables set, a run is one trace, exported before the command
// exits: the command, its enqueue, the job it inserted, whose metadata carries the
// trace on to the worker, and the episode, which carries it for its extraction.
//
// Not parallel: the SDK reads the variables from the process's environment.
func TestEnqueueExportsItsTrace(t *testing.T) {
	rcv := tracingtest.NewReceiver(t)
	e := newEnqueueEnv(t)
	env := rcv.Setenv(t)
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return e.getenv(k)
	}
	var out, errOut bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-"}, getenv, strings.NewReader(record("user-31c", "I play the oboe.")), &out, &errOut),
		errOut.String())

	byName := map[string]tracingtest.Span{}
	for _, s := range rcv.Spans() {
		byName[s.Name] = s
	}
	root, ok := byName["enqueue"]
	require.True(t, ok, "the command's span is exported before it exits")
	require.Equal(t, root.SpanID, byName["extract.enqueue"].ParentSpanID)
	insert := byName["river.insert_many"]
	require.Equal(t, byName["extract.enqueue"].SpanID, insert.ParentSpanID)

	var jobTrace, episodeTrace string
	ctx := context.Background()
	require.NoError(t, e.schema.Pool.QueryRow(ctx, "SELECT metadata->>'traceparent' FROM river_job").Scan(&jobTrace))
	require.NoError(t, e.schema.Pool.QueryRow(ctx, "SELECT trace_parent FROM episode").Scan(&episodeTrace))
	require.Equal(t, "00-"+root.TraceID+"-"+insert.SpanID+"-01", jobTrace, "the job continues from its insert")
	require.Equal(t, "00-"+root.TraceID+"-"+byName["extract.enqueue"].SpanID+"-01", episodeTrace, "the episode from its enqueue")
	require.False(t, rcv.Received([]byte("oboe")))
	require.False(t, rcv.Received([]byte("user-31c")))
}
