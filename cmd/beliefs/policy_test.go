package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/redact"
)

// policy set, show, unset and apply: the policy in force in a scope and where it comes
// from, a bad pattern refused at set, and apply redacting what was stored before.
func TestPolicyCommands(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	ctx := context.Background()

	out := c.mustRun("policy", "set", "--scope-prefix", "acme/", "--instructions", "Keep product facts.\nNever health.",
		"--redact-pattern", `employee_id=EMP-\d{6}`)
	require.Contains(t, out, `policy of "acme/" set`)
	require.Contains(t, out, "patterns: employee_id")
	require.Contains(t, out, "    Never health.")
	c.mustRun("policy", "set", "--scope-prefix", "acme/lab/", "--redact", "card")

	out = c.mustRun("policy", "show", "--scope", "acme/lab/user:1")
	require.Contains(t, out, `policy in force in "acme/lab/user:1": the one of "acme/lab/"`)
	require.Contains(t, out, "redact: card")
	out = c.mustRun("policy", "show", "--scope", "acme/user:1")
	require.Contains(t, out, `the one of "acme/"`)
	require.Contains(t, out, "redact: all (REDACT's)")
	out = c.mustRun("policy", "show", "--scope", "globex/u")
	require.Contains(t, out, "no policy in force")
	out = c.mustRun("policy", "show")
	require.Contains(t, out, "acme/lab/")
	require.Contains(t, out, "Keep product facts. Never health.")
	var shown struct {
		Scope  string         `json:"scope"`
		Policy *memory.Policy `json:"policy"`
	}
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("policy", "show", "--scope", "acme/user:1", "--json")), &shown))
	require.Equal(t, "acme/", shown.Policy.ScopePrefix)

	for _, args := range [][]string{
		{"policy", "set", "--instructions", "x"},
		{"policy", "set", "--scope-prefix", "acme/", "--redact-pattern", "x=a*"},
		{"policy", "set", "--scope-prefix", "acme/", "--redact-pattern", "no-equals"},
		{"policy", "set", "--scope-prefix", "acme/", "--redact", "ssn"},
		{"policy", "set", "--scope-prefix", " acme"},
		{"policy", "apply"},
	} {
		_, stderr, code := c.run(args...)
		require.Equal(t, 2, code, "%v: %s", args, stderr)
	}
	_, stderr, _ := c.run("policy", "set", "--scope-prefix", "acme/", "--redact-pattern", "x=a*")
	require.Contains(t, stderr, "matches empty text")

	// What was stored before the policy: apply redacts it, a dry run first.
	_, err := c.schema.Pool.Exec(ctx, `INSERT INTO episode (scope, messages, content_hash, occurred_at)
		VALUES ('acme/user:1', '[{"role":"user","content":"I am EMP-204815, card 4111 1111 1111 1111."}]', 'h', now())`)
	require.NoError(t, err)
	_, err = c.store.Apply(ctx, &memory.Batch{Scope: "acme/user:1", Origin: memory.RevisionOperator, At: time.Now(),
		Facts: []memory.Fact{{Statement: "User's employee id is EMP-204815", Attribute: "employee_id", Confidence: 1, Origin: memory.OriginUserStated}}})
	require.NoError(t, err)
	out = c.mustRun("policy", "apply", "--scope-prefix", "acme/", "--dry-run")
	require.Contains(t, out, "would redact (dry run, nothing changed) 3 secrets in 1 scope under \"acme/\"")
	require.Contains(t, out, "belief 1, episode 1")
	require.Contains(t, out, "card 1, pattern:employee_id 2")
	require.NotEmpty(t, c.schema.Mentions(t, "EMP-204815"))
	var applied memory.PolicyApplied
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("policy", "apply", "--scope-prefix", "acme/", "--json")), &applied))
	require.Equal(t, map[string]int{"card": 1, "pattern:employee_id": 2}, applied.Counts)
	require.Empty(t, c.schema.Mentions(t, "EMP-204815"))
	require.Empty(t, c.schema.Mentions(t, "4111 1111 1111 1111"))

	out = c.mustRun("policy", "unset", "--scope-prefix", "acme/lab/")
	require.Contains(t, out, `policy of "acme/lab/" removed`)
	_, _, code := c.run("policy", "unset", "--scope-prefix", "acme/lab/")
	require.Equal(t, 3, code, "no such policy")
	p, err := c.store.PolicyFor(ctx, "acme/lab/user:1")
	require.NoError(t, err)
	require.Equal(t, "acme/", p.ScopePrefix)
	require.Equal(t, []redact.Pattern{{Name: "employee_id", Regex: `EMP-\d{6}`}}, p.Patterns)
}
