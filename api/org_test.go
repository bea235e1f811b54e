package api

import (
	"context"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
)

// seedOrg stores an organisation default in acme and the user's own value on the same
// slot in acme/user:1.
func (h *harness) seedOrg() {
	h.t.Helper()
	ctx := context.Background()
	for scope, facts := range map[string][]memory.Fact{
		"acme":        {fact("Team chats on Slack", "chat_tool"), fact("Support hours are 9 to 5", "support_hours")},
		"acme/user:1": {fact("User chats on Signal", "chat_tool")},
	} {
		_, err := h.p.Store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionOperator, Facts: facts})
		require.NoError(h.t, err)
	}
}

func TestInheritedReads(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seedOrg()
	user := h.key("acme/user:1", RightRead)

	var got Beliefs
	h.ok("GET", "/v1/beliefs?inherit=true&scope="+url.QueryEscape("acme/user:1"), user, nil, 200, &got)
	scopes := map[string]string{}
	for _, b := range got.Beliefs {
		scopes[b.Statement] = b.Scope
	}
	require.Equal(t, map[string]string{"User chats on Signal": "acme/user:1", "Support hours are 9 to 5": "acme"}, scopes)

	h.ok("GET", "/v1/beliefs?scope="+url.QueryEscape("acme/user:1"), user, nil, 200, &got)
	require.Equal(t, []string{"User chats on Signal"}, statements(got.Beliefs), "inheritance is asked for")

	// The organisation's scope itself stays out of the user's key.
	h.fail("GET", "/v1/beliefs?scope=acme", user, nil, 403, CodeForbidden)
	h.fail("GET", "/v1/beliefs?inherit=true&scope=acme", user, nil, 403, CodeForbidden)

	var mcpGot Beliefs
	callTool(t, h.mcpSession(t, user), "recall", map[string]any{"scope": "acme/user:1", "inherit": true}, &mcpGot)
	require.ElementsMatch(t, []string{"User chats on Signal", "Support hours are 9 to 5"}, statements(mcpGot.Beliefs))
}

func TestSubtreePurge(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seedOrg()
	_, err := h.p.Store.Apply(context.Background(), &memory.Batch{Scope: "acme/user:2", Origin: memory.RevisionOperator,
		Facts: []memory.Fact{fact("User likes tea", "drink")}})
	require.NoError(t, err)
	narrow := h.key("acme/user:1", RightPurge)
	operator := h.key("acme/", RightRead, RightOperate)
	purger := h.key("acme/", RightPurge)
	body := func(prefix string) map[string]any {
		return map[string]any{"scope_prefix": prefix, "all": true, "purge": true}
	}

	h.fail("POST", "/v1/forget", narrow, body("acme/"), 403, CodeForbidden)
	h.fail("POST", "/v1/forget", operator, body("acme/"), 403, CodeForbidden)
	h.fail("POST", "/v1/forget", purger, body(""), 400, CodeInvalidRequest)
	h.fail("POST", "/v1/forget", purger, body("*"), 400, CodeInvalidRequest)
	h.fail("POST", "/v1/forget", purger, map[string]any{"scope_prefix": "acme/", "purge": true}, 400, CodeInvalidRequest)
	h.fail("POST", "/v1/forget", purger, map[string]any{"scope_prefix": "acme/", "scope": "acme/user:1", "all": true, "purge": true}, 400, CodeInvalidRequest)

	var got Forgotten
	h.ok("POST", "/v1/forget", purger, body("acme/"), 200, &got)
	require.Equal(t, "acme/", got.Subtree.Prefix)
	require.Len(t, got.Subtree.Scopes, 2)
	require.Equal(t, "acme/user:1", got.Subtree.Scopes[0].Scope)
	require.Equal(t, memory.PurgedScope, got.Subtree.Scopes[0].What)
	require.EqualValues(t, 2, got.Subtree.Counts["belief"])

	org, err := h.p.Store.Current(context.Background(), "acme")
	require.NoError(t, err)
	require.Len(t, org, 2, "the organisation's own scope is not under acme/")

	h.ok("POST", "/v1/forget", purger, body("acme/"), 200, &got)
	require.Empty(t, got.Subtree.Scopes, "nothing left to erase is not an error")
}
