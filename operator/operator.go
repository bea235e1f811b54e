// Package operator carries out an operator's operations on memory (assert, correct,
// forget, purge, resolve a review item, revert a revision) once, for every front end:
// the CLI, the HTTP API and MCP, and the web inspector call it, so that validation,
// visibility, embedding and the apply are the same whichever surface is used.
//
// Each front end checks its own principal's rights and names its own fields; an
// operation checks what the operation needs, and every lookup by id goes through one
// visibility check (Operator.Belief, Item, Event, Episode), so that an unknown id and
// another tenant's take the same path on every surface.
package operator

import (
	"context"
	"errors"
	"time"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/redact"
)

// Config is what an Operator needs.
type Config struct {
	Store *memory.Store
	// Embed embeds statements, revisions and decisions, in EmbedModel; with it nil, an
	// assertion or correction fails and a decision is not embedded (an applied revision
	// is embedded by the next consolidation pass, a dismissal never).
	Embed      llm.Embedder
	EmbedModel string
	// Now is the time an operator's revision is made; nil is time.Now.
	Now func() time.Time
	// Redact replaces the secrets of an operator's statements, with the policy of each
	// scope over it (REDACT; nil: redact.Default).
	Redact *redact.Redactor
}

// Operator carries out operators' operations.
type Operator struct {
	store    *memory.Store
	embed    llm.Embedder
	model    string
	now      func() time.Time
	redactor *redact.Redactor
}

// withDefaults returns c with the defaults of what it leaves zero.
func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Redact == nil {
		c.Redact = redact.Default()
	}
	return c
}

// New returns an Operator writing to cfg.Store.
func New(cfg Config) *Operator {
	cfg = cfg.withDefaults()
	return &Operator{store: cfg.Store, embed: cfg.Embed, model: cfg.EmbedModel, now: cfg.Now, redactor: cfg.Redact}
}

// errNoEmbedder is a front end configured without an embedder: an internal error.
var errNoEmbedder = errors.New("operator: no embedder configured")

// embedTexts embeds texts in one call, checked against the model's registration: a
// model that did not answer, or answered in another dimension than it was registered
// with, is llm.ErrEmbedding, and nothing is changed.
func (o *Operator) embedTexts(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := llm.EmbedTexts(ctx, o.embed, texts)
	if err != nil {
		return nil, err
	}
	if err := o.store.EnsureEmbeddingModel(ctx, o.model, len(vecs[0])); err != nil {
		if _, ok := errors.AsType[*memory.DimensionError](err); ok {
			// The model answers in another space under the same name: it failed.
			return nil, &llm.EmbeddingError{Err: err}
		}
		return nil, err
	}
	return vecs, nil
}
