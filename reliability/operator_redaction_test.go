package reliability_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/operator"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/recall"
	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/redact/redacttest"
)

// What an operator types (an assertion, a correction) and what an agent asks (context,
// ask) pass the detectors too, with the scope's policy: no secret reaches the embedder,
// the chat model or the database by those paths.
func TestOperatorsAndQuestionsAreRedacted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pipelinetest.New(t, nil)
	_, err := p.Store.SetPolicy(ctx, memory.Policy{ScopePrefix: "acme/",
		Patterns: []redact.Pattern{{Name: "employee_id", Regex: `\bEMP-\d{6}\b`}}})
	require.NoError(t, err)
	p.LLM.Handle(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: `{"reasoning": "", "answer": "It is on file.", "citations": [0]}`}
	})
	const card, iban, staff = "4111 1111 1111 1111", "DE89 3704 0044 0532 0130 00", "EMP-204815"
	key := redacttest.APIKeys(3)[0].Text
	secrets := []string{card, iban, staff, key}

	ops := operator.New(operator.Config{Store: p.Store, Embed: p.Provider, EmbedModel: p.Provider.EmbedModel()})
	out, err := ops.Assert(ctx, operator.Owner, operator.AssertParams{Scope: "acme/user:1", Attribute: "card",
		Statement: "User's card is " + card + " and staff id " + staff})
	require.NoError(t, err)
	b, err := p.Store.Get(ctx, out.BeliefID)
	require.NoError(t, err)
	require.Equal(t, "User's card is [redacted card number] and staff id [redacted employee id]", b.Statement)
	out, err = ops.Correct(ctx, operator.Owner, operator.CorrectParams{ID: out.BeliefID, Statement: "User pays from " + iban})
	require.NoError(t, err)
	b, err = p.Store.Get(ctx, out.BeliefID)
	require.NoError(t, err)
	require.Equal(t, "User pays from [redacted IBAN]", b.Statement)

	reader, err := recall.New(recall.Config{Store: p.Store, Chat: p.Provider, Embed: p.Provider})
	require.NoError(t, err)
	_, err = reader.Context(ctx, recall.Query{Scope: "acme/user:1", Query: "which card, " + card + "?"})
	require.NoError(t, err)
	ans, err := reader.Ask(ctx, recall.Query{Scope: "acme/user:1", Query: "is my key " + key + " or is it " + staff + "?"})
	require.NoError(t, err)
	require.Equal(t, "It is on file.", ans.Answer)

	var sent strings.Builder
	chats := 0
	for _, req := range p.LLM.Requests() {
		sent.WriteString(req.Prompt)
		sent.WriteString(strings.Join(req.Inputs, "\n"))
		if req.Kind == llmtest.KindChat {
			chats++
			require.Contains(t, req.Prompt, "is my key [redacted API key] or is it [redacted employee id]?")
		}
	}
	require.Equal(t, 1, chats)
	require.Contains(t, sent.String(), "which card, [redacted card number]?")
	dump := pgDump(t, p.Schema)
	for _, s := range secrets {
		require.NotContains(t, sent.String(), s, "reached the model")
		require.NotContains(t, dump, s, "is in the database")
	}
}
