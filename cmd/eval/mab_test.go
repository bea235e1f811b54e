package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/prompts"
)

const mabFixture = "../../eval/testdata/mab-mini.jsonl"

func mabModel(t *testing.T) *benchModel {
	return &benchModel{t: t, judged: map[string]string{}, answers: map[string]string{
		"Who is the chairperson of Acme Corp?":                         "Carol White",
		"Which country is Bob Jones a citizen of?":                     "He is a citizen of the United Mexican States.",
		"What is the capital of the country Dana Lee is a citizen of?": "Paris",
	}}
}

func mabScore(questions, correct, exact int) eval.MABScore {
	s := eval.MABScore{QAScore: score(questions, correct), ExactMatch: exact}
	s.ExactMatchAccuracy = score(questions, exact).Accuracy
	return s
}

func TestMABEndToEnd(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Handle(mabModel(t).reply)
	out, stderr := runBench(t, srv, "mab", "--data", mabFixture, "--json")
	var r eval.MABReport
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.Contains(t, stderr, "eval: MemoryAgentBench FactConsolidation, 2 rows, 8 facts, 3 questions")
	require.Contains(t, stderr, "eval: factconsolidation_sh_6k: 2 of 2 questions answered correctly", "a line a row, without a bar")
	require.Empty(t, r.JudgeModel, "no judge: exact match")
	require.Equal(t, eval.DefaultMABFactsPerEpisode, r.FactsPerEpisode)

	// Each row's facts fit in one episode.
	require.Equal(t, 2, r.Ingest.Sessions)
	require.Equal(t, 2, r.Ingest.Applied)

	// Single-hop: both match as substrings, one exactly; multi-hop: wrong.
	require.Equal(t, []eval.MABSplitScore{
		{Split: eval.MABSingleHop, MABScore: mabScore(2, 2, 1)},
		{Split: eval.MABMultiHop, MABScore: mabScore(1, 0, 0)},
	}, r.Splits)
	require.Equal(t, mabScore(3, 2, 1), r.Overall)
	require.Equal(t, 0.6667, *r.Overall.Accuracy)
	require.Zero(t, r.AnswerFailures)

	requireCostConsistent(t, srv, r.Cost, 2, 3, 0)
	// Every fact is one belief of its row's scope, statement as said.
	f, err := os.Open(mabFixture)
	require.NoError(t, err)
	defer f.Close()
	rows, err := eval.ParseMAB(mabFixture, f, eval.MABFilter{})
	require.NoError(t, err)
	memory := 0
	for _, row := range rows {
		for _, fact := range row.Facts {
			memory += (len(fact.Text) + 3) / 4
		}
	}
	require.Equal(t, float64(memory)/2, r.Cost.MemoryTokensPerConversation)

	require.Len(t, r.Rows, 2)
	sh := r.Rows[0]
	require.Equal(t, "factconsolidation_sh_6k", sh.Source)
	require.Equal(t, "mab:factconsolidation_sh_6k", sh.Scope)
	require.Equal(t, []eval.MABAnswer{
		{Index: 0, Question: "Who is the chairperson of Acme Corp?", Gold: []string{"Carol White"}, Answer: "Carol White",
			Correct: true, Exact: true, Beliefs: sh.Questions[0].Beliefs, Citations: 1},
		{Index: 1, Question: "Which country is Bob Jones a citizen of?", Gold: []string{"Mexico", "United Mexican States"},
			Answer: "He is a citizen of the United Mexican States.", Correct: true, Beliefs: sh.Questions[1].Beliefs, Citations: 1},
	}, sh.Questions)
	require.Equal(t, 5, sh.Questions[0].Beliefs, "the row's five facts")
	requireLocomoDropped(t, r.Schema)
}

func TestMABSplitLimitAndEpisodes(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Handle(mabModel(t).reply)
	out, _ := runBench(t, srv, "mab", "--data", mabFixture, "--split", "single-hop", "--limit", "1", "--facts-per-episode", "2")
	require.Contains(t, out, "1 rows, 5 facts in 3 episodes of up to 2, 1 questions")
	rows := tableRows(out)
	require.Equal(t, []string{"single-hop", "1", "1", "1.00", "1.00"}, rows["single-hop"])
	require.Equal(t, []string{"OVERALL", "1", "1", "1.00", "1.00"}, rows["OVERALL"])
	require.NotContains(t, rows, "multi-hop")
	require.Contains(t, out, "SESSIONS  CHAT/EP  CHAT/S")

	// Three extraction calls, in the facts' order, each fact dated by its number.
	var extractions []string
	for _, req := range srv.Chats() {
		if req.SchemaName == prompts.ExtractionSchemaName {
			extractions = append(extractions, req.Prompt)
		}
	}
	require.Len(t, extractions, 3)
	require.True(t, slicesContain(extractions, "user at 2024-01-01T00:02:00Z: The chairperson of Acme Corp is Carol White.",
		"user at 2024-01-01T00:03:00Z: The capital of Freedonia is Sylvania City."))
	require.Equal(t, 1, countSchema(srv, prompts.AnswerSchemaName))
}

func TestMABUsage(t *testing.T) {
	requireUsage(t, "mab", "usage: eval mab --data FILE", map[string]usageCase{
		"no data":  {nil, "--data is required"},
		"split":    {[]string{"--data", mabFixture, "--split", "both"}, `"both" is neither single-hop nor multi-hop`},
		"limit":    {[]string{"--data", mabFixture, "--limit", "-1"}, "--limit must be 0 (all) or more"},
		"episodes": {[]string{"--data", mabFixture, "--facts-per-episode", "0"}, "--facts-per-episode must be within 1..200"},
		"not mab":  {[]string{"--data", longMemEvalFixture}, "no FactConsolidation rows"},
	})
}
