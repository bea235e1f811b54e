package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/llm/llmtest"
)

// TestEvalCalibrate measures the fake embedder on the gold labels: the floor it picks
// relates no wrong pair by its vector, and the calibration makes embedding calls only.
func TestEvalCalibrate(t *testing.T) {
	t.Parallel()
	h := &harness{t: t, srv: llmtest.NewServer(t)}
	var out, errb bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"calibrate", "--json"}, func(k string) string {
		if k == "DATABASE_URL" {
			return "" // calibrating needs no database
		}
		return h.env(k)
	}, &out, &errb), errb.String())
	var c eval.Calibration
	require.NoError(t, json.Unmarshal(out.Bytes(), &c), out.String())
	require.Equal(t, llmtest.DefaultEmbedModel, c.EmbedModel)
	require.Greater(t, c.Correct.N, 40, "every correct supersession and retraction of the labels")
	require.Positive(t, c.Wrong.N)
	require.Greater(t, c.Floor, c.Wrong.P99)
	require.Zero(t, c.WrongAbove, "the floor relates no wrong pair by its vector")
	require.Greater(t, c.Correct.P50, c.Wrong.P50, "correct pairs lie closer than wrong ones")
	require.InDelta(t, 0.75, c.Default, 0)
	require.Zero(t, h.srv.ChatCount())
	require.Positive(t, h.srv.EmbedCount())

	out.Reset()
	require.NoError(t, run(context.Background(), []string{"calibrate"}, h.env, &out, &errb))
	require.Contains(t, out.String(), "REVISION_SIMILARITY_FLOOR=")
}
