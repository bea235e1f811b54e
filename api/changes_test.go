package api

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/webhook"
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
	require.Equal(t, []string{"belief.created", "belief.created", "revision.applied"}, changeTypes(page.Changes))
	require.Equal(t, float64(*added.BeliefID), page.Changes[0].Data.(map[string]any)["id"])
	require.Equal(t, "User works at Globex", page.Changes[1].Data.(map[string]any)["statement"])
	c := page.Changes[2]
	require.Greater(t, c.Position, page.Changes[1].Position)
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
	_, err := h.p.Store.Purge(t.Context(), memory.Selection{Scope: scope, Match: "Acme"})
	require.NoError(t, err)
	next := <-done
	require.Len(t, next.Changes, 1)
	require.Equal(t, "scope.purged", next.Changes[0].Type)
	require.Equal(t, "beliefs", next.Changes[0].Data.(map[string]any)["what"])

	// The key's prefixes bound the feed.
	h.fail("GET", "/v1/changes?scope="+url.QueryEscape(scope), other, nil, 403, CodeForbidden)
	h.fail("GET", "/v1/changes?scope_prefix=tenant:", other, nil, 403, CodeForbidden)
	h.fail("GET", "/v1/changes?scope_prefix=tenant:b/&scope=tenant:b/x", other, nil, 400, CodeInvalidRequest)
	h.fail("GET", "/v1/changes?scope=tenant:b/x&after=nope", other, nil, 400, CodeInvalidRequest)
	var none Changes
	h.ok("GET", "/v1/changes?scope_prefix=tenant:b/", other, nil, 200, &none)
	require.Empty(t, none.Changes)
}

func TestWebhooksAPI(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) {
		hooks, err := webhook.NewWebhooks(webhook.Config{Pool: c.Pool, SecretKey: "a key of thirty-two characters or more",
			Guard: webhook.Guard{AllowPrivate: true}})
		require.NoError(t, err)
		c.Webhooks = hooks
	})
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	defer rc.Close()
	a := h.key("tenant:a/", RightRead, RightOperate)
	b := h.key("tenant:b/", RightRead, RightOperate)
	reader := h.key("tenant:a/", RightRead)

	var made Webhook
	h.ok("POST", "/v1/webhooks", a, map[string]any{"url": rc.URL, "scope_prefix": "tenant:a/", "events": []string{"review.opened"}}, 201, &made)
	require.True(t, strings.HasPrefix(made.Secret, "whsec_"))
	h.fail("POST", "/v1/webhooks", a, map[string]any{"url": rc.URL, "scope_prefix": "tenant:"}, 403, CodeForbidden)
	h.fail("POST", "/v1/webhooks", reader, map[string]any{"url": rc.URL, "scope_prefix": "tenant:a/"}, 403, CodeForbidden)
	h.fail("POST", "/v1/webhooks", a, map[string]any{"url": rc.URL, "scope_prefix": "tenant:a/", "events": []string{"nope"}}, 400, CodeInvalidRequest)
	h.fail("POST", "/v1/webhooks", a, map[string]any{"url": "ftp://x", "scope_prefix": "tenant:a/"}, 400, CodeInvalidRequest)

	var list Webhooks
	h.ok("GET", "/v1/webhooks", a, nil, 200, &list)
	require.Len(t, list.Webhooks, 1)
	require.Empty(t, list.Webhooks[0].Secret)
	h.ok("GET", "/v1/webhooks", b, nil, 200, &list)
	require.Empty(t, list.Webhooks, "another tenant's webhooks are not listed")
	id := strconv.FormatInt(made.ID, 10)
	h.fail("DELETE", "/v1/webhooks?id="+id, b, nil, 404, CodeNotFound)
	h.fail("POST", "/v1/webhooks/"+id+"/test", b, nil, 404, CodeNotFound)

	var tested WebhookTest
	h.ok("POST", "/v1/webhooks/"+id+"/test", a, nil, 200, &tested)
	require.Equal(t, http.StatusTeapot, tested.Status)
	require.False(t, tested.OK)
	var rotated Webhook
	h.ok("POST", "/v1/webhooks/"+id+"/rotate", a, nil, 200, &rotated)
	require.NotEqual(t, made.Secret, rotated.Secret)
	require.NotNil(t, rotated.PreviousUntil)

	// Operations: update, enable, the log, resend; another tenant's webhook is not found.
	var updated Webhook
	h.ok("PATCH", "/v1/webhooks/"+id, a, map[string]any{"url": rc.URL + "/v2", "events": []string{}}, 200, &updated)
	require.Equal(t, rc.URL+"/v2", updated.URL)
	require.Empty(t, updated.Events, "every type")
	h.fail("PATCH", "/v1/webhooks/"+id, a, map[string]any{"url": "ftp://x"}, 400, CodeInvalidRequest)
	h.fail("PATCH", "/v1/webhooks/"+id, a, map[string]any{}, 400, CodeInvalidRequest)
	h.fail("PATCH", "/v1/webhooks/"+id, b, map[string]any{"url": rc.URL}, 404, CodeNotFound)
	var enabled Webhook
	h.ok("POST", "/v1/webhooks/"+id+"/enable", a, nil, 200, &enabled)
	require.False(t, enabled.Disabled)
	h.fail("POST", "/v1/webhooks/"+id+"/enable", b, nil, 404, CodeNotFound)
	var log WebhookDeliveries
	h.ok("GET", "/v1/webhooks/"+id+"/deliveries?state=failed", a, nil, 200, &log)
	require.Empty(t, log.Deliveries)
	h.fail("GET", "/v1/webhooks/"+id+"/deliveries", b, nil, 404, CodeNotFound)
	h.fail("GET", "/v1/webhooks/"+id+"/deliveries?state=lost", a, nil, 400, CodeInvalidRequest)
	var resent WebhookResent
	h.ok("POST", "/v1/webhooks/"+id+"/resend", a, map[string]any{"all": true}, 200, &resent)
	require.Zero(t, resent.Resent)
	h.fail("POST", "/v1/webhooks/"+id+"/resend", a, map[string]any{"message_id": "msg_7"}, 404, CodeNotFound)
	h.fail("POST", "/v1/webhooks/"+id+"/resend", a, map[string]any{}, 400, CodeInvalidRequest)

	h.ok("DELETE", "/v1/webhooks?id="+id, a, nil, 200, &rotated)
	h.fail("DELETE", "/v1/webhooks?id="+id, a, nil, 404, CodeNotFound)

	// Without WEBHOOK_SECRET_KEY the API says so.
	bare := newHarness(t)
	k := bare.key("tenant:a/", RightOperate)
	bare.fail("POST", "/v1/webhooks", k, map[string]any{"url": rc.URL, "scope_prefix": "tenant:a/"}, 503, CodeAPIDisabled)
}

func changeTypes(cs []ChangeItem) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Type
	}
	return out
}

// The feed announces every writer's new beliefs and soft forgets, the beliefs as GET
// /v1/beliefs gives them; scope_prefix=* reads every scope of the key; a cursor naming
// a position the feed never gave is refused.
func TestChangeFeedTightened(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("tenant:a/,tenant:c/", RightRead, RightOperate)
	star := h.key("*", RightRead)
	const scope = "tenant:a/feed"

	var forgotten, kept Revision
	h.ok("POST", "/v1/beliefs", key, map[string]any{"scope": scope, "statement": "User works at Acme", "attribute": "employer"}, 200, &forgotten)
	h.ok("POST", "/v1/beliefs", key, map[string]any{"scope": "tenant:c/x", "statement": "User likes tea", "attribute": "drink"}, 200, nil)
	h.ok("POST", "/v1/beliefs", h.key("tenant:b/", RightOperate), map[string]any{"scope": "tenant:b/x", "statement": "User likes rain", "attribute": "weather"}, 200, nil)
	h.ok("POST", "/v1/beliefs", key, map[string]any{"scope": scope, "statement": "User likes chess", "attribute": "game"}, 200, &kept)
	var forgot Forgotten
	h.ok("POST", "/v1/forget", key, map[string]any{"scope": scope, "ids": []int64{*forgotten.BeliefID}}, 200, &forgot)

	// The forgotten belief's creation is left out, as the API gives it no more; its
	// forgetting names it, without its words.
	var page Changes
	h.ok("GET", "/v1/changes?scope="+url.QueryEscape(scope), key, nil, 200, &page)
	require.Equal(t, []string{"belief.created", "belief.forgotten"}, changeTypes(page.Changes))
	var current Beliefs
	h.ok("GET", "/v1/beliefs?scope="+url.QueryEscape(scope), key, nil, 200, &current)
	require.Len(t, current.Beliefs, 1)
	want, err := json.Marshal(current.Beliefs[0])
	require.NoError(t, err)
	got, err := json.Marshal(page.Changes[0].Data)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got), "the belief as GET /v1/beliefs gives it")
	gone := page.Changes[1].Data.(map[string]any)
	require.Equal(t, float64(*forgotten.BeliefID), gone["id"])
	require.Equal(t, "forgotten", gone["status"])
	require.Empty(t, gone["statement"])
	raw, err := json.Marshal(page)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "Acme")

	// * is every scope of the key: its two prefixes, not another tenant's.
	var mine Changes
	h.ok("GET", "/v1/changes?scope_prefix=*", key, nil, 200, &mine)
	scopes := map[string]bool{}
	for _, c := range mine.Changes {
		scopes[c.Scope] = true
	}
	require.Equal(t, map[string]bool{scope: true, "tenant:c/x": true}, scopes)
	var every Changes
	h.ok("GET", "/v1/changes?scope_prefix=*", star, nil, 200, &every)
	require.Len(t, every.Changes, 4, "a key of * reads every scope")
	h.fail("GET", "/v1/changes?scope_prefix=*", h.key("tenant:a/", RightOperate), nil, 403, CodeForbidden)

	// A cursor past the scope's last change: refused, naming it.
	last := page.Changes[len(page.Changes)-1].Position
	ahead := base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, `{"v":1,"p":{%q:%d}}`, scope, last+1))
	r := h.fail("GET", "/v1/changes?scope="+url.QueryEscape(scope)+"&after="+ahead, key, nil, 400, CodeInvalidRequest)
	require.Contains(t, string(r.Body), "past its last change")
	h.fail("GET", "/v1/changes?scope_prefix=*&after="+ahead, key, nil, 400, CodeInvalidRequest)
	h.ok("GET", "/v1/changes?scope_prefix=tenant:c/&after="+ahead, key, nil, 200, nil)
}
