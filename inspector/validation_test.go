package inspector_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/api"
)

// The inspector checks a scope, a search and a note by the rule every surface shares: a
// NUL, invalid UTF-8 or a control character is a 400 naming the field, never a 500 or an
// ERROR in the log, and nothing changes.
func TestHostileParameters(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	b := h.browser()
	b.login(h.key("tenant:a/", api.RightRead, api.RightOperate, api.RightPurge))
	for _, bad := range []struct{ scope, want string }{
		{"tenant:a/user\x00ana", "scope contains the control character U+0000"},
		{"tenant:a/user\xffana", "scope is not valid UTF-8"},
		{"tenant:a/user\x07ana", "scope contains the control character U+0007"},
		{"tenant:a/user\x1b[31mana", "scope contains the control character U+001B"},
	} {
		for _, suffix := range []string{"", "/review", "/episodes", "/forget", "/forget?purge=1", "/entities/user/forget"} {
			r := b.get(scopePath(bad.scope) + suffix)
			require.Equal(t, http.StatusBadRequest, r.Status, "%q%s", bad.scope, suffix)
			require.Contains(t, html.UnescapeString(r.Body), bad.want, "%q%s", bad.scope, suffix)
		}
		r := b.post(scopePath(bad.scope)+"/forget", "self", url.Values{"purge": {"1"}, "confirm": {bad.scope}})
		require.Equal(t, http.StatusBadRequest, r.Status, "%q", bad.scope)
		r = b.post(scopePath(bad.scope)+"/entities/user/forget", "self", url.Values{"purge": {"1"}})
		require.Equal(t, http.StatusBadRequest, r.Status, "%q", bad.scope)
	}
	for _, q := range []string{"Mia\x00mi", "Mia\xffmi", "Mia\x07mi", strings.Repeat("q", 2001)} {
		r := b.get(scopePath(anaScope) + "?q=" + url.QueryEscape(q))
		require.Equal(t, http.StatusBadRequest, r.Status, "%q", q)
		require.Contains(t, r.Body, "the search ")
	}
	r := b.post(fmt.Sprintf("/ui/review/%d", h.ana.item), "self", url.Values{"action": {"dismiss"}, "note": {"ok\x00"}})
	require.Equal(t, http.StatusBadRequest, r.Status)
	require.Contains(t, r.Body, "the note contains a NUL character")

	item, err := h.p.Store.Conflict(t.Context(), h.ana.item)
	require.NoError(t, err)
	require.True(t, item.Open(), "nothing was decided")
	current, err := h.p.Store.Current(t.Context(), anaScope)
	require.NoError(t, err)
	require.Len(t, current, 2, "nothing was forgotten: Miami and the plan")
	require.NotContains(t, h.logs.String(), "level=ERROR")
}
