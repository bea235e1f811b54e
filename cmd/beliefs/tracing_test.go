package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// A bad tracing variable is bad configuration: exit 2, naming it, before the command
// touches anything.
func TestBadTracingVariable(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	getenv := func(name string) string {
		return map[string]string{"DATABASE_URL": "postgres://nobody@127.0.0.1:1/none", "OTEL_CREDO_RECORD_SCOPE": "sometimes"}[name]
	}
	code := exitCode(run(context.Background(), []string{"scopes"}, getenv, &stdout, &stderr), &stderr)
	require.Equal(t, 2, code)
	require.Contains(t, stderr.String(), `OTEL_CREDO_RECORD_SCOPE: "sometimes" is not true or false`)
	require.Empty(t, stdout.String())
}

// A sampler the SDK does not know fails the start, exit 2, instead of a warning and
// every trace sampled.
func TestBogusSampler(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	getenv := func(name string) string {
		return map[string]string{"DATABASE_URL": "postgres://nobody@127.0.0.1:1/none", "OTEL_TRACES_EXPORTER": "console",
			"OTEL_TRACES_SAMPLER": "half"}[name]
	}
	code := exitCode(run(context.Background(), []string{"scopes"}, getenv, &stdout, &stderr), &stderr)
	require.Equal(t, 2, code)
	require.Contains(t, stderr.String(), `OTEL_TRACES_SAMPLER: "half" is not`)
	require.Empty(t, stdout.String())
}
