package inspector

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/redact"
)

// Config configures a Server.
type Config struct {
	Store *memory.Store // required
	Gate  Gate          // required: the API server, whose keys and modes the pages share
	// Jobs inserts the extraction job a retried episode needs: the worker's River
	// client. Without it, failed episodes cannot be retried from the pages.
	Jobs extract.Inserter
	// Embed embeds review decisions as labeled examples (optional, as in operator.New).
	Embed      llm.Embedder
	EmbedModel string
	Logger     *slog.Logger
	Now        func() time.Time
	// SecureCookies marks the login cookie Secure on every request, as browsers reach
	// the worker over https (PUBLIC_URL) even when a proxy forwards plain HTTP; without
	// it, only requests that arrive over TLS get a Secure cookie.
	SecureCookies bool
	// SessionTTL is how long a login lasts (api.DefaultSessionTTL when 0).
	SessionTTL time.Duration
	// Redact replaces the secrets of an operator's statements (REDACT; nil:
	// redact.Default), as in operator.New.
	Redact *redact.Redactor
}

// ErrConfig is returned for an invalid Config.
var ErrConfig = errors.New("inspector: invalid config")

// withDefaults returns c with the defaults of what it leaves zero; EmbedModel is the
// embedder's own when it names one.
func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.SessionTTL = cmp.Or(c.SessionTTL, api.DefaultSessionTTL)
	if p, ok := c.Embed.(llm.Provider); ok && c.EmbedModel == "" {
		c.EmbedModel = p.EmbedModel()
	}
	return c
}

// validate says what c lacks.
func (c Config) validate() error {
	if c.Store == nil || c.Gate == nil {
		return fmt.Errorf("%w: Store and Gate are required", ErrConfig)
	}
	return nil
}
