package inspector_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/memory"
)

// eventsOf is the revision events of scope by action, newest first.
func (h *harness) eventsOf(scope string) map[memory.Action]memory.Event {
	h.t.Helper()
	evs, err := h.p.Store.Events(context.Background(), scope, 0)
	require.NoError(h.t, err)
	out := map[memory.Action]memory.Event{}
	for _, e := range evs {
		if _, ok := out[e.Action]; !ok {
			out[e.Action] = e
		}
	}
	return out
}

// An operator reverts from a belief's events, newest first; a revision that a later
// one built on is refused with the reason, and the scope's page shows the precision.
func TestRevertPages(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	b := h.browser()
	b.login(h.key("tenant:a/", api.RightRead, api.RightOperate))
	evs := h.eventsOf(anaScope)
	sup, re := evs[memory.ActionSupersede], evs[memory.ActionReinforce]
	revert := func(id int64) string { return fmt.Sprintf("/ui/events/%d/revert", id) }

	page := b.page(fmt.Sprintf("/ui/beliefs/%d", h.ana.nyc))
	require.Contains(t, page, `href="`+revert(sup.ID)+`"`)
	require.NotContains(t, page, `href="`+revert(re.ID)+`"`, "a reinforcement is not offered for revert: it changed no belief")
	confirm := b.page(revert(sup.ID))
	require.Contains(t, confirm, "Revert this revision?")
	require.Contains(t, confirm, "becomes current again")

	// Miami was said again since: the supersede is not the latest revision.
	r := b.post(revert(sup.ID), "self", url.Values{"note": {"a trip"}})
	require.Equal(t, http.StatusConflict, r.Status)
	require.Contains(t, r.Body, "only the latest revision of a chain is reverted")
	require.Contains(t, b.page(scopePath(anaScope)), miami, "nothing changed")

	r = b.post(revert(re.ID), "self", nil)
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	require.Equal(t, fmt.Sprintf("/ui/beliefs/%d?done=reverted&n=%d", h.ana.miami, re.ID), r.Header.Get("Location"))
	require.Contains(t, b.page(r.Header.Get("Location")), "was reverted")
	r = b.post(revert(sup.ID), "self", url.Values{"note": {"a trip, not a move"}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	page = b.page(r.Header.Get("Location"))
	require.Contains(t, page, "reverted</span> by")
	require.Contains(t, page, "a trip, not a move")
	require.NotContains(t, page, `href="`+revert(sup.ID)+`"`, "reverted once")
	current, err := h.p.Store.Current(context.Background(), anaScope)
	require.NoError(t, err)
	require.Contains(t, statementsOf(current), nyc)
	require.NotContains(t, statementsOf(current), miami)

	scope := b.page(scopePath(anaScope))
	require.Contains(t, scope, "Revision precision")
	require.Regexp(t, `<th scope="row">extraction</th><td class="num">2</td><td class="num">2</td><td class="num">0</td><td class="num">0.0%</td>`, scope)
	require.Contains(t, scope, "<td>entrenchment</td>", "refusals and their decisions")
}

func TestRevertIsolationAndRights(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t)
	res, err := h.p.Store.Apply(ctx, &memory.Batch{Scope: bobScope, Origin: memory.RevisionExtraction, Candidates: []int64{h.bob.berlin},
		Facts: []memory.Fact{{Statement: "User lives in Hamburg", Attribute: "location", Confidence: 0.9, Origin: memory.OriginUserStated,
			Resolves: &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}}}})
	require.NoError(t, err)
	bobEvent := res.Facts[0].EventID

	b := h.browser()
	b.login(h.key("tenant:a/", api.RightRead, api.RightOperate))
	unknown := b.get("/ui/events/999999/revert")
	require.Equal(t, http.StatusNotFound, unknown.Status)
	for _, r := range []response{b.get(fmt.Sprintf("/ui/events/%d/revert", bobEvent)),
		b.post(fmt.Sprintf("/ui/events/%d/revert", bobEvent), "self", nil)} {
		require.Equal(t, http.StatusNotFound, r.Status)
		require.Equal(t, unknown.Body, r.Body, "another tenant's event answers as an unknown one")
	}

	reader := h.browser()
	reader.login(h.key("tenant:a/", api.RightRead))
	sup := h.eventsOf(anaScope)[memory.ActionReinforce]
	require.NotContains(t, reader.page(fmt.Sprintf("/ui/beliefs/%d", h.ana.miami)), "/revert", "no revert for a reader")
	require.Equal(t, http.StatusForbidden, reader.get(fmt.Sprintf("/ui/events/%d/revert", sup.ID)).Status)
	require.Equal(t, http.StatusForbidden, reader.post(fmt.Sprintf("/ui/events/%d/revert", sup.ID), "self", nil).Status)

	for _, scope := range []string{anaScope, bobScope} {
		evs, err := h.p.Store.Events(ctx, scope, 0)
		require.NoError(t, err)
		for _, e := range evs {
			require.Nil(t, e.RevertedBy, "nothing was reverted in %s", scope)
		}
	}
}

func statementsOf(bs []memory.Belief) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Statement
	}
	return out
}

// A form the inspector cannot read is refused, not taken as one without a note: a
// same-origin text/plain POST (which a page elsewhere on the origin can send without
// asking) is a 415, as in the API. A note that would spoof a table in a terminal (a
// bidi control, a line separator) is a 400 naming it. Nothing is reverted.
func TestRevertRefusesUnreadableFormsAndSpoofingNotes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	b := h.browser()
	b.login(h.key("tenant:a/", api.RightRead, api.RightOperate))
	re := h.eventsOf(anaScope)[memory.ActionReinforce]
	path := h.http.URL + fmt.Sprintf("/ui/events/%d/revert", re.ID)

	for _, ct := range []string{"text/plain", "multipart/form-data; boundary=x", ""} {
		req, err := http.NewRequest(http.MethodPost, path, strings.NewReader("note=a trip"))
		require.NoError(t, err)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		req.Header.Set("Origin", h.http.URL)
		r := b.do(req)
		require.Equal(t, http.StatusUnsupportedMediaType, r.Status, "%q: %s", ct, r.Body)
		require.Contains(t, r.Body, "application/x-www-form-urlencoded")
	}
	for _, note := range []string{"a trip \u202eevig", "a trip\u2028ID 7 applied", "a trip\u2029and more", "\u2066isolated\u2069"} {
		r := b.post(fmt.Sprintf("/ui/events/%d/revert", re.ID), "self", url.Values{"note": {note}})
		require.Equal(t, http.StatusBadRequest, r.Status, "%q: %s", note, r.Body)
		require.Contains(t, r.Body, "note contains")
	}
	require.Nil(t, h.eventsOf(anaScope)[memory.ActionReinforce].RevertedBy, "nothing was reverted")
}
