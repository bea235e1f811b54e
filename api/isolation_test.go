package api

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
)

// secretB is in every piece of tenant b's data: no answer to tenant a may contain it.
const secretB = "Zanzibar-7731"

// tenantB is what seedTenantB stored.
type tenantB struct {
	scope    string
	episode  int64
	belief   int64 // active
	old      int64 // superseded by belief
	conflict int64
}

// seedTenantB gives tenant b an episode, beliefs, a revision event and a conflict, all
// quoting secretB.
func seedTenantB(t *testing.T, h *harness) tenantB {
	t.Helper()
	ctx := context.Background()
	b := tenantB{scope: "tenant:b/user:1"}
	h.p.LLM.OnPrompt("I live at "+secretB, llmtest.Reply{Content: pipelinetest.Answer(
		pipelinetest.Fact{Statement: "User lives at " + secretB, Attribute: "location", ValidFrom: "2026-01-10"})})
	res := h.p.Enqueue(t, pipelinetest.T(b.scope, "b-"+secretB, "2026-01-10T10:00:00Z", "I live at "+secretB+"."))
	b.episode = res.EpisodeIDs[0]
	h.p.Drain(t)
	current, err := h.p.Store.Current(ctx, b.scope)
	require.NoError(t, err)
	require.Len(t, current, 1)
	b.old = current[0].ID

	moved := fact("User lives at "+secretB+" Heights", "location")
	moved.ValidFrom = new(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	moved.Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}
	applied, err := h.p.Store.Apply(ctx, &memory.Batch{Scope: b.scope, Origin: memory.RevisionOperator, Candidates: []int64{b.old},
		Facts: []memory.Fact{moved}})
	require.NoError(t, err)
	b.belief = applied.Facts[0].BeliefID

	// An operator's authoritative belief that extraction then tries to replace: a conflict.
	auth := fact("User's employer is "+secretB+" Corp", "employer")
	auth.Origin = memory.OriginAuthoritative
	applied, err = h.p.Store.Apply(ctx, &memory.Batch{Scope: b.scope, Origin: memory.RevisionOperator, Facts: []memory.Fact{auth}})
	require.NoError(t, err)
	rival := fact("User's employer is "+secretB+" Ltd", "employer")
	rival.Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonCorrection}
	applied, err = h.p.Store.Apply(ctx, &memory.Batch{Scope: b.scope, Origin: memory.RevisionExtraction,
		Candidates: []int64{applied.Facts[0].BeliefID}, Facts: []memory.Fact{rival}})
	require.NoError(t, err)
	require.Equal(t, memory.OutcomeConflict, applied.Facts[0].Kind)
	b.conflict = applied.Facts[0].ConflictID
	return b
}

// TestTenantIsolation: a key for tenant:a/ gets 403 on tenant b's scopes, and the same
// 404 as for an unknown id on tenant b's beliefs and episodes, from every endpoint and
// tool; no answer contains tenant b's data, and nothing of tenant b changes.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	b := seedTenantB(t, h)
	keyA := h.key("tenant:a/", allRights...)
	ctx := context.Background()
	before, err := h.p.Store.All(ctx, b.scope)
	require.NoError(t, err)
	const missing = int64(999_999_999)

	for _, scope := range []string{b.scope, "tenant:b/never-used", "tenant:b/", "tenant:", "tenant:ab/x"} {
		sq := url.QueryEscape(scope)
		forbidden := []struct {
			method, path string
			body         any
		}{
			{"POST", "/v1/transcripts", record(scope, "x", "2026-03-01T00:00:00Z", "I moved.")},
			{"POST", "/v1/transcripts", []any{record("tenant:a/user:1", "ok", "2026-03-01T00:00:00Z", "Fine."), record(scope, "x", "2026-03-01T00:00:00Z", "I moved.")}},
			{"GET", "/v1/beliefs?scope=" + sq, nil},
			{"GET", "/v1/beliefs?scope=" + sq + "&all=true", nil},
			{"GET", "/v1/beliefs?scope=" + sq + "&query=" + url.QueryEscape("where did they live before"), nil},
			{"GET", "/v1/beliefs?scope=" + sq + "&as_of=2026-01-20", nil},
			{"GET", "/v1/events?scope=" + sq, nil},
			{"GET", "/v1/conflicts?scope=" + sq, nil},
			{"POST", "/v1/beliefs", map[string]any{"scope": scope, "statement": "User lives on the moon", "attribute": "location"}},
			{"POST", "/v1/forget", map[string]any{"scope": scope, "ids": []int64{b.belief}}},
			{"POST", "/v1/forget", map[string]any{"scope": scope, "match": secretB}},
			{"POST", "/v1/forget", map[string]any{"scope": scope, "all": true, "purge": true}},
			{"POST", "/v1/forget", map[string]any{"scope": scope, "entity": "user"}},
			{"GET", "/v1/entities?scope=" + sq, nil},
			{"GET", "/v1/entities/user?scope=" + sq + "&history=true", nil},
			{"GET", "/v1/entities/nobody?scope=" + sq, nil},
			{"POST", "/v1/entities/merge", map[string]any{"scope": scope, "into": "user", "other": "nobody"}},
		}
		var first string
		for _, c := range forbidden {
			r := h.fail(c.method, c.path, keyA, c.body, 403, CodeForbidden)
			if first == "" {
				first = string(r.Body)
			}
			require.Equal(t, first, string(r.Body), "one fixed answer, whatever the scope and endpoint: %s %s", c.method, c.path)
		}
	}

	// Id-addressed: tenant b's ids answer exactly as ids that don't exist.
	for _, c := range []struct {
		method, format string
		body           any
	}{
		{"GET", "/v1/beliefs/%d/history", nil},
		{"POST", "/v1/beliefs/%d/correct", map[string]any{"statement": "User lives on the moon"}},
		{"POST", "/v1/beliefs/%d/correct", map[string]any{"retract": true}},
	} {
		for _, id := range []int64{b.belief, b.old} {
			r := h.fail(c.method, fmt.Sprintf(c.format, id), keyA, c.body, 404, CodeNotFound)
			want := h.fail(c.method, fmt.Sprintf(c.format, missing), keyA, c.body, 404, CodeNotFound)
			require.Equal(t, strings.ReplaceAll(string(want.Body), strconv.FormatInt(missing, 10), strconv.FormatInt(id, 10)), string(r.Body))
		}
	}
	r := h.fail("GET", fmt.Sprintf("/v1/episodes/%d", b.episode), keyA, nil, 404, CodeNotFound)
	want := h.fail("GET", fmt.Sprintf("/v1/episodes/%d", missing), keyA, nil, 404, CodeNotFound)
	require.Equal(t, strings.ReplaceAll(string(want.Body), strconv.FormatInt(missing, 10), strconv.FormatInt(b.episode, 10)), string(r.Body))

	// Tenant b's ids within tenant a's scope are not found there either.
	h.fail("POST", "/v1/forget", keyA, map[string]any{"scope": "tenant:a/user:1", "ids": []int64{b.belief}}, 404, CodeNotFound)
	h.fail("POST", "/v1/forget", keyA, map[string]any{"scope": "tenant:a/user:1", "ids": []int64{b.belief}, "purge": true}, 404, CodeNotFound)

	// The MCP tools of the same key: the same refusals.
	session := h.mcpSession(t, keyA)
	for _, call := range []struct {
		tool string
		args map[string]any
		code string
	}{
		{"recall", map[string]any{"scope": b.scope, "query": "where does the user live"}, CodeForbidden},
		{"recall", map[string]any{"scope": b.scope}, CodeForbidden},
		{"remember", map[string]any{"scope": b.scope, "messages": []map[string]string{{"role": "user", "content": "hi"}}}, CodeForbidden},
		{"history", map[string]any{"id": b.belief}, CodeNotFound},
		{"forget", map[string]any{"scope": b.scope, "match": secretB}, CodeForbidden},
		{"forget", map[string]any{"scope": b.scope, "entity": "user"}, CodeForbidden},
		{"entities", map[string]any{"scope": b.scope}, CodeForbidden},
		{"entity", map[string]any{"scope": b.scope, "name": "user", "history": true}, CodeForbidden},
		{"forget", map[string]any{"scope": "tenant:a/user:1", "ids": []int64{b.belief}}, CodeNotFound},
	} {
		text := h.toolError(t, session, call.tool, call.args)
		require.True(t, strings.HasPrefix(text, call.code+":"), "%s: %s", call.tool, text)
	}

	// Tenant b is untouched, and a key for it sees it all.
	after, err := h.p.Store.All(ctx, b.scope)
	require.NoError(t, err)
	require.Equal(t, before, after)
	var n int
	require.NoError(t, h.p.Schema.Pool.QueryRow(ctx, "SELECT count(*) FROM episode WHERE scope NOT LIKE 'tenant:b/%'").Scan(&n))
	require.Zero(t, n, "nothing was enqueued, not even tenant a's record of a mixed request")

	for _, body := range h.bodies {
		require.NotContains(t, strings.ToLower(body), strings.ToLower(secretB))
	}

	keyB := h.key("tenant:b/", RightRead)
	var bs Beliefs
	h.ok("GET", "/v1/beliefs?all=true&scope="+url.QueryEscape(b.scope), keyB, nil, 200, &bs)
	require.Contains(t, statements(bs.Beliefs), "User lives at "+secretB+" Heights")
	var cs Conflicts
	h.ok("GET", "/v1/conflicts?scope="+url.QueryEscape(b.scope), keyB, nil, 200, &cs)
	require.Equal(t, b.conflict, cs.Conflicts[0].ID)
	var ep Episode
	h.ok("GET", fmt.Sprintf("/v1/episodes/%d", b.episode), keyB, nil, 200, &ep)
	require.Equal(t, "applied", ep.State)
}
