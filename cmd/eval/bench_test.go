package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/prompts"
)

// Token usage of every scripted answer of the benchmark runs, by schema; "" is the
// free-text judge of LongMemEval.
var benchTokens = map[string][2]int{
	prompts.ExtractionSchemaName:    {100, 10},
	prompts.ConsolidationSchemaName: {50, 5},
	prompts.ReviewSchemaName:        {50, 5},
	prompts.AnswerSchemaName:        {40, 8},
	"":                              {20, 2},
}

// messageLine is one message of an extraction prompt: "user: ...", "assistant at
// 2024-01-01T00:00:00Z: ...".
var messageLine = regexp.MustCompile(`(?m)^(?:user|assistant)(?: at \S+)?: (.+)$`)

// benchModel plays every role of the model in a benchmark run: extraction stores each
// message as a fact, consolidation and review change nothing, answers and verdicts
// (free text) are scripted by question.
type benchModel struct {
	t        *testing.T
	answers  map[string]string
	verdicts map[string]string
	mu       sync.Mutex
	judged   map[string]string // the judge's prompt, by question
}

func (m *benchModel) reply(req llmtest.Request) llmtest.Reply {
	tok := benchTokens[req.SchemaName]
	r := llmtest.Reply{PromptTokens: tok[0], CompletionTokens: tok[1]}
	q := ""
	if mm := questionLine.FindStringSubmatch(req.Prompt); mm != nil {
		q = mm[1]
	}
	switch req.SchemaName {
	case prompts.ExtractionSchemaName:
		var facts []pipelinetest.Fact
		for _, mm := range messageLine.FindAllStringSubmatch(req.Prompt, -1) {
			facts = append(facts, pipelinetest.Fact{Statement: mm[1]})
		}
		if len(facts) == 0 {
			m.t.Errorf("an extraction without messages:\n%s", req.Prompt)
		}
		r.Content = pipelinetest.Answer(facts...)
	case prompts.ConsolidationSchemaName:
		r.Content = `{"reasoning": "scripted", "resolutions": []}`
	case prompts.ReviewSchemaName:
		r.Content = `{"reasoning": "scripted", "reviews": []}`
	case prompts.AnswerSchemaName:
		a, ok := m.answers[q]
		if !ok {
			m.t.Errorf("no scripted answer to %q", q)
		}
		b, _ := json.Marshal(map[string]any{"reasoning": "scripted", "answer": a, "citations": []int{0}})
		r.Content = string(b)
	case "":
		// LongMemEval's judge: "Question: ..." is the question asked.
		v, ok := m.verdicts[q]
		if !ok {
			m.t.Errorf("no scripted verdict on %q:\n%s", q, req.Prompt)
		}
		m.mu.Lock()
		m.judged[q] = req.Prompt
		m.mu.Unlock()
		r.Content = v
	default:
		m.t.Errorf("unexpected schema %q", req.SchemaName)
	}
	return r
}

// runBench runs `eval` with args against a fresh fake serving model.
func runBench(t *testing.T, srv *llmtest.Server, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	err := run(ctx, args, locomoEnv(srv), &out, &errb)
	require.NoError(t, err, errb.String())
	return out.String(), errb.String()
}

// ingestCalls counts the chat calls that built memory (extraction, consolidation,
// review) and their scripted tokens.
func ingestCalls(srv *llmtest.Server) (calls, tokens int) {
	for _, req := range srv.Chats() {
		switch req.SchemaName {
		case prompts.ExtractionSchemaName, prompts.ConsolidationSchemaName, prompts.ReviewSchemaName:
			calls++
			tokens += benchTokens[req.SchemaName][0] + benchTokens[req.SchemaName][1]
		}
	}
	return calls, tokens
}

// requireCostConsistent checks a run's cost against what the fake served: every
// call of the run but the judge's went through the meter, with the fake's usage.
func requireCostConsistent(t *testing.T, srv *llmtest.Server, c eval.BenchCost, sessions, questions, judgeCalls int) {
	t.Helper()
	embedTokens := 0
	for _, req := range srv.Embeds() {
		for _, in := range req.Inputs {
			embedTokens += len(llmtest.O200k(in))
		}
	}
	calls, tokens := ingestCalls(srv)
	require.Equal(t, sessions, c.Sessions)
	require.Equal(t, questions, c.Questions)
	require.Equal(t, srv.EmbedCount(), c.Calls.EmbedCalls, "every embedding call is metered")
	require.Equal(t, embedTokens, c.Calls.EmbedTokens, "with the fake's usage")
	require.Equal(t, srv.ChatCount()-judgeCalls, c.Calls.ChatCalls, "every chat call but the judge's is metered")
	require.Equal(t, round2(float64(calls)/float64(sessions)), c.ChatCallsPerSession)
	require.Equal(t, round1(float64(tokens)/float64(sessions)), c.ChatTokensPerSession)
	require.Positive(t, c.EmbedCallsPerSession)
	require.Positive(t, c.EmbedTokensPerSession)
	require.Equal(t, 1.0, c.ChatCallsPerQuestion, "one answer call a question")
	require.Equal(t, 48.0, c.ChatTokensPerQuestion)
	require.Equal(t, 1.0, c.EmbedCallsPerQuestion, "the question embedded once")
	require.Positive(t, c.ContextTokensPerQuestion)
	require.Positive(t, c.MemoryTokensPerConversation)
	require.GreaterOrEqual(t, c.MemoryTokensWithHistoryPerConversation, c.MemoryTokensPerConversation)
	for _, p := range []*float64{c.ReadP50, c.ReadP95, c.AnswerP50, c.AnswerP95} {
		require.NotNil(t, p)
	}
	require.LessOrEqual(t, *c.ReadP50, *c.ReadP95)
	require.LessOrEqual(t, *c.AnswerP50, *c.AnswerP95)
	require.LessOrEqual(t, *c.ReadP95, *c.AnswerP95, "the read is part of the answer")
}

// usageCase is bad usage of a command, and what its error says.
type usageCase struct {
	args []string
	want string
}

// requireUsage runs command with each case's arguments and checks it is bad usage
// (exit code 2) saying what the case wants, that -h prints help starting with help,
// and that the model was never asked anything.
func requireUsage(t *testing.T, command, help string, cases map[string]usageCase) {
	t.Helper()
	srv := llmtest.NewServer(t)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := run(context.Background(), append([]string{command}, tc.args...), locomoEnv(srv), &bytes.Buffer{}, &bytes.Buffer{})
			var usage *config.UsageError
			require.ErrorAs(t, err, &usage, "exit code 2")
			require.ErrorContains(t, err, tc.want)
		})
	}
	var errb bytes.Buffer
	err := run(context.Background(), []string{command, "-h"}, locomoEnv(srv), &bytes.Buffer{}, &errb)
	require.ErrorIs(t, err, flag.ErrHelp)
	require.Contains(t, errb.String(), help)
	require.Zero(t, srv.ChatCount(), "nothing asked of the model")
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }
func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }

// dropSchema drops a schema a test kept.
func dropSchema(t *testing.T, schema string) {
	t.Helper()
	require.Regexp(t, `^`+eval.SchemaPrefix+`[0-9a-f]{12}$`, schema)
	conn, err := pgx.Connect(context.Background(), dbtest.URL())
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	require.NoError(t, err)
}
