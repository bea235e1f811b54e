package recall

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
	"github.com/credohq/credo/redact"
)

// Config configures a Reader.
type Config struct {
	Store *memory.Store
	// Chat answers Ask; Context needs none.
	Chat llm.Chatter
	// Embed and EmbedModel rank by similarity to the query; without them the ranking
	// uses recency and reinforcement alone.
	Embed            llm.Embedder
	EmbedModel       string
	MalformedRetries int
	Now              func() time.Time
	Observer         Observer
	Logger           *slog.Logger
	// Prompts are the parsed prompts, for a caller that makes a Reader per question;
	// nil: New parses them.
	Prompts *prompts.Prompts
	// Redact replaces the secrets of a question, with the policy of its scope over it,
	// before the embedder or the chat model sees it (REDACT; nil: redact.Default).
	Redact *redact.Redactor
}

// ErrConfig is returned for an invalid Config.
var ErrConfig = errors.New("recall: invalid config")

// withDefaults returns c with the defaults of what it leaves zero; EmbedModel is the
// embedder's own when it names one.
func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	c.MalformedRetries = cmp.Or(c.MalformedRetries, DefaultMalformedRetries)
	if p, ok := c.Embed.(llm.Provider); ok && c.EmbedModel == "" {
		c.EmbedModel = p.EmbedModel()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Redact == nil {
		c.Redact = redact.Default()
	}
	return c
}

// validate says what c lacks.
func (c Config) validate() error {
	if c.Store == nil {
		return fmt.Errorf("%w: Store is required", ErrConfig)
	}
	return nil
}
