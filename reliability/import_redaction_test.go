package reliability_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/redact/redacttest"
	"github.com/credohq/credo/transfer"
)

// An import is a way in like any other (issue 38): an export of a deployment that
// redacted nothing, imported where redaction is on and an organisation's policy adds a
// pattern, leaves no secret in the database, not in the transcripts, the beliefs, the
// revision history or the texts embedded; the report counts what was redacted.
func TestImportPassesRedaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	off, err := redact.New(nil)
	require.NoError(t, err)
	src := pipelinetest.New(t, &pipelinetest.Options{Redact: off})
	const oldCard, newCard = "4111 1111 1111 1111", "5500 0000 0000 0004"
	src.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		if strings.Contains(req.Prompt, "My card is now") {
			return llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: "User's card is " + newCard,
				Attribute: "card", Quote: "My card is now " + newCard,
				Resolves: &pipelinetest.Resolves{Index: 0, Action: "supersede", Reason: "temporal"}})}
		}
		return llmtest.Reply{Content: pipelinetest.Answer(
			pipelinetest.Fact{Statement: "User lives in Porto", Attribute: "location", Quote: "I moved to Porto last spring"},
			pipelinetest.Fact{Statement: "User's card is " + oldCard + ", employee EMP-204815", Attribute: "card",
				Quote: "My card is " + oldCard},
		)}
	})
	secrets := planted()
	src.Enqueue(t, pipelinetest.T("src/user:1", "c1", "2026-03-20T10:00:00Z", sayings(secrets)...))
	src.Drain(t)
	src.Enqueue(t, pipelinetest.T("src/user:1", "c2", "2026-03-21T10:00:00Z", "My card is now "+newCard+"."))
	src.Drain(t)
	events, err := src.Store.Events(ctx, "src/user:1", 10)
	require.NoError(t, err)
	require.Len(t, events, 1, "the new card superseded the old")

	exp, err := transfer.OpenExport(ctx, src.Store, memory.ExportQuery{Scope: "src/user:1"})
	require.NoError(t, err)
	var file bytes.Buffer
	require.NoError(t, exp.WriteTo(ctx, &file))
	exp.Close(ctx)
	exported := file.String()
	require.Contains(t, exported, oldCard, "the export holds the secrets it was given")

	dst := pipelinetest.New(t, nil)
	_, err = dst.Store.SetPolicy(ctx, memory.Policy{ScopePrefix: "acme/",
		Patterns: []redact.Pattern{{Name: "employee_id", Regex: `\bEMP-\d{6}\b`}}})
	require.NoError(t, err)
	var observed *transfer.Report
	im, err := transfer.NewImporter(transfer.Config{Store: dst.Store, Embed: dst.Provider, EmbedModel: dst.Provider.EmbedModel(),
		Jobs: dst.Client, Observer: func(r *transfer.Report) { observed = r }})
	require.NoError(t, err)
	rep, err := im.Import(ctx, &file, transfer.ImportParams{ScopeMap: []transfer.ScopeMapping{{Old: "src/user:1", New: "acme/user:1"}}})
	require.NoError(t, err)
	require.Same(t, rep, observed, "the observer (metrics) is told")
	require.Len(t, rep.Scopes, 1)
	got := rep.Scopes[0].Redacted
	require.Equal(t, 1, got["iban"])
	require.Equal(t, 1, got["private_key"])
	require.Equal(t, 1, got["password"])
	require.Equal(t, 14, got["api_key"])
	require.GreaterOrEqual(t, got["card"], 4, "the transcripts', the beliefs' and the revision's cards")
	require.GreaterOrEqual(t, got["pattern:employee_id"], 2, "the policy's pattern, in the transcript and the belief")

	// Nothing the import stored or embedded holds a secret.
	dump := pgDump(t, dst.Schema)
	for _, s := range append(secrets, cardSecret(oldCard), cardSecret(newCard)) {
		for _, part := range distinctive(s) {
			require.NotContains(t, dump, part, "%s is in the database", s.Name)
		}
	}
	require.Contains(t, dump, "User's card is [redacted card number], employee [redacted employee id]")
	require.Contains(t, dump, "I moved to Porto last spring and I work at a bakery.", "the rest is intact")
	var embedded strings.Builder
	for _, req := range dst.LLM.Requests() {
		embedded.WriteString(strings.Join(req.Inputs, "\n"))
	}
	require.Contains(t, embedded.String(), "User's card is [redacted card number]")
	require.NotContains(t, embedded.String(), "1111 1111")
	require.NotContains(t, embedded.String(), "0000 0004")

	// The episodes say what was redacted, and their content hashes are no longer the
	// originals', which would confirm a guess of the secrets.
	beliefs, err := dst.Store.All(ctx, "acme/user:1")
	require.NoError(t, err)
	require.NotEmpty(t, beliefs)
	ep, err := dst.Store.Episode(ctx, *beliefs[0].EpisodeID)
	require.NoError(t, err)
	require.Equal(t, 1, ep.Redactions["iban"])
	hashes := regexp.MustCompile(`"content_hash":"([0-9a-f]{64})"`).FindAllStringSubmatch(exported, -1)
	require.Len(t, hashes, 2)
	for _, h := range hashes {
		require.NotContains(t, dump, h[1])
	}
}

// cardSecret is a card number the model stated, to look for.
func cardSecret(card string) redacttest.Secret {
	return redacttest.Secret{Kind: "card", Name: "card " + card, Text: card}
}
