package eval

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

// BenchCost is what a benchmark run cost, beside its score: the columns of the Mem0 paper's
// table (arXiv 2504.19413), for any model. Tokens are the model server's counts, but
// ContextTokens and MemoryTokens, estimated at 4 bytes a token.
type BenchCost struct {
	// Sessions are those this run extracted (a resumed run's earlier ones are not);
	// the per-session figures count, for them, every extraction call and the
	// embeddings it made, then the embeddings of what the last extraction stored and
	// one consolidation pass per conversation.
	Sessions            int     `json:"sessions"`
	ChatCallsPerSession float64 `json:"chat_calls_per_session"`
	// ChatCallsPerEpisode are the extraction's calls alone, per session extracted: 1.000
	// when every transcript fit the model's window in one prompt, more for those
	// extracted in segments, and for answers asked again.
	ChatCallsPerEpisode   float64 `json:"chat_calls_per_episode"`
	ChatTokensPerSession  float64 `json:"chat_tokens_per_session"`
	EmbedCallsPerSession  float64 `json:"embed_calls_per_session"`
	EmbedTokensPerSession float64 `json:"embed_tokens_per_session"`
	// Questions are the questions asked. ContextTokensPerQuestion are the statements
	// shown to the model to answer; the chat and embedding figures are Ask's own (the
	// question embedded, the answer asked again when malformed), not the judge's.
	Questions                int     `json:"questions"`
	ContextTokensPerQuestion float64 `json:"context_tokens_per_question"`
	ChatCallsPerQuestion     float64 `json:"chat_calls_per_question"`
	ChatTokensPerQuestion    float64 `json:"chat_tokens_per_question"`
	EmbedCallsPerQuestion    float64 `json:"embed_calls_per_question"`
	// Read is the latency of choosing the beliefs (the question embedded, memory read
	// and ranked), Answer of the whole answer, the model's call included; in seconds.
	ReadP50   *float64 `json:"read_p50_seconds"`
	ReadP95   *float64 `json:"read_p95_seconds"`
	AnswerP50 *float64 `json:"answer_p50_seconds"`
	AnswerP95 *float64 `json:"answer_p95_seconds"`
	// Conversations are the scopes; MemoryTokensPerConversation the current beliefs'
	// statements each holds at the end, WithHistory the superseded and retracted ones
	// too (credo keeps them).
	Conversations                          int     `json:"conversations"`
	MemoryTokensPerConversation            float64 `json:"memory_tokens_per_conversation"`
	MemoryTokensWithHistoryPerConversation float64 `json:"memory_tokens_with_history_per_conversation"`
	// Calls are every call to the models in the run but the judge's, in all.
	Calls llm.Counts `json:"calls"`
}

// entry is m[k], added as a new zero value when missing: a score by category.
func entry[K comparable, V any](m map[K]*V, k K) *V {
	v := m[k]
	if v == nil {
		v = new(V)
		m[k] = v
	}
	return v
}

// questionCost is what answering one question cost.
type questionCost struct {
	counts      llm.Counts
	read, total time.Duration
	context     int
}

// costCollector gathers a run's costs from concurrent scopes.
type costCollector struct {
	mu        sync.Mutex
	sessions  int
	extracts  int
	ingest    llm.Counts
	asking    llm.Counts
	reads     []time.Duration
	answers   []time.Duration
	context   int
	questions int
	scopes    int
	memory    int
	history   int
	bar       *progressBar
}

// ingested records what extracting sessions cost: every call made meanwhile, and
// extracts, the extraction's own chat calls.
func (c *costCollector) ingested(sessions, extracts int, counts llm.Counts) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sessions += sessions
	c.extracts += extracts
	c.ingest = c.ingest.Add(counts)
}

// scope records what readying a scope cost and the memory it holds.
func (c *costCollector) scope(counts llm.Counts, beliefs []memory.Belief) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ingest = c.ingest.Add(counts)
	c.scopes++
	c.memory += beliefTokens(beliefs, false)
	c.history += beliefTokens(beliefs, true)
}

// question records what one question cost; read is zero when Ask failed.
func (c *costCollector) question(q questionCost) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.questions++
	c.asking = c.asking.Add(q.counts)
	c.answers = append(c.answers, q.total)
	if q.read > 0 {
		c.reads = append(c.reads, q.read)
	}
	c.context += q.context
	c.bar.add(1)
}

// result is the run's BenchCost.
func (c *costCollector) result() BenchCost {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := BenchCost{Sessions: c.sessions, Questions: c.questions, Conversations: c.scopes, Calls: c.ingest.Add(c.asking),
		ReadP50: percentileSeconds(c.reads, 0.50), ReadP95: percentileSeconds(c.reads, 0.95),
		AnswerP50: percentileSeconds(c.answers, 0.50), AnswerP95: percentileSeconds(c.answers, 0.95)}
	per := func(v, n int, digits int) float64 {
		if n == 0 {
			return 0
		}
		return round(float64(v)/float64(n), digits)
	}
	out.ChatCallsPerSession = per(c.ingest.ChatCalls, c.sessions, 2)
	out.ChatCallsPerEpisode = per(c.extracts, c.sessions, 3)
	out.ChatTokensPerSession = per(c.ingest.ChatPromptTokens+c.ingest.ChatCompletionTokens, c.sessions, 1)
	out.EmbedCallsPerSession = per(c.ingest.EmbedCalls, c.sessions, 2)
	out.EmbedTokensPerSession = per(c.ingest.EmbedTokens, c.sessions, 1)
	out.ContextTokensPerQuestion = per(c.context, c.questions, 1)
	out.ChatCallsPerQuestion = per(c.asking.ChatCalls, c.questions, 2)
	out.ChatTokensPerQuestion = per(c.asking.ChatPromptTokens+c.asking.ChatCompletionTokens, c.questions, 1)
	out.EmbedCallsPerQuestion = per(c.asking.EmbedCalls, c.questions, 2)
	out.MemoryTokensPerConversation = per(c.memory, c.scopes, 1)
	out.MemoryTokensWithHistoryPerConversation = per(c.history, c.scopes, 1)
	return out
}

// percentileSeconds is percentile in seconds, to the millisecond.
func percentileSeconds(ds []time.Duration, p float64) *float64 {
	ms := percentile(ds, p)
	if ms == nil {
		return nil
	}
	v := round(*ms/1000, 3)
	return &v
}

// CostHeader are the columns of the cost table every benchmark report prints.
var CostHeader = []string{"SESSIONS", "CHAT/EP", "CHAT/S", "CHAT-TOK/S", "EMBED/S", "EMBED-TOK/S", "QUESTIONS", "CONTEXT-TOK/Q",
	"READ-P50", "READ-P95", "ANSWER-P50", "ANSWER-P95", "MEMORY-TOK/CONV"}

// WriteTable prints c as a one-row table under CostHeader.
func (c BenchCost) WriteTable(w io.Writer) error {
	secs := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.3fs", *v)
	}
	tw := table(w, strings.Join(CostHeader, "\t"))
	fmt.Fprintf(tw, "%d\t%.3f\t%.2f\t%.0f\t%.2f\t%.0f\t%d\t%.0f\t%s\t%s\t%s\t%s\t%.0f\n", c.Sessions, c.ChatCallsPerEpisode, c.ChatCallsPerSession,
		c.ChatTokensPerSession, c.EmbedCallsPerSession, c.EmbedTokensPerSession, c.Questions, c.ContextTokensPerQuestion,
		secs(c.ReadP50), secs(c.ReadP95), secs(c.AnswerP50), secs(c.AnswerP95), c.MemoryTokensPerConversation)
	return tw.Flush()
}
