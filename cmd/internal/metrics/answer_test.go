package metrics

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/recall"
)

func TestAnswersCountQuestionsCallsAndTokens(t *testing.T) {
	t.Parallel()
	m := New()
	a := m.Answers()
	a.Answered(recall.Report{ChatCalls: 2, PromptTokens: 300, CompletionTokens: 40, Duration: time.Second})
	a.Answered(recall.Report{}) // an empty memory: no call
	a.Answered(recall.Report{ChatCalls: 3, Err: errors.New("malformed")})

	s := scrapeOf(t, m)
	require.Equal(t, 2.0, s.value("credo_questions_total", "result=ok"))
	require.Equal(t, 1.0, s.value("credo_questions_total", "result=error"))
	require.Equal(t, 5.0, s.value("credo_answer_chat_calls_total"))
	require.Equal(t, 300.0, s.value("credo_answer_tokens_total", "kind=prompt"))
	require.Equal(t, 40.0, s.value("credo_answer_tokens_total", "kind=completion"))
	require.Equal(t, 3.0, s.value("credo_answer_duration_seconds"))
}
