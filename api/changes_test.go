package api

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
)

func TestChangeFeed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("tenant:a/", RightRead, RightOperate, RightPurge)
	other := h.key("tenant:b/", RightRead, RightOperate)
	const scope = "tenant:a/feed"

	var added, corrected Revision
	h.ok("POST", "/v1/beliefs", key, map[string]any{"scope": scope, "statement": "User works at Acme", "attribute": "employer"}, 200, &added)
	h.ok("POST", fmt.Sprintf("/v1/beliefs/%d/correct", *added.BeliefID), key,
		map[string]any{"statement": "User works at Globex", "reason": "temporal"}, 200, &corrected)

	var page Changes
	h.ok("GET", "/v1/changes?scope="+url.QueryEscape(scope), key, nil, 200, &page)
	require.Len(t, page.Changes, 1)
	c := page.Changes[0]
	require.Equal(t, "revision.applied", c.Type)
	require.Equal(t, int64(1), c.Position)
	data := c.Data.(map[string]any)
	require.Equal(t, "supersede", data["action"])
	require.Equal(t, "User works at Acme", data["old_statement"])

	// The cursor resumes after it; a long poll returns as soon as the next change commits.
	done := make(chan Changes, 1)
	go func() {
		var next Changes
		h.ok("GET", "/v1/changes?wait=30&scope="+url.QueryEscape(scope)+"&after="+page.Cursor, key, nil, 200, &next)
		done <- next
	}()
	var empty Changes
	h.ok("GET", "/v1/changes?scope_prefix=tenant:a/&after="+page.Cursor, key, nil, 200, &empty)
	require.Empty(t, empty.Changes)
	_, err := h.p.Store.Purge(t.Context(), memory.Selection{Scope: scope, All: true})
	require.NoError(t, err)
	next := <-done
	require.Len(t, next.Changes, 1)
	require.Equal(t, "scope.purged", next.Changes[0].Type)
	require.Equal(t, "scope", next.Changes[0].Data.(map[string]any)["what"])

	// The key's prefixes bound the feed.
	h.fail("GET", "/v1/changes?scope="+url.QueryEscape(scope), other, nil, 403, CodeForbidden)
	h.fail("GET", "/v1/changes?scope_prefix=tenant:", other, nil, 403, CodeForbidden)
	h.fail("GET", "/v1/changes?scope_prefix=tenant:b/&scope=tenant:b/x", other, nil, 400, CodeInvalidRequest)
	h.fail("GET", "/v1/changes?scope=tenant:b/x&after=nope", other, nil, 400, CodeInvalidRequest)
	var none Changes
	h.ok("GET", "/v1/changes?scope_prefix=tenant:b/", other, nil, 200, &none)
	require.Empty(t, none.Changes)
}
