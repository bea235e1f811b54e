package api

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
)

// sisterScope is what seedEntities stored: the user's own belief, the sister's home
// city (Sarah, as the conversation called her) superseded once, and Sally, who may be
// her.
type sisterScope struct {
	scope                         string
	boston, austin, denver, cello int64
}

func about(f memory.Fact, subject string, aliases ...string) memory.Fact {
	f.Subject, f.SubjectAliases = subject, aliases
	return f
}

func seedEntities(t *testing.T, h *harness, scope string) sisterScope {
	t.Helper()
	ctx := context.Background()
	jan := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res, err := h.p.Store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, At: jan, Facts: []memory.Fact{
		fact("User lives in Boston", "home_city"),
		about(fact("User's sister lives in Austin", "home_city"), "user's sister", "Sarah"),
		about(fact("Sally plays the cello", "instrument"), "Sally"),
	}})
	require.NoError(t, err)
	s := sisterScope{scope: scope, boston: res.Facts[0].BeliefID, austin: res.Facts[1].BeliefID, cello: res.Facts[2].BeliefID}
	moved := about(fact("User's sister lives in Denver", "home_city"), "Sarah")
	moved.Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}
	res, err = h.p.Store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, At: jan.AddDate(0, 2, 0),
		Candidates: []int64{s.austin}, Facts: []memory.Fact{moved}})
	require.NoError(t, err)
	require.Equal(t, memory.OutcomeSuperseded, res.Facts[0].Kind)
	s.denver = res.Facts[0].BeliefID
	return s
}

func entityPath(name, scope string, history bool) string {
	p := "/v1/entities/" + url.PathEscape(name) + "?scope=" + url.QueryEscape(scope)
	if history {
		p += "&history=true"
	}
	return p
}

func keys(es []Entity) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Key)
	}
	return out
}

// errorMessage is the message of an error answer.
func (r response) errorMessage(t *testing.T) string {
	t.Helper()
	var e struct {
		Error ErrorBody `json:"error"`
	}
	r.decode(t, &e)
	return e.Error.Message
}

// TestEntities: a scope's registry, read by any name of an entity, with each slot's
// chain on request; an unknown name is a 404 that suggests the nearest; beliefs carry
// their entity; the same through MCP.
func TestEntities(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := seedEntities(t, h, "tenant:a/u")
	key := h.key("tenant:a/", RightRead)

	var list Entities
	h.ok("GET", "/v1/entities?scope="+url.QueryEscape(s.scope), key, nil, 200, &list)
	require.Equal(t, []string{"user", "sally", "sister"}, keys(list.Entities), "the user first, then by name")
	require.True(t, list.ScopeKnown)
	sister := list.Entities[2]
	require.Equal(t, Entity{Scope: s.scope, Key: "sister", Name: "sister", Kind: "person", Aliases: []string{"Sarah"},
		CurrentBeliefs: 1, CreatedAt: sister.CreatedAt}, sister)
	require.Equal(t, 1, list.Entities[0].CurrentBeliefs)
	require.Equal(t, []string{}, list.Entities[0].Aliases, "an empty list, not null")

	// By alias, with history: the slot's chain, oldest first.
	var view EntityView
	h.ok("GET", entityPath("Sarah", s.scope, true), key, nil, 200, &view)
	require.Equal(t, "sister", view.Key)
	require.Len(t, view.Slots, 1)
	require.Equal(t, "home_city", view.Slots[0].Attribute)
	require.Equal(t, []string{"User's sister lives in Denver"}, statements(view.Slots[0].Current))
	require.Equal(t, []string{"User's sister lives in Austin", "User's sister lives in Denver"}, statements(view.Slots[0].History))
	require.Equal(t, "superseded", view.Slots[0].History[0].Status)
	require.Equal(t, "sister", view.Slots[0].Current[0].Entity)

	// By the name as the user's possessive says it, path-escaped; without history, none.
	for _, name := range []string{"user's sister", "My Sister", "SARAH"} {
		r := h.do("GET", entityPath(name, s.scope, false), key, nil)
		require.Equal(t, 200, r.Status, "%s: %s", name, r)
		var v EntityView
		r.decode(t, &v)
		require.Equal(t, "sister", v.Key, name)
		require.Equal(t, []string{"User's sister lives in Denver"}, statements(v.Slots[0].Current))
		require.NotContains(t, string(r.Body), `"history"`)
	}
	var user EntityView
	h.ok("GET", entityPath("user", s.scope, false), key, nil, 200, &user)
	require.Equal(t, "user", user.Kind)
	require.Equal(t, []string{"User lives in Boston"}, statements(user.Slots[0].Current))

	// An unknown name: not found, with the nearest known name.
	r := h.fail("GET", entityPath("Sarahh", s.scope, false), key, nil, 404, CodeNotFound)
	require.Contains(t, r.errorMessage(t), `did you mean "Sarah"?`)
	r = h.fail("GET", entityPath("Zebulon", s.scope, false), key, nil, 404, CodeNotFound)
	require.NotContains(t, r.errorMessage(t), "did you mean", "nothing is near")
	h.fail("GET", entityPath("Sarah", "tenant:a/empty", false), key, nil, 404, CodeNotFound)
	h.fail("GET", entityPath("Sa\x00rah", s.scope, false), key, nil, 400, CodeInvalidRequest)
	h.fail("GET", entityPath("Sa\u202erah", s.scope, false), key, nil, 400, CodeInvalidRequest)
	h.fail("GET", entityPath(strings.Repeat("x", 201), s.scope, false), key, nil, 400, CodeInvalidRequest)
	h.fail("GET", "/v1/entities/Sarah", key, nil, 400, CodeInvalidRequest) // no scope

	// A misspelt scope reads as empty, and says so.
	h.ok("GET", "/v1/entities?scope="+url.QueryEscape("tenant:a/uu"), key, nil, 200, &list)
	require.Empty(t, list.Entities)
	require.False(t, list.ScopeKnown)
	require.Equal(t, s.scope, list.DidYouMean)

	// Every belief says whom it is about.
	var bs Beliefs
	h.ok("GET", "/v1/beliefs?all=true&scope="+url.QueryEscape(s.scope), key, nil, 200, &bs)
	byStatement := map[string]string{}
	for _, b := range bs.Beliefs {
		byStatement[b.Statement] = b.Entity
	}
	require.Equal(t, map[string]string{"User lives in Boston": "user", "User's sister lives in Austin": "sister",
		"User's sister lives in Denver": "sister", "Sally plays the cello": "sally"}, byStatement)

	// Another tenant's key: the fixed 403 of a scope outside it, whether the name exists
	// or not; a key without the read right is refused too.
	other := h.key("tenant:b/", allRights...)
	first := h.fail("GET", "/v1/entities?scope="+url.QueryEscape(s.scope), other, nil, 403, CodeForbidden)
	for _, path := range []string{entityPath("Sarah", s.scope, true), entityPath("Nobody", s.scope, false)} {
		r := h.fail("GET", path, other, nil, 403, CodeForbidden)
		require.Equal(t, string(first.Body), string(r.Body))
	}
	writeOnly := h.key("tenant:a/", RightWrite)
	h.fail("GET", "/v1/entities?scope="+url.QueryEscape(s.scope), writeOnly, nil, 403, CodeForbidden)
	h.fail("GET", entityPath("Sarah", s.scope, false), writeOnly, nil, 403, CodeForbidden)

	// MCP: the same reads, the same refusals.
	session := h.mcpSession(t, key)
	var mcpList Entities
	callTool(t, session, "entities", map[string]any{"scope": s.scope}, &mcpList)
	require.Equal(t, []string{"user", "sally", "sister"}, keys(mcpList.Entities))
	var mcpView EntityView
	callTool(t, session, "entity", map[string]any{"scope": s.scope, "name": "my sister", "history": true}, &mcpView)
	require.Equal(t, "sister", mcpView.Key)
	require.Equal(t, []string{"User's sister lives in Austin", "User's sister lives in Denver"}, statements(mcpView.Slots[0].History))
	var current EntityView
	callTool(t, session, "entity", map[string]any{"scope": s.scope, "name": "Sarah"}, &current)
	require.Nil(t, current.Slots[0].History)
	msg := h.toolError(t, session, "entity", map[string]any{"scope": s.scope, "name": "Sarahh"})
	require.True(t, strings.HasPrefix(msg, CodeNotFound+":"), msg)
	require.Contains(t, msg, `did you mean "Sarah"?`)
	otherSession := h.mcpSession(t, other)
	require.True(t, strings.HasPrefix(h.toolError(t, otherSession, "entities", map[string]any{"scope": s.scope}), CodeForbidden+":"))
	require.True(t, strings.HasPrefix(h.toolError(t, otherSession, "entity", map[string]any{"scope": s.scope, "name": "Sarah"}), CodeForbidden+":"))
	require.True(t, strings.HasPrefix(h.toolError(t, h.mcpSession(t, writeOnly), "entities", map[string]any{"scope": s.scope}), CodeForbidden+":"))
}

// TestMergeEntities: an operator says two names are one: names and beliefs move and
// nothing else changes; the same entity twice, or the user absorbed, is a 400.
func TestMergeEntities(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := seedEntities(t, h, "tenant:a/u")
	key := h.key("tenant:a/", RightRead, RightOperate)
	// A later conversation calls the sister Sally, a name of another entity: the
	// registry takes no name from Sally, and proposes the merge for review.
	_, err := h.p.Store.Apply(context.Background(), &memory.Batch{Scope: s.scope, Origin: memory.RevisionExtraction,
		Facts: []memory.Fact{about(fact("User's sister works at Acme", "employer"), "my sister", "Sally")}})
	require.NoError(t, err)
	var items Conflicts
	h.ok("GET", "/v1/conflicts?scope="+url.QueryEscape(s.scope), key, nil, 200, &items)
	require.Len(t, items.Conflicts, 1)
	item := items.Conflicts[0]
	require.Equal(t, "same_entity", *item.Cause)
	require.Equal(t, "merge", item.Action)
	require.Equal(t, &MergeProposal{Into: "sister", Other: "sally"}, item.Proposed.Merge)
	before, err := h.p.Store.All(context.Background(), s.scope)
	require.NoError(t, err)

	merge := func(into, other string) map[string]any {
		return map[string]any{"scope": s.scope, "into": into, "other": other, "note": "Sally is Sarah's nickname"}
	}
	h.fail("POST", "/v1/entities/merge", key, merge("Sarah", "my sister"), 400, CodeInvalidRequest) // one entity already
	h.fail("POST", "/v1/entities/merge", key, merge("Sarah", "me"), 400, CodeInvalidRequest)        // the user is never absorbed
	h.fail("POST", "/v1/entities/merge", key, map[string]any{"scope": s.scope, "into": "Sarah"}, 400, CodeInvalidRequest)
	h.fail("POST", "/v1/entities/merge", key, merge("Sarah", "Sa\u2028lly"), 400, CodeInvalidRequest)
	r := h.fail("POST", "/v1/entities/merge", key, merge("Sarah", "Salyl"), 404, CodeNotFound)
	require.Contains(t, r.errorMessage(t), `did you mean "Sally"?`)
	h.fail("POST", "/v1/entities/merge", h.key("tenant:a/", RightRead), merge("Sarah", "Sally"), 403, CodeForbidden)
	h.fail("POST", "/v1/entities/merge", h.key("tenant:b/", allRights...), merge("Sarah", "Sally"), 403, CodeForbidden)

	var merged Merged
	h.ok("POST", "/v1/entities/merge", key, merge("Sarah", "Sally"), 200, &merged)
	require.EqualValues(t, 1, merged.Moved)
	require.Equal(t, []int64{item.ID}, merged.Closed, "the proposal about the pair is closed")
	require.Equal(t, "sister", merged.Entity.Key)
	require.ElementsMatch(t, []string{"Sarah", "Sally"}, merged.Entity.Aliases)
	require.Equal(t, 3, merged.Entity.CurrentBeliefs)
	var slots []string
	for _, sl := range merged.Entity.Slots {
		slots = append(slots, sl.Attribute)
	}
	require.ElementsMatch(t, []string{"home_city", "employer", "instrument"}, slots)
	h.ok("GET", "/v1/conflicts?scope="+url.QueryEscape(s.scope), key, nil, 200, &items)
	require.Empty(t, items.Conflicts)

	var list Entities
	h.ok("GET", "/v1/entities?scope="+url.QueryEscape(s.scope), key, nil, 200, &list)
	require.Equal(t, []string{"user", "sister"}, keys(list.Entities))
	var view EntityView
	h.ok("GET", entityPath("sally", s.scope, false), key, nil, 200, &view)
	require.Equal(t, "sister", view.Key, "Sally's name now finds the sister")

	// Nothing but the entity changed: no belief was revised.
	after, err := h.p.Store.All(context.Background(), s.scope)
	require.NoError(t, err)
	require.Len(t, after, len(before))
	for i := range before {
		require.Equal(t, before[i].Statement, after[i].Statement)
		require.Equal(t, before[i].Status, after[i].Status)
	}
}

// TestForgetByEntity: "forget everything about my sister", softly, or erased with her
// names; exactly one selection; an unknown name is a 404 that suggests the nearest.
func TestForgetByEntity(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := seedEntities(t, h, "tenant:a/u")
	key := h.key("tenant:a/", RightRead, RightOperate, RightPurge)

	h.fail("POST", "/v1/forget", key, map[string]any{"scope": s.scope, "entity": "Sarah", "match": "Austin"}, 400, CodeInvalidRequest)
	h.fail("POST", "/v1/forget", key, map[string]any{"scope": s.scope, "entity": "Sarah", "all": true}, 400, CodeInvalidRequest)
	h.fail("POST", "/v1/forget", key, map[string]any{"scope": s.scope, "entity": "Sa\x00rah"}, 400, CodeInvalidRequest)
	h.fail("POST", "/v1/forget", key, map[string]any{"scope_prefix": "tenant:a/", "entity": "Sarah", "all": true, "purge": true}, 400, CodeInvalidRequest)
	r := h.fail("POST", "/v1/forget", key, map[string]any{"scope": s.scope, "entity": "Sarahh"}, 404, CodeNotFound)
	require.Contains(t, r.errorMessage(t), `did you mean "Sarah"?`)
	h.fail("POST", "/v1/forget", h.key("tenant:b/", allRights...), map[string]any{"scope": s.scope, "entity": "Sarah"}, 403, CodeForbidden)
	h.fail("POST", "/v1/forget", h.key("tenant:a/", RightRead), map[string]any{"scope": s.scope, "entity": "Sarah"}, 403, CodeForbidden)

	var forgot Forgotten
	h.ok("POST", "/v1/forget", key, map[string]any{"scope": s.scope, "entity": "my sister"}, 200, &forgot)
	require.ElementsMatch(t, []int64{s.austin, s.denver}, *forgot.Forgotten, "every belief about her, superseded ones too")
	var bs Beliefs
	h.ok("GET", "/v1/beliefs?all=true&scope="+url.QueryEscape(s.scope), key, nil, 200, &bs)
	require.ElementsMatch(t, []string{"User lives in Boston", "Sally plays the cello"}, statements(bs.Beliefs))

	// MCP's forget takes an entity too.
	var mcpForgot Forgotten
	callTool(t, h.mcpSession(t, key), "forget", map[string]any{"scope": s.scope, "entity": "Sally"}, &mcpForgot)
	require.Equal(t, []int64{s.cello}, *mcpForgot.Forgotten)

	// A purge by entity erases her beliefs, forgotten ones included, and her names.
	h.ok("POST", "/v1/forget", key, map[string]any{"scope": s.scope, "entity": "Sarah", "purge": true}, 200, &forgot)
	require.EqualValues(t, 2, forgot.Purged.Counts["belief"])
	require.EqualValues(t, 1, forgot.Purged.Counts["entity"])
	h.fail("GET", entityPath("Sarah", s.scope, false), key, nil, 404, CodeNotFound)
	var list Entities
	h.ok("GET", "/v1/entities?scope="+url.QueryEscape(s.scope), key, nil, 200, &list)
	require.NotContains(t, keys(list.Entities), "sister")
	require.Contains(t, keys(list.Entities), "user")
}
