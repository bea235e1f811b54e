package memory

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAncestors(t *testing.T) {
	t.Parallel()
	for scope, want := range map[string][]string{
		"acme/team:x/user:1": {"acme/team:x", "acme"},
		"acme/user:1":        {"acme"},
		"user:1":             nil,
		"/lead":              nil,
		"a//b":               {"a/", "a"},
	} {
		require.Equal(t, want, Ancestors(scope), scope)
	}
}

// orgBundle is an organisation with a team and a user, each filling some slots.
type orgBundle struct {
	store *Store
	ids   map[string]int64 // by statement
}

func setupOrg(t *testing.T) *orgBundle {
	t.Helper()
	store, _ := setup(t)
	b := &orgBundle{store: store, ids: map[string]int64{}}
	add := func(scope string, facts ...Fact) {
		res := mustApply(t, store, &Batch{Scope: scope, Origin: RevisionOperator, At: day("2026-01-05"), Facts: facts})
		for i, f := range facts {
			b.ids[f.Statement] = res.Facts[i].BeliefID
		}
	}
	add("acme", fact("Team chats on Slack", "chat_tool", "2026-01-01"), fact("Support hours are 9 to 5", "support_hours", "2026-01-01"),
		fact("Office is in Berlin", "office", "2026-01-01"))
	add("acme/team:x", fact("Team chats on Discord", "chat_tool", "2026-01-02"))
	add("acme/team:x/user:1", fact("User chats on Signal", "chat_tool", "2026-01-03"), fact("User lives in Hamburg", "location", "2026-01-03"))
	// Another branch and an unrelated scope sharing the name's start stay out.
	add("acme/team:y", fact("Team works from Munich", "office", "2026-01-02"))
	add("acmecorp", fact("Office is in Paris", "office", "2026-01-01"))
	return b
}

func TestInheritedNearestScopeWins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupOrg(t)
	got, err := b.store.Inherited(ctx, "acme/team:x/user:1", b.store.Current)
	require.NoError(t, err)
	scopes := map[string]string{}
	for _, bl := range got {
		scopes[bl.Statement] = bl.Scope
	}
	require.Equal(t, map[string]string{
		"User chats on Signal":     "acme/team:x/user:1", // the user's own value wins over team and org
		"User lives in Hamburg":    "acme/team:x/user:1",
		"Support hours are 9 to 5": "acme", // slots the user does not fill are inherited
		"Office is in Berlin":      "acme",
	}, scopes, "each belief keeps its own scope")

	got, err = b.store.Inherited(ctx, "acme/team:x", b.store.Current)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"Team chats on Discord", "Support hours are 9 to 5", "Office is in Berlin"}, statementsOf(got))

	// Nothing is superseded: the organisation's values stay current in their scope.
	org, err := b.store.Current(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, org, 3)
}

// A slot counts as filled by what the view holds: once the user's value is retracted,
// the organisation's default shows again in the current view, and history keeps the
// user's.
func TestInheritedFollowsTheView(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupOrg(t)
	signal := b.ids["User chats on Signal"]
	mustApply(t, b.store, &Batch{Scope: "acme/team:x/user:1", Origin: RevisionOperator, At: day("2026-03-01"), Candidates: []int64{signal},
		Facts: []Fact{resolves(Fact{Confidence: 1, Origin: OriginUserStated}, 0, ActionRetract, ReasonTemporal)}})

	rec, err := b.store.Recall(ctx, RecallQuery{Scope: "acme/team:x/user:1", Inherit: true})
	require.NoError(t, err)
	require.Contains(t, statementsOf(rec.Beliefs), "Team chats on Discord")
	require.NotContains(t, statementsOf(rec.Beliefs), "Team chats on Slack")

	rec, err = b.store.Recall(ctx, RecallQuery{Scope: "acme/team:x/user:1", Inherit: true, History: true})
	require.NoError(t, err)
	require.Contains(t, statementsOf(rec.Beliefs), "User chats on Signal")
	require.NotContains(t, statementsOf(rec.Beliefs), "Team chats on Discord")

	asOf := day("2026-02-01")
	rec, err = b.store.Recall(ctx, RecallQuery{Scope: "acme/team:x/user:1", Inherit: true, AsOf: &asOf})
	require.NoError(t, err)
	require.Contains(t, statementsOf(rec.Beliefs), "User chats on Signal")
	before := day("2026-01-02").Add(12 * time.Hour)
	rec, err = b.store.Recall(ctx, RecallQuery{Scope: "acme/team:x/user:1", Inherit: true, AsOf: &before})
	require.NoError(t, err)
	require.Contains(t, statementsOf(rec.Beliefs), "Team chats on Discord", "before the user said anything, the team's value held")

	rec, err = b.store.Recall(ctx, RecallQuery{Scope: "acme/team:x/user:1"})
	require.NoError(t, err)
	require.Equal(t, []string{"User lives in Hamburg"}, statementsOf(rec.Beliefs), "without inherit, the scope alone")
}

// Ranked: the nearest beliefs of every scope, an ancestor's only on free slots, even when
// the scope's own value on that slot is not among the nearest.
func TestInheritedRanked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := setup(t)
	vec := func(x, y float32) []float32 { return []float32{x, y, 0} }
	add := func(scope, statement, attribute string, v []float32) {
		f := fact(statement, attribute, "2026-01-01")
		f.Embedding = v
		mustApply(t, store, &Batch{Scope: scope, Origin: RevisionOperator, EmbedModel: "m", Facts: []Fact{f}})
	}
	add("acme", "Team chats on Slack", "chat_tool", vec(1, 0))
	add("acme", "Support hours are 9 to 5", "support_hours", vec(0.9, 0.1))
	add("acme/user:1", "User chats on Signal", "chat_tool", vec(0, 1))
	add("acme/user:1", "User lives in Hamburg", "location", vec(0.5, 0.5))

	rec, err := store.Recall(ctx, RecallQuery{Scope: "acme/user:1", Inherit: true, Vector: vec(1, 0), EmbedModel: "m", K: 2})
	require.NoError(t, err)
	require.Equal(t, []string{"Support hours are 9 to 5", "User lives in Hamburg"}, []string{rec.Beliefs[0].Statement, rec.Beliefs[1].Statement},
		"Slack is nearest, but the user fills chat_tool; k bounds the merged answer")
}
