package eval_test

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/transcript"
)

const longMemEvalMini = "testdata/longmemeval-mini.json"

func parseLongMemEvalMini(t *testing.T, f eval.LongMemEvalFilter) ([]eval.LongMemEvalQuestion, error) {
	return parseFile(t, longMemEvalMini, f, eval.ParseLongMemEval)
}

// parseFile reads the file at path with parse, filtered by f.
func parseFile[T, F any](t *testing.T, path string, f F, parse func(string, io.Reader, F) (T, error)) (T, error) {
	t.Helper()
	r, err := os.Open(path)
	require.NoError(t, err)
	defer r.Close()
	return parse(path, r, f)
}

func TestParseLongMemEvalMini(t *testing.T) {
	t.Parallel()
	qs, err := parseLongMemEvalMini(t, eval.LongMemEvalFilter{})
	require.NoError(t, err)
	require.Len(t, qs, 4)

	ku := qs[0]
	require.Equal(t, "ku_001", ku.ID)
	require.Equal(t, eval.LongMemEvalKnowledgeUpdate, ku.Type)
	require.Equal(t, "longmemeval:ku_001", ku.Scope())
	require.False(t, ku.Abstention)
	require.Equal(t, time.Date(2023, 6, 10, 9, 0, 0, 0, time.UTC), ku.At)
	require.Equal(t, []string{"answer_c3"}, ku.AnswerSessionIDs)
	require.Len(t, ku.Sessions, 3)
	require.True(t, ku.Sessions[2].Turns[0].HasAnswer)
	tr := ku.Sessions[1].Transcript(ku.Scope())
	require.NoError(t, tr.Validate(time.Now(), transcript.Limits{}))
	require.Equal(t, "ultrachat_b2", tr.ID)
	require.Equal(t, time.Date(2023, 5, 20, 2, 21, 0, 0, time.UTC), *tr.OccurredAt)
	require.Equal(t, []transcript.Message{
		{Role: "user", Content: "Can you recommend a pasta recipe?"},
		{Role: "assistant", Content: "Try a classic carbonara."},
	}, tr.Messages)

	require.Equal(t, "2", qs[1].Answer, "a numeric answer is read as text")
	require.Len(t, qs[1].Sessions, 1, "a session without turns is left out")

	abs := qs[2]
	require.True(t, abs.Abstention, "an id ending in _abs")
	require.Equal(t, []string{"answer_f1", "answer_f2"}, []string{abs.Sessions[0].ID, abs.Sessions[1].ID},
		"sessions in date order, as the oracle file does not sort them")
}

func TestParseLongMemEvalFilter(t *testing.T) {
	t.Parallel()
	qs, err := parseLongMemEvalMini(t, eval.LongMemEvalFilter{Types: []string{"knowledge-update", "temporal-reasoning"}, Limit: 2})
	require.NoError(t, err)
	require.Equal(t, []string{"ku_001", "ku_003_abs"}, []string{qs[0].ID, qs[1].ID})

	_, err = parseLongMemEvalMini(t, eval.LongMemEvalFilter{Types: []string{"knowledge-updates"}})
	require.ErrorContains(t, err, `"knowledge-updates" is not a LongMemEval question type`)
}

func TestParseLongMemEvalErrors(t *testing.T) {
	t.Parallel()
	item := func(over string) string {
		base := map[string]string{
			"question_id": `"q1"`, "question_type": `"multi-session"`, "question": `"Q?"`, "answer": `"A"`,
			"question_date": `"2023/05/30 (Tue) 23:40"`, "haystack_session_ids": `["s1"]`,
			"haystack_dates":    `["2023/05/20 (Sat) 02:21"]`,
			"haystack_sessions": `[[{"role": "user", "content": "hi"}]]`, "answer_session_ids": `[]`,
		}
		k, v, _ := strings.Cut(over, "=")
		if v == "" {
			delete(base, k)
		} else {
			base[k] = v
		}
		var parts []string
		for k, v := range base {
			parts = append(parts, `"`+k+`": `+v)
		}
		return "[{" + strings.Join(parts, ", ") + "}]"
	}
	for over, want := range map[string]string{
		"question_type=\"knowledge\"": "question 1 (q1): question_type: missing or not one of",
		"answer=":                     "question 1 (q1): answer: missing",
		"question_date=\"tomorrow\"":  `question_date: "tomorrow" is not a date`,
		"haystack_dates=[]":           "haystack_sessions: 1 sessions, 0 dates and 1 ids",
		"haystack_sessions=[[{\"role\": \"system\", \"content\": \"x\"}]]": `haystack_sessions[0][0].role: "system" is neither user nor assistant`,
		"haystack_sessions=[[]]": "haystack_sessions: no session with a turn",
		"question_id=":           "question 1: question_id: missing",
	} {
		_, err := eval.ParseLongMemEval("f.json", strings.NewReader(item(over)), eval.LongMemEvalFilter{})
		require.ErrorContains(t, err, want, over)
		require.True(t, strings.HasPrefix(err.Error(), "f.json: question 1"), err.Error())
		var de *eval.DataError
		require.ErrorAs(t, err, &de)
	}
	_, err := eval.ParseLongMemEval("f.json", strings.NewReader(`{"question_id": "q1"}`), eval.LongMemEvalFilter{})
	require.ErrorContains(t, err, "it must be a JSON array of questions")
}

func TestLongMemEvalJudgePrompts(t *testing.T) {
	t.Parallel()
	q := eval.LongMemEvalQuestion{Question: "Where do I live now?", Answer: "Porto", Type: eval.LongMemEvalKnowledgeUpdate}
	p := eval.LongMemEvalJudgePrompt(q, "You live in Porto.")
	require.Contains(t, p, "If the response contains some previous information along with an updated answer")
	require.True(t, strings.HasSuffix(p, "\n\nQuestion: Where do I live now?\n\nCorrect Answer: Porto\n\nModel Response: You live in Porto.\n\nIs the model response correct? Answer yes or no only."))

	q.Type = eval.LongMemEvalTemporalReasoning
	require.Contains(t, eval.LongMemEvalJudgePrompt(q, "x"), "do not penalize off-by-one errors")
	q.Type = eval.LongMemEvalSingleSessionPreference
	require.Contains(t, eval.LongMemEvalJudgePrompt(q, "x"), "\n\nRubric: Porto\n\n")
	q.Type = eval.LongMemEvalMultiSession
	require.True(t, strings.HasPrefix(eval.LongMemEvalJudgePrompt(q, "x"), "I will give you a question, a correct answer, and a response from a model. Please answer yes if the response contains the correct answer."))
	q.Abstention = true
	p = eval.LongMemEvalJudgePrompt(q, "I don't know.")
	require.Contains(t, p, "Does the model correctly identify the question as unanswerable? Answer yes or no only.")
	require.Contains(t, p, "\n\nExplanation: Porto\n\n")
}
