// Package recall is the agent's read side: what memory says for a question, as a text
// block ready for a prompt (Context) or as a short answer citing the beliefs it rests on
// (Ask). It ranks what memory.Store.Recall finds by documented signals and renders it;
// Ask adds one chat call, validated like every model answer.
package recall

import (
	"cmp"
	"errors"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/credohq/credo/internal/stage"
	"github.com/credohq/credo/prompts"
	"github.com/credohq/credo/transcript"
)

// Limits and defaults of a query.
const (
	DefaultK      = 10
	MaxK          = 100
	DefaultBudget = 4000 // characters of a context block
	MaxBudget     = 100_000
	MaxQueryLen   = 2000
	// DefaultMalformedRetries is how often a malformed answer is asked again.
	DefaultMalformedRetries = 2
	// maxPending bounds the beliefs (and as many events) of a scope without a vector of
	// EMBED_MODEL embedded with a question, in its one call: after the model changed,
	// the first read of a scope of a few hundred beliefs ranks all of them.
	maxPending = 256
)

// ErrQuery is what every problem with a Query is (errors.Is): nothing was read. The
// error is a *transcript.InputError, whose Message is what to tell the user.
var ErrQuery = errors.New("invalid query")

// Query is an agent's question to memory.
type Query struct {
	Scope string
	// Query is the question or topic; empty ranks by recency and reinforcement alone.
	// A question about the past ("where did they live before?") adds what no longer holds.
	Query string
	// K bounds the beliefs shown per section (DefaultK when 0).
	K int
	// Inherit adds the ancestor scopes' beliefs on the slots the scope does not fill.
	Inherit bool
	// Sees says which ancestors the reader may read in full (see memory.RecallQuery);
	// nil: every one.
	Sees func(scope string) bool
	// AsOf reads what was true at that time instead of now.
	AsOf *time.Time
	// VectorsOnly ranks by the question's embedding alone, without its words and the
	// entities it names: the read before they were fused, for measuring
	// (memory.RecallQuery.VectorsOnly).
	VectorsOnly bool
	// Budget bounds the context block's characters (DefaultBudget when 0); the
	// lowest-ranked beliefs are left out first.
	Budget int
}

func (q *Query) check() error {
	q.Scope, q.Query = strings.TrimSpace(q.Scope), strings.TrimSpace(q.Query)
	switch {
	case q.Scope == "":
		return transcript.InputErrorf(ErrQuery, "scope", "is empty")
	case !utf8.ValidString(q.Query) || strings.ContainsRune(q.Query, 0):
		return transcript.InputErrorf(ErrQuery, "", "the query is not valid UTF-8 text")
	case utf8.RuneCountInString(q.Query) > MaxQueryLen:
		return transcript.InputErrorf(ErrQuery, "", "the query is longer than %d characters", MaxQueryLen)
	case q.K < 0 || q.K > MaxK:
		return transcript.InputErrorf(ErrQuery, "k", "%d is outside 1..%d", q.K, MaxK)
	case q.Budget < 0 || q.Budget > MaxBudget:
		return transcript.InputErrorf(ErrQuery, "", "the budget %d is outside 1..%d characters", q.Budget, MaxBudget)
	}
	q.K, q.Budget = cmp.Or(q.K, DefaultK), cmp.Or(q.Budget, DefaultBudget)
	return nil
}

// Observer is told about each Ask (metrics).
type Observer interface {
	Answered(r Report)
}

// Report is what one Ask cost.
type Report struct {
	ChatCalls        int
	PromptTokens     int
	CompletionTokens int
	Duration         time.Duration
	Err              error
}

// Reader reads memory for agents.
type Reader struct {
	cfg     Config
	prompts *prompts.Prompts
	log     *slog.Logger
}

// New returns a Reader.
func New(cfg Config) (*Reader, error) {
	cfg, p, err := stage.Setup(cfg, Config.withDefaults, Config.validate, cfg.Prompts)
	if err != nil {
		return nil, err
	}
	return &Reader{cfg: cfg, prompts: p, log: cfg.Logger}, nil
}
