package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
)

func TestContextAndAskCommands(t *testing.T) {
	t.Parallel()
	c := newAPICLI(t)
	store := memory.NewStore(c.schema.Pool, nil)
	res, err := store.Apply(context.Background(), &memory.Batch{Scope: "u", Origin: memory.RevisionExtraction, Facts: []memory.Fact{
		{Statement: "User lives in Miami", Attribute: "location", Confidence: 0.9, Origin: memory.OriginUserStated},
		{Statement: "User plays the cello", Attribute: "instrument", Confidence: 0.9, Origin: memory.OriginUserStated}}})
	require.NoError(t, err)
	miami := res.Facts[0].BeliefID
	c.llm.Handle(func(req llmtest.Request) llmtest.Reply {
		i := strings.Index(req.Prompt, "] User lives in Miami")
		return llmtest.Reply{Content: `{"reasoning": "r", "answer": "In Miami.", "citations": [` + req.Prompt[i-1:i] + `]}`}
	})

	out := c.mustRunOK("context", "--scope", "u", "--query", "miami")
	require.True(t, strings.HasPrefix(out, "Memory of u (today is "))
	require.Contains(t, out, "- User lives in Miami (since ")
	var ctxJSON struct {
		Context string          `json:"context"`
		Beliefs []memory.Belief `json:"beliefs"`
	}
	require.NoError(t, json.Unmarshal([]byte(c.mustRunOK("context", "--scope", "u", "--k", "1", "--json")), &ctxJSON))
	require.Len(t, ctxJSON.Beliefs, 1)
	require.Equal(t, 1, strings.Count(ctxJSON.Context, "\n- "))

	out = c.mustRunOK("ask", "--scope", "u", "--question", "Where does the user live?")
	require.Equal(t, "In Miami.\n  ["+itoa(miami)+"] User lives in Miami\n", out)
	var ans struct {
		Answer    string          `json:"answer"`
		Citations []int64         `json:"citations"`
		Beliefs   []memory.Belief `json:"beliefs"`
	}
	require.NoError(t, json.Unmarshal([]byte(c.mustRunOK("ask", "--scope", "u", "--question", "Where?", "--json")), &ans))
	require.Equal(t, []int64{miami}, ans.Citations)
	require.Len(t, ans.Beliefs, 2)

	for _, args := range [][]string{{"ask", "--scope", "u"}, {"context", "--scope", "u", "--k", "0"}, {"context"}} {
		_, stderr, code := c.run(args...)
		require.Equal(t, config.ExitUsage, code, "%v: %s", args, stderr)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
