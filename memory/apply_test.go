package memory

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/internal/testclock"
)

type testBundle struct {
	schema *dbtest.Schema
	clock  *testclock.Clock
}

func setup(t *testing.T) (*Store, *testBundle) {
	t.Helper()
	schema := dbtest.New(t)
	clock := testclock.New(day("2026-06-01"))
	return NewStore(schema.Pool, &Config{Now: clock.Now}), &testBundle{schema: schema, clock: clock}
}

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func fact(statement, attribute string, validFrom string) Fact {
	f := Fact{Statement: statement, Subject: "user", Attribute: attribute, Kind: KindAttribute, Confidence: 0.9, Origin: OriginUserStated}
	if validFrom != "" {
		f.ValidFrom = new(day(validFrom))
	}
	return f
}

func resolves(f Fact, index int, action Action, reason Reason) Fact {
	f.Resolves = &Directive{Index: index, Action: action, Reason: reason}
	return f
}

func extraction(scope, at string, candidates []int64, facts ...Fact) *Batch {
	return &Batch{Scope: scope, Origin: RevisionExtraction, At: day(at), Candidates: candidates, Facts: facts}
}

func mustApply(t *testing.T, s *Store, b *Batch) *Result {
	t.Helper()
	res, err := s.Apply(context.Background(), b)
	require.NoError(t, err)
	return res
}

func ids(bs []Belief) []int64 {
	out := make([]int64, len(bs))
	for i, b := range bs {
		out[i] = b.ID
	}
	return out
}

func byStatement(t *testing.T, bs []Belief, statement string) Belief {
	t.Helper()
	for _, b := range bs {
		if b.Statement == statement {
			return b
		}
	}
	require.FailNowf(t, "belief not found", "%q among %v", statement, statementsOf(bs))
	return Belief{}
}

func statementsOf(bs []Belief) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Statement
	}
	sort.Strings(out)
	return out
}

// shape is a belief with ids replaced by statements, to compare states reached in
// different orders.
func shape(bs []Belief) []string {
	byID := map[int64]string{}
	for _, b := range bs {
		byID[b.ID] = b.Statement
	}
	var out []string
	for _, b := range bs {
		until := "-"
		if b.ValidUntil != nil {
			until = b.ValidUntil.Format(time.DateOnly)
		}
		var sup, by []string
		for _, id := range b.Supersedes {
			sup = append(sup, byID[id])
		}
		for _, id := range b.SupersededBy {
			by = append(by, byID[id])
		}
		out = append(out, fmt.Sprintf("%s|%s|%s..%s|supersedes=%v|by=%v|seen=%d", b.Statement, b.Status,
			b.ValidFrom.Format(time.DateOnly), until, sup, by, b.ReinforcedCount))
	}
	sort.Strings(out)
	return out
}

func count(t *testing.T, bundle *testBundle, table string) int {
	t.Helper()
	var n int
	require.NoError(t, bundle.schema.Pool.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n))
	return n
}

const (
	nyc   = "User lives in New York City"
	miami = "User lives in Miami"
)

func TestApplyNYCThenMiami(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)

	first := mustApply(t, store, extraction("user:1", "2026-01-15", nil, fact(nyc, "location", "")))
	require.Equal(t, OutcomeAccepted, first.Facts[0].Kind)
	nycID := first.Facts[0].BeliefID

	second := mustApply(t, store, extraction("user:1", "2026-03-20", []int64{nycID},
		resolves(fact(miami, "location", "2026-02-20"), 0, ActionSupersede, ReasonTemporal)))
	require.Equal(t, OutcomeSuperseded, second.Facts[0].Kind)
	miamiID := second.Facts[0].BeliefID

	current, err := store.Current(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, []string{miami}, statementsOf(current))

	all, err := store.All(ctx, "user:1")
	require.NoError(t, err)
	require.Len(t, all, 2)
	n, m := byStatement(t, all, nyc), byStatement(t, all, miami)
	require.Equal(t, StatusSuperseded, n.Status)
	require.Equal(t, day("2026-01-15"), n.ValidFrom)
	require.Equal(t, day("2026-02-20"), *n.ValidUntil)
	require.Equal(t, m.ValidFrom, *n.ValidUntil)
	require.Equal(t, []int64{miamiID}, n.SupersededBy)
	require.Equal(t, []int64{nycID}, m.Supersedes)
	require.Nil(t, m.SupersededBy)
	require.NotNil(t, n.RetiredAt)

	events, err := store.Events(ctx, "user:1", 0)
	require.NoError(t, err)
	require.Len(t, events, 1)
	require.Equal(t, ActionSupersede, events[0].Action)
	require.Equal(t, ReasonTemporal, events[0].Reason)
	require.Equal(t, nycID, events[0].OldBeliefID)
	require.Equal(t, miamiID, *events[0].NewBeliefID)
	require.Equal(t, nyc, events[0].OldStatement)
	require.Equal(t, 0, count(t, bundle, "belief_conflict"))
}

// applyInOrder applies each step with the scope's active beliefs as candidates, as
// extraction would, and returns the final state.
type step struct {
	at        string
	statement string
	validFrom string
}

func applySteps(t *testing.T, store *Store, scope string, steps []step) []Belief {
	t.Helper()
	ctx := context.Background()
	for _, s := range steps {
		current, err := store.Current(ctx, scope)
		require.NoError(t, err)
		f := fact(s.statement, "job", s.validFrom)
		if len(current) > 0 {
			f = resolves(f, 0, ActionSupersede, ReasonTemporal)
		}
		mustApply(t, store, extraction(scope, s.at, ids(current), f))
	}
	all, err := store.All(ctx, scope)
	require.NoError(t, err)
	return all
}

func TestApplyOrderIndependence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("MiamiBeforeNYC", func(t *testing.T) {
		t.Parallel()
		store, _ := setup(t)
		steps := []step{{"2026-01-15", nyc, "2026-01-15"}, {"2026-03-20", miami, "2026-02-20"}}
		inOrder := applySteps(t, store, "user:in-order", steps)
		reversed := applySteps(t, store, "user:reversed", []step{steps[1], steps[0]})
		require.Equal(t, shape(inOrder), shape(reversed))
		current, err := store.Current(ctx, "user:reversed")
		require.NoError(t, err)
		require.Equal(t, []string{miami}, statementsOf(current))
	})

	t.Run("ChainOfThree", func(t *testing.T) {
		t.Parallel()
		store, _ := setup(t)
		junior := step{"2020-01-10", "User is a junior developer at Acme", "2020-01-10"}
		senior := step{"2022-03-01", "User is a senior developer at Acme", "2022-03-01"}
		lead := step{"2024-06-01", "User is a tech lead at Globex", "2024-06-01"}
		orders := [][]step{
			{junior, senior, lead}, {lead, senior, junior}, {senior, junior, lead},
			{senior, lead, junior}, {lead, junior, senior}, {junior, lead, senior},
		}
		want := shape(applySteps(t, store, "user:order-0", orders[0]))
		require.Contains(t, want, "User is a junior developer at Acme|superseded|2020-01-10..2022-03-01|supersedes=[]|by=[User is a senior developer at Acme]|seen=0")
		for i, order := range orders[1:] {
			scope := fmt.Sprintf("user:order-%d", i+1)
			require.Equal(t, want, shape(applySteps(t, store, scope, order)), "order %d", i+1)
		}

		for _, tc := range []struct{ at, want string }{
			{"2021-01-01", junior.statement},
			{"2023-01-01", senior.statement},
			{"2025-01-01", lead.statement},
		} {
			asOf, err := store.AsOf(ctx, "user:order-1", day(tc.at))
			require.NoError(t, err)
			require.Equal(t, []string{tc.want}, statementsOf(asOf), "as of %s", tc.at)
		}
		asOf, err := store.AsOf(ctx, "user:order-1", day("2019-01-01"))
		require.NoError(t, err)
		require.Empty(t, asOf)
	})
}

func TestApplyRetract(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("PureContraction", func(t *testing.T) {
		t.Parallel()
		store, bundle := setup(t)
		kafka := mustApply(t, store, extraction("team:1", "2026-02-01", nil, fact("Team is migrating to Kafka", "plan", ""))).Facts[0].BeliefID
		res := mustApply(t, store, extraction("team:1", "2026-03-01", []int64{kafka},
			resolves(Fact{Confidence: 0.9, Origin: OriginUserStated, Quote: "we are NOT doing the Kafka migration"}, 0, ActionRetract, ReasonTemporal)))
		require.Equal(t, OutcomeRetracted, res.Facts[0].Kind)
		require.Zero(t, res.Facts[0].BeliefID)

		all, err := store.All(ctx, "team:1")
		require.NoError(t, err)
		require.Len(t, all, 1, "a pure retraction stores nothing new")
		require.Equal(t, StatusRetracted, all[0].Status)
		require.Equal(t, day("2026-03-01"), *all[0].ValidUntil)
		require.Nil(t, all[0].SupersededBy)
		current, err := store.Current(ctx, "team:1")
		require.NoError(t, err)
		require.Empty(t, current)
		require.Equal(t, 1, count(t, bundle, "revision_event"))
	})

	t.Run("WithReplacingStatement", func(t *testing.T) {
		t.Parallel()
		store, _ := setup(t)
		py := mustApply(t, store, extraction("user:2", "2026-02-01", nil, fact("User writes Python", "language", ""))).Facts[0].BeliefID
		res := mustApply(t, store, extraction("user:2", "2026-03-01", []int64{py},
			resolves(fact("User writes Rust", "language", ""), 0, ActionRetract, ReasonCorrection)))
		require.Equal(t, OutcomeRetracted, res.Facts[0].Kind)
		rust := res.Facts[0].BeliefID
		require.NotZero(t, rust)

		all, err := store.All(ctx, "user:2")
		require.NoError(t, err)
		p, r := byStatement(t, all, "User writes Python"), byStatement(t, all, "User writes Rust")
		require.Equal(t, StatusRetracted, p.Status)
		require.Equal(t, p.ValidFrom, *p.ValidUntil, "a correction: it was never true")
		require.Equal(t, []int64{rust}, p.SupersededBy)
		require.Equal(t, StatusActive, r.Status)
		require.Equal(t, p.ValidFrom, r.ValidFrom, "the correction holds from when the error was thought to")

		asOf, err := store.AsOf(ctx, "user:2", day("2026-02-15"))
		require.NoError(t, err)
		require.Equal(t, []string{"User writes Rust"}, statementsOf(asOf))
	})

	t.Run("OlderThanTheBelief", func(t *testing.T) {
		t.Parallel()
		store, bundle := setup(t)
		id := mustApply(t, store, extraction("user:3", "2026-04-01", nil, fact("User owns a bike", "vehicle", ""))).Facts[0].BeliefID
		res := mustApply(t, store, extraction("user:3", "2026-01-01", []int64{id},
			resolves(Fact{Confidence: 0.9, Origin: OriginUserStated}, 0, ActionRetract, ReasonTemporal)))
		require.Equal(t, OutcomeConflict, res.Facts[0].Kind)
		b, err := store.Get(ctx, id)
		require.NoError(t, err)
		require.Equal(t, StatusActive, b.Status)
		conflicts, err := store.Conflicts(ctx, "user:3", false)
		require.NoError(t, err)
		require.Len(t, conflicts, 1)
		require.Equal(t, CauseTimeOrder, *conflicts[0].Cause)
		require.Equal(t, 0, count(t, bundle, "revision_event"))
	})
}

func TestApplyReinforceAndReject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)

	id := mustApply(t, store, extraction("user:1", "2026-01-01", nil, fact("User prefers dark roast coffee", "coffee", ""))).Facts[0].BeliefID

	res := mustApply(t, store, extraction("user:1", "2026-02-01", []int64{id},
		resolves(fact("User prefers dark roast coffee", "coffee", ""), 0, ActionReinforce, ReasonRestated)))
	require.Equal(t, OutcomeReinforced, res.Facts[0].Kind)

	res = mustApply(t, store, extraction("user:1", "2026-03-01", nil, fact("user prefers dark  roast coffee.", "coffee", "")))
	require.Equal(t, OutcomeDuplicate, res.Facts[0].Kind, "an exact duplicate of an active belief is not stored")
	require.Equal(t, id, res.Facts[0].TargetID)

	low := fact("User might like tea", "drink", "")
	low.Confidence = 0.2
	res = mustApply(t, store, extraction("user:1", "2026-03-02", nil, low))
	require.Equal(t, OutcomeRejected, res.Facts[0].Kind)

	all, err := store.All(ctx, "user:1")
	require.NoError(t, err)
	require.Len(t, all, 1, "reinforce, duplicate and rejection store no row")
	require.Equal(t, 2, all[0].ReinforcedCount)
	require.Equal(t, day("2026-03-01"), all[0].LastSeenAt)
	require.Equal(t, 2, count(t, bundle, "revision_event"))
}

func TestApplyEntrenchment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("Authoritative", func(t *testing.T) {
		t.Parallel()
		store, bundle := setup(t)
		auth := fact("Account plan is Enterprise", "plan", "")
		auth.Origin = OriginAuthoritative
		id := mustApply(t, store, &Batch{Scope: "acct:1", Origin: RevisionOperator, At: day("2026-01-01"), Facts: []Fact{auth}}).Facts[0].BeliefID
		before, err := store.Get(ctx, id)
		require.NoError(t, err)

		for _, origin := range []RevisionOrigin{RevisionExtraction, RevisionConsolidation} {
			b := extraction("acct:1", "2026-02-01", []int64{id},
				resolves(fact("Account plan is Free", "plan", ""), 0, ActionSupersede, ReasonTemporal))
			b.Origin = origin
			res := mustApply(t, store, b)
			require.Equal(t, OutcomeConflict, res.Facts[0].Kind, origin)
			require.Contains(t, res.Facts[0].Detail, "authoritative")
		}
		res := mustApply(t, store, extraction("acct:1", "2026-02-01", []int64{id},
			resolves(Fact{Confidence: 1, Origin: OriginUserStated}, 0, ActionRetract, ReasonTemporal)))
		require.Equal(t, OutcomeConflict, res.Facts[0].Kind)

		after, err := store.Get(ctx, id)
		require.NoError(t, err)
		require.Equal(t, before, after, "the authoritative belief is unchanged")
		conflicts, err := store.Conflicts(ctx, "acct:1", false)
		require.NoError(t, err)
		require.Len(t, conflicts, 3)
		for _, c := range conflicts {
			require.Equal(t, CauseEntrenchment, *c.Cause)
			require.Equal(t, id, *c.TargetID)
		}
		require.Equal(t, "Account plan is Free", conflicts[0].Proposed.Statement)
		require.Equal(t, 1, count(t, bundle, "belief"), "a refused revision stores nothing")

		// An operator may change it.
		op := &Batch{Scope: "acct:1", Origin: RevisionOperator, At: day("2026-03-01"), Candidates: []int64{id},
			Facts: []Fact{resolves(fact("Account plan is Team", "plan", ""), 0, ActionSupersede, ReasonTemporal)}}
		require.Equal(t, OutcomeSuperseded, mustApply(t, store, op).Facts[0].Kind)
	})

	t.Run("UserStated", func(t *testing.T) {
		t.Parallel()
		store, _ := setup(t)
		id := mustApply(t, store, extraction("user:1", "2026-01-01", nil, fact(nyc, "location", ""))).Facts[0].BeliefID

		inferred := fact("User probably lives in Boston", "location", "")
		inferred.Origin = OriginInferred
		lower := fact("User lives in Boston", "location", "")
		lower.Confidence = 0.6
		for _, f := range []Fact{inferred, lower} {
			res := mustApply(t, store, extraction("user:1", "2026-02-01", []int64{id}, resolves(f, 0, ActionSupersede, ReasonTemporal)))
			require.Equal(t, OutcomeConflict, res.Facts[0].Kind, f.Statement)
		}
		current, err := store.Current(ctx, "user:1")
		require.NoError(t, err)
		require.Equal(t, []string{nyc}, statementsOf(current))
		conflicts, err := store.Conflicts(ctx, "user:1", false)
		require.NoError(t, err)
		require.Len(t, conflicts, 2)
	})
}

func TestApplyConflicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	id := mustApply(t, store, extraction("user:1", "2026-01-01", nil, fact(nyc, "location", ""))).Facts[0].BeliefID

	// Two facts on the same target: the second is stale, never a revision of the first.
	res := mustApply(t, store, extraction("user:1", "2026-02-01", []int64{id},
		resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal),
		resolves(fact("User lives in Boston", "location", ""), 0, ActionSupersede, ReasonTemporal),
		resolves(fact("User lives in Paris", "location", ""), 7, ActionSupersede, ReasonTemporal)))
	require.Equal(t, []OutcomeKind{OutcomeSuperseded, OutcomeConflict, OutcomeConflict},
		[]OutcomeKind{res.Facts[0].Kind, res.Facts[1].Kind, res.Facts[2].Kind})

	conflicts, err := store.Conflicts(ctx, "user:1", false)
	require.NoError(t, err)
	require.Len(t, conflicts, 2)
	require.Equal(t, CauseStaleTarget, *conflicts[0].Cause)
	require.Equal(t, CauseInvalidIndex, *conflicts[1].Cause)
	require.Equal(t, 2, count(t, bundle, "belief"))

	// A later job that was shown NYC before Miami replaced it is re-checked against Miami.
	res = mustApply(t, store, extraction("user:1", "2026-04-01", []int64{id},
		resolves(fact("User lives in Denver", "location", "2026-04-01"), 0, ActionSupersede, ReasonTemporal)))
	require.Equal(t, OutcomeSuperseded, res.Facts[0].Kind)
	miamiBelief := byStatement(t, mustAll(t, store, "user:1"), miami)
	require.Equal(t, StatusSuperseded, miamiBelief.Status)
	require.Equal(t, []int64{res.Facts[0].BeliefID}, miamiBelief.SupersededBy)
}

func mustAll(t *testing.T, store *Store, scope string) []Belief {
	t.Helper()
	all, err := store.All(context.Background(), scope)
	require.NoError(t, err)
	return all
}

func TestApplyScopes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)

	a := mustApply(t, store, extraction("tenant:a", "2026-01-01", nil, fact(nyc, "location", ""))).Facts[0].BeliefID
	mustApply(t, store, extraction("tenant:b", "2026-01-01", nil, fact("User lives in Oslo", "location", "")))

	_, err := store.Apply(ctx, extraction("tenant:b", "2026-02-01", []int64{a},
		resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal)))
	require.ErrorIs(t, err, ErrScope)
	_, err = store.Apply(ctx, extraction("tenant:b", "2026-02-01", []int64{987654}, fact(miami, "location", "")))
	require.ErrorIs(t, err, ErrStale, "a candidate that vanished (purged) makes the writer decide again")
	foreign := extraction("tenant:b", "2026-02-01", nil, fact(miami, "location", ""))
	foreign.EpisodeID = new(insertEpisode(t, bundle, "tenant:a", "I live in Miami.", "2026-02-01"))
	_, err = store.Apply(ctx, foreign)
	require.ErrorIs(t, err, ErrScope, "a batch's episode is of its scope")

	for scope, want := range map[string][]string{"tenant:a": {nyc}, "tenant:b": {"User lives in Oslo"}} {
		current, err := store.Current(ctx, scope)
		require.NoError(t, err)
		require.Equal(t, want, statementsOf(current))
		all, err := store.All(ctx, scope)
		require.NoError(t, err)
		require.Equal(t, want, statementsOf(all))
	}
	require.Equal(t, 2, count(t, bundle, "belief"))
	require.Equal(t, 0, count(t, bundle, "revision_event"))
}

func TestApplyInvalidBatchChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	id := mustApply(t, store, extraction("user:1", "2026-01-01", nil, fact(nyc, "location", ""))).Facts[0].BeliefID

	good := resolves(fact(miami, "location", ""), 0, ActionSupersede, ReasonTemporal)
	mutate := func(f func(*Fact)) Fact {
		bad := fact("User likes tea", "drink", "")
		f(&bad)
		return bad
	}
	tooMany := make([]Fact, MaxFacts+1)
	for i := range tooMany {
		tooMany[i] = fact(fmt.Sprintf("User fact %d", i), "other", "")
	}
	cases := map[string][]Fact{
		"NaN confidence":           {good, mutate(func(f *Fact) { f.Confidence = math.NaN() })},
		"confidence above 1":       {good, mutate(func(f *Fact) { f.Confidence = 1.5 })},
		"year 0":                   {good, mutate(func(f *Fact) { f.ValidFrom = new(time.Time{}) })},
		"year 9999":                {good, mutate(func(f *Fact) { f.ValidFrom = new(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)) })},
		"authoritative from LLM":   {good, mutate(func(f *Fact) { f.Origin = OriginAuthoritative })},
		"unknown origin":           {good, mutate(func(f *Fact) { f.Origin = "god" })},
		"unknown kind":             {good, mutate(func(f *Fact) { f.Kind = "gossip" })},
		"empty attribute":          {good, mutate(func(f *Fact) { f.Attribute = " " })},
		"empty statement":          {good, mutate(func(f *Fact) { f.Statement = "" })},
		"NUL in statement":         {good, mutate(func(f *Fact) { f.Statement = "a\x00b" })},
		"invalid UTF-8":            {good, mutate(func(f *Fact) { f.Statement = "caf\xe9" })},
		"huge statement":           {good, mutate(func(f *Fact) { f.Statement = strings.Repeat("x", MaxStatementLen+1) })},
		"unknown action":           {good, mutate(func(f *Fact) { f.Resolves = &Directive{Action: "delete", Reason: ReasonTemporal} })},
		"reinforce with temporal":  {good, mutate(func(f *Fact) { f.Resolves = &Directive{Action: ActionReinforce, Reason: ReasonTemporal} })},
		"supersede without reason": {good, mutate(func(f *Fact) { f.Resolves = &Directive{Action: ActionSupersede} })},
		"too many facts":           tooMany,
	}
	for name, facts := range cases {
		_, err := store.Apply(ctx, extraction("user:1", "2026-02-01", []int64{id}, facts...))
		require.ErrorIs(t, err, ErrInvalid, name)
	}
	current, err := store.Current(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, []string{nyc}, statementsOf(current))
	require.Equal(t, 1, count(t, bundle, "belief"))
	require.Equal(t, 0, count(t, bundle, "revision_event"))
	require.Equal(t, 0, count(t, bundle, "belief_conflict"))
}

func TestApplySerializesScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	id := mustApply(t, store, extraction("user:1", "2026-01-01", nil, fact(nyc, "location", ""))).Facts[0].BeliefID

	// The first writer holds the scope; the second must wait for it, not interleave.
	tx, err := bundle.schema.Pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	_, err = store.ApplyTx(ctx, tx, extraction("user:1", "2026-02-01", []int64{id},
		resolves(fact(miami, "location", "2026-02-01"), 0, ActionSupersede, ReasonTemporal)))
	require.NoError(t, err)

	done := make(chan *Result)
	go func() {
		res, err := store.Apply(ctx, extraction("user:1", "2026-03-01", []int64{id},
			resolves(fact("User lives in Boston", "location", "2026-03-01"), 0, ActionSupersede, ReasonTemporal)))
		if err != nil {
			t.Errorf("second apply: %v", err)
		}
		done <- res
	}()
	waitForAdvisoryLockWaiter(t, bundle)
	require.NoError(t, tx.Commit(ctx))
	second := <-done
	require.Equal(t, OutcomeSuperseded, second.Facts[0].Kind)

	all := mustAll(t, store, "user:1")
	require.Equal(t, []string{
		"User lives in Boston|active|2026-03-01..-|supersedes=[User lives in Miami]|by=[]|seen=0",
		"User lives in Miami|superseded|2026-02-01..2026-03-01|supersedes=[User lives in New York City]|by=[User lives in Boston]|seen=0",
		"User lives in New York City|superseded|2026-01-01..2026-02-01|supersedes=[]|by=[User lives in Miami]|seen=0",
	}, shape(all))
	require.Equal(t, 2, count(t, bundle, "revision_event"))

	// Many writers at once: every fact stored once, nothing lost or doubled.
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			_, err := store.Apply(ctx, extraction("user:many", "2026-01-01", nil,
				fact(fmt.Sprintf("User fact %d", i), "other", ""), fact("User has a cat", "pet", "")))
			if err != nil {
				t.Errorf("apply %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	all = mustAll(t, store, "user:many")
	require.Len(t, all, 21)
	require.Equal(t, 19, byStatement(t, all, "User has a cat").ReinforcedCount)
}

// waitForAdvisoryLockWaiter waits until a session of the test blocks on an advisory lock.
func waitForAdvisoryLockWaiter(t *testing.T, bundle *testBundle) {
	t.Helper()
	require.Eventually(t, func() bool {
		n, err := bundle.schema.WaitingOnAdvisoryLock(context.Background())
		return err == nil && n > 0
	}, 10*time.Second, 10*time.Millisecond)
}

func TestKnownAt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)

	bundle.clock.Set(day("2026-01-16"))
	id := mustApply(t, store, extraction("user:1", "2026-01-15", nil, fact(nyc, "location", ""))).Facts[0].BeliefID
	bundle.clock.Set(day("2026-03-21"))
	mustApply(t, store, extraction("user:1", "2026-03-20", []int64{id},
		resolves(fact(miami, "location", "2026-02-20"), 0, ActionSupersede, ReasonTemporal)))

	for _, tc := range []struct {
		at   string
		want []string
	}{{"2026-01-01", nil}, {"2026-03-01", []string{nyc}}, {"2026-04-01", []string{miami}}} {
		known, err := store.KnownAt(ctx, "user:1", day(tc.at))
		require.NoError(t, err)
		require.Equal(t, tc.want, nilIfEmpty(statementsOf(known)), "known at %s", tc.at)
	}
	// On 2026-03-01 memory still believed NYC, though Miami was already true.
	asOf, err := store.AsOf(ctx, "user:1", day("2026-03-01"))
	require.NoError(t, err)
	require.Equal(t, []string{miami}, statementsOf(asOf))

	history, err := store.History(ctx, id)
	require.NoError(t, err)
	require.Equal(t, []string{nyc, miami}, []string{history[0].Statement, history[1].Statement})
	_, err = store.History(ctx, 424242)
	require.ErrorIs(t, err, ErrNotFound)
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestEmbeddings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)

	b := extraction("user:1", "2026-01-01", nil,
		withVec("User likes espresso", []float32{1, 0, 0}),
		withVec("User likes tea", []float32{0.8, 0.6, 0}),
		withVec("User owns a dog", []float32{0, 0, 1}))
	b.EmbedModel = "tiny"
	mustApply(t, store, b)
	other := extraction("user:2", "2026-01-01", nil, withVec("User likes coffee", []float32{1, 0, 0}))
	other.EmbedModel = "tiny"
	mustApply(t, store, other)

	near, err := store.Nearest(ctx, "user:1", "tiny", []float32{1, 0.1, 0}, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"User likes espresso", "User likes tea"}, []string{near[0].Statement, near[1].Statement})
	require.Less(t, *near[0].Distance, *near[1].Distance)

	// A second model of another dimension lives beside the first.
	big := make([]float32, 1536)
	big[3] = 1
	b2 := extraction("user:1", "2026-01-02", nil, withVec("User likes jazz", big))
	b2.EmbedModel = "large"
	mustApply(t, store, b2)
	near, err = store.Nearest(ctx, "user:1", "large", big, 5)
	require.NoError(t, err)
	require.Equal(t, "User likes jazz", near[0].Statement)
	require.NotNil(t, near[0].Distance)
	// The beliefs of the other model are not ranked, but still found: after them.
	require.ElementsMatch(t, []string{"User likes espresso", "User likes tea", "User owns a dog"}, statementsOf(near[1:]))
	for _, b := range near[1:] {
		require.Nil(t, b.Distance)
	}

	require.ErrorIs(t, store.EnsureEmbeddingModel(ctx, "tiny", 4), ErrEmbeddingModel)
	require.ErrorIs(t, store.EnsureEmbeddingModel(ctx, "huge", 2001), ErrEmbeddingModel)
	_, err = store.Nearest(ctx, "user:1", "unknown", []float32{1}, 1)
	require.ErrorIs(t, err, ErrEmbeddingModel)

	var indexes []string
	// pg_indexes would read every schema's indexes, which parallel tests are dropping.
	rows, err := bundle.schema.Pool.Query(ctx, `SELECT c.relname FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_am am ON am.oid = c.relam
		WHERE n.nspname = $1 AND c.relkind = 'i' AND am.amname = 'hnsw'`, bundle.schema.Name)
	require.NoError(t, err)
	indexes, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Empty(t, indexes, "no vector index is shared by scopes: a small scope is scanned exactly")
}

func TestEnsureEmbeddingModelRejectsMismatchAcrossStores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, bundle := setup(t)
	require.NoError(t, store.EnsureEmbeddingModel(ctx, "m", 8))
	fresh := NewStore(bundle.schema.Pool, nil)
	err := fresh.EnsureEmbeddingModel(ctx, "m", 16)
	require.ErrorIs(t, err, ErrEmbeddingModel, "%v", err)
}
