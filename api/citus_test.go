//go:build citus

package api

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
)

// TestCitusAPI: the API end to end on a Citus cluster: transcripts in, extraction
// through River, the reads of a scope, a lookup by id (another tenant's id as an
// unknown one), a revert, the audit and the purge of the scope.
func TestCitusAPI(t *testing.T) {
	dbtest.RequireCitus(t)
	h := newHarness(t)
	key := h.key("tenant:a/", allRights...)
	other := h.key("tenant:b/", allRights...)
	const scope = "tenant:a/user:1"
	q := url.QueryEscape(scope)

	h.ok("POST", "/v1/transcripts", key, record(scope, "nyc", "2026-01-15T10:00:00Z", "I live in New York City."), 202, nil)
	h.p.Drain(t)
	h.ok("POST", "/v1/transcripts", key, record(scope, "miami", "2026-03-20T14:00:00Z", "I moved to Miami last month."), 202, nil)
	h.p.Drain(t)

	var current, all Beliefs
	h.ok("GET", "/v1/beliefs?scope="+q, key, nil, 200, &current)
	require.Equal(t, []string{miami}, statements(current.Beliefs))
	h.ok("GET", "/v1/beliefs?all=true&scope="+q, key, nil, 200, &all)
	require.Equal(t, []string{nyc, miami}, statements(all.Beliefs))
	var ranked Beliefs
	h.ok("GET", "/v1/beliefs?scope="+q+"&query="+url.QueryEscape("Where does the user live?"), key, nil, 200, &ranked)
	require.Equal(t, []string{miami}, statements(ranked.Beliefs))
	ctxRes := h.do("GET", "/v1/context?scope="+q+"&query="+url.QueryEscape("Where does the user live?"), key, nil)
	require.Equal(t, 200, ctxRes.Status, ctxRes.String())
	require.Contains(t, string(ctxRes.Body), miami)

	// By id: found on its scope's shard; another tenant's id answers as an unknown one.
	var history History
	h.ok("GET", fmt.Sprintf("/v1/beliefs/%d/history", all.Beliefs[0].ID), key, nil, 200, &history)
	require.Equal(t, []string{nyc, miami}, statements(history.Beliefs))
	theirs := h.fail("GET", fmt.Sprintf("/v1/beliefs/%d/history", all.Beliefs[0].ID), other, nil, 404, CodeNotFound)
	unknown := h.fail("GET", "/v1/beliefs/999999/history", other, nil, 404, CodeNotFound)
	require.Equal(t, unknown.code(t), theirs.code(t))

	// A revert by event id, and the audit that counts it.
	var events Events
	h.ok("GET", "/v1/events?scope="+q, key, nil, 200, &events)
	require.Len(t, events.Events, 1)
	var reverted Reverted
	h.ok("POST", fmt.Sprintf("/v1/events/%d/revert", events.Events[0].ID), key, map[string]any{"note": "never moved"}, 200, &reverted)
	h.ok("GET", "/v1/beliefs?scope="+q, key, nil, 200, &current)
	require.Equal(t, []string{nyc}, statements(current.Beliefs))
	var audit Audit
	h.ok("GET", "/v1/audit?scope="+q, key, nil, 200, &audit)
	require.Equal(t, 1, audit.Reverts)

	// The purge of the scope.
	h.ok("POST", "/v1/forget", key, map[string]any{"scope": scope, "all": true, "purge": true}, 200, nil)
	h.ok("GET", "/v1/beliefs?all=true&scope="+q, key, nil, 200, &all)
	require.Empty(t, all.Beliefs)
}
