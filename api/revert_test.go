package api

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
)

// move stores New York, then an extraction's supersede of it by Miami, in scope, and
// returns the supersede's event.
func (h *harness) move(scope string) memory.Outcome {
	h.t.Helper()
	ctx := context.Background()
	res, err := h.p.Store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, Facts: []memory.Fact{fact(nyc, "location")}})
	require.NoError(h.t, err)
	m := fact(miami, "location")
	m.Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}
	res, err = h.p.Store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction,
		Candidates: []int64{res.Facts[0].BeliefID}, Facts: []memory.Fact{m}})
	require.NoError(h.t, err)
	require.Equal(h.t, memory.OutcomeSuperseded, res.Facts[0].Kind)
	return res.Facts[0]
}

func TestRevert(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("tenant:a/", RightRead, RightOperate)
	reader := h.key("tenant:a/", RightRead)
	other := h.key("tenant:b/", RightRead, RightOperate)
	const scope = "tenant:a/u"
	sup := h.move(scope)
	revert := func(id int64) string { return fmt.Sprintf("/v1/events/%d/revert", id) }
	current := func() []string {
		var bs Beliefs
		h.ok("GET", "/v1/beliefs?scope="+url.QueryEscape(scope), key, nil, 200, &bs)
		return statements(bs.Beliefs)
	}

	var evs Events
	h.ok("GET", "/v1/events?scope="+url.QueryEscape(scope), key, nil, 200, &evs)
	require.Len(t, evs.Events, 1)
	require.Nil(t, evs.Events[0].RevertedBy, "null until reverted")
	require.Nil(t, evs.Events[0].Reverts)

	// Rights and tenants first: nothing changes.
	h.fail("POST", revert(sup.EventID), reader, map[string]any{}, 403, CodeForbidden)
	nf := h.fail("POST", revert(sup.EventID), other, map[string]any{}, 404, CodeNotFound)
	unknown := h.fail("POST", revert(sup.EventID+1000), other, map[string]any{}, 404, CodeNotFound)
	require.Equal(t, unknown.code(t), nf.code(t), "another tenant's event is as unknown as an unknown one")
	h.fail("POST", revert(sup.EventID), key, map[string]any{"note": "x", "extra": 1}, 400, CodeInvalidRequest)
	for _, note := range []string{"a trip \u202eevig", "a trip\u2028ID 7 applied"} {
		h.fail("POST", revert(sup.EventID), key, map[string]any{"note": note}, 400, CodeInvalidRequest)
	}
	require.Equal(t, []string{miami}, current())

	var got Reverted
	h.ok("POST", revert(sup.EventID), key, map[string]any{"note": "they only visited Miami"}, 200, &got)
	require.Equal(t, "revert", got.Revert.Action)
	require.Equal(t, "operator", got.Revert.Origin)
	require.Equal(t, sup.EventID, *got.Revert.Reverts)
	require.Equal(t, "they only visited Miami", *got.Revert.Excerpt)
	require.Contains(t, *got.Revert.Rationale, "API key test", "by whom")
	require.Equal(t, got.Revert.ID, *got.Event.RevertedBy)
	require.NotNil(t, got.Event.RevertedAt)
	require.Equal(t, []int64{sup.TargetID}, got.Restored)
	require.Equal(t, []int64{sup.BeliefID}, got.Retracted)
	require.Equal(t, []string{nyc}, current())

	// Twice: a clear 409, and nothing changes.
	r := h.fail("POST", revert(sup.EventID), key, map[string]any{}, 409, CodeRefused)
	require.Contains(t, string(r.Body), fmt.Sprintf("reverted already, by event %d", got.Revert.ID))
	h.ok("GET", "/v1/events?scope="+url.QueryEscape(scope), key, nil, 200, &evs)
	require.Len(t, evs.Events, 2)
	require.Equal(t, got.Revert, evs.Events[0])
	require.Equal(t, got.Event, evs.Events[1])

	// A revision a later one built on is refused with the reason.
	later := h.move(scope + "2")
	ctx := context.Background()
	tz := fact("User's time zone is US Eastern", "time_zone")
	tz.DependsOn = []int{0}
	_, err := h.p.Store.Apply(ctx, &memory.Batch{Scope: scope + "2", Origin: memory.RevisionExtraction, Candidates: []int64{later.BeliefID},
		Facts: []memory.Fact{tz}})
	require.NoError(t, err)
	r = h.fail("POST", revert(later.EventID), key, nil, 409, CodeRefused)
	require.Contains(t, string(r.Body), "was concluded from belief")
}

func TestAudit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("tenant:a/", RightRead, RightOperate)
	two := h.key("tenant:a/,tenant:c/", RightRead)
	other := h.key("tenant:b/", RightRead)
	sup := h.move("tenant:a/u")
	h.move("tenant:a/v")
	h.move("tenant:b/w")
	h.ok("POST", fmt.Sprintf("/v1/events/%d/revert", sup.EventID), key, nil, 200, nil)

	var a Audit
	h.ok("GET", "/v1/audit?scope=tenant:a/u", key, nil, 200, &a)
	require.Equal(t, "tenant:a/u", *a.Scope)
	require.Equal(t, []AuditOrigin{{Origin: "extraction", Applied: 1, Reverted: 1, Precision: new(0.0)}}, a.Origins)
	require.Equal(t, 1, a.Reverts)
	require.Equal(t, []AuditRevisions{{Origin: "extraction", Action: "supersede", Reason: "temporal", Applied: 1, Reverted: 1}}, a.Revisions)
	require.Empty(t, a.Refusals)

	// A key with one prefix audits it by default: its scopes, never another tenant's.
	h.ok("GET", "/v1/audit", key, nil, 200, &a)
	require.Equal(t, "tenant:a/", *a.ScopePrefix)
	require.Equal(t, []AuditOrigin{{Origin: "extraction", Applied: 2, Reverted: 1, Precision: new(0.5)}}, a.Origins)
	h.ok("GET", "/v1/audit?scope_prefix=tenant:a/&since=2000-01-01", two, nil, 200, &a)
	require.Equal(t, 2, a.Origins[0].Applied)

	h.fail("GET", "/v1/audit?scope=tenant:a/u", other, nil, 403, CodeForbidden)
	h.fail("GET", "/v1/audit?scope_prefix=tenant:", key, nil, 403, CodeForbidden)
	h.fail("GET", "/v1/audit", two, nil, 400, CodeInvalidRequest)
	h.fail("GET", "/v1/audit?scope=tenant:a/u&scope_prefix=tenant:a/", key, nil, 400, CodeInvalidRequest)
	h.fail("GET", "/v1/audit?scope=tenant:a/u&since=yesterday", key, nil, 400, CodeInvalidRequest)
}
