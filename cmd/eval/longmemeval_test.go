package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/prompts"
)

const longMemEvalFixture = "../../eval/testdata/longmemeval-mini.json"

func longMemEvalModel(t *testing.T) *benchModel {
	return &benchModel{t: t, judged: map[string]string{},
		answers: map[string]string{
			"Where do I live now?":                                       "You live in Porto.",
			"How many cats do I have?":                                   "Three cats.",
			"Where does my sister live now?":                             "Memory does not say where your sister lives.",
			"How many days before my move did I ask for a pasta recipe?": "12 days.",
		},
		verdicts: map[string]string{
			"Where do I live now?":                                       "Yes.",
			"How many cats do I have?":                                   "No",
			"Where does my sister live now?":                             "yes",
			"How many days before my move did I ask for a pasta recipe?": "YES",
		},
	}
}

func score4(questions, correct int) eval.QAScore { return score(questions, correct) }

func TestLongMemEvalEndToEnd(t *testing.T) {
	srv := llmtest.NewServer(t)
	model := longMemEvalModel(t)
	srv.Handle(model.reply)
	out, stderr := runBench(t, srv, "longmemeval", "--data", longMemEvalFixture, "--json")
	var r eval.LongMemEvalReport
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.Equal(t, longMemEvalFixture, r.Data)
	require.Equal(t, llmtest.DefaultChatModel, r.JudgeModel)
	require.Contains(t, stderr, "eval: LongMemEval, 4 questions over 7 sessions")
	require.Contains(t, stderr, "the longest session is about 15 tokens; one longer than the model's window is extracted in segments")

	// 7 sessions with a turn, one extraction call each.
	require.Equal(t, 7, r.Ingest.Sessions)
	require.Equal(t, 7, r.Ingest.Applied)
	require.Equal(t, 7, r.Ingest.ChatCalls)

	// Types, knowledge-update first; abstention counts in its type and on its own.
	require.Equal(t, []eval.LongMemEvalTypeScore{
		{Type: "knowledge-update", QAScore: score4(2, 2)},
		{Type: "single-session-user", QAScore: score4(1, 0)},
		{Type: "single-session-assistant", QAScore: score4(0, 0)},
		{Type: "single-session-preference", QAScore: score4(0, 0)},
		{Type: "temporal-reasoning", QAScore: score4(1, 1)},
		{Type: "multi-session", QAScore: score4(0, 0)},
	}, r.Types)
	require.Equal(t, score4(4, 3), r.Overall)
	require.Equal(t, 0.6667, *r.TaskAveraged, "the mean of the three types asked")
	require.Equal(t, score4(1, 1), r.Abstention)
	require.Zero(t, r.AnswerFailures+r.JudgeFailures)
	require.Equal(t, 4, r.Judge.ChatCalls)
	require.Equal(t, 20.0, r.Judge.PromptTokensPerQuestion)

	requireCostConsistent(t, srv, r.Cost, 7, 4, 4)
	require.Equal(t, 4, r.Cost.Conversations)

	// Each question in its own scope, asked at its question_date, judged with the
	// benchmark's prompt for its type.
	require.Len(t, r.Questions, 4)
	ku := r.Questions[0]
	require.Equal(t, "ku_001", ku.ID)
	require.Equal(t, "longmemeval:ku_001", ku.Scope)
	require.Equal(t, "You live in Porto.", ku.Answer)
	require.Equal(t, eval.VerdictCorrect, ku.Verdict)
	require.Equal(t, "Yes.", ku.Judgment)
	require.Positive(t, ku.Beliefs)
	require.True(t, r.Questions[2].Abstention)
	var answers []string
	for _, req := range srv.Chats() {
		if req.SchemaName == prompts.AnswerSchemaName {
			answers = append(answers, req.Prompt)
		}
	}
	require.True(t, slicesContain(answers, "Today: 2023-06-10", "Scope: longmemeval:ku_001", "Question: Where do I live now?",
		"I moved to Porto last week."))
	require.True(t, slicesContain(answers, "Today: 2023-05-30", "Scope: longmemeval:ssu_002"))
	require.False(t, slicesContain(answers, "Scope: longmemeval:ssu_002", "Porto"), "a question sees its own history only")
	require.Contains(t, model.judged["Where do I live now?"], "along with an updated answer")
	require.Contains(t, model.judged["Where does my sister live now?"], "Does the model correctly identify the question as unanswerable?")
	require.Contains(t, model.judged["How many days before my move did I ask for a pasta recipe?"], "off-by-one")
	requireLocomoDropped(t, r.Schema)
}

func TestLongMemEvalResumeAndTable(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Handle(longMemEvalModel(t).reply)
	out, stderr := runBench(t, srv, "longmemeval", "--data", longMemEvalFixture, "--types", "knowledge-update", "--limit", "1", "--keep", "-v")
	m := regexp1(t, `go on with --run ([0-9a-f]{12})`, stderr)
	schema := eval.SchemaPrefix + m
	defer dropSchema(t, schema)
	extractions := countSchema(srv, prompts.ExtractionSchemaName)
	require.Equal(t, 3, extractions)
	for _, want := range []string{
		"1 questions, 3 sessions",
		"(kept; go on with --run " + m + ")",
		"questions answered wrongly:\n",
		"SESSIONS  CHAT/EP  CHAT/S",
	} {
		require.Contains(t, out, want)
	}
	rows := tableRows(out)
	require.Equal(t, []string{"knowledge-update", "1", "1", "1.00"}, rows["knowledge-update"])
	require.Equal(t, []string{"single-session-user", "0", "0", "-"}, rows["single-session-user"])
	require.Equal(t, []string{"ABSTENTION", "0", "0", "-"}, rows["ABSTENTION"])

	// Going on with the kept run extracts nothing again, and answers as before.
	out, _ = runBench(t, srv, "longmemeval", "--data", longMemEvalFixture, "--types", "knowledge-update", "--limit", "1",
		"--run", m, "--json")
	require.Equal(t, extractions, countSchema(srv, prompts.ExtractionSchemaName), "nothing extracted again")
	var r eval.LongMemEvalReport
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.True(t, r.Resumed)
	require.True(t, r.SchemaKept)
	require.Equal(t, m, r.RunID)
	require.Equal(t, 3, r.Ingest.Duplicates)
	require.Equal(t, 3, r.Ingest.Applied)
	require.Zero(t, r.Cost.Sessions, "no session extracted by this run")
	require.Zero(t, r.Cost.ChatCallsPerSession)
	require.Equal(t, score4(1, 1), r.Overall)
}

func TestLongMemEvalUsage(t *testing.T) {
	requireUsage(t, "longmemeval", "usage: eval longmemeval --data FILE", map[string]usageCase{
		"no data":  {nil, "--data is required"},
		"type":     {[]string{"--data", longMemEvalFixture, "--types", "updates"}, `"updates" is not a LongMemEval question type`},
		"limit":    {[]string{"--data", longMemEvalFixture, "--limit", "-1"}, "--limit must be 0 (all) or more"},
		"run id":   {[]string{"--data", longMemEvalFixture, "--run", "nope"}, `run "nope": not a run id`},
		"lost run": {[]string{"--data", longMemEvalFixture, "--run", "0123456789ab"}, "no schema credo_eval_0123456789ab"},
		"k":        {[]string{"--data", longMemEvalFixture, "--k", "101"}, "--k must be within 1..100"},
	})
}

// regexp1 is the first group of pattern in s.
func regexp1(t *testing.T, pattern, s string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(s)
	require.NotNil(t, m, "%s in:\n%s", pattern, s)
	return m[1]
}

// countSchema counts the chat calls of a schema.
func countSchema(srv *llmtest.Server, schema string) int {
	n := 0
	for _, req := range srv.Chats() {
		if req.SchemaName == schema {
			n++
		}
	}
	return n
}

// tableRows indexes the lines of a table by their first field.
func tableRows(out string) map[string][]string {
	rows := map[string][]string{}
	for line := range strings.SplitSeq(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			if _, seen := rows[f[0]]; !seen {
				rows[f[0]] = f
			}
		}
	}
	return rows
}
