package inspector_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/redact"
)

func TestPages(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	b := h.browser()
	b.login(h.key("tenant:a/", api.RightRead, api.RightOperate, api.RightPurge))

	t.Run("scopes", func(t *testing.T) {
		page := b.page("/ui/")
		require.Contains(t, page, `href="/ui/scopes/tenant:a%2Fuser:ana"`)
		require.Contains(t, page, `href="/ui/scopes/tenant:a%2Fuser:ana/episodes?state=failed"`, "a failed episode is linked")
		require.Contains(t, page, `href="/ui/scopes/tenant:a%2Fuser:ana/review"`, "an open review item is linked")
		require.Contains(t, page, "key <strong>ops-tenant:a</strong>")
		require.NotContains(t, page, "tenant:b")
		h.refusal("tenant:a/acct")
		filtered := b.page("/ui/?prefix=tenant:a/acct")
		require.Contains(t, filtered, "tenant:a/acct")
		require.NotContains(t, filtered, "user:ana")
	})
	t.Run("scope", func(t *testing.T) {
		page := b.page(scopePath(anaScope))
		require.Contains(t, page, miami)
		require.NotContains(t, page, nyc, "current beliefs only")
		require.Contains(t, page, fmt.Sprintf(`href="/ui/beliefs/%d"`, h.ana.miami))
		require.Contains(t, page, "2026-02-20 → now")
		history := b.page(scopePath(anaScope) + "?history=1")
		require.Contains(t, history, nyc)
		require.Contains(t, history, "2026-01-15 → 2026-02-20")
		asOf := b.page(scopePath(anaScope) + "?as_of=2026-02-01")
		require.Contains(t, asOf, nyc)
		require.NotContains(t, asOf, miami)
		found := b.page(scopePath(anaScope) + "?history=1&q=MIAMI")
		require.Contains(t, found, miami)
		require.NotContains(t, found, nyc)
		require.Contains(t, found, "1 of 3 match")
		require.Equal(t, http.StatusBadRequest, b.get(scopePath(anaScope)+"?as_of=yesterday").Status)
	})
	t.Run("belief", func(t *testing.T) {
		page := b.page(fmt.Sprintf("/ui/beliefs/%d", h.ana.miami))
		timeline := page[strings.Index(page, `class="timeline"`):strings.Index(page, `id="source-h"`)]
		require.Less(t, strings.Index(timeline, nyc), strings.Index(timeline, miami), "the chain, oldest first")
		require.Contains(t, timeline, "2026-01-15 → 2026-02-20", "NYC's valid time")
		require.Contains(t, timeline, "2026-02-20 → now", "Miami's valid time")
		require.Contains(t, timeline, "<rect class=\"valid\"")
		require.Contains(t, page, "I <mark>moved to Miami</mark> last month.", "the quote marked in its episode")
		miami, err := h.p.Store.Get(context.Background(), h.ana.miami)
		require.NoError(t, err)
		require.Len(t, miami.Episodes, 2, "said, then said again")
		require.Contains(t, page, fmt.Sprintf(`Said in 2 transcripts, earliest first: <a href="/ui/episodes/%d">episode %[1]d</a>, <a href="/ui/episodes/%d">episode %[2]d</a>.`,
			miami.Episodes[0], miami.Episodes[1]))
		for _, ep := range miami.Episodes {
			_, taught, found := strings.Cut(b.page(fmt.Sprintf("/ui/episodes/%d", ep)), `id="taught-h"`)
			require.True(t, found, "episode %d has its taught section", ep)
			require.Contains(t, taught, fmt.Sprintf(`<a href="/ui/beliefs/%d">%s</a>`, h.ana.miami, miami.Statement), "episode %d stated or restated it", ep)
			require.NotContains(t, taught, nyc)
		}
		_, failed, found := strings.Cut(b.page(fmt.Sprintf("/ui/episodes/%d", h.ana.failed)), `id="taught-h"`)
		require.True(t, found, "the failed episode has its taught section")
		require.Contains(t, failed, "None.")
		require.Contains(t, page, "Revision events")
		require.Contains(t, page, "supersede (temporal)")
		require.Contains(t, page, fmt.Sprintf(`href="/ui/beliefs/%d/forget"`, h.ana.miami))
		require.Contains(t, page, fmt.Sprintf(`href="/ui/beliefs/%d/forget?purge=1"`, h.ana.miami))
	})
}

// An episode a purge redacted says so on its page.
func TestRedactedEpisodePage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	b := h.browser()
	b.login(h.key("tenant:a/", api.RightRead))
	miami, err := h.p.Store.Get(context.Background(), h.ana.miami)
	require.NoError(t, err)
	path := fmt.Sprintf("/ui/episodes/%d", *miami.EpisodeID)
	require.NotContains(t, b.page(path), "Redacted")
	_, err = h.p.Schema.Pool.Exec(context.Background(), "UPDATE episode SET redacted_at = '2026-05-01T10:00:00Z' WHERE id = $1", *miami.EpisodeID)
	require.NoError(t, err)
	require.Contains(t, b.page(path), "Redacted 2026-05-01")
	require.NotContains(t, b.page(path), "Secrets replaced")
	_, err = h.p.Schema.Pool.Exec(context.Background(), `UPDATE episode SET redactions = '{"card": 1, "api_key": 2}' WHERE id = $1`, *miami.EpisodeID)
	require.NoError(t, err)
	require.Contains(t, b.page(path), `<span class="badge">api_key 2</span> <span class="badge">card 1</span>`)
}

func TestQueuePages(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	b := h.browser()
	b.login(h.key("tenant:a/", api.RightRead, api.RightOperate, api.RightPurge))

	t.Run("review", func(t *testing.T) {
		page := b.page(scopePath(anaScope) + "/review")
		require.Contains(t, page, "Account plan is Free")
		require.Contains(t, page, "refused (entrenchment)")
		require.Contains(t, page, fmt.Sprintf(`action="/ui/review/%d"`, h.ana.item))
		require.Contains(t, page, `value="apply"`)
		require.Contains(t, page, `value="dismiss"`)
	})
	t.Run("episodes", func(t *testing.T) {
		page := b.page(scopePath(anaScope) + "/episodes")
		require.Contains(t, page, "conv-0115")
		require.Contains(t, page, "the model server refused the request: check the key and the models", "the failed episode's last error, as the API tells a key")
		require.Contains(t, page, fmt.Sprintf(`action="/ui/episodes/%d/retry"`, h.ana.failed))
		require.Equal(t, 1, strings.Count(page, "/retry\""), "only the failed episode has a retry")
		failed := b.page(scopePath(anaScope) + "/episodes?state=failed")
		require.NotContains(t, failed, "conv-0115")
		ep := b.page(fmt.Sprintf("/ui/episodes/%d", h.ana.failed))
		require.Contains(t, ep, html.EscapeString(parrot))
		require.Contains(t, ep, "Last error")
	})
	t.Run("confirmations", func(t *testing.T) {
		page := b.page(fmt.Sprintf("/ui/beliefs/%d/forget", h.ana.miami))
		require.Contains(t, page, "Forget this belief?")
		require.Contains(t, page, "“"+miami+"”")
		purge := b.page(fmt.Sprintf("/ui/beliefs/%d/forget?purge=1", h.ana.miami))
		require.Contains(t, purge, "Erase this belief for good?")
		scope := b.page(scopePath(anaScope) + "/forget?purge=1")
		require.Contains(t, scope, "Erase the scope tenant:a/user:ana for good?")
		require.Contains(t, scope, "4 episodes (transcripts)")
		require.Contains(t, scope, nyc)
		require.Contains(t, scope, miami)
	})
	t.Run("not found", func(t *testing.T) {
		for _, path := range []string{"/ui/beliefs/999999", "/ui/beliefs/x", "/ui/episodes/999999", "/ui/nowhere"} {
			r := b.get(path)
			require.Equal(t, http.StatusNotFound, r.Status, path)
			require.Contains(t, r.Body, "Not found")
		}
	})
}

func TestActions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	b := h.browser()
	b.login(h.key("tenant:a/", api.RightRead, api.RightOperate, api.RightPurge))

	// Apply a review item, then again: nothing more changes.
	r := b.post(fmt.Sprintf("/ui/review/%d", h.ana.item), "self", map[string][]string{"action": {"apply"}, "note": {"by mail"}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	require.Equal(t, "/ui/scopes/tenant:a%2Fuser:ana/review?done=applied&n="+strconv.FormatInt(h.ana.item, 10), r.Header.Get("Location"))
	require.Contains(t, b.page(r.Header.Get("Location")), "was applied")
	require.Contains(t, b.page(scopePath(anaScope)), "Account plan is Free")
	again := b.post(fmt.Sprintf("/ui/review/%d", h.ana.item), "self", map[string][]string{"action": {"dismiss"}})
	require.Equal(t, http.StatusConflict, again.Status)
	require.Contains(t, again.Body, "already resolved")
	require.Equal(t, http.StatusBadRequest,
		b.post(fmt.Sprintf("/ui/review/%d", h.refusal("tenant:a/acct2")), "self", map[string][]string{"action": {"maybe"}}).Status)

	// Retry the failed episode, which the model now answers.
	h.p.LLM.OnPrompt(parrot, llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: "User has a parrot", Attribute: "pet"})})
	r = b.post(fmt.Sprintf("/ui/episodes/%d/retry", h.ana.failed), "self", nil)
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	h.p.Drain(t)
	require.Equal(t, "applied", h.p.Episode(t, h.ana.failed).State)
	require.Contains(t, b.page(scopePath(anaScope)), "User has a parrot")
	require.Equal(t, http.StatusConflict, b.post(fmt.Sprintf("/ui/episodes/%d/retry", h.ana.failed), "self", nil).Status)

	// Forget a belief: gone from the scope, and its page is not found.
	r = b.post(fmt.Sprintf("/ui/beliefs/%d/forget", h.ana.miami), "self", nil)
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	page := b.page(r.Header.Get("Location"))
	require.Contains(t, page, "was forgotten")
	require.NotContains(t, page, miami)
	require.Equal(t, http.StatusNotFound, b.get(fmt.Sprintf("/ui/beliefs/%d", h.ana.miami)).Status)

	// A scope-wide erase needs the scope's name typed.
	wrong := b.post(scopePath(anaScope)+"/forget", "self", map[string][]string{"purge": {"1"}, "confirm": {"tenant:a"}})
	require.Equal(t, http.StatusBadRequest, wrong.Status)
	require.Contains(t, b.page(scopePath(anaScope)), "User has a parrot", "nothing was erased")
	r = b.post(scopePath(anaScope)+"/forget", "self", map[string][]string{"purge": {"1"}, "confirm": {anaScope}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	require.Contains(t, b.page(r.Header.Get("Location")), "erased for good")
	require.NotContains(t, b.page("/ui/"), "user:ana")
}

// A scope page shows the policy in force there, and where it comes from, to a key that
// may operate; one that may only read does not see it.
func TestScopePageShowsPolicy(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	path := "/ui/scopes/tenant:a%2Fuser:ana"
	operator := h.browser()
	operator.login(h.key("tenant:a/", api.RightRead, api.RightOperate))
	require.Contains(t, operator.page(path), "No policy")
	none := redact.Set{}
	_, err := h.p.Store.SetPolicy(context.Background(), memory.Policy{ScopePrefix: "tenant:a/", Instructions: "Keep <b>product</b> facts.",
		Patterns: []redact.Pattern{{Name: "employee_id", Regex: `EMP-\d{6}`}}, Redact: &none})
	require.NoError(t, err)
	page := operator.page(path)
	require.Contains(t, page, "<code>tenant:a/</code>")
	require.Contains(t, page, "Keep &lt;b&gt;product&lt;/b&gt; facts.")
	require.Contains(t, page, "<code>employee_id</code>")
	require.Contains(t, page, "<dt>Redacts</dt><dd>none</dd>")

	reader := h.browser()
	reader.login(h.key("tenant:a/", api.RightRead))
	require.NotContains(t, reader.page(path), "Keep &lt;b&gt;product")
}

// TestEntityPages: the scope page lists the scope's entities and links each belief to
// its entity; an entity's page, found by its key or any alias, shows its names and each
// slot's current beliefs and chain; a name no entity goes by is not found, with the
// nearest one linked.
func TestEntityPages(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	austinID, denverID := h.sister(anaScope)
	b := h.browser()
	b.login(h.key("tenant:a/", api.RightRead))
	sister := entityPath(anaScope, "sister")
	require.Equal(t, "/ui/scopes/tenant:a%2Fuser:ana/entities/sister", sister)

	t.Run("scope", func(t *testing.T) {
		page := b.page(scopePath(anaScope))
		_, entities, found := strings.Cut(page, `id="entities-h"`)
		require.True(t, found, "the scope page has its entities")
		entities, _, _ = strings.Cut(entities, "</table>")
		require.Contains(t, entities, `<th scope="row"><a href="`+sister+`">sister</a></th><td>person</td><td class="aliases">Sarah</td><td class="num">1</td>`)
		require.Contains(t, entities, `<a href="`+entityPath(anaScope, "user")+`">user</a>`, "the user is an entity too")
		require.Less(t, strings.Index(entities, ">user<"), strings.Index(entities, ">sister<"), "the user first")
		require.Contains(t, rowOf(t, page, denver), `<td><a href="`+sister+`">sister</a> / home_city</td>`, "a belief links its entity")
		require.Contains(t, rowOf(t, page, miami), `<td>location</td>`, "the user's beliefs, most of them, need no name")
		require.NotContains(t, page, html.EscapeString(austin), "current beliefs only")
		require.Contains(t, rowOf(t, b.page(scopePath(anaScope)+"?history=1"), austin), `<a href="`+sister+`">sister</a> / home_city`)
	})
	t.Run("entity", func(t *testing.T) {
		page := b.page(sister)
		require.Contains(t, page, "<h1>sister</h1>")
		require.Contains(t, page, `<dt>Kind</dt><dd><span class="badge kind">person</span></dd>`)
		require.Contains(t, page, `<dt>Also called</dt><dd><strong>Sarah</strong></dd>`)
		require.Contains(t, page, `<code>home_city</code> <span class="muted">revised</span>`)
		_, slot, found := strings.Cut(page, `class="slot"`)
		require.True(t, found, "the page has the slot")
		current, timeline, found := strings.Cut(slot, `class="timeline"`)
		require.True(t, found, "the slot has its timeline")
		require.Contains(t, current, fmt.Sprintf(`<a href="/ui/beliefs/%d">%s</a>`, denverID, html.EscapeString(denver)), "Denver is current")
		require.NotContains(t, current, html.EscapeString(austin))
		require.Less(t, strings.Index(timeline, html.EscapeString(austin)), strings.Index(timeline, html.EscapeString(denver)), "the chain, oldest first")
		require.Contains(t, timeline, fmt.Sprintf(`<a href="/ui/beliefs/%d">`, austinID), "every belief of the chain links its page")
		require.Contains(t, timeline, "2026-01-01 → 2026-04-01", "Austin's valid time")
		require.Contains(t, timeline, "2026-04-01 → now", "Denver's valid time")
		require.Contains(t, timeline, `<rect class="valid"`)
		require.NotContains(t, page, miami, "the user's beliefs are the user's page's")

		for _, name := range []string{"Sarah", "SARAH", "the user's sister", "my sister"} {
			require.Contains(t, b.page(entityPath(anaScope, name)), "<h1>sister</h1>", "found by %q", name)
		}
		user := b.page(entityPath(anaScope, "user"))
		require.Contains(t, user, "<code>location</code>")
		_, location, _ := strings.Cut(user, "<code>location</code>")
		_, location, _ = strings.Cut(location, `class="timeline"`)
		require.Less(t, strings.Index(location, nyc), strings.Index(location, miami), "the user's location chain, oldest first")
		require.Contains(t, user, "<code>plan</code>")
		require.NotContains(t, user, html.EscapeString(denver))

		belief := b.page(fmt.Sprintf("/ui/beliefs/%d", denverID))
		require.Contains(t, belief, `<a href="`+sister+`">Sarah</a> / home_city`, "a belief's page links its entity by the subject it was said with")
	})
	t.Run("unknown", func(t *testing.T) {
		r := b.get(entityPath(anaScope, "Sarahh"))
		require.Equal(t, http.StatusNotFound, r.Status)
		require.Contains(t, r.Body, "No such entity")
		require.Contains(t, r.Body, "No entity of tenant:a/user:ana is called Sarahh")
		require.Contains(t, r.Body, `Did you mean <a href="`+entityPath(anaScope, "Sarah")+`">Sarah</a>?`)
		r = b.get(entityPath(anaScope, "Bartholomew"))
		require.Equal(t, http.StatusNotFound, r.Status)
		require.NotContains(t, r.Body, "Did you mean", "nothing near")
		for _, name := range []string{"\x01", strings.Repeat("a", 201), "..."} {
			r = b.get(entityPath(anaScope, name))
			require.Equal(t, http.StatusBadRequest, r.Status, "%q", name)
			require.Contains(t, r.Body, "Nothing was read or changed: the name", "%q", name)
		}
	})
}

// rowOf is the table row of page whose statement is statement.
func rowOf(t *testing.T, page, statement string) string {
	t.Helper()
	i := strings.Index(page, ">"+html.EscapeString(statement)+"</a>")
	require.GreaterOrEqual(t, i, 0, "a row of %q", statement)
	start := strings.LastIndex(page[:i], "<tr")
	end := strings.Index(page[i:], "</tr>")
	return page[start : i+end]
}

// TestForgetEntity: "forget everything about the sister" from her page, through a
// confirmation that names her beliefs, softly or erased with her names; the user is an
// entity like another, as in the API.
func TestForgetEntity(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	austinID, denverID := h.sister(anaScope)
	b := h.browser()
	b.login(h.key("tenant:a/", api.RightRead, api.RightOperate, api.RightPurge))
	sister := entityPath(anaScope, "sister")
	ctx := context.Background()

	page := b.page(entityPath(anaScope, "Sarah"))
	require.Contains(t, page, `<a class="button danger" href="`+sister+`/forget">Forget everything about sister…</a>`, "linked by her key")
	require.Contains(t, page, `<a class="button danger" href="`+sister+`/forget?purge=1">Erase everything about sister…</a>`)

	confirm := b.page(entityPath(anaScope, "Sarah") + "/forget")
	require.Contains(t, confirm, "<h1>Forget everything about sister?</h1>")
	require.Contains(t, confirm, "These 2 beliefs about sister")
	_, going, found := strings.Cut(confirm, `<ul class="going">`)
	require.True(t, found, "the confirmation lists what goes")
	going, _, _ = strings.Cut(going, "</ul>")
	require.Contains(t, going, html.EscapeString(austin)+` <span class="muted">(superseded)</span>`, "superseded ones too")
	require.Contains(t, going, html.EscapeString(denver)+` <span class="muted">(active)</span>`)
	require.NotContains(t, going, miami, "the user's beliefs stay")
	require.Contains(t, confirm, `action="`+sister+`/forget"`, "the form names her by her key")
	require.NotContains(t, confirm, `name="purge"`)
	purge := b.page(sister + "/forget?purge=1")
	require.Contains(t, purge, "<h1>Erase everything about sister for good?</h1>")
	require.Contains(t, purge, "2 beliefs about sister in tenant:a/user:ana (forgotten ones included), the entity and its names")
	require.Contains(t, purge, `<input type="hidden" name="purge" value="1">`)

	// Forget her softly: her beliefs leave the scope's pages, she keeps her names.
	r := b.post(sister+"/forget", "self", nil)
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	require.Equal(t, scopePath(anaScope)+"?done=forgotten-entity", r.Header.Get("Location"))
	page = b.page(r.Header.Get("Location"))
	require.Contains(t, page, "Every belief about the entity was forgotten")
	require.NotContains(t, page, html.EscapeString(denver))
	require.Contains(t, page, miami, "the rest stays")
	history := b.page(scopePath(anaScope) + "?history=1")
	require.NotContains(t, history, html.EscapeString(austin))
	require.NotContains(t, history, html.EscapeString(denver))
	for _, id := range []int64{austinID, denverID} {
		got, err := h.p.Store.Get(ctx, id)
		require.NoError(t, err)
		require.Equal(t, memory.StatusForgotten, got.Status, "stored for audit")
	}
	page = b.page(entityPath(anaScope, "Sarah"))
	require.Contains(t, page, "Memory holds no belief about sister.")
	require.NotContains(t, page, "Forget everything", "nothing left to forget")
	require.Contains(t, page, "Erase everything about sister…", "her names can still be erased")
	require.Contains(t, b.page(sister+"/forget"), "Memory holds no belief about sister left to forget.")
	again := b.post(sister+"/forget", "self", nil)
	require.Equal(t, http.StatusConflict, again.Status)
	require.Contains(t, again.Body, "Memory holds no belief about sister left to forget.")

	// Erase her: her forgotten beliefs and her names go, and her page is not found.
	require.Contains(t, b.page(sister+"/forget?purge=1"), html.EscapeString(denver)+` <span class="muted">(forgotten)</span>`)
	r = b.post(sister+"/forget", "self", map[string][]string{"purge": {"1"}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	require.Equal(t, scopePath(anaScope)+"?done=purged-entity", r.Header.Get("Location"))
	page = b.page(r.Header.Get("Location"))
	require.Contains(t, page, "The entity was erased for good")
	require.NotContains(t, page, `>sister</a>`, "no longer among the entities")
	for _, name := range []string{"sister", "Sarah"} {
		r = b.get(entityPath(anaScope, name))
		require.Equal(t, http.StatusNotFound, r.Status, name)
		require.Contains(t, r.Body, "No such entity", name)
		require.Equal(t, http.StatusNotFound, b.post(entityPath(anaScope, name)+"/forget", "self", nil).Status, name)
	}
	for _, id := range []int64{austinID, denverID} {
		_, err := h.p.Store.Get(ctx, id)
		require.ErrorIs(t, err, memory.ErrNotFound, "belief %d is erased", id)
	}

	// Erasing the user erases the beliefs about the user, as the API's purge does.
	user := entityPath(anaScope, "user")
	require.Contains(t, b.page(user), "Erase everything about user…")
	require.Contains(t, b.page(user+"/forget?purge=1"), "the other names the user goes by")
	r = b.post(user+"/forget", "self", map[string][]string{"purge": {"1"}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	require.Equal(t, scopePath(anaScope)+"?done=purged-entity", r.Header.Get("Location"), "the failed episode keeps the scope")
	all, err := h.p.Store.All(ctx, anaScope)
	require.NoError(t, err)
	require.Empty(t, all, "every belief of the scope was about the user")
	require.Contains(t, b.page(user), "Memory holds no belief about user.")

	// An erase that leaves nothing of the scope goes back to the scopes.
	const solo = "tenant:a/user:solo"
	h.sister(solo)
	r = b.post(entityPath(solo, "Sarah")+"/forget", "self", map[string][]string{"purge": {"1"}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	require.Equal(t, "/ui/?done=purged-entity", r.Header.Get("Location"))
	require.NotContains(t, b.page(r.Header.Get("Location")), "user:solo")
}

// A key forgets an entity with operate and erases it with purge, from the inspector's
// own pages only, and is refused as on the other forget pages otherwise.
func TestForgetEntityRights(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sister(anaScope)
	sister := entityPath(anaScope, "sister")
	belief := fmt.Sprintf("/ui/beliefs/%d/forget", h.ana.miami)

	reader := h.browser()
	reader.login(h.key("tenant:a/", api.RightRead))
	require.NotContains(t, reader.page(sister), "/forget", "no forget for a reader")
	refused := reader.get(belief)
	require.Equal(t, http.StatusForbidden, refused.Status)
	for _, path := range []string{sister + "/forget", entityPath(anaScope, "user") + "/forget"} {
		r := reader.get(path)
		require.Equal(t, http.StatusForbidden, r.Status, path)
		require.Equal(t, refused.Body, r.Body, "%s: the belief's forget page's answer", path)
		r = reader.post(path, "self", nil)
		require.Equal(t, http.StatusForbidden, r.Status, path)
		require.Equal(t, refused.Body, r.Body, path)
	}

	operator := h.browser()
	operator.login(h.key("tenant:a/", api.RightRead, api.RightOperate))
	page := operator.page(sister)
	require.Contains(t, page, sister+`/forget"`)
	require.NotContains(t, page, "purge=1", "no erase without purge")
	refused = operator.get(belief + "?purge=1")
	require.Equal(t, http.StatusForbidden, refused.Status)
	r := operator.get(sister + "/forget?purge=1")
	require.Equal(t, http.StatusForbidden, r.Status)
	require.Equal(t, refused.Body, r.Body)
	r = operator.post(sister+"/forget", "self", map[string][]string{"purge": {"1"}})
	require.Equal(t, http.StatusForbidden, r.Status)
	require.Contains(t, r.Body, "purge right")
	for _, origin := range []string{"", "https://evil.example"} {
		r = operator.post(sister+"/forget", origin, nil)
		require.Equal(t, http.StatusForbidden, r.Status, "origin %q", origin)
		require.Contains(t, r.Body, "Forms are accepted only from the inspector&#39;s own pages.")
	}

	current, err := h.p.Store.Current(context.Background(), anaScope)
	require.NoError(t, err)
	require.Len(t, current, 3, "nothing changed: Miami, the plan and Denver")
}
