package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/credohq/credo/recall"
)

// AnswerMetrics counts the read side's answers (POST /v1/ask, MCP ask): the questions
// and their result, the chat calls they cost and their tokens, and how long they took.
type AnswerMetrics struct {
	questions *prometheus.CounterVec
	calls     prometheus.Counter
	tokens    *prometheus.CounterVec
	duration  prometheus.Histogram
}

// Answers registers the answer metrics in m's registry.
func (m *Metrics) Answers() *AnswerMetrics {
	a := &AnswerMetrics{
		questions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "questions_total",
			Help: "Questions answered from memory (ask), by result (ok or error)."}, []string{"result"}),
		calls: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "answer_chat_calls_total",
			Help: "Chat calls made to answer questions, answers asked again included; an empty memory costs none."}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "answer_tokens_total",
			Help: "Tokens of the chat calls that answered questions, by kind (prompt or completion)."}, []string{"kind"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "answer_duration_seconds",
			Help: "How long answering one question took.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)}),
	}
	m.reg.MustRegister(a.questions, a.calls, a.tokens, a.duration)
	return a
}

// Answered records one question (recall.Observer).
func (a *AnswerMetrics) Answered(r recall.Report) {
	result := "ok"
	if r.Err != nil {
		result = "error"
	}
	a.questions.WithLabelValues(result).Inc()
	a.calls.Add(float64(r.ChatCalls))
	a.tokens.WithLabelValues("prompt").Add(float64(r.PromptTokens))
	a.tokens.WithLabelValues("completion").Add(float64(r.CompletionTokens))
	a.duration.Observe(r.Duration.Seconds())
}
