package api

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/transcript"
)

// An organisation's key sets, reads and unsets the policies of its prefixes, and no
// other's; a policy that cannot be used is refused with its reason.
func TestPolicies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	acme := h.key("acme/", RightOperate)
	reader := h.key("acme/", RightRead, RightWrite)
	owner := h.key("*", allRights...)

	var pol Policy
	h.ok("PUT", "/v1/policies", acme, map[string]any{"scope_prefix": "acme/", "instructions": "Keep product and account facts. Never health.",
		"redact_patterns": []map[string]string{{"name": "employee_id", "regex": `EMP-\d{6}`}}}, 200, &pol)
	require.Equal(t, "acme/", pol.ScopePrefix)
	require.Nil(t, pol.Redact, "the deployment's kinds")
	require.Equal(t, []PolicyPattern{{Name: "employee_id", Regex: `EMP-\d{6}`}}, pol.RedactPatterns)
	// A tenant may not redact less than the deployment; a key for every scope may.
	r := h.fail("PUT", "/v1/policies", acme, map[string]any{"scope_prefix": "acme/lab/", "redact": []string{"card", "iban"}}, 403, CodeForbidden)
	require.Contains(t, string(r.Body), "missing: api_key, token, private_key, password")
	h.ok("PUT", "/v1/policies", acme, map[string]any{"scope_prefix": "acme/lab/", "redact": []string{"all"}}, 200, &pol)
	h.ok("PUT", "/v1/policies", owner, map[string]any{"scope_prefix": "acme/lab/", "redact": []string{"card", "iban"}}, 200, &pol)
	require.Equal(t, "card,iban", *pol.Redact)
	h.ok("PUT", "/v1/policies", owner, map[string]any{"scope_prefix": "globex/", "instructions": "Travel facts only."}, 200, nil)

	h.fail("PUT", "/v1/policies", acme, map[string]any{"scope_prefix": "globex/"}, 403, CodeForbidden)
	h.fail("PUT", "/v1/policies", acme, map[string]any{"scope_prefix": ""}, 403, CodeForbidden)
	h.fail("PUT", "/v1/policies", reader, map[string]any{"scope_prefix": "acme/"}, 403, CodeForbidden)
	r = h.fail("PUT", "/v1/policies", acme, map[string]any{"scope_prefix": "acme/", "redact_patterns": []map[string]string{{"name": "x", "regex": "a*"}}},
		400, CodeInvalidRequest)
	require.Contains(t, string(r.Body), "matches empty text")
	r = h.fail("PUT", "/v1/policies", acme, map[string]any{"scope_prefix": "acme/", "redact": []string{"ssn"}}, 400, CodeInvalidRequest)
	require.Contains(t, string(r.Body), `redact: \"ssn\"`)
	h.fail("PUT", "/v1/policies", acme, map[string]any{"scope_prefix": "acme/", "instructions": strings.Repeat("x", 2001)}, 400, CodeInvalidRequest)

	var got Policies
	h.ok("GET", "/v1/policies", acme, nil, 200, &got)
	require.Len(t, got.Policies, 2, "the key's own prefixes, not globex's")
	require.Equal(t, "acme/", got.Policies[0].ScopePrefix)
	h.ok("GET", "/v1/policies?scope="+url.QueryEscape("acme/lab/user:7"), acme, nil, 200, &got)
	require.Equal(t, "acme/lab/user:7", *got.Scope)
	require.Len(t, got.Policies, 1)
	require.Equal(t, "acme/lab/", got.Policies[0].ScopePrefix, "the nearest prefix is in force")
	h.fail("GET", "/v1/policies?scope="+url.QueryEscape("globex/u"), acme, nil, 403, CodeForbidden)
	h.fail("GET", "/v1/policies", reader, nil, 403, CodeForbidden)

	h.ok("DELETE", "/v1/policies?scope_prefix="+url.QueryEscape("acme/lab/"), acme, nil, 200, &pol)
	require.Equal(t, "acme/lab/", pol.ScopePrefix)
	h.fail("DELETE", "/v1/policies?scope_prefix="+url.QueryEscape("acme/lab/"), acme, nil, 404, CodeNotFound)
	h.fail("DELETE", "/v1/policies?scope_prefix="+url.QueryEscape("globex/"), acme, nil, 403, CodeForbidden)
	h.ok("GET", "/v1/policies?scope="+url.QueryEscape("acme/lab/user:7"), acme, nil, 200, &got)
	require.Equal(t, "acme/", got.Policies[0].ScopePrefix, "the farther policy is in force again")
}

// A transcript posted to the API or remembered through MCP is redacted before it is
// stored, with the policy of its scope: the answer and the episode count what went.
func TestTranscriptsAreRedactedAtTheDoor(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	owner := h.key("*", allRights...)
	h.ok("PUT", "/v1/policies", owner, map[string]any{"scope_prefix": "acme/", "redact_patterns": []map[string]string{{"name": "employee_id", "regex": `EMP-\d{6}`}}}, 200, nil)

	var res Enqueued
	h.ok("POST", "/v1/transcripts", owner, record("acme/user:1", "c1", "2026-03-01T10:00:00Z",
		"My card is 4111 1111 1111 1111 and I am EMP-204815; my password is hunter2."), 202, &res)
	require.Equal(t, map[string]int{"card": 1, "password": 1, "pattern:employee_id": 1}, res.Redacted)
	var ep Episode
	h.ok("GET", "/v1/episodes/"+strconv.FormatInt(res.EpisodeIDs[0], 10), owner, nil, 200, &ep)
	require.Equal(t, map[string]int{"card": 1, "password": 1, "pattern:employee_id": 1}, ep.Redactions)

	// Outside the policy's prefix, the pattern is not the scope's.
	var mcpRes Enqueued
	callTool(t, h.mcpSession(t, owner), "remember", map[string]any{"scope": "globex/user:2",
		"messages": []transcript.Message{{Role: "user", Content: "I am EMP-204815, card 5500-0000-0000-0004."}}}, &mcpRes)
	require.Equal(t, map[string]int{"card": 1}, mcpRes.Redacted)

	stored, err := h.p.Store.Episode(context.Background(), mcpRes.EpisodeIDs[0])
	require.NoError(t, err)
	require.Equal(t, "I am EMP-204815, card [redacted card number].", stored.Messages[0].Content)
	for _, secret := range []string{"4111 1111 1111 1111", "hunter2", "5500-0000-0000-0004"} {
		require.Empty(t, h.p.Schema.Mentions(t, secret), secret)
	}
}
