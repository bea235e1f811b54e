package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
)

// send sends body as contentType, as do sends JSON.
func (h *harness) send(method, path, token, contentType string, body []byte) response {
	h.t.Helper()
	return h.doAs(method, path, token, contentType, bytes.NewReader(body))
}

// TestExportImport: GET /v1/export streams a scope the key reads as JSON Lines, and
// POST /v1/import puts it, renamed, into an empty scope the key operates on; the key's
// prefixes bound both, and a scope that holds memory refuses the import.
func TestExportImport(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const from, into = "tenant:a/u1", "tenant:b/u1"
	h.move(from)
	h.refusal(from)
	reader := h.key("tenant:a/", RightRead)
	operator := h.key("tenant:b/", RightRead, RightOperate)
	both := h.key("tenant:", RightRead, RightOperate)

	r := h.do(http.MethodGet, "/v1/export?scope="+url.QueryEscape(from), reader, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r)
	require.Equal(t, "application/x-ndjson", r.Header.Get("Content-Type"))
	lines := strings.Split(strings.TrimSuffix(string(r.Body), "\n"), "\n")
	var header memory.ExportHeader
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &header))
	require.Equal(t, []string{from}, header.Scopes)
	require.JSONEq(t, `{"type":"end","records":{"scope":1,"entity":1,"belief":3,"event":1,"review_item":1}}`, lines[len(lines)-1])
	export := r.Body

	for _, tc := range []struct {
		path, token string
		status      int
		code        string
	}{
		{"/v1/export?scope=" + url.QueryEscape(from), operator, http.StatusForbidden, CodeForbidden},
		{"/v1/export?scope_prefix=tenant:", reader, http.StatusForbidden, CodeForbidden},
		{"/v1/export?scope_prefix=tenant:b/", operator, http.StatusNotFound, CodeNotFound},
		{"/v1/export?scope=tenant:a/nobody", reader, http.StatusNotFound, CodeNotFound},
		{"/v1/export", reader, http.StatusBadRequest, CodeInvalidRequest},
		{"/v1/export?scope=a&scope_prefix=a", reader, http.StatusBadRequest, CodeInvalidRequest},
		{"/v1/export?scope=" + url.QueryEscape(from) + "&since=soon", reader, http.StatusBadRequest, CodeInvalidRequest},
	} {
		h.fail(http.MethodGet, tc.path, tc.token, nil, tc.status, tc.code)
	}
	// A subtree the key covers holds both tenants' scopes once b has one.
	r = h.do(http.MethodGet, "/v1/export?scope_prefix=tenant:", both, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r)

	mapped := "/v1/import?scope_map=" + url.QueryEscape(from+"="+into)
	h.fail(http.MethodPost, mapped, reader, export, http.StatusForbidden, CodeForbidden) // no operate right
	r = h.send(http.MethodPost, "/v1/import", operator, "application/x-ndjson", export)
	require.Equal(t, http.StatusForbidden, r.Status, "into tenant:a, outside the key: %s", r)
	r = h.send(http.MethodPost, mapped, operator, "text/plain", export)
	require.Equal(t, http.StatusUnsupportedMediaType, r.Status, "%s", r)
	bad := bytes.Replace(export, []byte(`"status":"active"`), []byte(`"status":"dreamt"`), 1)
	r = h.send(http.MethodPost, mapped, operator, "application/x-ndjson", bad)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r)
	require.Contains(t, string(r.Body), `status \"dreamt\" is not active`)
	require.Contains(t, string(r.Body), "line ")

	r = h.send(http.MethodPost, mapped, operator, "application/x-ndjson", export)
	require.Equal(t, http.StatusOK, r.Status, "%s", r)
	var rep ImportReport
	r.decode(t, &rep)
	require.Len(t, rep.Scopes, 1)
	require.Equal(t, into, rep.Scopes[0].Scope)
	require.Equal(t, from, rep.Scopes[0].ExportedAs)
	require.Equal(t, 3, rep.Scopes[0].Beliefs)
	require.Positive(t, rep.EmbeddingCalls)
	require.Empty(t, rep.EmbeddingError)

	var was, is Beliefs
	h.ok(http.MethodGet, "/v1/beliefs?all=true&scope="+url.QueryEscape(from), reader, nil, http.StatusOK, &was)
	h.ok(http.MethodGet, "/v1/beliefs?all=true&scope="+url.QueryEscape(into), operator, nil, http.StatusOK, &is)
	require.Equal(t, statements(was.Beliefs), statements(is.Beliefs))
	var items Conflicts
	h.ok(http.MethodGet, "/v1/conflicts?scope="+url.QueryEscape(into), operator, nil, http.StatusOK, &items)
	require.Len(t, items.Conflicts, 1)
	require.Equal(t, "entrenchment", *items.Conflicts[0].Cause)

	r = h.send(http.MethodPost, mapped, operator, "application/x-ndjson", export)
	require.Equal(t, http.StatusConflict, r.Status, "%s", r)
	require.Equal(t, CodeRefused, r.code(t))
	require.Contains(t, string(r.Body), "scope "+into+" already holds memory")
}

// TestImportMem0 imports mem0's get_all answer over the API: each user's memories become
// a scope of active imported beliefs, with a consolidation pass queued.
func TestImportMem0(t *testing.T) {
	t.Parallel()
	// The worker's client runs consolidation jobs; the pipeline's runs extraction only, so
	// the server inserts with a client of its own, as `beliefs mcp` does.
	h := newHarness(t, func(c *Config) {
		jobs, err := river.NewClient(riverpgxv5.New(c.Pool), &river.Config{})
		require.NoError(t, err)
		c.Jobs = jobs
	})
	key := h.key("tenant:b/", RightRead, RightOperate)
	body, err := os.ReadFile("../transfer/testdata/mem0_get_all.json")
	require.NoError(t, err)
	r := h.send(http.MethodPost, "/v1/import?from=mem0&scope_template="+url.QueryEscape("tenant:b/{user_id}"), key, "application/json", body)
	require.Equal(t, http.StatusOK, r.Status, "%s", r)
	var rep ImportReport
	r.decode(t, &rep)
	require.Len(t, rep.Scopes, 2)
	require.Equal(t, 2, rep.ConsolidationJobs)
	var got Beliefs
	h.ok(http.MethodGet, "/v1/beliefs?scope="+url.QueryEscape("tenant:b/alice"), key, nil, http.StatusOK, &got)
	require.ElementsMatch(t, []string{"Likes to play cricket and plays cricket on weekends.", "Is vegetarian and allergic to nuts"}, statements(got.Beliefs))
	for _, b := range got.Beliefs {
		require.Equal(t, "imported", b.Origin)
		require.Equal(t, "active", b.Status)
	}
	var jobs int
	require.NoError(t, h.p.Pool().QueryRow(context.Background(), "SELECT count(*) FROM river_job WHERE kind = 'credo.consolidate'").Scan(&jobs))
	require.Equal(t, 2, jobs)

	// Outside the key's prefixes nothing is imported.
	r = h.send(http.MethodPost, "/v1/import?from=mem0&scope_template="+url.QueryEscape("tenant:c/{user_id}"), key, "application/json", body)
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r)
	r = h.send(http.MethodPost, "/v1/import?scope_template=x/{user_id}", key, "application/json", body)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r)
}
