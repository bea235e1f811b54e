package reliability_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/prompts"
	"github.com/credohq/credo/transfer"
)

// A mem0 export keeps no slot: memories without a category all import as "general", and
// an old home and a new one would stay current together. The consolidation pass the
// import queues (issue 51, item 3) judges them as a cluster and retires the old one; the
// assistant's memory is about the assistant, and stays.
func TestMem0ImportIsConsolidated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const (
		sf      = "Lives in San Francisco"
		seattle = "Moved to Seattle"
		spanish = "Assistant should answer in Spanish"
	)
	// Embeddings that know a home from a home, as a real model's do.
	p := pipelinetest.New(t, &pipelinetest.Options{Consolidate: true, LLMOptions: []llmtest.Option{llmtest.WithAnchors(map[string]string{
		"lives": "home", "moved": "home", "francisco": "city", "seattle": "city"})}})
	var clusters []string
	p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		if req.SchemaName != prompts.ConsolidationSchemaName {
			return llmtest.Reply{Content: pipelinetest.Answer()}
		}
		clusters = append(clusters, req.Prompt)
		old, repl := clusterIndex(req.Prompt, sf), clusterIndex(req.Prompt, seattle)
		if old < 0 || repl < 0 {
			return llmtest.Reply{Content: `{"reasoning": "distinct", "resolutions": []}`}
		}
		return llmtest.Reply{Content: fmt.Sprintf(`{"reasoning": "moved", "resolutions": [{"session_index": %d, "action": "supersede", "replaced_by": %d, "reason": "temporal"}]}`, old, repl)}
	})
	im, err := transfer.NewImporter(transfer.Config{Store: p.Store, Embed: p.Provider, EmbedModel: p.Provider.EmbedModel(), Jobs: p.Client})
	require.NoError(t, err)
	rep, err := im.Import(ctx, strings.NewReader(`{"count": 3, "next": null, "previous": null, "results": [
		{"id": "1", "memory": "`+sf+`", "created_at": "2024-01-10T10:00:00Z", "updated_at": "2024-01-10T10:00:00Z"},
		{"id": "2", "memory": "`+seattle+`", "created_at": "2024-09-01T10:00:00Z", "updated_at": "2024-09-01T10:00:00Z"},
		{"id": "3", "memory": "`+spanish+`", "agent_id": "travel-bot", "created_at": "2024-02-01T10:00:00Z"}]}`),
		transfer.ImportParams{From: transfer.FromMem0, ScopeTemplate: "user:alex"})
	require.NoError(t, err)
	require.Equal(t, 1, rep.ConsolidationJobs)
	p.Drain(t)

	require.NotEmpty(t, clusters, "the imported scope was consolidated")
	current, err := p.Store.Current(ctx, "user:alex")
	require.NoError(t, err)
	got := map[string]string{}
	for _, b := range current {
		got[b.Statement] = b.Entity
	}
	require.Equal(t, map[string]string{seattle: "user", spanish: "assistant"}, got)
	all, err := p.Store.All(ctx, "user:alex")
	require.NoError(t, err)
	for _, b := range all {
		if b.Statement == sf {
			require.Equal(t, memory.StatusSuperseded, b.Status)
		}
	}
}

// clusterIndex is the index of statement among a consolidation prompt's beliefs, -1 if none.
func clusterIndex(prompt, statement string) int {
	for line := range strings.SplitSeq(prompt, "\n") {
		var i int
		if n, _ := fmt.Sscanf(line, "[%d]", &i); n == 1 && strings.Contains(line, "] "+statement+" (") {
			return i
		}
	}
	return -1
}
