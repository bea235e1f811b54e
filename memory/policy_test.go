package memory

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/transcript"
)

// The policy in force in a scope is the one of its longest prefix, whole; set replaces
// a prefix's policy, unset removes it, and a bad policy is refused with its reason,
// storing nothing.
func TestPolicyNearestPrefixWins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := setup(t)
	none := redact.Set{}
	_, err := store.SetPolicy(ctx, Policy{ScopePrefix: "acme/", Instructions: "Keep product and account facts.\nNever health.",
		Patterns: []redact.Pattern{{Name: "employee_id", Regex: `EMP-\d{6}`}}})
	require.NoError(t, err)
	support, err := store.SetPolicy(ctx, Policy{ScopePrefix: "acme/support/", Instructions: "Keep tickets.", Redact: &none})
	require.NoError(t, err)
	require.Equal(t, []redact.Pattern{}, support.Patterns)
	require.Equal(t, &none, support.Redact)

	for scope, want := range map[string]string{"acme/user:1": "acme/", "acme/support/user:2": "acme/support/", "acme": "", "globex/u": ""} {
		p, err := store.PolicyFor(ctx, scope)
		require.NoError(t, err)
		if want == "" {
			require.Nil(t, p, scope)
			continue
		}
		require.Equal(t, want, p.ScopePrefix, scope)
	}
	p, err := store.PolicyFor(ctx, "acme/user:1")
	require.NoError(t, err)
	require.Equal(t, "Keep product and account facts.\nNever health.", p.Instructions)
	require.Nil(t, p.Redact, "the deployment's kinds")
	require.Equal(t, []redact.Pattern{{Name: "employee_id", Regex: `EMP-\d{6}`}}, p.Patterns)

	// Set replaces: what it leaves out is unset.
	_, err = store.SetPolicy(ctx, Policy{ScopePrefix: "acme/", Instructions: "Only products."})
	require.NoError(t, err)
	p, err = store.PolicyFor(ctx, "acme/user:1")
	require.NoError(t, err)
	require.Equal(t, "Only products.", p.Instructions)
	require.Empty(t, p.Patterns)

	all, err := store.Policies(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, "acme/", all[0].ScopePrefix)

	removed, err := store.DeletePolicy(ctx, "acme/support/")
	require.NoError(t, err)
	require.Equal(t, "Keep tickets.", removed.Instructions)
	_, err = store.DeletePolicy(ctx, "acme/support/")
	require.ErrorIs(t, err, ErrNotFound)
	p, err = store.PolicyFor(ctx, "acme/support/user:2")
	require.NoError(t, err)
	require.Equal(t, "acme/", p.ScopePrefix, "the farther policy is in force again")

	for _, c := range []struct {
		p    Policy
		want string
	}{
		{Policy{ScopePrefix: "acme/", Instructions: strings.Repeat("x", MaxInstructions+1)}, "instructions is 2001 characters long"},
		{Policy{ScopePrefix: "acme/", Instructions: "a\x00b"}, "NUL"},
		{Policy{ScopePrefix: " acme"}, "scope_prefix has leading or trailing white space"},
		{Policy{ScopePrefix: "acme/", Patterns: []redact.Pattern{{Name: "x", Regex: "(a"}}}, "redact pattern x: error parsing regexp"},
	} {
		_, err := store.SetPolicy(ctx, c.p)
		require.ErrorIs(t, err, ErrPolicy)
		msg, ok := transcript.InputMessage(err)
		require.True(t, ok)
		require.Contains(t, msg, c.want)
	}
	p, err = store.PolicyFor(ctx, "acme/user:1")
	require.NoError(t, err)
	require.Equal(t, "Only products.", p.Instructions, "a refused policy stores nothing")
}

// ApplyPolicy redacts what was stored before redaction: transcripts, beliefs, events and
// review items of every scope under the prefix, each with the redactor of its policy;
// a dry run counts and writes nothing.
func TestApplyPolicyRedactsStoredText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	const (
		card  = "4111 1111 1111 1111"
		empID = "EMP-204815"
	)
	ep := insertTranscript(t, bundle, "acme/user:1", "c1", userSays("My card is "+card+" and I am "+empID+". I live in Porto."))
	mustApply(t, store, from(ep, extraction("acme/user:1", "2026-01-02", nil,
		quoted(fact("User's card is "+card, "card", ""), "My card is "+card),
		quoted(fact("User's employee id is "+empID, "employee_id", ""), "I am "+empID),
		quoted(fact("User lives in Porto", "location", ""), "I live in Porto"))))
	// A scope under a nearer policy that redacts nothing keeps its words.
	optedOut := insertTranscript(t, bundle, "acme/lab/user:2", "c2", userSays("Test card "+card+"."))
	none := redact.Set{}
	_, err := store.SetPolicy(ctx, Policy{ScopePrefix: "acme/", Patterns: []redact.Pattern{{Name: "employee_id", Regex: `EMP-\d{6}`}}})
	require.NoError(t, err)
	_, err = store.SetPolicy(ctx, Policy{ScopePrefix: "acme/lab/", Redact: &none})
	require.NoError(t, err)
	base, err := redact.New(redact.All())
	require.NoError(t, err)

	dry, err := store.ApplyPolicy(ctx, "acme/", base, true)
	require.NoError(t, err)
	require.True(t, dry.DryRun)
	require.Equal(t, map[string]int{"card": 3, "pattern:employee_id": 3}, dry.Counts, "each in the transcript, a statement and a quote")
	require.Len(t, dry.Scopes, 1)
	require.Equal(t, map[string]int{"episode": 1, "belief": 2}, dry.Scopes[0].Rows)
	require.Contains(t, mentions(t, bundle, card), "episode", "a dry run writes nothing")

	_, hashBefore := episodeRow(t, bundle, ep)
	applied, err := store.ApplyPolicy(ctx, "acme/", base, false)
	require.NoError(t, err)
	require.Equal(t, dry.Counts, applied.Counts)
	require.Equal(t, map[string]int{"episode": 1}, mentions(t, bundle, card), "only the opted-out scope keeps the card")
	require.Empty(t, mentions(t, bundle, empID))
	messages, hash := episodeRow(t, bundle, ep)
	require.Contains(t, messages, "My card is [redacted card number] and I am [redacted employee id]. I live in Porto.")
	require.NotEqual(t, hashBefore, hash)
	got, err := store.Episode(ctx, ep)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"card": 1, "pattern:employee_id": 1}, got.Redactions)
	opted, err := store.Episode(ctx, optedOut)
	require.NoError(t, err)
	require.Nil(t, opted.Redactions)

	bs, err := store.Current(ctx, "acme/user:1")
	require.NoError(t, err)
	var statements []string
	for _, b := range bs {
		statements = append(statements, b.Statement)
	}
	require.ElementsMatch(t, []string{"User's card is [redacted card number]", "User's employee id is [redacted employee id]",
		"User lives in Porto"}, statements)

	// Applying again finds nothing more.
	again, err := store.ApplyPolicy(ctx, "acme/", base, false)
	require.NoError(t, err)
	require.Empty(t, again.Counts)
	require.Empty(t, again.Scopes)
}
