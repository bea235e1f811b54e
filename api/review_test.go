package api

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
)

// refusal makes an authoritative belief in scope and an extraction's refused attempt to
// supersede it, and returns the belief and the review item.
func (h *harness) refusal(scope string) (belief, item int64) {
	h.t.Helper()
	ctx := context.Background()
	auth := fact("Account plan is Pro", "plan")
	auth.Origin = memory.OriginAuthoritative
	res, err := h.p.Store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionOperator, Facts: []memory.Fact{auth}})
	require.NoError(h.t, err)
	belief = res.Facts[0].BeliefID
	proposal := fact("Account plan is Free", "plan")
	proposal.Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}
	res, err = h.p.Store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, Candidates: []int64{belief},
		Facts: []memory.Fact{proposal}})
	require.NoError(h.t, err)
	require.Equal(h.t, memory.OutcomeConflict, res.Facts[0].Kind)
	return belief, res.Facts[0].ConflictID
}

func TestResolve(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("tenant:a/", RightRead, RightOperate)
	reader := h.key("tenant:a/", RightRead)
	other := h.key("tenant:b/", RightRead, RightOperate)
	const scope = "tenant:a/u"
	list := "/v1/conflicts?scope=" + url.QueryEscape(scope)
	plan, applyItem := h.refusal(scope)
	_, dismissItem := h.refusal(scope + "2")
	resolve := func(id int64) string { return fmt.Sprintf("/v1/conflicts/%d/resolve", id) }

	var open Conflicts
	h.ok("GET", list, key, nil, 200, &open)
	require.Len(t, open.Conflicts, 1)
	c := open.Conflicts[0]
	require.Equal(t, "refused", c.Kind)
	require.Equal(t, "entrenchment", *c.Cause)
	require.Equal(t, plan, *c.TargetID)
	require.Equal(t, "Account plan is Free", c.Statement)
	require.Nil(t, c.ResolvedAt)
	// The target beside the proposal, and the cause in words: no click through.
	require.NotNil(t, c.Target)
	require.Equal(t, plan, c.Target.ID)
	require.Equal(t, "Account plan is Pro", c.Target.Statement)
	require.Equal(t, "plan", c.Target.Attribute)
	require.Equal(t, "active", c.Target.Status)
	require.Equal(t, "The target is held more firmly than this revision (it is authoritative): only an operator overrides it.", c.Why)

	// Rights and tenants first: nothing changes.
	h.fail("POST", resolve(applyItem), reader, map[string]any{"action": "apply"}, 403, CodeForbidden)
	nf := h.fail("POST", resolve(applyItem), other, map[string]any{"action": "apply"}, 404, CodeNotFound)
	unknown := h.fail("POST", resolve(applyItem+1000), other, map[string]any{"action": "apply"}, 404, CodeNotFound)
	require.Equal(t, unknown.code(t), nf.code(t), "another tenant's item is as unknown as an unknown one")
	h.fail("POST", resolve(applyItem), key, map[string]any{"action": "maybe"}, 400, CodeInvalidRequest)

	var decided Decided
	h.ok("POST", resolve(applyItem), key, map[string]any{"action": "apply", "note": "confirmed by mail"}, 200, &decided)
	require.Equal(t, "applied", *decided.Conflict.Resolution)
	require.Equal(t, "confirmed by mail", *decided.Conflict.Note)
	require.Equal(t, "superseded", decided.Revision.Outcome)
	require.Equal(t, plan, *decided.Revision.TargetID)
	var current Beliefs
	h.ok("GET", "/v1/beliefs?scope="+url.QueryEscape(scope), key, nil, 200, &current)
	require.Equal(t, []string{"Account plan is Free"}, statements(current.Beliefs))

	// Twice: a clear 409, and nothing changes.
	r := h.fail("POST", resolve(applyItem), key, map[string]any{"action": "dismiss"}, 409, CodeRefused)
	require.Contains(t, string(r.Body), "already resolved")
	h.ok("GET", "/v1/beliefs?scope="+url.QueryEscape(scope), key, nil, 200, &current)
	require.Equal(t, []string{"Account plan is Free"}, statements(current.Beliefs))

	var dismissed Decided
	h.ok("POST", resolve(dismissItem), key, map[string]any{"action": "dismiss"}, 200, &dismissed)
	require.Equal(t, "dismissed", *dismissed.Conflict.Resolution)
	require.Nil(t, dismissed.Revision)

	h.ok("GET", list, key, nil, 200, &open)
	require.Empty(t, open.Conflicts)
	var all Conflicts
	h.ok("GET", list+"&all=true", key, nil, 200, &all)
	require.Len(t, all.Conflicts, 1)
	require.Equal(t, "applied", *all.Conflicts[0].Resolution)
	require.NotNil(t, all.Conflicts[0].ResolvedAt)
}

// A refused revision whose target changed since is a 409, and changes nothing.
func TestResolveNoLongerApplies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.key("t/", RightRead, RightOperate)
	plan, item := h.refusal("t/u")
	var corrected Revision
	h.ok("POST", fmt.Sprintf("/v1/beliefs/%d/correct", plan), key, map[string]any{"statement": "Account plan is Team", "reason": "temporal"}, 200, &corrected)
	before, err := h.p.Store.All(context.Background(), "t/u")
	require.NoError(t, err)
	r := h.fail("POST", fmt.Sprintf("/v1/conflicts/%d/resolve", item), key, map[string]any{"action": "apply"}, 409, CodeRefused)
	require.Contains(t, string(r.Body), "no longer applies")
	after, err := h.p.Store.All(context.Background(), "t/u")
	require.NoError(t, err)
	require.Equal(t, before, after)
	c, err := h.p.Store.Conflict(context.Background(), item)
	require.NoError(t, err)
	require.True(t, c.Open())
}
