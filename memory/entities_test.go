package memory

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/entity"
)

func about(f Fact, subject string, aliases ...string) Fact {
	f.Subject, f.SubjectAliases = subject, aliases
	return f
}

// The three cases: a fact about the user's sister or daughter, given as a
// supersession of the user's own belief, is stored as its own entity's belief; the
// user's stays current, and the directive is held as other_entity.
func TestOtherEntityIsNoReplacement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := setup(t)
	const scope = "user:ent"

	seed := mustApply(t, s, extraction(scope, "2026-01-01", nil,
		fact("User lives in Boston", "home_city", ""),
		fact("User is allergic to penicillin", "allergy", "")))
	boston, penicillin := seed.Facts[0].BeliefID, seed.Facts[1].BeliefID

	res := mustApply(t, s, extraction(scope, "2026-03-01", []int64{boston, penicillin},
		resolves(about(fact("User's sister lives in Austin", "home_city", ""), "user's sister"), 0, ActionSupersede, ReasonTemporal),
		resolves(about(fact("User's daughter is allergic to penicillin", "allergy", ""), "my daughter"), 1, ActionSupersede, ReasonTemporal)))
	for i, o := range res.Facts {
		require.Equal(t, OutcomeConflict, o.Kind, "fact %d", i)
		require.Equal(t, CauseOtherEntity, o.Cause, "fact %d", i)
		require.NotZero(t, o.BeliefID, "fact %d is stored as its own entity's belief", i)
	}

	current, err := s.Current(ctx, scope)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"User lives in Boston", "User is allergic to penicillin",
		"User's sister lives in Austin", "User's daughter is allergic to penicillin"}, statementsOf(current))
	require.Equal(t, entity.User, byStatement(t, current, "User lives in Boston").Entity)
	require.Equal(t, "sister", byStatement(t, current, "User's sister lives in Austin").Entity)
	require.Equal(t, "daughter", byStatement(t, current, "User's daughter is allergic to penicillin").Entity)

	// The sister moves again: a supersession of her own belief is a replacement.
	austin := byStatement(t, current, "User's sister lives in Austin").ID
	res = mustApply(t, s, extraction(scope, "2026-05-01", []int64{austin},
		resolves(about(fact("User's sister lives in Denver", "home_city", ""), "Sister"), 0, ActionSupersede, ReasonTemporal)))
	require.Equal(t, OutcomeSuperseded, res.Facts[0].Kind)

	view, err := s.EntityByName(ctx, scope, "the user's sister", true)
	require.NoError(t, err)
	require.Equal(t, entity.KindPerson, view.Kind)
	require.Len(t, view.Slots, 1)
	require.Equal(t, "home_city", view.Slots[0].Attribute)
	require.Equal(t, []string{"User's sister lives in Denver"}, statementsOf(view.Slots[0].Current))
	require.Equal(t, []string{"User's sister lives in Austin", "User's sister lives in Denver"}, statementsOf(view.Slots[0].History),
		"the slot's chain, oldest first")

	es, err := s.Entities(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, []string{"user", "daughter", "sister"}, keysOf(es), "the user first, then by name")
	require.Equal(t, []int{2, 1, 1}, []int{es[0].CurrentBeliefs, es[1].CurrentBeliefs, es[2].CurrentBeliefs},
		"current beliefs only: the sister's Austin is history")

	// An operator's write is never held: an operator may move a belief across entities.
	op := &Batch{Scope: scope, Origin: RevisionOperator, Candidates: []int64{boston},
		Facts: []Fact{resolves(about(fact("User's wife lives in Salem", "home_city", ""), "wife"), 0, ActionSupersede, ReasonCorrection)}}
	require.Equal(t, OutcomeSuperseded, mustApply(t, s, op).Facts[0].Kind)
}

func keysOf(es []Entity) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Key
	}
	return out
}

// Aliases are learned from what a fact says, found by any of its names, and never taken
// from another entity: an alias that names one is a proposal for an operator, and a merge
// moves names and beliefs and nothing else.
func TestEntityAliasesAndMerge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := setup(t)
	const scope = "user:alias"

	mustApply(t, s, extraction(scope, "2026-01-01", nil,
		about(fact("User's sister works at Acme", "employer", ""), "sister", "Sarah", "sis"),
		about(fact("Sally plays the cello", "instrument", ""), "Sally")))
	view, err := s.EntityByName(ctx, scope, "SARAH", false)
	require.NoError(t, err)
	require.Equal(t, "sister", view.Key)
	require.Equal(t, []string{"Sarah", "sis"}, view.Aliases)

	// A later conversation calls the sister Sally, a name of another entity: no alias
	// is moved, a proposal is opened, once.
	for range 2 {
		mustApply(t, s, extraction(scope, "2026-02-01", nil,
			about(fact("User's sister lives in Austin", "home_city", ""), "my sister", "Sally")))
	}
	items, err := s.Conflicts(ctx, scope, false)
	require.NoError(t, err)
	require.Len(t, items, 1)
	require.Equal(t, CauseSameEntity, *items[0].Cause)
	require.Equal(t, &MergeProposal{Into: "sister", Other: "sally"}, items[0].Proposed.Merge)
	sally, err := s.EntityByName(ctx, scope, "sally", false)
	require.NoError(t, err)
	require.Equal(t, "sally", sally.Key, "the alias was not taken from its entity")

	_, err = s.EntityByName(ctx, scope, "Sarahh", false)
	var unknown *UnknownEntityError
	require.ErrorAs(t, err, &unknown)
	require.Equal(t, "Sarah", unknown.Nearest)
	require.ErrorIs(t, err, ErrUnknownEntity)

	_, err = s.MergeEntities(ctx, Merge{Scope: scope, Into: "sister", Other: "sarah"})
	require.ErrorIs(t, err, ErrInvalid, "one entity already")
	_, err = s.MergeEntities(ctx, Merge{Scope: scope, Into: "sister", Other: "me"})
	require.ErrorIs(t, err, ErrInvalid, "the user is never absorbed")
	user, err := s.EntityByName(ctx, scope, "I", false)
	require.NoError(t, err, "a scope memory holds has the user, before any belief about them")
	require.Equal(t, "user", user.Key)
	require.True(t, user.CreatedAt.IsZero())
	_, err = s.EntityByName(ctx, "user:never", "user", false)
	require.ErrorIs(t, err, ErrUnknownEntity, "a scope memory never held has no one")

	mustApply(t, s, extraction(scope, "2026-02-02", nil, about(fact("Sally sings", "hobby", ""), "Sally", "Sal", "Sally B")))
	merged, err := s.MergeEntities(ctx, Merge{Scope: scope, Into: "Sarah", Other: "Sally", Note: "same person"})
	require.NoError(t, err)
	require.EqualValues(t, 2, merged.Moved, "the beliefs, not the three names")
	require.Equal(t, []int64{items[0].ID}, merged.Closed)
	require.Equal(t, "sister", merged.Entity.Key)
	require.Contains(t, merged.Entity.Aliases, "Sally")
	current, err := s.Current(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, "Sally plays the cello", byStatement(t, current, "Sally plays the cello").Statement)
	require.Equal(t, "sister", byStatement(t, current, "Sally plays the cello").Entity)
	es, err := s.Entities(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, []string{"sister"}, keysOf(es))
	open, err := s.Conflicts(ctx, scope, false)
	require.NoError(t, err)
	require.Empty(t, open)

	// A fact about Sally now resolves to the sister.
	res := mustApply(t, s, extraction(scope, "2026-03-01", nil, about(fact("Sally drives a Volvo", "car", ""), "Sally")))
	b, err := s.Get(ctx, res.Facts[0].BeliefID)
	require.NoError(t, err)
	require.Equal(t, "sister", b.Entity)
}

// Consolidation's proposals: pairs found by name alone, each once, and never the user.
func TestProposeMerges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := setup(t)
	const scope = "user:prop"
	mustApply(t, s, extraction(scope, "2026-01-01", nil,
		about(fact("User's mom lives in Ohio", "home_city", ""), "mom"),
		about(fact("User's mother is a nurse", "job", ""), "user's mother"),
		about(fact("Sarah Connor runs a gym", "job", ""), "Sarah Connor"),
		about(fact("Sarah likes tea", "drink", ""), "Sarah"),
		about(fact("Acme is in Ohio", "location", ""), "Acme")))
	opened, err := s.ProposeMerges(ctx, scope)
	require.NoError(t, err)
	require.Len(t, opened, 2)
	again, err := s.ProposeMerges(ctx, scope)
	require.NoError(t, err)
	require.Empty(t, again, "a pair is proposed once")
	items, err := s.Conflicts(ctx, scope, false)
	require.NoError(t, err)
	var merges []MergeProposal
	for _, it := range items {
		merges = append(merges, *it.Proposed.Merge)
	}
	require.ElementsMatch(t, []MergeProposal{{Into: "mom", Other: "mother"}, {Into: "sarah connor", Other: "sarah"}}, merges)
}

// Forget and purge by entity: one operator action for everything about someone; a purge
// also erases the entity's names.
func TestForgetAndPurgeByEntity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := setup(t)
	const scope = "user:ex"
	mustApply(t, s, extraction(scope, "2026-01-01", nil,
		fact("User lives in Lyon", "home_city", ""),
		about(fact("User's ex-husband lives in Paris", "home_city", ""), "ex-husband", "Marc"),
		about(fact("User's ex-husband owns a bakery", "business", ""), "Marc")))

	_, err := s.Forget(ctx, Selection{Scope: scope, Entity: "nobody"})
	require.ErrorIs(t, err, ErrUnknownEntity)
	forgotten, err := s.Forget(ctx, Selection{Scope: scope, Entity: "marc"})
	require.NoError(t, err)
	require.Len(t, forgotten, 2)
	current, err := s.Current(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, []string{"User lives in Lyon"}, statementsOf(current))

	purged, err := s.Purge(ctx, Selection{Scope: scope, Entity: "ex-husband"})
	require.NoError(t, err)
	require.EqualValues(t, 2, purged.Counts["belief"])
	require.EqualValues(t, 1, purged.Counts["entity"])
	require.EqualValues(t, 2, purged.Counts["entity_alias"])
	es, err := s.Entities(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, []string{"user"}, keysOf(es))

	_, err = s.Purge(ctx, Selection{Scope: scope, All: true})
	require.NoError(t, err)
	es, err = s.Entities(ctx, scope)
	require.NoError(t, err)
	require.Empty(t, es)
}

// An operator who applies a same_entity item merges the pair; once merged, a second
// item about one of them no longer applies.
func TestDecideSameEntity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := setup(t)
	const scope = "user:decide"
	mustApply(t, s, extraction(scope, "2026-01-01", nil,
		about(fact("User's mom lives in Ohio", "home_city", ""), "mom"),
		about(fact("User's mother is a nurse", "job", ""), "mother"),
		about(fact("User's mum bakes bread", "hobby", ""), "mum")))
	opened, err := s.ProposeMerges(ctx, scope)
	require.NoError(t, err)
	require.Len(t, opened, 3, "mom-mother, mom-mum, mother-mum")

	d, err := s.Decide(ctx, Decision{ID: opened[0], Scope: scope, Verdict: VerdictApply, Note: "one mother"})
	require.NoError(t, err)
	require.Equal(t, ResolvedApplied, *d.Item.Resolution)
	es, err := s.Entities(ctx, scope)
	require.NoError(t, err)
	require.Len(t, es, 2)

	// The pair that included the absorbed entity: its names are one entity's now, or
	// still two, and the items say so when applied.
	results := map[bool]int{}
	for _, id := range opened[1:] {
		_, err := s.Decide(ctx, Decision{ID: id, Scope: scope, Verdict: VerdictApply})
		results[err == nil]++
		if err != nil {
			require.ErrorIs(t, err, ErrNotApplicable)
		}
	}
	require.Equal(t, map[bool]int{true: 1, false: 1}, results)
	es, err = s.Entities(ctx, scope)
	require.NoError(t, err)
	require.Len(t, es, 1)
	require.Equal(t, 3, es[0].CurrentBeliefs)
}

// The user's own other name ("I'm Alex"), said after memory learned of an Alex: the
// proposal is to merge Alex into the user, which an operator's apply carries out, and
// the user's row is written then, with the name.
func TestUserAlias(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := setup(t)
	const scope = "user:alex"
	mustApply(t, s, extraction(scope, "2026-01-01", nil,
		about(fact("Alex plays chess", "hobby", ""), "Alex"),
		fact("User lives in Oslo", "home_city", "")))
	es, err := s.Entities(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, []string{"user", "alex"}, keysOf(es), "the user is listed without a row of their own")

	mustApply(t, s, extraction(scope, "2026-02-01", nil, about(fact("User is a nurse", "job", ""), "I", "Alex")))
	items, err := s.Conflicts(ctx, scope, false)
	require.NoError(t, err)
	require.Len(t, items, 1)
	require.Equal(t, &MergeProposal{Into: "user", Other: "alex"}, items[0].Proposed.Merge)
	_, err = s.Decide(ctx, Decision{ID: items[0].ID, Scope: scope, Verdict: VerdictApply})
	require.NoError(t, err)
	user, err := s.EntityByName(ctx, scope, "alex", false)
	require.NoError(t, err)
	require.Equal(t, "user", user.Key)
	require.Equal(t, []string{"Alex"}, user.Aliases)
	require.Equal(t, 3, user.CurrentBeliefs)
}

// The curator erases an entity's names with the last belief about them: a retired
// history of the ex-husband leaves no "Marc" in the registry.
func TestCuratorErasesEntitiesWithTheirLastBelief(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, bundle := setup(t)
	const scope = "user:cur"
	seed := mustApply(t, s, extraction(scope, "2026-01-01", nil,
		fact("User lives in Lyon", "home_city", ""),
		about(fact("User's ex-husband lives in Paris", "home_city", ""), "ex-husband", "Marc")))
	_, err := s.Forget(ctx, Selection{Scope: scope, IDs: []int64{seed.Facts[1].BeliefID}})
	require.NoError(t, err)

	bundle.clock.Advance(400 * 24 * time.Hour)
	got, err := s.Curate(ctx, 365*24*time.Hour, false)
	require.NoError(t, err)
	require.Len(t, got.Scopes, 1)
	require.EqualValues(t, 1, got.Scopes[0].Counts["entity"])
	require.EqualValues(t, 2, got.Scopes[0].Counts["entity_alias"])
	es, err := s.Entities(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, []string{"user"}, keysOf(es))
	_, err = s.EntityByName(ctx, scope, "Marc", false)
	require.ErrorIs(t, err, ErrUnknownEntity)
}
