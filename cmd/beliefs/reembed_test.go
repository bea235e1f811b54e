package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/reembed"
)

// TestEmbedModelSwitch: EMBED_MODEL changes from old-embed to the fake's model. Before
// anything is re-embedded, a ranked read of a scope finds its beliefs (the read
// re-embeds them in its one call); `beliefs reembed` does a scope now; the worker's
// background job does the rest; then nothing is left, and doing it again does nothing.
func TestEmbedModelSwitch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newAPICLI(t)
	store := memory.NewStore(c.schema.Pool, nil)
	const old = "old-embed"
	require.NoError(t, store.EnsureEmbeddingModel(ctx, old, llmtest.DefaultDim))
	seed := func(scope string, statements ...string) {
		for i, s := range statements {
			b := &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, EmbedModel: old,
				At: time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC), Facts: []memory.Fact{{Statement: s, Attribute: fmt.Sprintf("slot_%d", i),
					Confidence: 0.9, Origin: memory.OriginUserStated, Embedding: llmtest.Embed(s, llmtest.DefaultDim)}}}
			_, err := store.Apply(ctx, b)
			require.NoError(t, err)
		}
	}
	var many []string
	for i := range 99 {
		many = append(many, fmt.Sprintf("User owns board game %d", i))
	}
	seed("u", append(many, "User lives in Miami")...)
	seed("v", "User plays the cello", "User speaks Danish")
	seed("w", "User drinks oolong")
	// Dismissed review items teach extraction by their vector: one embedded with the old
	// model, one stored without a vector.
	dismiss := func(scope string, vec []float32) {
		plan := memory.Fact{Statement: "Account plan is Pro", Attribute: "plan", Confidence: 1, Origin: memory.OriginAuthoritative,
			Embedding: llmtest.Embed("Account plan is Pro", llmtest.DefaultDim)}
		res, err := store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionOperator, EmbedModel: old,
			At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Facts: []memory.Fact{plan}})
		require.NoError(t, err)
		res, err = store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, EmbedModel: old,
			At: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), Candidates: []int64{res.Facts[0].BeliefID},
			Facts: []memory.Fact{{Statement: "Account plan is Free", Attribute: "plan", Confidence: 0.9, Origin: memory.OriginUserStated,
				Resolves: &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}}}})
		require.NoError(t, err)
		require.Equal(t, memory.OutcomeConflict, res.Facts[0].Kind, "an authoritative belief is not superseded: held")
		d := memory.Decision{ID: res.Facts[0].ConflictID, Scope: scope, Verdict: memory.VerdictDismiss}
		if vec != nil {
			d.EmbedModel, d.Embedding = old, vec
		}
		_, err = store.Decide(ctx, d)
		require.NoError(t, err)
	}
	dismiss("x", llmtest.Embed("Account plan is Free", llmtest.DefaultDim))
	dismiss("y", nil)

	pending := func() map[string]int {
		var rows []scopeRow
		require.NoError(t, json.Unmarshal([]byte(c.mustRunOK("scopes", "--json")), &rows))
		out := map[string]int{}
		for _, r := range rows {
			out[r.Scope] = r.ReembedPending
		}
		return out
	}
	require.Equal(t, map[string]int{"u": 100, "v": 2, "w": 1, "x": 2, "y": 2}, pending())

	// Before any re-embedding: the scope's beliefs are all found by a ranked read.
	out := c.mustRunOK("context", "--scope", "u", "--query", "Does the user live in Miami?", "--k", "3")
	require.Contains(t, out, "- User lives in Miami (since ")
	require.Equal(t, map[string]int{"u": 0, "v": 2, "w": 1, "x": 2, "y": 2}, pending(), "the read re-embedded its scope")

	out = c.mustRunOK("reembed", "--scope", "v")
	require.Contains(t, out, "re-embedded 2 rows of v with "+llmtest.DefaultEmbedModel)
	require.Equal(t, map[string]int{"u": 0, "v": 0, "w": 1, "x": 2, "y": 2}, pending())

	// The worker's background job finishes the rest.
	embed, err := llm.NewOllama(c.llm.OllamaConfig())
	require.NoError(t, err)
	worker, err := reembed.NewWorker(reembed.Config{Store: store, Embed: embed, Model: embed.EmbedModel()})
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, worker)
	client, err := river.NewClient(riverpgxv5.New(c.schema.Pool), &river.Config{
		Queues: map[string]river.QueueConfig{reembed.Queue: {MaxWorkers: 1}}, Workers: workers,
		FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond, Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { _ = client.Stop(context.WithoutCancel(ctx)) })
	res, err := client.Insert(ctx, reembed.Args{}, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		var state string
		err := c.schema.Pool.QueryRow(ctx, "SELECT state FROM river_job WHERE id = $1", res.Job.ID).Scan(&state)
		return err == nil && state == "completed"
	}, 30*time.Second, 20*time.Millisecond)
	require.Equal(t, map[string]int{"u": 0, "v": 0, "w": 0, "x": 0, "y": 0}, pending())

	var stale int
	require.NoError(t, c.schema.Pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM belief WHERE embed_model IS DISTINCT FROM $1)
			+ (SELECT count(*) FROM revision_event WHERE action <> 'reinforce' AND embed_model IS DISTINCT FROM $1)
			+ (SELECT count(*) FROM belief_conflict WHERE resolution = 'dismissed' AND embed_model IS DISTINCT FROM $1)`,
		llmtest.DefaultEmbedModel).Scan(&stale))
	require.Zero(t, stale, "every belief, event and dismissal has a vector of the new model")
	var rep reembed.Report
	require.NoError(t, json.Unmarshal([]byte(c.mustRunOK("reembed", "--json")), &rep))
	require.Equal(t, reembed.Report{Model: llmtest.DefaultEmbedModel}, rep)
	require.Contains(t, c.mustRunOK("reembed"), "nothing to re-embed in every scope")
	_, _, code := c.run("reembed", "--scope", "bad\x00scope")
	require.Equal(t, config.ExitUsage, code)
}
