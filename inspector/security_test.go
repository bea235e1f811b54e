package inspector_test

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/inspector"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/memory"
)

// A key for tenant:a sees nothing of tenant:b: not in the list, not by scope, not by
// id, and may do nothing there; another tenant's id answers as an unknown one does.
func TestIsolation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	b := h.browser()
	b.login(h.key("tenant:a/", api.RightRead, api.RightOperate, api.RightPurge))

	require.NotContains(t, b.page("/ui/"), "tenant:b")
	require.NotContains(t, b.page("/ui/?prefix=tenant:b/"), "tenant:b/user")
	for _, path := range []string{scopePath(bobScope), scopePath(bobScope) + "/review", scopePath(bobScope) + "/episodes",
		scopePath(bobScope) + "/forget", scopePath("tenant:b/nobody")} {
		r := b.get(path)
		require.Equal(t, http.StatusForbidden, r.Status, path)
		require.Contains(t, r.Body, "This key may not access this scope.")
		require.NotContains(t, r.Body, "Berlin")
	}
	unknown := b.get("/ui/beliefs/999999")
	for _, path := range []string{fmt.Sprintf("/ui/beliefs/%d", h.bob.berlin), fmt.Sprintf("/ui/beliefs/%d/forget", h.bob.berlin),
		fmt.Sprintf("/ui/episodes/%d", h.bob.failed)} {
		r := b.get(path)
		require.Equal(t, http.StatusNotFound, r.Status, path)
		require.Equal(t, unknown.Body, r.Body, "%s answers as an unknown id does", path)
	}
	for _, path := range []string{fmt.Sprintf("/ui/review/%d", h.bob.item), fmt.Sprintf("/ui/episodes/%d/retry", h.bob.failed),
		fmt.Sprintf("/ui/beliefs/%d/forget", h.bob.berlin)} {
		r := b.post(path, "self", url.Values{"action": {"apply"}, "purge": {"1"}})
		require.Equal(t, http.StatusNotFound, r.Status, path)
		require.Equal(t, unknown.Body, r.Body, path)
	}
	r := b.post(scopePath(bobScope)+"/forget", "self", url.Values{"purge": {"1"}, "confirm": {bobScope}})
	require.Equal(t, http.StatusForbidden, r.Status)

	// Nothing of tenant:b changed.
	current, err := h.p.Store.Current(context.Background(), bobScope)
	require.NoError(t, err)
	require.Len(t, current, 2, "Berlin and the plan")
	require.Equal(t, "failed", h.p.Episode(t, h.bob.failed).State)
	item, err := h.p.Store.Conflict(context.Background(), h.bob.item)
	require.NoError(t, err)
	require.True(t, item.Open())
}

// A key acts with its rights only: reading needs read; deciding, retrying and
// forgetting need operate; erasing needs purge.
func TestRights(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	reader := h.browser()
	reader.login(h.key("tenant:a/", api.RightRead))
	page := reader.page(fmt.Sprintf("/ui/beliefs/%d", h.ana.miami))
	require.NotContains(t, page, "/forget", "no forget for a reader")
	require.NotContains(t, reader.page(scopePath(anaScope)+"/episodes"), "/retry")
	require.NotContains(t, reader.page(scopePath(anaScope)+"/review"), `value="apply"`)

	posts := []string{fmt.Sprintf("/ui/review/%d", h.ana.item), fmt.Sprintf("/ui/episodes/%d/retry", h.ana.failed),
		fmt.Sprintf("/ui/beliefs/%d/forget", h.ana.miami), scopePath(anaScope) + "/forget"}
	for _, path := range posts {
		r := reader.post(path, "self", url.Values{"action": {"apply"}, "confirm": {anaScope}})
		require.Equal(t, http.StatusForbidden, r.Status, path)
	}
	require.Equal(t, http.StatusForbidden, reader.get(fmt.Sprintf("/ui/beliefs/%d/forget", h.ana.miami)).Status)

	operator := h.browser()
	operator.login(h.key("tenant:a/", api.RightRead, api.RightOperate))
	require.Equal(t, http.StatusForbidden, operator.get(fmt.Sprintf("/ui/beliefs/%d/forget?purge=1", h.ana.miami)).Status)
	r := operator.post(fmt.Sprintf("/ui/beliefs/%d/forget", h.ana.miami), "self", url.Values{"purge": {"1"}})
	require.Equal(t, http.StatusForbidden, r.Status)
	require.Contains(t, r.Body, "purge right")

	writer := h.browser()
	writer.login(h.key("tenant:a/", api.RightWrite))
	require.Equal(t, http.StatusForbidden, writer.get("/ui/").Status, "reading needs read")

	current, err := h.p.Store.Current(context.Background(), anaScope)
	require.NoError(t, err)
	require.Len(t, current, 2, "nothing changed: Miami and the plan")
	item, err := h.p.Store.Conflict(context.Background(), h.ana.item)
	require.NoError(t, err)
	require.True(t, item.Open())
}

// Every POST must come from the inspector's own pages.
func TestOrigin(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	token := h.key("tenant:a/", api.RightRead, api.RightOperate)
	b := h.browser()
	b.login(token)
	path := fmt.Sprintf("/ui/beliefs/%d/forget", h.ana.miami)
	for _, origin := range []string{"", "https://evil.example", "null"} {
		r := b.post(path, origin, nil)
		require.Equal(t, http.StatusForbidden, r.Status, "origin %q", origin)
		require.Contains(t, r.Body, "Forms are accepted only from the inspector&#39;s own pages.")
	}
	cross := h.browser()
	r := cross.post("/ui/login", "https://evil.example", url.Values{"key": {token}})
	require.Equal(t, http.StatusForbidden, r.Status)
	require.Empty(t, r.Header.Values("Set-Cookie"))
	req, err := http.NewRequest(http.MethodPost, h.http.URL+path, nil)
	require.NoError(t, err)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	require.Equal(t, http.StatusForbidden, b.do(req).Status)

	// A bearer key does not lift the rule: the pages are for browsers.
	bearer := h.browser()
	bearer.bearer = token
	require.Equal(t, http.StatusForbidden, bearer.post(path, "", nil).Status)
	require.Equal(t, http.StatusOK, bearer.get(scopePath(anaScope)).Status, "the pages accept the bearer header")

	current, err := h.p.Store.Current(context.Background(), anaScope)
	require.NoError(t, err)
	require.Len(t, current, 2, "nothing was forgotten")
}

func TestLogin(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	token := h.key("tenant:a/", api.RightRead)

	b := h.browser()
	r := b.get(scopePath(anaScope))
	require.Equal(t, http.StatusSeeOther, r.Status, "no key: to the login page")
	require.Equal(t, "/ui/login?next="+url.QueryEscape("/ui/scopes/tenant:a%2Fuser:ana"), r.Header.Get("Location"))
	login := b.page(r.Header.Get("Location"))
	require.Contains(t, login, `type="password"`)
	require.Contains(t, login, `value="/ui/scopes/tenant:a%2Fuser:ana"`)

	for _, bad := range []string{"", "credo_000000000000_" + strings.Repeat("0", 64), token + "x", "not a key"} {
		r := b.post("/ui/login", "self", url.Values{"key": {bad}})
		require.Contains(t, []int{http.StatusBadRequest, http.StatusUnauthorized}, r.Status, bad)
		require.Empty(t, r.Header.Values("Set-Cookie"), "no cookie for a bad key")
	}
	r = b.post("/ui/login", "self", url.Values{"key": {token}, "next": {"/ui/scopes/tenant:a%2Fuser:ana"}})
	require.Equal(t, http.StatusSeeOther, r.Status)
	require.Equal(t, "/ui/scopes/tenant:a%2Fuser:ana", r.Header.Get("Location"))
	cookie := r.Header.Get("Set-Cookie")
	require.Contains(t, cookie, "credo_session=")
	require.Contains(t, cookie, "HttpOnly")
	require.Contains(t, cookie, "SameSite=Strict")
	require.Contains(t, cookie, "Path=/ui/")
	require.NotContains(t, cookie, "Secure", "plain HTTP")
	require.Contains(t, r.Header.Values("Set-Cookie"), "credo_key=; Path=/ui/; Max-Age=0; HttpOnly; SameSite=Strict",
		"the cookie of earlier versions, which held the key, is cleared")
	require.Contains(t, b.page(scopePath(anaScope)), miami)

	// Only pages of the inspector are gone back to.
	for _, next := range []string{"https://evil.example/", "//evil.example/ui/", "/v1/beliefs", "/ui/\\evil",
		"/ui/../..//evil.com", "/ui/..", "/ui/%2e%2e/v1/beliefs", "/ui/./../evil", "/ui/scopes/../../..//evil.com/ui/"} {
		r := h.browser().post("/ui/login", "self", url.Values{"key": {token}, "next": {next}})
		require.Equal(t, "/ui/", r.Header.Get("Location"), next)
	}

	r = h.browser().post("/ui/login", "self", url.Values{"key": {token}, "next": {"/ui/scopes/x/../tenant:a%2Fuser:ana?history=1"}})
	require.Equal(t, "/ui/scopes/tenant:a%2Fuser:ana?history=1", r.Header.Get("Location"), "a page under /ui/ once cleaned")

	// Logout clears the cookie.
	r = b.post("/ui/logout", "self", nil)
	require.Equal(t, http.StatusSeeOther, r.Status)
	require.Contains(t, r.Header.Get("Set-Cookie"), "Max-Age=0")
	require.Equal(t, http.StatusSeeOther, b.get("/ui/").Status)

	// A revoked key's cookie is cleared at its next page.
	b.login(token)
	keys, err := api.ListKeys(context.Background(), h.p.Schema.Pool)
	require.NoError(t, err)
	_, err = api.RevokeKey(context.Background(), h.p.Schema.Pool, keys[len(keys)-1].ID)
	require.NoError(t, err)
	r = b.get("/ui/")
	require.Equal(t, http.StatusSeeOther, r.Status)
	require.Equal(t, "/ui/login?expired=1", r.Header.Get("Location"))
	require.Contains(t, r.Header.Get("Set-Cookie"), "Max-Age=0")

	// The key is in no URL the browser saw, and in no log line.
	for _, u := range b.seen {
		require.NotContains(t, u, token[:20])
	}
	require.NotContains(t, h.logs.String(), token[:20])
}

// The cookie carries a random session id, never the key; only its hash is stored; the
// session ends when it expires, at logout (whoever replays the id) and with its key.
func TestSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	token := h.key("tenant:a/", api.RightRead)
	_, secret, _ := strings.Cut(strings.TrimPrefix(token, "credo_"), "_")

	b := h.browser()
	b.login(token)
	id := b.cookie()
	require.NotEmpty(t, id)
	require.NotContains(t, id, secret)
	require.NotContains(t, token, id)
	sum := sha256.Sum256([]byte(id))
	var hashed int
	require.NoError(t, h.p.Schema.Pool.QueryRow(ctx, "SELECT count(*) FROM inspector_session WHERE token_hash = $1",
		hex.EncodeToString(sum[:])).Scan(&hashed))
	require.Equal(t, 1, hashed, "the id is stored hashed")
	require.Empty(t, h.p.Schema.Mentions(t, id), "and nowhere in clear")
	require.Contains(t, b.page(scopePath(anaScope)), miami)

	// A session that expired sends the browser to log in again.
	_, err := h.p.Schema.Pool.Exec(ctx, "UPDATE inspector_session SET expires_at = now() - interval '1 second'")
	require.NoError(t, err)
	r := b.get("/ui/")
	require.Equal(t, http.StatusSeeOther, r.Status)
	require.Equal(t, "/ui/login?expired=1", r.Header.Get("Location"))

	// A browser logging in again ends the session it held: one session per browser.
	b.login(token)
	first := b.cookie()
	b.login(token)
	require.NotEqual(t, first, b.cookie())
	stale := h.browser()
	stale.setCookie(first)
	require.Equal(t, http.StatusSeeOther, stale.get("/ui/").Status, "the first session ended")

	// After logout, the id is worth nothing, even to whoever kept a copy.
	b.login(token)
	kept := b.cookie()
	require.Equal(t, http.StatusSeeOther, b.post("/ui/logout", "self", nil).Status)
	replay := h.browser()
	replay.setCookie(kept)
	require.Equal(t, http.StatusSeeOther, replay.get("/ui/").Status)

	// Revoking the key ends its sessions.
	b.login(token)
	keys, err := api.ListKeys(ctx, h.p.Schema.Pool)
	require.NoError(t, err)
	_, err = api.RevokeKey(ctx, h.p.Schema.Pool, keys[len(keys)-1].ID)
	require.NoError(t, err)
	var left int
	require.NoError(t, h.p.Schema.Pool.QueryRow(ctx, "SELECT count(*) FROM inspector_session").Scan(&left))
	require.Zero(t, left)
	require.Equal(t, http.StatusSeeOther, b.get("/ui/").Status)
}

// Behind a TLS proxy the worker speaks plain HTTP: an https PUBLIC_URL makes the cookie
// Secure all the same.
func TestSecureCookieBehindAProxy(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	token := h.key("tenant:a/", api.RightRead)
	v1, err := api.New(context.Background(), api.Config{Store: h.p.Store, Pool: h.p.Pool(), Addr: "127.0.0.1:0", RateLimit: -1})
	require.NoError(t, err)
	ui, err := inspector.New(inspector.Config{Store: h.p.Store, Gate: v1, SecureCookies: true})
	require.NoError(t, err)
	mux := http.NewServeMux()
	ui.Mount(mux)
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9464/ui/login", strings.NewReader(url.Values{"key": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://127.0.0.1:9464")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	require.Contains(t, rec.Header().Get("Set-Cookie"), "; Secure")
}

func TestSecureCookieOverTLS(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	token := h.key("tenant:a/", api.RightRead)
	req := httptest.NewRequest(http.MethodPost, "https://inspector.example/ui/login", strings.NewReader(url.Values{"key": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://inspector.example")
	req.TLS = &tls.ConnectionState{}
	rec := httptest.NewRecorder()
	h.http.Config.Handler.ServeHTTP(rec, req)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	require.Contains(t, rec.Header().Get("Set-Cookie"), "; Secure")
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	b := h.browser()
	b.login(h.key("*", api.RightRead))
	for _, path := range []string{"/ui/", "/ui/login", "/ui/nowhere", scopePath(anaScope), "/ui/static/style.css",
		fmt.Sprintf("/ui/beliefs/%d", h.ana.miami)} {
		r := b.get(path)
		csp := r.Header.Get("Content-Security-Policy")
		require.Contains(t, csp, "default-src 'self'", path)
		require.Contains(t, csp, "script-src 'none'", path)
		require.Contains(t, csp, "frame-ancestors 'none'", path)
		require.NotContains(t, csp, "unsafe-inline", path)
		require.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"), path)
		if strings.HasPrefix(path, "/ui/static/") {
			require.Equal(t, http.StatusOK, r.Status)
			require.Contains(t, r.Header.Get("Content-Type"), "text/css")
			continue
		}
		require.Equal(t, "no-store", r.Header.Get("Cache-Control"), path)
		require.NotContains(t, r.Body, "<script", path)
		require.NotContains(t, r.Body, "style=", path)
		require.NotRegexp(t, `\son[a-z]+=`, r.Body, "%s: no inline handler", path)
	}
}

// Without any key the pages follow the API: served on loopback to requests naming
// loopback, refused elsewhere.
func TestKeyless(t *testing.T) {
	t.Parallel()
	schema := dbtest.New(t)
	store := memory.NewStore(schema.Pool, nil)
	serve := func(addr string) *httptest.Server {
		v1, err := api.New(context.Background(), api.Config{Store: store, Pool: schema.Pool, Addr: addr})
		require.NoError(t, err)
		ui, err := inspector.New(inspector.Config{Store: store, Gate: v1})
		require.NoError(t, err)
		mux := http.NewServeMux()
		ui.Mount(mux)
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		return srv
	}
	local := serve("127.0.0.1:9464")
	res, err := http.Get(local.URL + "/ui/")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	req, err := http.NewRequest(http.MethodGet, local.URL+"/ui/", nil)
	require.NoError(t, err)
	req.Host = "rebound.example:9464"
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusForbidden, res.StatusCode, "DNS rebinding")

	public := serve(":9464")
	res, err = http.Get(public.URL + "/ui/")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, "no key, not loopback: off, as the API")
}
