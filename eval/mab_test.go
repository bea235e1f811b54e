package eval_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/transcript"
)

const mabMini = "testdata/mab-mini.jsonl"

func parseMABMini(t *testing.T, f eval.MABFilter) ([]eval.MABRow, error) {
	return parseFile(t, mabMini, f, eval.ParseMAB)
}

func TestParseMABMini(t *testing.T) {
	t.Parallel()
	rows, err := parseMABMini(t, eval.MABFilter{})
	require.NoError(t, err)
	require.Len(t, rows, 2, "the eventqa row is skipped")
	sh := rows[0]
	require.Equal(t, "factconsolidation_sh_6k", sh.Source)
	require.Equal(t, eval.MABSingleHop, sh.Split)
	require.Equal(t, "mab:factconsolidation_sh_6k", sh.Scope())
	require.Len(t, sh.Facts, 5)
	require.Equal(t, eval.MABFact{N: 4, Text: "Bob Jones is a citizen of Mexico."}, sh.Facts[4])
	require.Equal(t, []eval.MABQuestion{
		{Index: 0, Question: "Who is the chairperson of Acme Corp?", Answers: []string{"Carol White"}},
		{Index: 1, Question: "Which country is Bob Jones a citizen of?", Answers: []string{"Mexico", "United Mexican States"}},
	}, sh.Questions)
	require.Equal(t, eval.MABMultiHop, rows[1].Split)

	eps := sh.Episodes(2)
	require.Len(t, eps, 3)
	for _, ep := range eps {
		require.NoError(t, ep.Validate(time.Now(), transcript.Limits{}))
	}
	require.Equal(t, "facts_2-3", eps[1].ID)
	require.Equal(t, "The chairperson of Acme Corp is Carol White.", eps[1].Messages[0].Content)
	at0, at2 := *eps[0].Messages[0].At, *eps[1].Messages[0].At
	require.Equal(t, 2*time.Minute, at2.Sub(at0), "a later number is a later statement")
	require.Equal(t, *eps[1].Messages[1].At, *eps[1].OccurredAt, "an episode happens at its last fact")
	require.True(t, sh.AskedAt().After(*eps[2].OccurredAt))
	require.Len(t, sh.Episodes(0), 1, "the default batch holds all five")
}

func TestParseMABFilterAndShapes(t *testing.T) {
	t.Parallel()
	rows, err := parseMABMini(t, eval.MABFilter{Split: eval.MABMultiHop})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, "factconsolidation_mh_6k", rows[0].Source)

	rows, err = parseMABMini(t, eval.MABFilter{Split: eval.MABSingleHop, Limit: 1})
	require.NoError(t, err)
	require.Len(t, rows[0].Questions, 1)

	// A JSON array of rows reads as JSON lines do.
	array := `[{"context": "0. A is B.\n1. A is C.", "questions": ["What is A?"], "answers": [["C"]], "metadata": {"source": "factconsolidation_sh_32k"}}]`
	rows, err = eval.ParseMAB("a.json", strings.NewReader(array), eval.MABFilter{})
	require.NoError(t, err)
	require.Equal(t, []eval.MABFact{{N: 0, Text: "A is B."}, {N: 1, Text: "A is C."}}, rows[0].Facts)

	for data, want := range map[string]string{
		`{"context": "0. A.\n0. B.", "questions": ["Q?"], "answers": [["x"]], "metadata": {"source": "factconsolidation_sh_6k"}}`: "fact 0 follows fact 0",
		`{"context": "no facts", "questions": ["Q?"], "answers": [["x"]], "metadata": {"source": "factconsolidation_sh_6k"}}`:     "no numbered facts",
		`{"context": "0. A.", "questions": ["Q?", "R?"], "answers": [["x"]], "metadata": {"source": "factconsolidation_mh_6k"}}`:  "1 answers for 2 questions",
		`{"context": "0. A.", "questions": ["Q?"], "answers": [["x"]], "metadata": {"source": "eventqa_full"}}`:                   "no FactConsolidation rows",
		`{"context": "0. A.", "questions": ["Q?"], "answers": [[]], "metadata": {"source": "factconsolidation_mh_6k"}}`:           "answers[0]: no acceptable answer",
		``: "empty",
		`{"context": "0. A.", "questions": ["Q?"], "answers": [["x"]], "metadata": {"source": "factconsolidation_sh_6k"}}` + "\n" +
			`{"context": "0. B.", "questions": ["R?"], "answers": [["y"]], "metadata": {"source": "factconsolidation_sh_6k"}}`: "also the source of row 1",
	} {
		_, err := eval.ParseMAB("f.jsonl", strings.NewReader(data), eval.MABFilter{})
		require.ErrorContains(t, err, want, data)
	}
	_, err = parseMABMini(t, eval.MABFilter{Split: "both"})
	require.ErrorContains(t, err, `"both" is neither single-hop nor multi-hop`)
}

func TestMatchMAB(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		answer     string
		golds      []string
		sub, exact bool
	}{
		{"Carol White", []string{"Carol White"}, true, true},
		{"The chairperson is Carol White.", []string{"carol white"}, true, false},
		{"the Mexico!", []string{"Mexico"}, true, true},
		{"He is a citizen of the United Mexican States.", []string{"Mexico", "United Mexican States"}, true, false},
		{"Mexican", []string{"Mexico"}, false, false},
		{"Answer: Tokyo\nbecause Dana moved", []string{"Tokyo"}, true, true},
		{"Ottawa", []string{"Tokyo"}, false, false},
		{"Pesäpallo", []string{"pesäpallo"}, true, true},
		// Python's \b knows é is a letter: "a" is no word of "Théa".
		{"Thé a", []string{"Théa"}, false, false},
	} {
		m := eval.MatchMAB(tc.answer, tc.golds)
		require.Equal(t, eval.MABMatch{SubstringMatch: tc.sub, ExactMatch: tc.exact}, m, tc.answer)
	}
}
