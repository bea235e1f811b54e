package api

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
)

func (h *harness) believe(scope string, statements ...string) []int64 {
	h.t.Helper()
	facts := make([]memory.Fact, len(statements))
	for i, s := range statements {
		facts[i] = fact(s, fmt.Sprintf("slot_%d", i))
	}
	res, err := h.p.Store.Apply(context.Background(), &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, Facts: facts})
	require.NoError(h.t, err)
	ids := make([]int64, len(res.Facts))
	for i, o := range res.Facts {
		ids[i] = o.BeliefID
	}
	return ids
}

func TestContextAndAsk(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ids := h.believe("tenant:a/u", "User lives in Miami", "User plays the cello")
	h.believe("tenant:b/u", "User lives in Oslo")
	key := h.key("tenant:a/", RightRead)
	other := h.key("tenant:b/", RightRead)
	h.p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
		if req.SchemaName != prompts.AnswerSchemaName {
			return llmtest.Reply{Content: `{"reasoning": "", "facts": []}`}
		}
		i := strings.Index(req.Prompt, "] User lives in Miami")
		return llmtest.Reply{Content: `{"reasoning": "r", "answer": "Miami", "citations": [` + req.Prompt[i-1:i] + `]}`}
	})

	var got ContextAnswer
	h.ok("GET", "/v1/context?scope="+url.QueryEscape("tenant:a/u")+"&query=miami", key, nil, 200, &got)
	require.True(t, strings.HasPrefix(got.Context, "Memory of tenant:a/u"))
	require.Contains(t, got.Context, "- User lives in Miami (since ")
	require.Equal(t, "User lives in Miami", got.Beliefs[0].Statement, "nearest the query first")
	require.NotContains(t, got.Context, "Oslo")
	h.fail("GET", "/v1/context?scope="+url.QueryEscape("tenant:a/u")+"&k=0", key, nil, 400, CodeInvalidRequest)
	h.fail("GET", "/v1/context?scope="+url.QueryEscape("tenant:a/u"), other, nil, 403, CodeForbidden)

	var ans AskAnswer
	h.ok("POST", "/v1/ask", key, map[string]any{"scope": "tenant:a/u", "question": "Where does the user live?"}, 200, &ans)
	require.Equal(t, "Miami", ans.Answer)
	require.Equal(t, []int64{ids[0]}, ans.Citations)
	require.Len(t, ans.Beliefs, 2)
	h.fail("POST", "/v1/ask", other, map[string]any{"scope": "tenant:a/u", "question": "Where does the user live?"}, 403, CodeForbidden)
	h.fail("POST", "/v1/ask", key, map[string]any{"scope": "tenant:a/u"}, 400, CodeInvalidRequest)

	calls := h.p.LLM.ChatCount()
	h.ok("POST", "/v1/ask", key, map[string]any{"scope": "tenant:a/empty", "question": "Where does the user live?"}, 200, &ans)
	require.Empty(t, ans.Citations)
	require.Equal(t, calls, h.p.LLM.ChatCount(), "an empty memory costs no call")

	// The model failing to answer validly is a bad gateway, not a server error.
	h.p.LLM.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Content: "not json"} })
	h.fail("POST", "/v1/ask", key, map[string]any{"scope": "tenant:a/u", "question": "Where does the user live?"}, 502, CodeModelFailed)

	session := h.mcpSession(t, key)
	var mcpCtx ContextAnswer
	callTool(t, session, "context", map[string]any{"scope": "tenant:a/u"}, &mcpCtx)
	require.Len(t, mcpCtx.Beliefs, 2)
	require.Contains(t, h.toolError(t, h.mcpSession(t, other), "context", map[string]any{"scope": "tenant:a/u"}), "may not access")
	require.Contains(t, h.toolError(t, session, "ask", map[string]any{"scope": "tenant:b/u", "question": "Where?"}), "may not access")
}
