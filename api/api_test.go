package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
)

func TestEndToEndNYCThenMiamiOverHTTP(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("tenant:a/", RightWrite, RightRead)
	const scope = "tenant:a/user:1"
	q := "/v1/beliefs?scope=" + url.QueryEscape(scope)

	var first Enqueued
	h.ok("POST", "/v1/transcripts", key, record(scope, "nyc", "2026-01-15T10:00:00Z", "I live in New York City."), 202, &first)
	require.Equal(t, 1, first.Enqueued)
	require.Len(t, first.EpisodeIDs, 1)
	h.p.Drain(t)
	var ep Episode
	h.ok("GET", fmt.Sprintf("/v1/episodes/%d", first.EpisodeIDs[0]), key, nil, 200, &ep)
	require.Equal(t, "applied", ep.State)
	require.Equal(t, scope, ep.Scope)
	require.Equal(t, "nyc", *ep.ExternalID)
	require.Nil(t, ep.LastError)
	require.NotNil(t, ep.ProcessedAt)

	// An array, with the first transcript again: enqueued once, by content.
	var second Enqueued
	h.ok("POST", "/v1/transcripts", key, []any{
		record(scope, "miami", "2026-03-20T14:00:00Z", "I moved to Miami last month."),
		record(scope, "nyc-again", "2026-01-15T10:00:00Z", "I live in New York City."),
	}, 202, &second)
	require.Equal(t, 1, second.Enqueued)
	require.Equal(t, 1, second.Duplicates)
	require.Equal(t, first.EpisodeIDs[0], second.EpisodeIDs[1])
	h.p.Drain(t)

	var current Beliefs
	h.ok("GET", q, key, nil, 200, &current)
	require.Equal(t, "current", current.Mode)
	require.Equal(t, []string{miami}, statements(current.Beliefs))

	var all Beliefs
	h.ok("GET", q+"&all=true", key, nil, 200, &all)
	require.Equal(t, "history", all.Mode)
	require.Equal(t, []string{nyc, miami}, statements(all.Beliefs))
	require.Equal(t, "superseded", all.Beliefs[0].Status)
	require.Equal(t, all.Beliefs[1].ValidFrom, *all.Beliefs[0].ValidUntil)
	require.Equal(t, []int64{all.Beliefs[1].ID}, all.Beliefs[0].SupersededBy)

	// A question embeds the scope's unembedded beliefs with it, so they are ranked too.
	var now Beliefs
	h.ok("GET", q+"&query="+url.QueryEscape("Where does the user live?"), key, nil, 200, &now)
	require.Equal(t, "current", now.Mode)
	require.True(t, now.Ranked)
	require.Equal(t, []string{miami}, statements(now.Beliefs))
	require.NotNil(t, now.Beliefs[0].Distance)
	pending, err := h.p.Store.Unembedded(context.Background(), scope, h.p.Provider.EmbedModel(), 100)
	require.NoError(t, err)
	require.Empty(t, pending, "the query's embedding call embedded the scope's pending beliefs and events")

	// A question about the past switches to history by itself.
	var before Beliefs
	h.ok("GET", q+"&k=5&query="+url.QueryEscape("Where did the user live before?"), key, nil, 200, &before)
	require.Equal(t, "history", before.Mode)
	require.True(t, before.AutoHistory)
	require.ElementsMatch(t, []string{nyc, miami}, statements(before.Beliefs))

	var asOf Beliefs
	h.ok("GET", q+"&as_of=2026-02-01", key, nil, 200, &asOf)
	require.Equal(t, "as_of", asOf.Mode)
	require.Equal(t, []string{nyc}, statements(asOf.Beliefs))
	var knownAt Beliefs
	h.ok("GET", q+"&known_at=2000-01-01T00:00:00Z", key, nil, 200, &knownAt)
	require.Equal(t, "known_at", knownAt.Mode)
	require.Empty(t, knownAt.Beliefs)

	var hist History
	h.ok("GET", fmt.Sprintf("/v1/beliefs/%d/history", current.Beliefs[0].ID), key, nil, 200, &hist)
	require.Equal(t, []string{nyc, miami}, statements(hist.Beliefs))

	var evs Events
	h.ok("GET", "/v1/events?scope="+url.QueryEscape(scope), key, nil, 200, &evs)
	require.Len(t, evs.Events, 1)
	require.Equal(t, "supersede", evs.Events[0].Action)
	require.Equal(t, "temporal", evs.Events[0].Reason)
	require.Equal(t, nyc, evs.Events[0].OldStatement)

	var cs Conflicts
	h.ok("GET", "/v1/conflicts?scope="+url.QueryEscape(scope), key, nil, 200, &cs)
	require.NotNil(t, cs.Conflicts)
	require.Empty(t, cs.Conflicts)
}

func TestOperatorWrites(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("tenant:a/", RightRead, RightOperate, RightPurge)
	const scope = "tenant:a/ops"

	var added Revision
	h.ok("POST", "/v1/beliefs", key, map[string]any{"scope": scope, "statement": "User works at Acme", "attribute": "employer",
		"authoritative": true}, 200, &added)
	require.Equal(t, "accepted", added.Outcome)
	require.NotNil(t, added.BeliefID)
	b, err := h.p.Store.Get(context.Background(), *added.BeliefID)
	require.NoError(t, err)
	require.Equal(t, memory.OriginAuthoritative, b.Origin)
	require.Equal(t, "user", b.Subject)

	var corrected Revision
	h.ok("POST", fmt.Sprintf("/v1/beliefs/%d/correct", *added.BeliefID), key,
		map[string]any{"statement": "User works at Globex", "reason": "temporal"}, 200, &corrected)
	require.Equal(t, "superseded", corrected.Outcome)
	require.Equal(t, *added.BeliefID, *corrected.TargetID)
	var events Events
	h.ok("GET", "/v1/events?scope="+url.QueryEscape(scope), key, nil, 200, &events)
	require.Equal(t, "operator", events.Events[0].Origin)

	// Correcting the superseded belief again: the engine refuses it.
	h.fail("POST", fmt.Sprintf("/v1/beliefs/%d/correct", *added.BeliefID), key, map[string]any{"retract": true}, 409, CodeRefused)

	var forgot Forgotten
	h.ok("POST", "/v1/forget", key, map[string]any{"scope": scope, "match": "globex"}, 200, &forgot)
	require.Equal(t, []int64{*corrected.BeliefID}, *forgot.Forgotten)
	require.Nil(t, forgot.Purged)
	var current Beliefs
	h.ok("GET", "/v1/beliefs?scope="+url.QueryEscape(scope), key, nil, 200, &current)
	require.Empty(t, current.Beliefs)
	// A forgotten belief is not found by id either.
	h.fail("GET", fmt.Sprintf("/v1/beliefs/%d/history", *corrected.BeliefID), key, nil, 404, CodeNotFound)

	var purged Forgotten
	h.ok("POST", "/v1/forget", key, map[string]any{"scope": scope, "all": true, "purge": true}, 200, &purged)
	require.Equal(t, memory.PurgedScope, purged.Purged.What)
	require.EqualValues(t, 2, purged.Purged.Counts["belief"])
	all, err := h.p.Store.All(context.Background(), scope)
	require.NoError(t, err)
	require.Empty(t, all)
	h.fail("POST", "/v1/forget", key, map[string]any{"scope": scope, "all": true}, 404, CodeNotFound)
}

// TestBadInput: every endpoint's bad input gets the documented error code.
func TestBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("tenant:a/", allRights...)
	readOnly := h.key("tenant:a/", RightRead)
	const scope = "tenant:a/bad"
	res, err := h.p.Store.Apply(context.Background(), &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction,
		Facts: []memory.Fact{fact("User likes tea", "drink")}})
	require.NoError(t, err)
	id := res.Facts[0].BeliefID
	sq := url.QueryEscape(scope)
	good := record(scope, "x", "2026-01-15T10:00:00Z", "Hello.")

	cases := []struct {
		method, path string
		token        string
		body         any
		status       int
		code         string
		detail       string // in the message or details, when set
	}{
		// POST /v1/transcripts: enqueue's checks and messages.
		{"POST", "/v1/transcripts", key, "", 400, CodeInvalidRequest, ""},
		{"POST", "/v1/transcripts", key, "{not json", 400, CodeInvalidRequest, "invalid JSON"},
		{"POST", "/v1/transcripts", key, "[]", 400, CodeInvalidRequest, "no records"},
		{"POST", "/v1/transcripts", key, map[string]any{"scope": scope}, 400, CodeInvalidRequest, "messages"},
		{"POST", "/v1/transcripts", key, map[string]any{"scope": scope, "messages": []map[string]string{{"role": "robot", "content": "hi"}}},
			400, CodeInvalidRequest, "messages[0].role"},
		{"POST", "/v1/transcripts", key, []any{good, map[string]any{"scope": scope, "mesages": []any{}}}, 400, CodeInvalidRequest, "record 2"},
		{"POST", "/v1/transcripts", key, map[string]any{"scope": scope, "occurred_at": "yesterday", "messages": []map[string]string{{"role": "user", "content": "hi"}}},
			400, CodeInvalidRequest, "occurred_at"},
		{"POST", "/v1/transcripts", readOnly, good, 403, CodeForbidden, "write"},
		// GET /v1/beliefs
		{"GET", "/v1/beliefs", key, nil, 400, CodeInvalidRequest, "scope"},
		{"GET", "/v1/beliefs?scope=", key, nil, 400, CodeInvalidRequest, "scope"},
		{"GET", "/v1/beliefs?scope=" + sq + "&k=0", key, nil, 400, CodeInvalidRequest, "k"},
		{"GET", "/v1/beliefs?scope=" + sq + "&k=1001", key, nil, 400, CodeInvalidRequest, "k"},
		{"GET", "/v1/beliefs?scope=" + sq + "&k=ten", key, nil, 400, CodeInvalidRequest, "k"},
		{"GET", "/v1/beliefs?scope=" + sq + "&all=maybe", key, nil, 400, CodeInvalidRequest, "all"},
		{"GET", "/v1/beliefs?scope=" + sq + "&as_of=yesterday", key, nil, 400, CodeInvalidRequest, "as_of"},
		{"GET", "/v1/beliefs?scope=" + sq + "&as_of=2026-01-01&known_at=2026-01-01", key, nil, 400, CodeInvalidRequest, "exclude"},
		{"GET", "/v1/beliefs?scope=" + sq + "&all=true&as_of=2026-01-01", key, nil, 400, CodeInvalidRequest, "exclude"},
		{"GET", "/v1/beliefs?scope=" + sq + "&scoep=x", key, nil, 400, CodeInvalidRequest, "scoep"},
		{"GET", "/v1/beliefs?scope=%20" + sq, key, nil, 400, CodeInvalidRequest, "white space"},
		// GET /v1/beliefs/{id}/history
		{"GET", "/v1/beliefs/abc/history", key, nil, 400, CodeInvalidRequest, "id"},
		{"GET", "/v1/beliefs/0/history", key, nil, 400, CodeInvalidRequest, "id"},
		{"GET", "/v1/beliefs/999999999/history", key, nil, 404, CodeNotFound, "not found"},
		// POST /v1/beliefs
		{"POST", "/v1/beliefs", key, map[string]any{"scope": scope, "attribute": "drink"}, 400, CodeInvalidRequest, "statement"},
		{"POST", "/v1/beliefs", key, map[string]any{"scope": scope, "statement": "x", "attribute": "a", "kind": "mood"}, 400, CodeInvalidRequest, "kind"},
		{"POST", "/v1/beliefs", key, map[string]any{"scope": scope, "statement": "x", "attribute": "a", "colour": "red"}, 400, CodeInvalidRequest, "colour"},
		{"POST", "/v1/beliefs", key, `{"scope": `, 400, CodeInvalidRequest, ""},
		{"POST", "/v1/beliefs", key, map[string]any{"scope": scope, "statement": "x", "attribute": "a", "valid_from": "1066-10-14T00:00:00Z"}, 400, CodeInvalidRequest, "valid_from"},
		{"POST", "/v1/beliefs", readOnly, map[string]any{"scope": scope, "statement": "x", "attribute": "a"}, 403, CodeForbidden, "operate"},
		// POST /v1/beliefs/{id}/correct
		{"POST", fmt.Sprintf("/v1/beliefs/%d/correct", id), key, map[string]any{}, 400, CodeInvalidRequest, "exactly one"},
		{"POST", fmt.Sprintf("/v1/beliefs/%d/correct", id), key, map[string]any{"statement": "x", "retract": true}, 400, CodeInvalidRequest, "exactly one"},
		{"POST", fmt.Sprintf("/v1/beliefs/%d/correct", id), key, map[string]any{"retract": true, "reason": "whim"}, 400, CodeInvalidRequest, "reason"},
		{"POST", "/v1/beliefs/999999999/correct", key, map[string]any{"retract": true}, 404, CodeNotFound, "not found"},
		{"POST", "/v1/beliefs/x/correct", key, map[string]any{"retract": true}, 400, CodeInvalidRequest, "id"},
		// GET /v1/events and /v1/conflicts
		{"GET", "/v1/events", key, nil, 400, CodeInvalidRequest, "scope"},
		{"GET", "/v1/events?scope=" + sq + "&limit=0", key, nil, 400, CodeInvalidRequest, "limit"},
		{"GET", "/v1/conflicts", key, nil, 400, CodeInvalidRequest, "scope"},
		// POST /v1/forget
		{"POST", "/v1/forget", key, map[string]any{"scope": scope}, 400, CodeInvalidRequest, "exactly one"},
		{"POST", "/v1/forget", key, map[string]any{"scope": scope, "all": true, "match": "tea"}, 400, CodeInvalidRequest, "exactly one"},
		{"POST", "/v1/forget", key, map[string]any{"scope": scope, "ids": []int64{-1}}, 400, CodeInvalidRequest, "ids"},
		{"POST", "/v1/forget", key, map[string]any{"scope": scope, "ids": []int64{999999999}}, 404, CodeNotFound, ""},
		{"POST", "/v1/forget", key, map[string]any{"scope": "tenant:a/nothing-here", "all": true}, 404, CodeNotFound, ""},
		{"POST", "/v1/forget", key, map[string]any{"match": "tea"}, 400, CodeInvalidRequest, "scope"},
		{"POST", "/v1/forget", readOnly, map[string]any{"scope": scope, "match": "tea"}, 403, CodeForbidden, "operate"},
		{"POST", "/v1/forget", readOnly, map[string]any{"scope": scope, "match": "tea", "purge": true}, 403, CodeForbidden, "purge"},
		// GET /v1/episodes/{id}
		{"GET", "/v1/episodes/abc", key, nil, 400, CodeInvalidRequest, "id"},
		{"GET", "/v1/episodes/999999999", key, nil, 404, CodeNotFound, "not found"},
		// Routes, methods and keys.
		{"GET", "/v1/nothing", key, nil, 404, CodeNoRoute, ""},
		{"DELETE", "/v1/beliefs", key, nil, 405, CodeMethodNotAllowed, ""},
		{"GET", "/v1/forget", key, nil, 405, CodeMethodNotAllowed, ""},
		{"GET", "/v1/beliefs?scope=" + sq, "", nil, 401, CodeUnauthorized, ""},
		{"GET", "/v1/beliefs?scope=" + sq, "credo_000000000000_" + strings.Repeat("0", 64), nil, 401, CodeUnauthorized, ""},
		{"GET", "/v1/beliefs?scope=" + sq, "not-a-key", nil, 401, CodeUnauthorized, ""},
		{"POST", "/v1/transcripts", "", good, 401, CodeUnauthorized, ""},
	}
	for _, c := range cases {
		r := h.fail(c.method, c.path, c.token, c.body, c.status, c.code)
		if c.detail != "" {
			require.Contains(t, string(r.Body), c.detail, "%s %s", c.method, c.path)
		}
		if c.status == 401 {
			require.Equal(t, `Bearer realm="credo"`, r.Header.Get("WWW-Authenticate"))
		}
		if c.status == 405 {
			require.NotEmpty(t, r.Header.Get("Allow"))
		}
	}

	// A body that is not JSON, to an operation or to the transcripts.
	for path, body := range map[string]string{
		"/v1/beliefs":     `{"scope": "tenant:a/x", "statement": "x", "attribute": "a"}`,
		"/v1/transcripts": `{"scope": "tenant:a/x", "messages": [{"role": "user", "content": "I live in Oslo."}]}`,
	} {
		req, err := http.NewRequest(http.MethodPost, h.http.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "text/plain")
		req.Header.Set("Authorization", "Bearer "+key)
		httpRes, err := h.http.Client().Do(req)
		require.NoError(t, err)
		got, err := io.ReadAll(httpRes.Body)
		require.NoError(t, err)
		httpRes.Body.Close()
		require.Equal(t, 415, httpRes.StatusCode, path)
		require.Equal(t, CodeUnsupportedMedia, response{Status: httpRes.StatusCode, Header: httpRes.Header, Body: got}.code(t))
	}

	// Nothing of the bad transcripts was enqueued.
	var n int
	require.NoError(t, h.p.Schema.Pool.QueryRow(context.Background(), "SELECT count(*) FROM episode").Scan(&n))
	require.Zero(t, n)

	// A revoked key is refused at once.
	k, token, err := CreateKey(context.Background(), h.p.Schema.Pool, "soon revoked", []string{"tenant:a/"}, []Right{RightRead})
	require.NoError(t, err)
	h.ok("GET", "/v1/beliefs?scope="+sq, token, nil, 200, nil)
	_, err = RevokeKey(context.Background(), h.p.Schema.Pool, k.ID)
	require.NoError(t, err)
	h.fail("GET", "/v1/beliefs?scope="+sq, token, nil, 401, CodeUnauthorized)
}

func TestEmbeddingFailure(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("tenant:a/", allRights...)
	h.p.LLM.FailEmbeds(500, 100)
	h.fail("GET", "/v1/beliefs?scope=tenant:a/x&query=where", key, nil, 502, CodeEmbeddingFailed)
	h.fail("POST", "/v1/beliefs", key, map[string]any{"scope": "tenant:a/x", "statement": "x", "attribute": "a"}, 502, CodeEmbeddingFailed)
	// Without a query nothing is embedded.
	h.ok("GET", "/v1/beliefs?scope=tenant:a/x", key, nil, 200, nil)
}

// An embedding model that answers with another dimension under the same name failed as
// a model fails: a 502 embedding_failed on every path that embeds, nothing changed.
func TestEmbeddingModelChangedDimension(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t)
	key := h.key("tenant:a/", allRights...)
	// The model was registered with another dimension than it answers with now.
	require.NoError(t, h.p.Store.EnsureEmbeddingModel(ctx, h.api.embedModel, llmtest.DefaultDim+1))

	for _, path := range []string{"/v1/beliefs?scope=tenant:a/x&query=where", "/v1/context?scope=tenant:a/x&query=where"} {
		r := h.fail("GET", path, key, nil, 502, CodeEmbeddingFailed)
		require.NotContains(t, string(r.Body), "dimension", "the API says what failed, not the registration")
	}
	h.fail("POST", "/v1/beliefs", key, map[string]any{"scope": "tenant:a/x", "statement": "x", "attribute": "a"}, 502, CodeEmbeddingFailed)
	h.ok("GET", "/v1/beliefs?scope=tenant:a/x", key, nil, 200, nil)
	var n int
	require.NoError(t, h.p.Schema.Pool.QueryRow(ctx, "SELECT count(*) FROM belief").Scan(&n))
	require.Zero(t, n, "nothing was written")
}
