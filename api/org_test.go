package api

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
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

// A key that holds only a user's sessions reads through inheritance the current
// defaults of the user and the organisation: statement, slot, dates and scope, never
// their history, quotes or transcripts, in any view and on every read; a key for the
// ancestors reads them in full, as before.
func TestInheritedReadsShowDefaultsOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const user, session = "org:x/user:1", "org:x/user:1/session:7"
	h.p.Enqueue(t, pipelinetest.T(user, "conv-0115", "2026-01-15T10:00:00Z", "I live in New York City."))
	h.p.Drain(t)
	between := time.Now().UTC().Format(time.RFC3339Nano)
	h.p.Enqueue(t, pipelinetest.T(user, "conv-0320", "2026-03-20T14:00:00Z", "I moved to Miami last month."))
	h.p.Drain(t)
	_, err := h.p.Store.Apply(context.Background(), &memory.Batch{Scope: "org:x", Origin: memory.RevisionOperator,
		Facts: []memory.Fact{fact("Support hours are 9 to 5", "support_hours")}})
	require.NoError(t, err)
	h.p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: `{"reasoning": "r", "answer": "Miami", "citations": [0]}`}
	})

	sessions := h.key(user+"/", RightRead)
	defaultsOnly := func(what string, bs []Belief) {
		t.Helper()
		for _, b := range bs {
			require.NotEqual(t, nyc, b.Statement, "%s: no history", what)
			require.Equal(t, "active", b.Status, what)
			require.Nil(t, b.Quote, "%s: %s", what, b.Statement)
			require.Nil(t, b.EpisodeID, "%s: %s", what, b.Statement)
			require.Nil(t, b.Episodes, "%s: %s", what, b.Statement)
			require.Nil(t, b.Supersedes, "%s: %s", what, b.Statement)
			require.Nil(t, b.SupersededBy, "%s: %s", what, b.Statement)
		}
	}
	read := "/v1/beliefs?inherit=true&scope=" + url.QueryEscape(session)
	past := url.QueryEscape("Where did the user live before?")
	for _, q := range []string{"", "&all=true", "&as_of=2026-02-01", "&as_of=2026-03-01", "&known_at=" + url.QueryEscape(between),
		"&query=" + past, "&query=" + past + "&all=true", "&query=" + past + "&as_of=2026-02-01"} {
		var got Beliefs
		h.ok("GET", read+q, sessions, nil, 200, &got)
		defaultsOnly(q, got.Beliefs)
		if q == "" || q == "&all=true" {
			require.ElementsMatch(t, []string{miami, "Support hours are 9 to 5"}, statements(got.Beliefs), q)
		}
	}
	var ctxGot ContextAnswer
	for _, q := range []string{"&query=" + past, "&query=" + past + "&as_of=2026-02-01", ""} {
		h.ok("GET", "/v1/context?inherit=true&scope="+url.QueryEscape(session)+q, sessions, nil, 200, &ctxGot)
		defaultsOnly("context"+q, ctxGot.Beliefs)
		require.NotContains(t, ctxGot.Context, "New York", q)
	}
	require.Contains(t, ctxGot.Context, miami)

	var ans AskAnswer
	h.ok("POST", "/v1/ask", sessions, map[string]any{"scope": session, "question": "Where did the user live before?", "inherit": true}, 200, &ans)
	defaultsOnly("ask", ans.Beliefs)
	chats := h.p.LLM.Chats()
	require.NotContains(t, chats[len(chats)-1].Prompt, "New York", "ask's prompt")

	mcp := h.mcpSession(t, sessions)
	var mcpGot Beliefs
	callTool(t, mcp, "recall", map[string]any{"scope": session, "inherit": true, "history": true}, &mcpGot)
	defaultsOnly("mcp recall", mcpGot.Beliefs)
	callTool(t, mcp, "context", map[string]any{"scope": session, "inherit": true, "query": "Where did the user live before?"}, &ctxGot)
	defaultsOnly("mcp context", ctxGot.Beliefs)
	require.NotContains(t, ctxGot.Context, "New York")

	// A key for the ancestors sees everything, as before.
	org := h.key("org:x", RightRead)
	var got Beliefs
	h.ok("GET", read+"&all=true", org, nil, 200, &got)
	require.Contains(t, statements(got.Beliefs), nyc)
	for _, b := range got.Beliefs {
		if b.Statement == miami {
			require.NotNil(t, b.Quote)
			require.NotNil(t, b.EpisodeID)
			require.NotEmpty(t, b.Supersedes)
		}
	}
	h.ok("GET", read+"&known_at="+url.QueryEscape(between), org, nil, 200, &got)
	require.Contains(t, statements(got.Beliefs), nyc, "what memory held then")
}
