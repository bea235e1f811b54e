package extract

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/credohq/credo/learning"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/redact"
)

// Defaults of Config.
const (
	DefaultMaxCandidates    = 24
	DefaultMalformedRetries = 2
	DefaultBatch            = 8
	DefaultMaxAttempts      = 10
)

// Config configures a Worker.
type Config struct {
	Store *memory.Store
	Chat  llm.Chatter
	Embed llm.Embedder
	// Sizer sizes prompts to the chat model's window; nil: Chat's own when it is an
	// llm.Sizer (every provider is), else llm.DefaultContext with the estimator of an
	// unknown model family.
	Sizer llm.Sizer
	// EmbedModel is the name vectors are stored under.
	EmbedModel string
	// MaxCandidates (K) bounds the beliefs shown to the LLM, so that the prompt does not
	// grow with memory.
	MaxCandidates int
	// MalformedRetries is how many times a malformed answer is asked again within one
	// attempt before the episode fails.
	MalformedRetries int
	// Batch bounds the episodes one job extracts before its scope yields to the others,
	// when others wait.
	Batch int
	// EpisodeTimeout bounds one episode's attempt (JOB_TIMEOUT); zero: no bound.
	EpisodeTimeout time.Duration
	// JobBudget bounds one job: it starts no episode that could end after it, and River
	// stops it then. Keep it under River's RescueStuckJobsAfter, so that a live job is
	// never taken over. Zero: no bound but Batch.
	JobBudget time.Duration
	// MaxAttempts is how many times an episode is tried before it fails; the attempts of
	// an episode, not of a job, since one job works many episodes.
	MaxAttempts int
	// RetryPolicy spaces an episode's attempts (nil: River's default, attempt⁴
	// seconds); the job waits for it, so the scope's later episodes wait too.
	RetryPolicy river.ClientRetryPolicy
	Logger      *slog.Logger
	// Examples, when set, retrieves similar past revisions shown as worked examples.
	Examples *learning.Retriever
	// Observer, when set, is told about each extraction (metrics).
	Observer Observer
	// Redact replaces the secrets of the model's facts before they are stored, with the
	// policy of each scope over it (REDACT; nil: redact.Default).
	Redact *redact.Redactor
}

// ErrConfig is returned for an invalid Config.
var ErrConfig = errors.New("extract: invalid config")

// withDefaults returns c with the defaults of what it leaves zero or negative; a
// negative MalformedRetries is zero.
func (c Config) withDefaults() Config {
	if c.MaxCandidates <= 0 {
		c.MaxCandidates = DefaultMaxCandidates
	}
	c.MalformedRetries = max(cmp.Or(c.MalformedRetries, DefaultMalformedRetries), 0)
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.RetryPolicy == nil {
		c.RetryPolicy = &river.DefaultClientRetryPolicy{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Redact == nil {
		c.Redact = redact.Default()
	}
	if c.Sizer == nil {
		if s, ok := c.Chat.(llm.Sizer); ok {
			c.Sizer = s
		} else {
			c.Sizer = llm.FixedSizer(llm.DefaultContext, "")
		}
	}
	return c
}

// validate says what c lacks.
func (c Config) validate() error {
	if c.Store == nil || c.Chat == nil || c.Embed == nil || c.EmbedModel == "" {
		return fmt.Errorf("%w: Store, Chat, Embed and EmbedModel are required", ErrConfig)
	}
	return nil
}
