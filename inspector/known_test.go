package inspector_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/api"
)

// TestUnknownScopePage: a scope memory never held is not found, on each of its pages,
// with a link to the nearest scope the key may see, never another tenant's; a known
// scope with nothing to show is a page.
func TestUnknownScopePage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	b := h.browser()
	b.login(h.key("tenant:a/", api.RightRead, api.RightOperate, api.RightPurge))

	for _, suffix := range []string{"", "/review", "/episodes", "/forget", "/entities/user", "/entities/user/forget"} {
		r := b.get(scopePath("tenant:a/user:anna") + suffix)
		require.Equal(t, http.StatusNotFound, r.Status, suffix)
		require.Contains(t, r.Body, "Memory has never held a transcript or a belief of tenant:a/user:anna.", suffix)
		require.Contains(t, r.Body, `Did you mean <a href="/ui/scopes/tenant:a%2Fuser:ana">tenant:a/user:ana</a>?`, suffix)
	}
	r := b.get(scopePath("tenant:a/user:bob"))
	require.Equal(t, http.StatusNotFound, r.Status)
	require.NotContains(t, r.Body, "Did you mean", "tenant:b/user:bob is another tenant's")
	require.Equal(t, http.StatusOK, b.get(scopePath(anaScope)+"?as_of=2000-01-01").Status, "a known scope, empty on that day")
}
