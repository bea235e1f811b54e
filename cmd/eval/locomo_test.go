package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/prompts"
)

const locomoFixture = "../../eval/testdata/locomo-mini.json"

// Token usage of every scripted answer of the LoCoMo run, by schema.
var locomoTokens = map[string][2]int{
	prompts.ExtractionSchemaName:    {100, 10},
	prompts.ConsolidationSchemaName: {50, 5},
	prompts.ReviewSchemaName:        {50, 5},
	prompts.AnswerSchemaName:        {40, 8},
	prompts.JudgeSchemaName:         {20, 4},
}

// locomoAnswers is what the model answers each question of the fixture.
var locomoAnswers = map[string]string{
	"When did Ana go to the pottery class?":           "On 7 May 2023, the day before 8 May.",
	"When did Ben paint a sunrise?":                   "In 2022.",
	"What did Ana make, and where does she live now?": "A vase; she lives in Porto.",
	"What is the name of Ben's dog?":                  "Rex.",
	"Would Cleo enjoy a classical music festival?":    "Probably, she plays the violin.",
	"What is Dev's job?":                              "Dev is a nurse.",
	"What did Cleo and Dev do in July 2023?":          "They went hiking.",
}

// locomoVerdicts is the judge's verdict on each answer; "" answers malformed, always.
var locomoVerdicts = map[string]string{
	"When did Ana go to the pottery class?":           "CORRECT",
	"When did Ben paint a sunrise?":                   "CORRECT",
	"What did Ana make, and where does she live now?": "WRONG",
	"What is the name of Ben's dog?":                  "",
	"Would Cleo enjoy a classical music festival?":    "CORRECT",
	"What is Dev's job?":                              "CORRECT",
	"What did Cleo and Dev do in July 2023?":          "WRONG",
}

var (
	turnLine     = regexp.MustCompile(`(?m)^user \(([^)]+)\): (.+)$`)
	questionLine = regexp.MustCompile(`(?m)^Question: (.+)$`)
)

// locomoModel plays every role of the model in a LoCoMo run: extraction stores each turn
// as a fact, consolidation and review change nothing, answers and verdicts are scripted.
type locomoModel struct {
	t  *testing.T
	mu sync.Mutex
	// asked counts the answer calls per question.
	asked map[string]int
}

func (m *locomoModel) reply(req llmtest.Request) llmtest.Reply {
	tok := locomoTokens[req.SchemaName]
	r := llmtest.Reply{PromptTokens: tok[0], CompletionTokens: tok[1]}
	q := ""
	if mm := questionLine.FindStringSubmatch(req.Prompt); mm != nil {
		q = mm[1]
	}
	switch req.SchemaName {
	case prompts.ExtractionSchemaName:
		var facts []pipelinetest.Fact
		for _, mm := range turnLine.FindAllStringSubmatch(req.Prompt, -1) {
			facts = append(facts, pipelinetest.Fact{Statement: mm[1] + " said: " + mm[2]})
		}
		if len(facts) == 0 {
			m.t.Errorf("an extraction without turns:\n%s", req.Prompt)
		}
		r.Content = pipelinetest.Answer(facts...)
	case prompts.ConsolidationSchemaName:
		r.Content = `{"reasoning": "scripted", "resolutions": []}`
	case prompts.ReviewSchemaName:
		r.Content = `{"reasoning": "scripted", "reviews": []}`
	case prompts.AnswerSchemaName:
		a, ok := locomoAnswers[q]
		if !ok {
			m.t.Errorf("no scripted answer to %q", q)
		}
		m.mu.Lock()
		m.asked[q]++
		m.mu.Unlock()
		b, _ := json.Marshal(map[string]any{"reasoning": "scripted", "answer": a, "citations": []int{0}})
		r.Content = string(b)
	case prompts.JudgeSchemaName:
		v, ok := locomoVerdicts[q]
		if !ok {
			m.t.Errorf("no scripted verdict on %q", q)
		}
		if v == "" {
			r.Content = `{"reasoning": "unsure", "verdict": "PARTLY"}`
			break
		}
		b, _ := json.Marshal(map[string]any{"reasoning": "scripted", "verdict": v})
		r.Content = string(b)
	default:
		m.t.Errorf("unexpected schema %q", req.SchemaName)
	}
	return r
}

func locomoEnv(srv *llmtest.Server) func(string) string {
	return func(k string) string {
		return map[string]string{
			"DATABASE_URL": dbtest.URL(), "LLM_PROVIDER": "openai", "OPENAI_BASE_URL": srv.OpenAIURL(),
			"OPENAI_API_KEY": "llmtest", "CHAT_MODEL": llmtest.DefaultChatModel, "EMBED_MODEL": llmtest.DefaultEmbedModel,
		}[k]
	}
}

// runLocomoFixture runs `eval locomo` on the fixture with the scripted model.
func runLocomoFixture(t *testing.T, args ...string) (stdout, stderr string, srv *llmtest.Server, model *locomoModel) {
	t.Helper()
	// "Rex" weighs enough in the fake embedding that Ben's two sentences about his dog
	// are a consolidation cluster.
	srv = llmtest.NewServer(t, llmtest.WithAnchors(map[string]string{"rex": "rex"}))
	model = &locomoModel{t: t, asked: map[string]int{}}
	srv.Handle(model.reply)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	err := run(ctx, append([]string{"locomo", "--data", locomoFixture}, args...), locomoEnv(srv), &out, &errb)
	require.NoError(t, err, errb.String())
	return out.String(), errb.String(), srv, model
}

func score(questions, correct int) eval.LocomoScore {
	s := eval.LocomoScore{Questions: questions, Correct: correct}
	if questions > 0 {
		v := math.Round(float64(correct)/float64(questions)*1e4) / 1e4
		s.Accuracy = &v
	}
	return s
}

func TestLocomoEndToEnd(t *testing.T) {
	out, stderr, srv, model := runLocomoFixture(t, "--json")
	var r eval.LocomoReport
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.True(t, json.Valid([]byte(out)))

	require.Equal(t, llmtest.DefaultChatModel, r.ChatModel)
	require.Equal(t, llmtest.DefaultChatModel, r.JudgeModel)
	require.Equal(t, llmtest.DefaultEmbedModel, r.EmbedModel)
	require.Equal(t, locomoFixture, r.Data)
	require.Equal(t, 10, r.K)
	require.Equal(t, 2, r.Conversations)
	require.Equal(t, 2, r.Adversarial)

	// 5 sessions, each one extraction call.
	in := r.Ingest
	require.Equal(t, 5, in.Sessions)
	require.Equal(t, 5, in.Applied)
	require.Zero(t, in.Failed+in.Pending+in.Duplicates)
	require.Equal(t, 5, in.ChatCalls)
	require.Equal(t, 1.0, in.ChatCallsPerSession)
	require.Equal(t, 110.0, in.TokensPerSession)
	// One consolidation pass per scope: Ben's two sentences about Rex are a cluster,
	// which the model keeps as it is.
	require.Equal(t, 1, in.ConsolidationCalls)
	require.Equal(t, 50, in.ConsolidationPromptTokens)
	require.Zero(t, in.ConsolidationApplied)

	// The verdicts: 4 of 7 correct; the judge of Ben's dog stayed malformed: wrong.
	require.Equal(t, []eval.LocomoCategory{
		{Category: 1, Name: "multi-hop", LocomoScore: score(2, 0)},
		{Category: 2, Name: "temporal", LocomoScore: score(2, 2)},
		{Category: 3, Name: "open-domain", LocomoScore: score(1, 1)},
		{Category: 4, Name: "single-hop", LocomoScore: score(2, 1)},
	}, r.Categories)
	require.Equal(t, score(7, 4), r.Overall)
	require.Equal(t, 0.5714, *r.Overall.Accuracy)
	require.Zero(t, r.AnswerFailures)
	require.Equal(t, 1, r.JudgeFailures)

	// One answer call per question; one judge call per answer, three for the malformed.
	require.Equal(t, 7, r.Answer.ChatCalls)
	require.Equal(t, 1.0, r.Answer.CallsPerQuestion)
	require.Equal(t, 40.0, r.Answer.PromptTokensPerQuestion)
	require.Equal(t, 8.0, r.Answer.CompletionTokensPerQuestion)
	require.Equal(t, 9, r.Judge.ChatCalls)
	require.Equal(t, 1.29, r.Judge.CallsPerQuestion)
	require.Equal(t, 25.7, r.Judge.PromptTokensPerQuestion)
	require.NotNil(t, r.Answer.P95Seconds)
	require.Greater(t, r.Answer.SecondsPerQuestion, 0.0)
	// The cost beside the score: every call but the judge's nine, metered.
	requireCostConsistent(t, srv, r.Cost, 5, 7, 9)
	require.Equal(t, 2, r.Cost.Conversations)

	require.Len(t, r.Samples, 2)
	a := r.Samples[0]
	require.Equal(t, "mini-a", a.ID)
	require.Equal(t, "locomo:mini-a", a.Scope)
	require.Equal(t, 3, a.Applied)
	require.Empty(t, a.Errors)
	require.Len(t, a.Questions, 4)
	dog := a.Questions[3]
	require.Equal(t, "What is the name of Ben's dog?", dog.Question)
	require.Equal(t, "Rex", dog.Gold)
	require.Equal(t, "Rex.", dog.Answer)
	require.Equal(t, eval.VerdictWrong, dog.Verdict)
	require.Contains(t, dog.JudgeError, "malformed")
	require.Equal(t, "2022", a.Questions[1].Gold, "a numeric gold answer")
	require.Equal(t, eval.VerdictCorrect, a.Questions[1].Verdict)
	require.Positive(t, a.Questions[0].Beliefs)
	require.Equal(t, 1, a.Questions[0].Citations)
	require.Zero(t, model.asked["What is the name of Ana's dog?"], "category 5 is never asked")

	// What the model saw: sessions as dated transcripts of named speakers, with photos;
	// questions asked as of the conversation's last session.
	var extractions, answers []string
	for _, req := range srv.Chats() {
		switch req.SchemaName {
		case prompts.ExtractionSchemaName:
			extractions = append(extractions, req.Prompt)
		case prompts.AnswerSchemaName:
			answers = append(answers, req.Prompt)
		}
	}
	require.Len(t, extractions, 5)
	require.True(t, slicesContain(extractions, "2023-06-13 (Tuesday), 00:09 UTC",
		"user (Ana): Look at what I made! [shares a photo: a photo of a blue ceramic bowl]", "user (Ben): Lovely. I adopted a dog named Rex."),
		"session 2 of mini-a")
	require.True(t, slicesContain(answers, "Today: 2023-06-27", "Scope: locomo:mini-a", "Question: What is the name of Ben's dog?"))
	require.True(t, slicesContain(answers, "Today: 2023-07-12", "Scope: locomo:mini-b", "Question: What is Dev's job?"))
	require.True(t, slicesContain(answers, "Ben said: Lovely. I adopted a dog named Rex."), "answers rest on the extracted beliefs")

	require.Contains(t, stderr, "eval: LoCoMo, 2 of 2 conversations")
	requireLocomoDropped(t, r.Schema)
}

// slicesContain says whether one of prompts contains every part.
func slicesContain(prompts []string, parts ...string) bool {
	for _, p := range prompts {
		all := true
		for _, part := range parts {
			all = all && strings.Contains(p, part)
		}
		if all {
			return true
		}
	}
	return false
}

func requireLocomoDropped(t *testing.T, schema string) {
	t.Helper()
	require.True(t, strings.HasPrefix(schema, eval.SchemaPrefix), schema)
	conn, err := pgx.Connect(context.Background(), dbtest.URL())
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var n int
	require.NoError(t, conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema).Scan(&n))
	require.Zero(t, n, "schema %s is left behind", schema)
}

func TestLocomoTableAndLimits(t *testing.T) {
	out, _, srv, _ := runLocomoFixture(t, "--conversations", "1", "--questions", "2", "-v")
	for _, want := range []string{
		"model qwen2.5:7b (openai), embeddings nomic-embed-text (openai), judge qwen2.5:7b, data " + locomoFixture + ", recall k=10",
		"1 conversations, 3 sessions, 2 questions (1 of category 5 left out: no gold answer)",
		"extraction: 1.00 chat calls per session (3 calls, 3 sessions)",
		"cost (per session ingested, per question asked, memory per conversation in tokens):\nSESSIONS  CHAT/EP  CHAT/S  CHAT-TOK/S",
	} {
		require.Contains(t, out, want)
	}
	rows := map[string][]string{}
	for line := range strings.SplitSeq(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[strings.Join(f[:min(2, len(f))], " ")] = f
		}
	}
	require.Equal(t, []string{"CATEGORY", "QUESTIONS", "CORRECT", "ACCURACY"}, rows["CATEGORY QUESTIONS"])
	require.Equal(t, []string{"1", "multi-hop", "0", "0", "-"}, rows["1 multi-hop"])
	require.Equal(t, []string{"2", "temporal", "2", "2", "1.00"}, rows["2 temporal"])
	require.Equal(t, []string{"OVERALL", "2", "2", "1.00"}, rows["OVERALL 2"])
	require.Equal(t, "1.00", rows["answer 1.00"][1])
	require.Equal(t, "40", rows["answer 1.00"][2])
	require.Equal(t, "0", rows["judge 1.00"][6], "no judge failure")
	require.Contains(t, out, "questions answered wrongly:\n", "-v lists them: none here")

	asked := 0
	for _, req := range srv.Chats() {
		if req.SchemaName == prompts.AnswerSchemaName {
			asked++
			require.Contains(t, req.Prompt, "Scope: locomo:mini-a")
		}
	}
	require.Equal(t, 2, asked)
}

func TestLocomoUsage(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`[{"sample_id": "conv-1", "conversation": {"session_1": [{"speaker": "Ana", "text": "hi"}], "session_1_date_time": "someday"}}]`), 0o600))
	requireUsage(t, "locomo", "usage: eval locomo --data PATH", map[string]usageCase{
		"no data":       {nil, "--data is required"},
		"missing file":  {[]string{"--data", filepath.Join(t.TempDir(), "none.json")}, "--data: open"},
		"bad file":      {[]string{"--data", bad}, `bad.json: sample 1 (conv-1): conversation.session_1_date_time: "someday" is not a date`},
		"negative":      {[]string{"--data", locomoFixture, "--questions", "-1"}, "--questions must be 0 (all) or more"},
		"conversations": {[]string{"--data", locomoFixture, "--conversations", "-2"}, "--conversations must be 0 (all) or more"},
		"k":             {[]string{"--data", locomoFixture, "--k", "0"}, "--k must be within 1..100"},
		"extra":         {[]string{"--data", locomoFixture, "more"}, "unexpected arguments"},
		"unknown flag":  {[]string{"--data", locomoFixture, "--scenarios", "x"}, "flag provided but not defined: -scenarios"},
	})
}

// --retrieval measures recall@k of the evidence turns with the embedder alone: no chat
// call, a row per category, vectors beside fused.
func TestLocomoRetrievalCommand(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"locomo", "--retrieval", "--data", locomoFixture}, locomoEnv(srv), &out, &errb)
	require.NoError(t, err, errb.String())
	require.Zero(t, srv.ChatCount(), "no chat model runs")
	require.Positive(t, srv.EmbedCount())
	require.Contains(t, out.String(), "embedding model "+llmtest.DefaultEmbedModel)
	require.Contains(t, out.String(), "VECTORS@5  FUSED@5")
	for _, c := range []string{"1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop", "overall"} {
		require.Contains(t, out.String(), "\n"+c+" ")
	}

	out.Reset()
	err = run(context.Background(), []string{"locomo", "--retrieval", "--json", "--data", locomoFixture}, locomoEnv(srv), &out, &errb)
	require.NoError(t, err, errb.String())
	var r eval.LocomoRetrievalResult
	require.NoError(t, json.Unmarshal(out.Bytes(), &r), out.String())
	require.Equal(t, []int{5, 10, 24}, r.Ks)
	require.Equal(t, 7, r.Overall.Questions)
	require.Len(t, r.Categories, 4)
}
