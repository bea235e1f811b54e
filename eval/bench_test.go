package eval_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
)

// TestRunMABBarsAndEmptyMemory runs a row whose facts the model extracts nothing from:
// the question is answered from an empty memory without a call, and wrong; the bars
// count the sessions extracted and the questions asked.
func TestRunMABBarsAndEmptyMemory(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t) // every extraction finds nothing
	provider, err := llm.NewOpenAI(srv.OpenAIConfig())
	require.NoError(t, err)
	rows, err := eval.ParseMAB("x.jsonl", strings.NewReader(
		`{"context": "0. A is B.\n1. A is C.\n2. D is E.", "questions": ["What is A?"], "answers": [["C"]], "metadata": {"source": "factconsolidation_sh_6k"}}`),
		eval.MABFilter{})
	require.NoError(t, err)
	var bar, progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := eval.RunMAB(ctx, rows, eval.MABConfig{Config: eval.Config{DatabaseURL: dbtest.URL(), Chat: provider,
		Embed: provider, EmbedModel: llmtest.DefaultEmbedModel, Workers: 2, Bar: &bar, Progress: &progress}, FactsPerEpisode: 2})
	require.NoError(t, err)
	require.Equal(t, 2, res.Ingest.Sessions)
	require.Equal(t, 2, res.Cost.Sessions)
	require.Equal(t, 1.0, res.Cost.ChatCallsPerSession, "one extraction call a session, no consolidation of nothing")
	require.Equal(t, 1.0, res.Cost.ChatCallsPerEpisode, "every session fit the model's window in one prompt")
	require.Zero(t, res.Cost.MemoryTokensPerConversation)
	require.Zero(t, res.Cost.ChatCallsPerQuestion, "an empty memory answers without the model")
	require.Zero(t, res.Cost.ContextTokensPerQuestion)
	require.Equal(t, "Memory holds nothing about this yet.", res.Rows[0].Questions[0].Answer)
	require.False(t, res.Rows[0].Questions[0].Correct)
	require.Equal(t, 2, srv.ChatCount())

	require.Contains(t, bar.String(), "sessions extracted")
	require.Contains(t, bar.String(), "questions asked")
	require.Contains(t, progress.String(), "ingesting 2 sessions of 1 conversations")
	require.NotContains(t, progress.String(), "of 2 sessions extracted", "the bar, not lines, shows the extraction")
	require.NotContains(t, progress.String(), "questions answered correctly", "nor a line a scope")
	require.False(t, res.SchemaKept)
}

func TestLongMemEvalJudgeFailureIsWrong(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	provider, err := llm.NewOpenAI(srv.OpenAIConfig())
	require.NoError(t, err)
	qs, err := parseLongMemEvalMini(t, eval.LongMemEvalFilter{Limit: 1})
	require.NoError(t, err)
	down := llmtest.Reply{Status: http.StatusBadRequest}
	srv.Script(down, down, down)
	j, err := eval.GradeLongMemEval(context.Background(), provider, qs[0], "Porto")
	require.NoError(t, err)
	require.Equal(t, eval.VerdictWrong, j.Verdict)
	require.Error(t, j.Err)
	require.Equal(t, 1+eval.JudgeRetries, j.ChatCalls)

	srv.Script(llmtest.Reply{Content: "No, it is wrong."})
	j, err = eval.GradeLongMemEval(context.Background(), provider, qs[0], "Lisbon")
	require.NoError(t, err)
	require.Equal(t, eval.VerdictWrong, j.Verdict, `"no" is no`)
	require.NoError(t, j.Err)
	require.Equal(t, "No, it is wrong.", j.Reasoning)
	req := srv.Chats()[len(srv.Chats())-1]
	require.Empty(t, req.Schema, "free text, as the benchmark asks")
	require.Len(t, req.Messages, 1)
	require.Equal(t, llm.RoleUser, req.Messages[0].Role)
}

// TestRunLongMemEvalCancelled stops a run while it extracts: the error is ctx's, no
// result, and nothing panics on the way out.
func TestRunLongMemEvalCancelled(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	provider, err := llm.NewOpenAI(srv.OpenAIConfig())
	require.NoError(t, err)
	qs, err := parseLongMemEvalMini(t, eval.LongMemEvalFilter{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv.Handle(func(llmtest.Request) llmtest.Reply {
		cancel()
		return llmtest.Reply{Content: llmtest.DefaultContent}
	})
	res, err := eval.RunLongMemEval(ctx, qs, eval.LongMemEvalConfig{Config: eval.Config{DatabaseURL: dbtest.URL(),
		Chat: provider, Embed: provider, EmbedModel: llmtest.DefaultEmbedModel}})
	require.ErrorIs(t, err, context.Canceled)
	require.Nil(t, res)
}
