package api

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// Hostile read parameters (a NUL byte, invalid UTF-8, a control character, an overlong
// query) are a 400 naming the field on every surface, never a 500, and change nothing.
func TestHostileParametersAreBadRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("*", RightRead, RightOperate, RightPurge)
	for _, scope := range []string{"user:\x00x", "user:\xffx", "user:\x07"} {
		q := url.QueryEscape(scope)
		for _, path := range []string{"/v1/beliefs?scope=" + q, "/v1/events?scope=" + q, "/v1/conflicts?scope=" + q, "/v1/context?scope=" + q} {
			r := h.fail("GET", path, key, nil, 400, CodeInvalidRequest)
			require.Contains(t, string(r.Body), "scope", path)
		}
		if !utf8.ValidString(scope) {
			// A JSON body's invalid UTF-8 is replaced (U+FFFD) by the decoder: a scope
			// that exists nowhere, which the GETs above already cover.
			continue
		}
		h.fail("POST", "/v1/forget", key, []byte(`{"all": true, "scope": "`+jsonBytes(scope)+`"}`), 400, CodeInvalidRequest)
		h.fail("POST", "/v1/forget", key, []byte(`{"all": true, "purge": true, "scope_prefix": "`+jsonBytes(scope)+`"}`), 400, CodeInvalidRequest)
		msg := h.toolError(t, h.mcpSession(t, key), "recall", map[string]any{"scope": scope})
		require.Contains(t, msg, "scope")
	}
	h.fail("POST", "/v1/forget", key, map[string]any{"scope": "user:1", "match": "a\x00b"}, 400, CodeInvalidRequest)
	long := strings.Repeat("q", 5000)
	require.Contains(t, h.toolError(t, h.mcpSession(t, key), "recall", map[string]any{"scope": "user:1", "query": long}), "query",
		"MCP has HTTP's limit on a query")
	require.Contains(t, h.toolError(t, h.mcpSession(t, key), "context", map[string]any{"scope": "user:1", "query": long}), "query")
}

// jsonBytes escapes what JSON must escape and leaves other bytes, valid UTF-8 or not.
func jsonBytes(s string) string {
	return strings.NewReplacer("\x00", `\u0000`, "\x07", `\u0007`).Replace(s)
}

// A JSON body is decoded once, matching names exactly: a name in another case is not
// the field, and a name given twice is refused, so the validator and the decoder can
// never read different copies.
func TestJSONNamesAreExact(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("tenant:a/", RightRead, RightOperate)
	h.ok("POST", "/v1/beliefs", key, map[string]any{"scope": "tenant:a/u", "statement": "User likes tea", "attribute": "drink"}, 200, nil)
	for _, body := range []string{
		`{"scope": "tenant:a/u", "Scope": "tenant:b/u", "match": "tea"}`,
		`{"scope": "tenant:a/u", "scope": "tenant:b/u", "match": "tea"}`,
		`{"SCOPE": "tenant:a/u", "match": "tea"}`,
		`{"scope": "tenant:a/u", "MATCH": "tea"}`,
	} {
		h.fail("POST", "/v1/forget", key, []byte(body), 400, CodeInvalidRequest)
	}
	var got Beliefs
	h.ok("GET", "/v1/beliefs?scope=tenant:a/u", key, nil, 200, &got)
	require.Len(t, got.Beliefs, 1, "nothing was forgotten")
}
