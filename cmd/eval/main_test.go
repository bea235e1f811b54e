package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/migrations"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/prompts"
)

const fixture = "../../eval/testdata/mini.jsonl"

// fact is one fact of the oracle's answer; target names the candidate it revises by
// its statement.
type fact struct {
	statement, attribute string
	target, action       string
	reason               string
}

// oracle answers each transcript of the fixture, known by what the user says, the way
// a perfect model would. mini-duplicate's second answer stores a paraphrase instead of
// reinforcing: consolidation merges the two, as it should.
var oracle = map[string][]fact{
	"I live in New York.":                     {{statement: "User lives in New York", attribute: "location"}},
	"I moved to Miami in May.":                {{"User lives in Miami", "location", "User lives in New York", "supersede", "temporal"}},
	"Miami is hot this week, as always.":      {{"User lives in Miami", "location", "User lives in Miami", "reinforce", "restated"}},
	"My main language is Python.":             {{statement: "User's main programming language is Python", attribute: "language"}},
	"I never said Python. It's Rust.":         {{"User's main programming language is Rust", "language", "User's main programming language is Python", "supersede", "correction"}},
	"I live in Boston.":                       {{statement: "User lives in Boston", attribute: "location"}},
	"I might move to Austin next year.":       {},
	"We are migrating to Kafka next quarter.": {{statement: "User's team is migrating to Kafka next quarter", attribute: "plan"}},
	"We are NOT doing the Kafka migration.":   {{"", "plan", "User's team is migrating to Kafka next quarter", "retract", "temporal"}},
	"I use Chrome at work.":                   {{statement: "User uses Chrome at work", attribute: "browser_work"}},
	"At home I use Firefox.":                  {{statement: "User uses Firefox at home", attribute: "browser_home"}},
	"I'm vegetarian.":                         {{statement: "User is vegetarian", attribute: "diet"}},
	"As I said, I'm vegetarian.":              {{"User is vegetarian", "diet", "User is vegetarian", "reinforce", "restated"}},
	"I'm a nurse.":                            {{statement: "User is a nurse", attribute: "job"}},
	"I work as a nurse, remember?":            {{statement: "User works as a nurse", attribute: "job"}},
}

// Deliberate mistakes, each replacing the oracle's answer to one transcript.
var (
	// A hedge taken for a move: Boston superseded by Austin.
	wrongSupersede = map[string][]fact{
		"I might move to Austin next year.": {{"User lives in Austin", "location", "User lives in Boston", "supersede", "temporal"}},
	}
	// The right revision for the wrong reason: the world changed, says the model, where
	// the user corrected memory.
	wrongReason = map[string][]fact{
		"I never said Python. It's Rust.": {{"User's main programming language is Rust", "language", "User's main programming language is Python", "supersede", "temporal"}},
	}
)

var candidateLine = regexp.MustCompile(`(?m)^\[(\d+)\] (.+) \([^()]*, since \d{4}-\d{2}-\d{2}[^()]*\)$`)

// candidates reads the "[N] statement (...)" lines of a prompt.
func candidates(prompt string) map[string]int {
	out := map[string]int{}
	for _, m := range candidateLine.FindAllStringSubmatch(prompt, -1) {
		i, _ := strconv.Atoi(m[1])
		out[m[2]] = i
	}
	return out
}

// Token usage of every scripted answer, so that costs are known exactly.
const (
	promptTokens      = 100
	completionTokens  = 10
	consPromptTokens  = 50
	consCompletionTok = 5
)

// answer plays the oracle, with the mistakes of wrong.
func answer(t *testing.T, wrong map[string][]fact) func(llmtest.Request) llmtest.Reply {
	return func(req llmtest.Request) llmtest.Reply {
		cands := candidates(req.Prompt)
		if req.SchemaName == prompts.ConsolidationSchemaName {
			// Merge the nurse paraphrase into the first statement; keep anything else.
			res := []map[string]any{}
			if i, ok := cands["User works as a nurse"]; ok {
				res = append(res, map[string]any{"session_index": i, "action": "supersede", "replaced_by": cands["User is a nurse"], "reason": "duplicate"})
			}
			b, _ := json.Marshal(map[string]any{"reasoning": "scripted", "resolutions": res})
			return llmtest.Reply{Content: string(b), PromptTokens: consPromptTokens, CompletionTokens: consCompletionTok}
		}
		said := ""
		for k := range oracle {
			if strings.Contains(req.Prompt, "\nuser: "+k+"\n") && len(k) > len(said) {
				said = k
			}
		}
		if said == "" {
			t.Errorf("the oracle has no answer for:\n%s", req.Prompt)
		}
		facts := oracle[said]
		if w, ok := wrong[said]; ok {
			facts = w
		}
		var out []pipelinetest.Fact
		for _, f := range facts {
			// As a perfect model quotes: what the user said.
			pf := pipelinetest.Fact{Statement: f.statement, Attribute: f.attribute, Quote: said}
			if f.target != "" {
				i, ok := cands[f.target]
				if !ok {
					t.Errorf("%q: candidate %q not shown in:\n%s", said, f.target, req.Prompt)
				}
				pf.Resolves = &pipelinetest.Resolves{Index: i, Action: f.action, Reason: f.reason}
			}
			out = append(out, pf)
		}
		return llmtest.Reply{Content: pipelinetest.Answer(out...), PromptTokens: promptTokens, CompletionTokens: completionTokens}
	}
}

type harness struct {
	t   *testing.T
	srv *llmtest.Server
}

func newHarness(t *testing.T) *harness {
	// "nurse" weighs enough in the fake embedding that the two nurse statements are
	// near duplicates, and so a consolidation cluster.
	return &harness{t: t, srv: llmtest.NewServer(t, llmtest.WithAnchors(map[string]string{"nurse": "nurse"}))}
}

func (h *harness) env(k string) string {
	return map[string]string{
		"DATABASE_URL": dbtest.URL(), "LLM_PROVIDER": "openai", "OPENAI_BASE_URL": h.srv.OpenAIURL(),
		"OPENAI_API_KEY": "llmtest", "CHAT_MODEL": llmtest.DefaultChatModel, "EMBED_MODEL": llmtest.DefaultEmbedModel,
	}[k]
}

// run runs the command on the fixture with the oracle making the mistakes of wrong.
func (h *harness) run(wrong map[string][]fact, args ...string) (stdout, stderr string) {
	h.t.Helper()
	h.srv.Handle(answer(h.t, wrong))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	err := run(ctx, append([]string{"--scenarios", fixture}, args...), h.env, &out, &errb)
	require.NoError(h.t, err, errb.String())
	return out.String(), errb.String()
}

func (h *harness) report(wrong map[string][]fact, args ...string) *eval.Report {
	h.t.Helper()
	out, _ := h.run(wrong, append([]string{"--json"}, args...)...)
	var r eval.Report
	require.NoError(h.t, json.Unmarshal([]byte(out), &r), out)
	for _, run := range r.Runs {
		h.requireDropped(run.Schema)
	}
	return &r
}

func (h *harness) requireDropped(schema string) {
	h.t.Helper()
	require.True(h.t, strings.HasPrefix(schema, eval.SchemaPrefix), schema)
	conn, err := pgx.Connect(context.Background(), dbtest.URL())
	require.NoError(h.t, err)
	defer conn.Close(context.Background())
	var n int
	require.NoError(h.t, conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema).Scan(&n))
	require.Zero(h.t, n, "schema %s is left behind", schema)
}

// f is a rate as the report rounds it, to four decimals.
func f(v float64) *float64 {
	v = math.Round(v*1e4) / 1e4
	return &v
}

func dec(expected, made, correct int) eval.Decisions {
	d := eval.Decisions{Expected: expected, Made: made, Correct: correct}
	if made > 0 {
		d.Precision = f(float64(correct) / float64(made))
	}
	if expected > 0 {
		d.Recall = f(float64(correct) / float64(expected))
	}
	return d
}

func ratio(passed, total int) eval.Ratio {
	r := eval.Ratio{Passed: passed, Total: total}
	if total > 0 {
		r.Accuracy = f(float64(passed) / float64(total))
	}
	return r
}

// scores are the metrics a wrong decision may change: everything but latency.
type scores struct {
	Scenarios, Episodes, Failed, Errors int
	Supersede, Retract, Keep            eval.Decisions
	Current, History, Questions         eval.Ratio
	Cost                                eval.Cost
}

func scoresOf(m eval.Metrics) scores {
	return scores{m.Scenarios, m.Episodes, m.Failed, m.Errors, m.Supersede, m.Retract, m.Keep, m.Current, m.History, m.Questions, m.Cost}
}

func byCategory(r *eval.RunResult) map[string]scores {
	out := map[string]scores{}
	for _, c := range r.Categories {
		out[c.Category] = scoresOf(c.Metrics)
	}
	return out
}

// extractionCost is the cost of n episodes of one chat call each, and calls
// consolidation calls.
func extractionCost(n, calls, examples int) eval.Cost {
	c := eval.Cost{ExtractionCalls: n, ExtractionPromptTokens: n * promptTokens, ExtractionCompletionTokens: n * completionTokens,
		Examples: examples, ConsolidationCalls: calls, ConsolidationPromptTokens: calls * consPromptTokens,
		ConsolidationCompletionTokens: calls * consCompletionTok}
	// Rounded as the report rounds them: two decimals, tokens one.
	c.CallsPerEpisode = math.Round(float64(n+calls)/float64(n)*100) / 100
	c.ChatCallsPerEpisode = 1 // every transcript fit the window: one extraction call each
	c.TokensPerEpisode = math.Round(float64(c.ExtractionPromptTokens+c.ExtractionCompletionTokens+
		c.ConsolidationPromptTokens+c.ConsolidationCompletionTokens)/float64(n)*10) / 10
	c.ExamplesPerEpisode = math.Round(float64(examples)/float64(n)*100) / 100
	return c
}

// The oracle's answers score exactly what they should; one wrong supersession lowers
// the scores of its category that it touches and no other; a right revision for the
// wrong reason lowers history accuracy of its category and nothing else.
func TestEvalScoresKnownAnswers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)

	right := h.report(nil)
	require.Len(t, right.Runs, 1)
	run := right.Runs[0]
	require.True(t, run.Learning)
	require.Equal(t, "openai", right.Provider)
	require.Equal(t, llmtest.DefaultChatModel, right.ChatModel)
	require.Equal(t, eval.DefaultK, right.K)
	require.Equal(t, fixture, right.Scenarios)
	want := map[string]scores{
		"move": {Scenarios: 1, Episodes: 3, Supersede: dec(1, 1, 1), Keep: dec(1, 1, 1),
			Current: ratio(2, 2), History: ratio(1, 1), Questions: ratio(2, 2), Cost: extractionCost(3, 0, 1)},
		"correction": {Scenarios: 1, Episodes: 2, Supersede: dec(1, 1, 1), Keep: dec(1, 1, 1),
			Current: ratio(2, 2), History: ratio(1, 1), Questions: ratio(1, 1), Cost: extractionCost(2, 0, 0)},
		"retraction": {Scenarios: 1, Episodes: 2, Retract: dec(1, 1, 1),
			Current: ratio(1, 1), History: ratio(1, 1), Questions: ratio(1, 1), Cost: extractionCost(2, 0, 0)},
		"hedged": {Scenarios: 1, Episodes: 2, Keep: dec(1, 1, 1),
			Current: ratio(2, 2), History: ratio(0, 0), Questions: ratio(1, 1), Cost: extractionCost(2, 0, 0)},
		"restatement": {Scenarios: 2, Episodes: 4, Keep: dec(4, 4, 4),
			Current: ratio(4, 4), History: ratio(0, 0), Questions: ratio(2, 2), Cost: extractionCost(4, 1, 0)},
		"parallel_truths": {Scenarios: 1, Episodes: 2, Keep: dec(2, 2, 2),
			Current: ratio(2, 2), History: ratio(0, 0), Questions: ratio(1, 1), Cost: extractionCost(2, 0, 0)},
	}
	require.Equal(t, want, byCategory(run))
	require.Equal(t, []string{"move", "correction", "retraction", "hedged", "restatement", "parallel_truths"},
		[]string{run.Categories[0].Category, run.Categories[1].Category, run.Categories[2].Category,
			run.Categories[3].Category, run.Categories[4].Category, run.Categories[5].Category}, "report order")
	require.Equal(t, scores{Scenarios: 7, Episodes: 15, Supersede: dec(2, 2, 2), Retract: dec(1, 1, 1), Keep: dec(9, 9, 9),
		Current: ratio(13, 13), History: ratio(3, 3), Questions: ratio(8, 8), Cost: extractionCost(15, 1, 1)}, scoresOf(run.Total))
	require.NotNil(t, run.Total.Latency.P50)
	require.GreaterOrEqual(t, *run.Total.Latency.P95, *run.Total.Latency.P50)
	// Learning: the third move transcript was shown the move before it as an example.
	var move eval.ScenarioResult
	for _, s := range run.Scenarios {
		if s.Name == "mini-move" {
			move = s
		}
	}
	require.Equal(t, []int{0, 0, 1}, []int{move.Episodes[0].Examples, move.Episodes[1].Examples, move.Episodes[2].Examples})
	require.Equal(t, memory.EpisodeApplied, move.Episodes[2].State)
	example := false
	for _, c := range h.srv.Chats() {
		if strings.Contains(c.Prompt, "Miami is hot") {
			example = strings.Contains(c.Prompt, "- Believed: User lives in New York")
		}
	}
	require.True(t, example, "the move was shown as a worked example")

	// One wrong supersession in the hedged category.
	hedged := h.report(wrongSupersede).Runs[0]
	got := byCategory(hedged)
	wantHedged := want["hedged"]
	wantHedged.Supersede = dec(0, 1, 0) // precision 0/1: a belief that should stay was superseded
	wantHedged.Keep = dec(1, 0, 0)      // recall 0/1: Boston is not kept
	wantHedged.Current = ratio(0, 2)    // Boston is not current, Austin is
	wantHedged.Questions = ratio(0, 1)  // "Where does the user live?" finds Austin
	// "I might move" supposes: the supersession is put to a second opinion, one more
	// call, which the fake, a compliant model, confirms.
	cost := got["hedged"].Cost
	require.Equal(t, 3, cost.ExtractionCalls)
	require.InDelta(t, 1.5, cost.ChatCallsPerEpisode, 0)
	wantHedged.Cost = cost
	require.Equal(t, wantHedged, got["hedged"])
	for c, s := range want {
		if c != "hedged" {
			require.Equal(t, s, got[c], "category %s changed", c)
		}
	}
	requireFailed(t, hedged, "mini-hedged", "current [boston]", "absent [austin] -[might]", "question Where does the user live? [boston]")

	// One wrong reason in the correction category.
	reason := h.report(wrongReason).Runs[0]
	got = byCategory(reason)
	wantCorrection := want["correction"]
	wantCorrection.History = ratio(0, 1) // superseded, but as a change in the world
	require.Equal(t, wantCorrection, got["correction"])
	for c, s := range want {
		if c != "correction" {
			require.Equal(t, s, got[c], "category %s changed", c)
		}
	}
	requireFailed(t, reason, "mini-correction", "superseded [python] (correction)")
}

// requireFailed asserts which checks of the run failed, all in scenario name.
func requireFailed(t *testing.T, run *eval.RunResult, name string, checks ...string) {
	t.Helper()
	var failed []string
	for _, s := range run.Scenarios {
		for _, c := range s.Checks {
			if !c.Pass {
				require.Equal(t, name, s.Name, "%s failed: %+v", s.Name, c)
				failed = append(failed, c.Kind+" "+c.Expect)
			}
		}
	}
	require.Equal(t, checks, failed)
}

// --compare runs with and without learning and prints both side by side; only the
// run with learning shows examples in its prompts.
func TestEvalCompareTable(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	out, stderr := h.run(nil, "--compare", "-v")
	require.Contains(t, stderr, "eval: round 3/3: 1 episodes extracted in")
	// The runs are one after the other, 16 chat calls each (15 extractions and one
	// consolidation); only the first, with learning, showed a worked example.
	chats := h.srv.Chats()
	require.Len(t, chats, 32)
	var withExamples []int
	for i, c := range chats {
		if strings.Contains(c.Prompt, "Past revisions in this memory") {
			withExamples = append(withExamples, i)
		}
	}
	require.Len(t, withExamples, 1)
	require.Less(t, withExamples[0], 16)

	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.Regexp(t, `^model qwen2.5:7b \(openai\), embeddings nomic-embed-text \(openai\), scenarios ../../eval/testdata/mini.jsonl, recall k=3$`, lines[0])
	require.Regexp(t, `^learning on: 7 scenarios, 15 episodes, [0-9.]+m?s, schema credo_eval_[0-9a-f]{12} \(dropped\)$`, lines[1])
	require.Regexp(t, `^learning off: 7 scenarios, 15 episodes, `, lines[2])
	require.Empty(t, lines[3])
	require.Equal(t, append([]string{"CATEGORY", "LEARNING"}, eval.TableHeader[1:]...), strings.Fields(lines[4]))
	rows := map[string][]string{}
	for _, l := range lines[5:] {
		fields := strings.Fields(l)
		if len(fields) == len(eval.TableHeader)+1 {
			require.Regexp(t, `^\d+(\.\d+)?m?s$`, fields[15], "P50 of %q", l)
			require.Regexp(t, `^\d+(\.\d+)?m?s$`, fields[16], "P95 of %q", l)
			rows[fields[0]+" "+fields[1]] = append(fields[2:15], fields[17])
		}
	}
	//                                N    SUP-P  SUP-R  RET-P  RET-R  KEEP-P KEEP-R CURRENT HISTORY DEPENDS QUESTIONS CALLS/EP TOKENS/EP FAILED
	move := []string{"1", "1.00", "1.00", "-", "-", "1.00", "1.00", "1.00", "1.00", "-", "1.00", "1.00", "110", "0"}
	restatement := []string{"2", "-", "-", "-", "-", "1.00", "1.00", "1.00", "-", "-", "1.00", "1.25", "124", "0"}
	total := []string{"7", "1.00", "1.00", "1.00", "1.00", "1.00", "1.00", "1.00", "1.00", "-", "1.00", "1.07", "114", "0"}
	for _, l := range []string{"on", "off"} {
		require.Equal(t, move, rows["move "+l], l)
		require.Equal(t, restatement, rows["restatement "+l], l)
		require.Equal(t, total, rows["TOTAL "+l], l)
	}
	require.Len(t, rows, 14)
	// Rows of a category are side by side, on then off, in report order.
	require.Regexp(t, `^move +on `, lines[5])
	require.Regexp(t, `^move +off `, lines[6])
	require.Regexp(t, `^TOTAL +off `, lines[18])
	// Revision precision, as `beliefs audit` reads a scope: the scripted model makes no
	// revision an operator would revert.
	require.Equal(t, []string{"", "revision precision (1 - reverted/applied, as `beliefs audit` reads it; reverted: what an operator would revert):",
		"  learning on: extraction 1.00 (5 applied, 0 to revert), consolidation 1.00 (1 applied, 0 to revert)",
		"  learning off: extraction 1.00 (5 applied, 0 to revert), consolidation 1.00 (1 applied, 0 to revert)"}, lines[19:23])
	// -v lists failed checks: there are none.
	require.Equal(t, []string{"", "failed checks, learning on:", "", "failed checks, learning off:"}, lines[23:])
}

func TestEvalUsage(t *testing.T) {
	t.Parallel()
	h := &harness{t: t, srv: llmtest.NewServer(t)}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--compare", "--without-learning"}, "--compare runs both with and without learning"},
		{[]string{"--with-learning", "--without-learning"}, "--with-learning and --without-learning contradict each other"},
		{[]string{"--only", "move,nope"}, "--only nope: no scenario has that category or name"},
		{[]string{"--scenarios", "testdata-missing.jsonl"}, "no such file"},
		{[]string{"--workers", "0"}, "--workers must be at least 1"},
		{[]string{"--k", "0"}, "--k must be within 1..100"},
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"extra"}, "unexpected arguments: [extra]"},
		{[]string{"--inject", "bogus"}, "--inject bogus: not a mistake"},
		{[]string{"--inject", "wrong-target:2"}, "--inject wrong-target: rate 2 is not within (0, 1]"},
		{[]string{"--inject", "wrong-target", "--gold"}, "--gold and --inject exclude each other"},
		{[]string{"--inject", "wrong-target", "--compare"}, "--inject and --perturb run with the guards on and off; leave out --compare"},
		{[]string{"--seed", "2"}, "--seed is for --inject and --perturb"},
		{[]string{"--perturb=slot,typo"}, "--perturb typo: not a perturbation"},
		{[]string{"--perturb", "--inject", "date-slip"}, "--inject and --perturb are runs of their own"},
		{[]string{"--perturb", "--gold"}, "--gold and --perturb exclude each other"},
		{[]string{"--verifier", "maybe", "--gold"}, "--verifier maybe: not gold, yes or no"},
		{[]string{"--verifier", "no"}, "--verifier is for --gold, --inject and --perturb"},
		{[]string{"--perturb", "--set", "all"}, "--set all: not shipped, heldout or both"},
		{[]string{"--set", "heldout"}, "--set is for --inject and --perturb"},
		{[]string{"--perturb", "--set", "heldout", "--scenarios", fixture}, "--set chooses among the shipped sets"},
		{[]string{"--inject", "date-slip", "--only", "nope"}, "--only nope: no scenario has that category or name"},
		{[]string{"--inject", "date-slip", "--scenarios", fixture}, "--gold and --inject run the scenarios eval/gold.jsonl labels"},
		{[]string{"--gold", "--scenarios", fixture}, "mini-move: no gold labels"},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), tc.args, h.env, &out, &errb)
		var usage *config.UsageError
		require.ErrorAs(t, err, &usage, "%v: %v", tc.args, err)
		require.ErrorContains(t, err, tc.want, fmt.Sprint(tc.args))
		require.Empty(t, out.String())
	}
	// A bad scenario file names the file and line.
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"--scenarios", "testdata/bad.jsonl"}, h.env, &out, &errb)
	require.ErrorContains(t, err, `testdata/bad.jsonl:2: broken: category "Moves!" is not a slug`)
	// Without a database URL.
	err = run(context.Background(), nil, func(k string) string {
		if k == "DATABASE_URL" {
			return ""
		}
		return h.env(k)
	}, &out, &errb)
	require.ErrorContains(t, err, "DATABASE_URL is required")
}

// Every shipped scenario goes through the pipeline. A model that never stores anything
// passes exactly the absent checks, and makes no decision.
func TestEvalShippedSetRuns(t *testing.T) {
	t.Parallel()
	h := &harness{t: t, srv: llmtest.NewServer(t)} // every answer: no facts
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	require.NoError(t, run(ctx, []string{"--json", "--workers", "8"}, h.env, &out, &errb), errb.String())
	var r eval.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &r))
	require.Equal(t, eval.ShippedName, r.Scenarios)
	h.requireDropped(r.Runs[0].Schema)

	shipped, err := eval.Shipped()
	require.NoError(t, err)
	var episodes, expected, absent, currentChecks, historyChecks, dependencies, questions int
	for _, s := range shipped {
		e := s.Expect
		episodes += len(s.Transcripts)
		keep := len(e.Current) + len(e.Reinforced)
		for _, g := range e.SideBySide {
			keep += len(g)
		}
		expected += keep + len(e.Superseded) + len(e.Retracted)
		absent += len(e.Absent)
		currentChecks += keep + len(e.Absent)
		historyChecks += len(e.Superseded) + len(e.Retracted)
		dependencies += len(e.DependsOn)
		questions += len(e.Questions)
	}
	total := r.Runs[0].Total
	require.Equal(t, len(shipped), total.Scenarios)
	require.Equal(t, episodes, total.Episodes)
	require.Zero(t, total.Failed)
	require.Zero(t, total.Errors)
	require.Equal(t, expected, total.Supersede.Expected+total.Retract.Expected+total.Keep.Expected)
	require.Zero(t, total.Supersede.Made+total.Retract.Made+total.Keep.Made)
	require.Equal(t, ratio(absent, currentChecks), total.Current)
	require.Equal(t, ratio(0, historyChecks), total.History)
	require.Equal(t, ratio(0, dependencies), total.Dependencies)
	require.Equal(t, ratio(0, questions), total.Questions)
	require.Equal(t, 1.0, total.Cost.CallsPerEpisode)
	require.Len(t, r.Runs[0].Categories, len(eval.Categories))
}

// The eval runs in the database credo already runs in, whose own tables sit next to
// the vector extension (public, typically): it must neither read nor write them.
func TestEvalLeavesTheDeploymentAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dbtest.URL())
	require.NoError(t, err)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	db := "credo_evaltest_" + hex.EncodeToString(b)
	_, err = admin.Exec(ctx, "CREATE DATABASE "+db)
	if err != nil {
		admin.Close(ctx)
		t.Skipf("cannot create a database for the test: %v", err)
	}
	t.Cleanup(func() {
		defer admin.Close(context.Background())
		_, err := admin.Exec(context.Background(), "DROP DATABASE "+db+" WITH (FORCE)")
		require.NoError(t, err)
	})
	u, err := url.Parse(dbtest.URL())
	require.NoError(t, err)
	u.Path = "/" + db
	dbURL := u.String()

	// A deployment: credo's and River's tables in public, beside pgvector, with a belief
	// and a finished job.
	pool, err := pgxpool.New(ctx, dbURL)
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, migrations.Migrate(ctx, pool, nil))
	_, err = memory.NewStore(pool, nil).Apply(ctx, &memory.Batch{Scope: "user:1", Origin: memory.RevisionOperator,
		Facts: []memory.Fact{{Statement: "User lives in Lima", Subject: "user", Attribute: "location", Kind: memory.KindAttribute,
			Confidence: 1, Origin: memory.OriginUserStated}}})
	require.NoError(t, err)
	state := func() string {
		var s string
		require.NoError(t, pool.QueryRow(ctx, `SELECT format('beliefs %s, episodes %s, events %s, jobs %s, migrations %s, models %s, schemas %s',
			(SELECT count(*) FROM public.belief), (SELECT count(*) FROM public.episode), (SELECT count(*) FROM public.revision_event),
			(SELECT count(*) FROM public.river_job), (SELECT count(*) FROM public.river_migration), (SELECT count(*) FROM public.embedding_model),
			(SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace WHERE nspname NOT LIKE 'pg\_%' AND nspname <> 'information_schema'))`).Scan(&s))
		return s
	}
	before := state()

	h := newHarness(t)
	env := func(k string) string {
		if k == "DATABASE_URL" {
			return dbURL
		}
		return h.env(k)
	}
	h.srv.Handle(answer(t, nil))
	var out, errb bytes.Buffer
	require.NoError(t, run(ctx, []string{"--scenarios", fixture, "--json"}, env, &out, &errb), errb.String())
	var r eval.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &r))
	require.Equal(t, ratio(13, 13), r.Runs[0].Total.Current, "the eval scores as in its own database")
	require.Equal(t, before, state(), "the deployment's tables changed")
}
