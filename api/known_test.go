package api

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScopeKnown: every read of one scope says whether memory has ever held an episode
// or a belief of it; an unknown scope is answered as empty (a new user is one too), with
// scope_known false and the nearest scope the key may read; never another tenant's.
// MCP's tools answer the same.
func TestScopeKnown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.believe("tenant:a/user:ana", "User lives in Miami")
	h.believe("tenant:b/user:anna", "User lives in Oslo")
	h.believe("tenant:a", "Company plan is Pro")
	key := h.key("tenant:a/", RightRead)
	q := func(scope string, more ...string) string {
		return "?" + strings.Join(append([]string{"scope=" + url.QueryEscape(scope)}, more...), "&")
	}

	type scopeAnswer struct {
		ScopeKnown *bool   `json:"scope_known"`
		DidYouMean *string `json:"did_you_mean"`
		Beliefs    []Belief
		Events     []Event
		Conflicts  []Conflict
	}
	for _, path := range []string{"/v1/beliefs", "/v1/context", "/v1/events", "/v1/conflicts"} {
		var got scopeAnswer
		h.ok("GET", path+q("tenant:a/user:anna"), key, nil, 200, &got)
		require.NotNil(t, got.ScopeKnown, path)
		require.False(t, *got.ScopeKnown, path)
		require.Equal(t, "tenant:a/user:ana", *got.DidYouMean, path)
		require.Empty(t, got.Beliefs, path)

		got = scopeAnswer{}
		h.ok("GET", path+q("tenant:a/user:ana"), key, nil, 200, &got)
		require.True(t, *got.ScopeKnown, "%s: a known scope", path)
		require.Nil(t, got.DidYouMean, path)
	}
	var got scopeAnswer
	h.ok("POST", "/v1/ask", key, map[string]any{"scope": "tenant:a/user:anna", "question": "Where?"}, 200, &got)
	require.False(t, *got.ScopeKnown)
	require.Equal(t, "tenant:a/user:ana", *got.DidYouMean)
	require.Empty(t, h.p.LLM.Chats(), "no model was asked")

	// Nothing near among the key's scopes: tenant:b/user:anna is another tenant's.
	got = scopeAnswer{}
	h.ok("GET", "/v1/beliefs"+q("tenant:a/usr:bob"), key, nil, 200, &got)
	require.False(t, *got.ScopeKnown)
	require.Nil(t, got.DidYouMean)
	got = scopeAnswer{}
	h.ok("GET", "/v1/beliefs"+q("tenant:b/user:ana"), h.key("tenant:b/", RightRead), nil, 200, &got)
	require.Equal(t, "tenant:b/user:anna", *got.DidYouMean, "the other tenant's own")

	// A known scope with nothing in the view, and an inherited read of the defaults.
	got = scopeAnswer{}
	h.ok("GET", "/v1/beliefs"+q("tenant:a/user:ana", "as_of=2000-01-01"), key, nil, 200, &got)
	require.Empty(t, got.Beliefs)
	require.True(t, *got.ScopeKnown)
	got = scopeAnswer{}
	h.ok("GET", "/v1/beliefs"+q("tenant:a/user:new", "inherit=true", "as_of=2000-01-01"), key, nil, 200, &got)
	require.Empty(t, got.Beliefs)
	require.True(t, *got.ScopeKnown, "its organisation is known")

	// MCP: the same answer from the same operation.
	s := h.mcpSession(t, key)
	for _, tool := range []string{"recall", "context"} {
		var out scopeAnswer
		callTool(t, s, tool, map[string]any{"scope": "tenant:a/user:anna", "query": "home"}, &out)
		require.False(t, *out.ScopeKnown, tool)
		require.Equal(t, "tenant:a/user:ana", *out.DidYouMean, tool)
	}
}
