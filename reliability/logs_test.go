package reliability_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
)

// lockedBuffer is a log sink the workers write to concurrently.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The worker's log at info and warn names what happened, never the user's or the
// model's words: a purge erases every copy in the database, and a log is out of its
// reach. Malformed answers quoting the user, and a failed episode, are logged by kind.
func TestLogsQuoteNoText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const secret = "zanzibar-7731"
	var logs lockedBuffer
	p := pipelinetest.New(t, &pipelinetest.Options{Extract: func(c *extract.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}})
	p.LLM.OnPrompt("gate code", llmtest.Reply{Content: `{"reasoning": "the code is ` + secret + `", "facts": [{"statement": "User's gate code is ` +
		secret + `", "subject": "user", "attribute": "gate_code", "kind": "` + secret + `", "valid_from": "` + secret +
		`", "confidence": 0.9, "origin": "user_stated", "quote": "` + secret + `", "resolves": null}]}`})
	p.LLM.OnPrompt("I live in Oslo", llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: "User lives in Oslo " + secret, Attribute: "location"})})
	res := p.Enqueue(t,
		pipelinetest.T("u", "c1", "2026-01-10T10:00:00Z", "My gate code is "+secret+"."),
		pipelinetest.T("u", "c2", "2026-01-11T10:00:00Z", "I live in Oslo, "+secret+"."))
	p.Drain(t)
	require.Equal(t, "failed", p.Episode(t, res.EpisodeIDs[0]).State, "the malformed answer failed its episode")
	require.Contains(t, logs.String(), "malformed model output", "the log says what happened")
	require.Contains(t, logs.String(), "level=INFO msg=extracted", "and logs the applied extraction")
	require.NotContains(t, logs.String(), secret, "no user or model text at info or warn")

	// A purge then leaves the text nowhere: not in the database, not in the log.
	_, err := p.Store.Purge(ctx, memory.Selection{Scope: "u", Match: secret})
	require.NoError(t, err)
	require.Empty(t, p.Schema.Mentions(t, secret))
	require.NotContains(t, logs.String(), secret)
}
