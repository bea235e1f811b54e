package changes_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/changes"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/memory"
)

type setup struct {
	store  *memory.Store
	reader *changes.Reader
	schema *dbtest.Schema
}

func newSetup(t *testing.T) *setup {
	t.Helper()
	schema := dbtest.New(t)
	return &setup{schema: schema, reader: changes.NewReader(schema.Pool),
		store: memory.NewStore(schema.Pool, &memory.Config{Announcer: changes.NewLog(changes.Config{})})}
}

func date(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }

// accept stores one new belief in scope and supersedes it with statement: one revision
// event, whose id it returns.
func (s *setup) accept(t *testing.T, scope, statement string) int64 {
	t.Helper()
	ctx := context.Background()
	res, err := s.store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionOperator, At: date("2026-01-15"),
		Facts: []memory.Fact{{Statement: "before: " + statement, Attribute: statement, Confidence: 0.9, Origin: memory.OriginUserStated}}})
	require.NoError(t, err)
	require.Equal(t, memory.OutcomeAccepted, res.Facts[0].Kind)
	res, err = s.store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionOperator, At: date("2026-02-15"),
		Candidates: []int64{res.Facts[0].BeliefID},
		Facts: []memory.Fact{{Statement: statement, Attribute: statement, Confidence: 0.9, Origin: memory.OriginUserStated,
			Resolves: &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonCorrection}}}})
	require.NoError(t, err)
	require.Equal(t, memory.OutcomeSuperseded, res.Facts[0].Kind, res.Facts[0].Detail)
	require.NotZero(t, res.Facts[0].EventID)
	return res.Facts[0].EventID
}

// readAll reads q to its end, limit at a time, and returns the changes and the cursor.
func (s *setup) readAll(t *testing.T, q changes.Query) ([]changes.Change, changes.Cursor) {
	t.Helper()
	var all []changes.Change
	for {
		page, err := s.reader.Read(context.Background(), q)
		require.NoError(t, err)
		all = append(all, page.Changes...)
		q.After = page.Next
		if len(page.Changes) == 0 {
			return all, q.After
		}
	}
}

// refs is the rows that the changes of kind among cs name, in order.
func refs(cs []changes.Change, kind memory.ChangeKind) []int64 {
	var out []int64
	for _, c := range cs {
		if c.Kind == kind {
			out = append(out, c.RefID)
		}
	}
	return out
}

// positions is the positions of cs, in order.
func positions(cs []changes.Change) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.Position
	}
	return out
}

func TestFeedResumesFromCursor(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	e1 := s.accept(t, "user:1", "User likes tea")
	e2 := s.accept(t, "user:1", "User likes chess")
	s.accept(t, "user:2", "User likes rain")

	got, cur := s.readAll(t, changes.Query{Scope: "user:1", Limit: 1})
	require.Equal(t, []int64{e1, e2}, refs(got, memory.ChangeRevisionApplied))
	require.Len(t, refs(got, memory.ChangeBeliefCreated), 4, "each accept stores two beliefs")
	require.True(t, slices.IsSorted(positions(got)))

	// The cursor survives its text: a reader restarted with it reads what follows only.
	again, err := changes.ParseCursor(cur.String())
	require.NoError(t, err)
	e3 := s.accept(t, "user:1", "User likes go")
	got, _ = s.readAll(t, changes.Query{Scope: "user:1", After: again})
	require.Equal(t, []int64{e3}, refs(got, memory.ChangeRevisionApplied))

	_, err = changes.ParseCursor("not a cursor")
	require.ErrorIs(t, err, changes.ErrCursor)
}

func TestPrefixFeedKeepsToItsScopes(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	a := s.accept(t, "acme/user:1", "User likes tea")
	b := s.accept(t, "acme/user:2", "User likes chess")
	s.accept(t, "other/user:1", "User likes rain")
	c := s.accept(t, "acme/user:1", "User likes go")

	got, cur := s.readAll(t, changes.Query{Prefixes: []string{"acme/"}, Limit: 2})
	require.ElementsMatch(t, []int64{a, b, c}, refs(got, memory.ChangeRevisionApplied))
	// Within a scope, position order.
	var one []changes.Change
	for _, ch := range got {
		if ch.Scope == "acme/user:1" {
			one = append(one, ch)
		}
	}
	require.Equal(t, []int64{a, c}, refs(one, memory.ChangeRevisionApplied))
	require.True(t, slices.IsSorted(positions(one)))
	last := got[len(got)-1]
	require.Len(t, cur, 2)
	require.Equal(t, one[len(one)-1].Position, cur["acme/user:1"])
	require.Equal(t, last.Position, cur[last.Scope])
}

// Writers of one scope race; a reader reading beside them, a few at a time, ends with
// every change once, in the order they committed.
func TestConcurrentWritersNothingMissedNothingTwice(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	const writers, each = 4, 8
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				s.accept(t, "user:1", fmt.Sprintf("fact %d of writer %d", i, w))
			}
		})
	}
	go func() { wg.Wait(); close(done) }()

	var got []changes.Change
	q := changes.Query{Scope: "user:1", Limit: 3}
	for finished := false; ; {
		select {
		case <-done:
			finished = true
		default:
		}
		page, err := s.reader.Read(context.Background(), q)
		require.NoError(t, err)
		got = append(got, page.Changes...)
		q.After = page.Next
		if finished && len(page.Changes) == 0 {
			break
		}
	}
	require.Len(t, got, 3*writers*each, "two beliefs and a revision each")
	ps := positions(got)
	require.True(t, slices.IsSorted(ps))
	require.Len(t, slices.Compact(slices.Clone(ps)), 3*writers*each, "no change twice")
	evs, err := s.store.Events(context.Background(), "user:1", 1000)
	require.NoError(t, err)
	var want []int64
	for _, e := range evs {
		want = append(want, e.ID)
	}
	require.ElementsMatch(t, want, refs(got, memory.ChangeRevisionApplied))
}

// An erased scope leaves no row that names it: its feed goes with it.
func TestScopePurgeLeavesNothing(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	s.accept(t, "user:1", "User likes tea")
	_, err := s.store.Purge(context.Background(), memory.Selection{Scope: "user:1", All: true})
	require.NoError(t, err)
	got, _ := s.readAll(t, changes.Query{Scope: "user:1"})
	require.Empty(t, got)
	require.Empty(t, s.schema.Mentions(t, "user:1"))
}

func TestListenerWakesOnCommit(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	l := changes.NewListener(s.schema.Pool, nil)
	ctx := context.Background()
	// NOTIFY is the database's: scopes of this test's own, apart from other tests'.
	mine, other := s.schema.Name+"/user:1", s.schema.Name+"/user:2"
	woken, cancelOther := l.Subscribe(ctx, func(scope string) bool { return scope == other })
	defer cancelOther()
	wake, cancel := l.Subscribe(ctx, func(scope string) bool { return scope == mine })
	defer cancel()
	s.accept(t, mine, "User likes tea")
	select {
	case <-wake:
	case <-time.After(30 * time.Second):
		t.Fatal("no wake-up within 30 s of a commit")
	}
	select {
	case <-woken:
		t.Fatal("a waiter of another scope was woken")
	default:
	}
}

// dependent stores in scope "User lives in New York" and, concluded from it, "User's
// time zone is US Eastern", and returns their ids.
func (s *setup) dependent(t *testing.T, scope string) (basis, dependent int64) {
	t.Helper()
	ctx := context.Background()
	res, err := s.store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, At: date("2026-01-10"),
		Facts: []memory.Fact{{Statement: "User lives in New York", Attribute: "location", Confidence: 0.9, Origin: memory.OriginUserStated}}})
	require.NoError(t, err)
	basis = res.Facts[0].BeliefID
	res, err = s.store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, At: date("2026-01-20"), Candidates: []int64{basis},
		Facts: []memory.Fact{{Statement: "User's time zone is US Eastern", Attribute: "time_zone", Confidence: 0.8,
			Origin: memory.OriginInferred, DependsOn: []int{0}}}})
	require.NoError(t, err)
	return basis, res.Facts[0].BeliefID
}

// kinds is the kinds and referenced rows of cs, as "kind ref".
func kinds(cs []changes.Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("%s %d", c.Kind, c.RefID)
	}
	return out
}

// Review items opened or closed by a statement that returns nothing (a flag of
// dependents, a retirement, a forget, a partial purge) are announced like the others.
func TestReviewItemsOfEveryWriterAreAnnounced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSetup(t)

	basis, tz := s.dependent(t, "user:1")
	_, err := s.store.Forget(ctx, memory.Selection{Scope: "user:1", IDs: []int64{basis}})
	require.NoError(t, err)
	items, err := s.store.Conflicts(ctx, "user:1", false)
	require.NoError(t, err)
	require.Len(t, items, 1)
	item := items[0].ID
	got, cur := s.readAll(t, changes.Query{Scope: "user:1"})
	require.Equal(t, []string{fmt.Sprintf("belief.created %d", basis), fmt.Sprintf("belief.created %d", tz),
		fmt.Sprintf("belief.forgotten %d", basis), fmt.Sprintf("review.opened %d", item)}, kinds(got),
		"a forget is announced, then the dependent it flags")

	// The dependent retracted: its item closes with it, implicitly.
	res, err := s.store.Apply(ctx, &memory.Batch{Scope: "user:1", Origin: memory.RevisionExtraction, At: date("2026-03-01"),
		Candidates: []int64{tz}, Facts: []memory.Fact{{Confidence: 1, Origin: memory.OriginUserStated,
			Resolves: &memory.Directive{Index: 0, Action: memory.ActionRetract, Reason: memory.ReasonTemporal}}}})
	require.NoError(t, err)
	require.Equal(t, memory.OutcomeRetracted, res.Facts[0].Kind, res.Facts[0].Detail)
	got, _ = s.readAll(t, changes.Query{Scope: "user:1", After: cur})
	require.Equal(t, []string{fmt.Sprintf("revision.applied %d", res.Facts[0].EventID), fmt.Sprintf("review.resolved %d", item)}, kinds(got))

	// A purge of the basis: the survivor it flags is announced before the purge.
	basis, tz = s.dependent(t, "user:2")
	_, err = s.store.Purge(ctx, memory.Selection{Scope: "user:2", IDs: []int64{basis}})
	require.NoError(t, err)
	items, err = s.store.Conflicts(ctx, "user:2", false)
	require.NoError(t, err)
	require.Len(t, items, 1)
	got, _ = s.readAll(t, changes.Query{Scope: "user:2"})
	require.Equal(t, []string{fmt.Sprintf("belief.created %d", basis), fmt.Sprintf("belief.created %d", tz),
		fmt.Sprintf("review.opened %d", items[0].ID), "scope.purged 0"}, kinds(got))
}

// A cursor held across a whole-scope purge and the scope's next changes (an import in
// between is not announced) reads them: the scope's positions never go back, though
// the purge left no row naming the scope.
func TestPositionsNeverGoBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSetup(t)
	s.accept(t, "acme/user:1", "User likes tea")
	s.accept(t, "acme/user:2", "User likes rain")
	_, one := s.readAll(t, changes.Query{Scope: "acme/user:1"})
	_, all := s.readAll(t, changes.Query{Prefixes: []string{"acme/"}})

	_, err := s.store.Purge(ctx, memory.Selection{Scope: "acme/user:1", All: true})
	require.NoError(t, err)
	require.Empty(t, s.schema.Mentions(t, "acme/user:1"))
	got, _ := s.readAll(t, changes.Query{Scope: "acme/user:1", After: one})
	require.Empty(t, got, "a cursor from before the purge is still one of the feed")

	e := s.accept(t, "acme/user:1", "User likes chess")
	got, _ = s.readAll(t, changes.Query{Scope: "acme/user:1", After: one})
	require.Equal(t, []int64{e}, refs(got, memory.ChangeRevisionApplied))
	require.Len(t, got, 3, "its two beliefs and its revision")
	require.Greater(t, got[0].Position, one["acme/user:1"])
	got, _ = s.readAll(t, changes.Query{Prefixes: []string{"acme/"}, After: all})
	require.Equal(t, []int64{e}, refs(got, memory.ChangeRevisionApplied))
}

// A cursor naming a position that a scope of the read never had is refused, not read
// as "nothing new"; positions of scopes outside the read are not the read's business.
func TestCursorNamingUnknownPositionsIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSetup(t)
	s.accept(t, "user:1", "User likes tea")
	_, cur := s.readAll(t, changes.Query{Scope: "user:1"})
	last := cur["user:1"]

	for _, q := range []changes.Query{
		{Scope: "user:1", After: changes.Cursor{"user:1": last + 1}},
		{Prefixes: []string{"user:"}, After: changes.Cursor{"user:1": last + 1}},
		{Prefixes: []string{"nobody/", "user:"}, After: changes.Cursor{"user:1": last + 1}},
		// A scope without changes: no position past the clock was ever given.
		{Scope: "user:9", After: changes.Cursor{"user:9": 1 << 60}},
		{Prefixes: []string{""}, After: changes.Cursor{"user:9": 1 << 60}},
	} {
		_, err := s.reader.Read(ctx, q)
		var ahead *changes.AheadError
		require.ErrorAs(t, err, &ahead, "%+v", q)
		require.ErrorIs(t, err, changes.ErrCursor)
		require.Equal(t, q.After[ahead.Scope], ahead.Position)
	}
	for _, q := range []changes.Query{
		{Scope: "user:1", After: cur},
		{Scope: "user:1", After: changes.Cursor{"user:1": last, "other:1": 1 << 60}},
		{Prefixes: []string{"user:"}, After: changes.Cursor{"user:1": last, "other:1": 1 << 60}},
		// Positions an old scope of the name may have had before a purge.
		{Scope: "user:9", After: changes.Cursor{"user:9": last}},
	} {
		page, err := s.reader.Read(ctx, q)
		require.NoError(t, err, "%+v", q)
		require.Empty(t, page.Changes)
		require.Equal(t, q.After, page.Next)
	}
}

// Every writer's new belief is announced, with the belief's id, in the transaction
// that stores it; a soft forget is announced belief by belief.
func TestBeliefsCreatedAndForgottenAreAnnounced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSetup(t)
	var created []int64
	for _, origin := range []memory.RevisionOrigin{memory.RevisionExtraction, memory.RevisionOperator, memory.RevisionConsolidation} {
		res, err := s.store.Apply(ctx, &memory.Batch{Scope: "user:1", Origin: origin, At: date("2026-01-15"),
			Facts: []memory.Fact{
				{Statement: "User likes " + string(origin), Attribute: "likes_" + string(origin), Confidence: 0.9, Origin: memory.OriginUserStated},
				{Statement: "User plays " + string(origin), Attribute: "plays_" + string(origin), Confidence: 0.9, Origin: memory.OriginUserStated},
			}})
		require.NoError(t, err)
		for _, f := range res.Facts {
			require.Equal(t, memory.OutcomeAccepted, f.Kind, f.Detail)
			created = append(created, f.BeliefID)
		}
	}
	got, cur := s.readAll(t, changes.Query{Scope: "user:1"})
	require.Equal(t, created, refs(got, memory.ChangeBeliefCreated))
	require.Len(t, got, len(created), "nothing else")

	forgotten, err := s.store.Forget(ctx, memory.Selection{Scope: "user:1", Match: "plays"})
	require.NoError(t, err)
	require.Len(t, forgotten, 3)
	got, _ = s.readAll(t, changes.Query{Scope: "user:1", After: cur})
	require.Equal(t, forgotten, refs(got, memory.ChangeBeliefForgotten))
	require.Len(t, got, len(forgotten))
}
