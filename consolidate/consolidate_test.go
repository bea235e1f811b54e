package consolidate

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/internal/testclock"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
)

// anchors make the fake embedding put synonyms close, so that statements about one
// place or one kind of thing cluster and others do not.
var anchors = map[string]string{"miami": "florida", "chrome": "browser", "firefox": "browser"}

const (
	miami   = "User lives in Miami"
	florida = "User is based in Miami, Florida"
	chrome  = "User uses Chrome at work"
	firefox = "User uses Firefox at home"
)

type testBundle struct {
	schema *dbtest.Schema
	store  *memory.Store
	llm    *llmtest.Server
	clock  *testclock.Clock
}

func setup(t *testing.T) (*Worker, *testBundle) {
	t.Helper()
	schema := dbtest.New(t)
	clock := testclock.New(time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Second))
	store := memory.NewStore(schema.Pool, &memory.Config{Now: clock.Now})
	srv := llmtest.NewServer(t, llmtest.WithAnchors(anchors))
	chat, err := llm.NewOpenAI(srv.OpenAIConfig())
	require.NoError(t, err)
	w, err := NewWorker(Config{Store: store, Chat: chat, EmbedModel: llmtest.DefaultEmbedModel})
	require.NoError(t, err)
	return w, &testBundle{schema: schema, store: store, llm: srv, clock: clock}
}

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// fact is a user-stated belief with its fake embedding.
func fact(statement, attribute, validFrom string) memory.Fact {
	vf := day(validFrom)
	return memory.Fact{Statement: statement, Subject: "user", Attribute: attribute, Kind: memory.KindAttribute,
		ValidFrom: &vf, Confidence: 0.9, Origin: memory.OriginUserStated,
		Embedding: llmtest.EmbedAnchored(statement, llmtest.DefaultDim, anchors)}
}

// add stores facts in scope as one batch of origin (extraction unless authoritative
// facts need an operator) and returns their ids.
func (b *testBundle) add(t *testing.T, scope string, origin memory.RevisionOrigin, facts ...memory.Fact) []int64 {
	t.Helper()
	res, err := b.store.Apply(context.Background(), &memory.Batch{Scope: scope, Origin: origin, Facts: facts, EmbedModel: llmtest.DefaultEmbedModel})
	require.NoError(t, err)
	var ids []int64
	for _, o := range res.Facts {
		require.Equal(t, memory.OutcomeAccepted, o.Kind)
		ids = append(ids, o.BeliefID)
	}
	return ids
}

func (b *testBundle) belief(t *testing.T, id int64) *memory.Belief {
	t.Helper()
	bel, err := b.store.Get(context.Background(), id)
	require.NoError(t, err)
	return bel
}

var candidateLine = regexp.MustCompile(`(?m)^\[(\d+)\] (.*) \([^()]*\)$`)

// candidates reads the "[N] statement (...)" lines of a prompt: statement → N.
func candidates(prompt string) map[string]int {
	out := map[string]int{}
	for _, m := range candidateLine.FindAllStringSubmatch(prompt, -1) {
		n, _ := strconv.Atoi(m[1])
		out[m[2]] = n
	}
	return out
}

type resolution struct {
	SessionIndex int    `json:"session_index"`
	Action       string `json:"action"`
	ReplacedBy   int    `json:"replaced_by"`
	Reason       string `json:"reason"`
}

func answer(rs ...resolution) llmtest.Reply {
	if rs == nil {
		rs = []resolution{}
	}
	b, err := json.Marshal(map[string]any{"reasoning": "test", "resolutions": rs})
	if err != nil {
		panic(err)
	}
	return llmtest.Reply{Content: string(b)}
}

// judge answers consolidation prompts: when both old and better are shown, old is
// superseded by better for reason; any other cluster is kept whole.
func judge(old, better, reason string) func(req llmtest.Request) llmtest.Reply {
	return func(req llmtest.Request) llmtest.Reply {
		c := candidates(req.Prompt)
		i, okOld := c[old]
		j, okBetter := c[better]
		if okOld && okBetter {
			return answer(resolution{SessionIndex: i, Action: "supersede", ReplacedBy: j, Reason: reason})
		}
		return answer()
	}
}

func TestRunScopeDuplicatesAndParallelTruths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, bundle := setup(t)

	require.Greater(t, llmtest.Cosine(llmtest.EmbedAnchored(miami, 64, anchors), llmtest.EmbedAnchored(florida, 64, anchors)), DefaultThreshold)
	require.Greater(t, llmtest.Cosine(llmtest.EmbedAnchored(chrome, 64, anchors), llmtest.EmbedAnchored(firefox, 64, anchors)), DefaultThreshold)

	// Stored apart, no directive linking them.
	ids := bundle.add(t, "user:1", memory.RevisionExtraction, fact(miami, "location", "2026-01-10"), fact(chrome, "browser_work", "2026-01-10"))
	miamiID, chromeID := ids[0], ids[1]
	ids = bundle.add(t, "user:1", memory.RevisionExtraction, fact(florida, "city", "2026-02-01"), fact(firefox, "browser_home", "2026-02-01"))
	floridaID, firefoxID := ids[0], ids[1]
	bundle.llm.Handle(judge(miami, florida, "duplicate"))

	rep, err := w.RunScope(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, 4, rep.Seeds)
	require.Equal(t, 2, rep.Clusters)
	require.Equal(t, 2, rep.ChatCalls)
	require.Equal(t, 1, rep.Applied)
	require.Zero(t, rep.Conflicts)
	require.False(t, rep.More)
	require.NotNil(t, rep.Watermark)
	require.Len(t, rep.Resolutions, 1)
	require.Equal(t, Resolved{Outcome: memory.OutcomeSuperseded, Reason: memory.ReasonDuplicate, BeliefID: miamiID, Statement: miami,
		ReplacedBy: floridaID, ReplacedByStatement: florida, EventID: rep.Resolutions[0].EventID}, rep.Resolutions[0])

	// The prompt showed the cluster as [N] lines, oldest first, with valid_from and origin.
	var prompt string
	for _, c := range bundle.llm.Chats() {
		require.Equal(t, "consolidation", c.SchemaName)
		if _, ok := candidates(c.Prompt)[miami]; ok {
			prompt = c.Prompt
		}
	}
	require.Contains(t, prompt, "\n[0] User lives in Miami (location, since 2026-01-10, user_stated)\n")
	require.Contains(t, prompt, "\n[1] User is based in Miami, Florida (city, since 2026-02-01, user_stated)")

	current, err := bundle.store.Current(ctx, "user:1")
	require.NoError(t, err)
	require.ElementsMatch(t, []int64{floridaID, chromeID, firefoxID}, []int64{current[0].ID, current[1].ID, current[2].ID})
	old := bundle.belief(t, miamiID)
	require.Equal(t, memory.StatusSuperseded, old.Status)
	require.Equal(t, []int64{floridaID}, old.SupersededBy)

	events, err := bundle.store.Events(ctx, "user:1", 0)
	require.NoError(t, err)
	require.Len(t, events, 1)
	require.Equal(t, memory.ActionSupersede, events[0].Action)
	require.Equal(t, memory.ReasonDuplicate, events[0].Reason)
	require.Equal(t, memory.RevisionConsolidation, events[0].Origin)
	require.Equal(t, miamiID, events[0].OldBeliefID)
	require.Equal(t, floridaID, *events[0].NewBeliefID)
	require.Equal(t, "test", *events[0].Rationale)

	// Nothing changed since: no seed, no LLM call.
	calls := bundle.llm.ChatCount()
	rep, err = w.RunScope(ctx, "user:1")
	require.NoError(t, err)
	require.Zero(t, rep.Seeds)
	require.Zero(t, rep.ChatCalls)
	require.Equal(t, calls, bundle.llm.ChatCount())

	// Even from scratch, the clusters judged before are known by their signatures.
	_, err = bundle.schema.Pool.Exec(ctx, "DELETE FROM scope_consolidation")
	require.NoError(t, err)
	rep, err = w.RunScope(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, 3, rep.Seeds)
	require.Equal(t, 1, rep.Clusters, "Chrome and Firefox; Florida has no active neighbour left")
	require.Equal(t, 1, rep.Judged)
	require.Equal(t, calls, bundle.llm.ChatCount())
}

func TestRunScopeAuthoritativeIsNeverSuperseded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, bundle := setup(t)

	auth := fact(miami, "location", "2026-01-10")
	auth.Origin, auth.Confidence = memory.OriginAuthoritative, 1
	authID := bundle.add(t, "user:1", memory.RevisionOperator, auth)[0]
	floridaID := bundle.add(t, "user:1", memory.RevisionExtraction, fact(florida, "location", "2026-02-01"))[0]
	bundle.llm.Handle(judge(miami, florida, "duplicate"))

	rep, err := w.RunScope(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, 1, rep.ChatCalls)
	require.Zero(t, rep.Applied)
	require.Equal(t, 1, rep.Conflicts)
	require.Equal(t, memory.OutcomeConflict, rep.Resolutions[0].Outcome)
	require.Contains(t, bundle.llm.Chats()[0].Prompt, "[0] User lives in Miami (location, since 2026-01-10, authoritative)")

	require.Equal(t, memory.StatusActive, bundle.belief(t, authID).Status)
	require.Equal(t, memory.StatusActive, bundle.belief(t, floridaID).Status)
	conflicts, err := bundle.store.Conflicts(ctx, "user:1", false)
	require.NoError(t, err)
	require.Len(t, conflicts, 1)
	require.Equal(t, memory.CauseEntrenchment, *conflicts[0].Cause)
	require.Equal(t, memory.RevisionConsolidation, conflicts[0].Origin)
	require.Equal(t, authID, *conflicts[0].TargetID)
	require.Equal(t, rep.Resolutions[0].ConflictID, conflicts[0].ID)

	// The refusal is a judgment too: the cluster is not asked about again.
	_, err = bundle.schema.Pool.Exec(ctx, "DELETE FROM scope_consolidation")
	require.NoError(t, err)
	rep, err = w.RunScope(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, 1, rep.Judged)
	require.Equal(t, 1, bundle.llm.ChatCount())
}

func TestRunScopeMalformedAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, bundle := setup(t)

	bundle.add(t, "user:1", memory.RevisionExtraction, fact(miami, "location", "2026-01-10"), fact(florida, "location", "2026-02-01"))
	// Out of range, then replaced by itself, then an unknown field: each is asked again,
	// up to the bound, and the cluster is left as it is.
	bundle.llm.Script(
		answer(resolution{SessionIndex: 2, Action: "supersede", ReplacedBy: 0, Reason: "duplicate"}),
		answer(resolution{SessionIndex: 0, Action: "supersede", ReplacedBy: 0, Reason: "duplicate"}),
		llmtest.Reply{Content: `{"reasoning": "", "resolutions": [], "facts": []}`},
	)
	rep, err := w.RunScope(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, 1+DefaultMalformedRetries, rep.ChatCalls)
	require.Equal(t, 1, rep.Malformed)
	require.Zero(t, rep.Applied)
	chats := bundle.llm.Chats()
	require.Len(t, chats, 3)
	require.Contains(t, chats[1].Prompt, "That answer was rejected: malformed model output: resolutions[0]: session_index 2 is not one of the 2 beliefs shown")
	require.Contains(t, chats[2].Prompt, "belief 0 is replaced by itself")

	current, err := bundle.store.Current(ctx, "user:1")
	require.NoError(t, err)
	require.Len(t, current, 2)
}

// A pass that fails halfway keeps what it judged; the retry asks only about the rest.
func TestRunScopeRetryAfterPartialPass(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, bundle := setup(t)

	bundle.add(t, "user:1", memory.RevisionExtraction,
		fact(miami, "location", "2026-01-10"), fact(florida, "location", "2026-02-01"),
		fact(chrome, "browser_work", "2026-01-10"), fact(firefox, "browser_home", "2026-02-01"))
	down := true
	var mu sync.Mutex
	bundle.llm.Handle(func(req llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := candidates(req.Prompt)[chrome]; ok && down {
			return llmtest.Reply{Status: http.StatusServiceUnavailable}
		}
		return judge(miami, florida, "duplicate")(req)
	})

	rep, err := w.RunScope(ctx, "user:1")
	require.Error(t, err)
	require.True(t, llm.IsRetryable(err), "%v", err)
	require.Nil(t, rep.Watermark, "the watermark stays until every cluster is judged")
	var n int
	require.NoError(t, bundle.schema.Pool.QueryRow(ctx, "SELECT count(*) FROM consolidation_judgment").Scan(&n))
	require.Equal(t, 1, n)
	calls := bundle.llm.ChatCount()

	mu.Lock()
	down = false
	mu.Unlock()
	rep, err = w.RunScope(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, 1, rep.ChatCalls, "only the cluster the failed pass did not judge")
	require.Equal(t, calls+1, bundle.llm.ChatCount())
	require.NotNil(t, rep.Watermark)

	events, err := bundle.store.Events(ctx, "user:1", 0)
	require.NoError(t, err)
	require.Len(t, events, 1, "the first cluster's verdict was applied once")
}

// MaxCalls cuts a pass; RunScope goes on with follow-up passes until the scope is done.
func TestRunScopeFollowUpPasses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, bundle := setup(t)
	w, err := NewWorker(Config{Store: bundle.store, Chat: mustOpenAI(t, bundle.llm), EmbedModel: llmtest.DefaultEmbedModel, MaxCalls: 1})
	require.NoError(t, err)

	bundle.add(t, "user:1", memory.RevisionExtraction,
		fact(miami, "location", "2026-01-10"), fact(florida, "location", "2026-02-01"),
		fact(chrome, "browser_work", "2026-01-10"), fact(firefox, "browser_home", "2026-02-01"))
	bundle.llm.Handle(judge(miami, florida, "duplicate"))
	rep, err := w.RunScope(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, 2, rep.Passes, "one cluster per pass; the last one moves the watermark")
	require.Equal(t, 1, rep.Applied)
	require.Equal(t, 2, rep.ChatCalls)
	require.False(t, rep.More)
	require.NotNil(t, rep.Watermark)
}

func mustOpenAI(t *testing.T, srv *llmtest.Server) llm.Chatter {
	t.Helper()
	chat, err := llm.NewOpenAI(srv.OpenAIConfig())
	require.NoError(t, err)
	return chat
}

func TestRunScopeSubjectsAndThreshold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, bundle := setup(t)

	sister := fact("User's sister lives in Miami", "location", "2026-02-01")
	sister.Subject = "user's sister"
	bundle.add(t, "user:1", memory.RevisionExtraction, fact(miami, "location", "2026-01-10"), sister,
		fact("User has a dog", "pet", "2026-01-10"))
	bundle.add(t, "user:2", memory.RevisionExtraction, fact(florida, "location", "2026-02-01"))

	rep, err := w.RunScope(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, 3, rep.Seeds)
	require.Zero(t, rep.Clusters, "another subject, a far statement, another scope: nothing to consolidate")
	require.Zero(t, bundle.llm.ChatCount())
}

func TestParse(t *testing.T) {
	t.Parallel()
	res, reasoning, err := Parse(`{"reasoning": "a chain", "resolutions": [
		{"session_index": 1, "action": "supersede", "replaced_by": 2, "reason": "temporal"},
		{"session_index": 0, "action": "supersede", "replaced_by": 1, "reason": "temporal"}]}`, 3)
	require.NoError(t, err)
	require.Equal(t, "a chain", reasoning)
	require.Len(t, res, 2)
	require.Equal(t, 0, res[0].Index, "0 is superseded by 1 while 1 is still active")
	require.Equal(t, 1, *res[0].ReplacedBy)
	require.Equal(t, 1, res[1].Index)
	require.Equal(t, memory.ReasonTemporal, res[1].Reason)
	require.Equal(t, "a chain", res[1].Rationale)

	res, _, err = Parse(`{"reasoning": "", "resolutions": []}`, 2)
	require.NoError(t, err)
	require.Empty(t, res)

	for name, content := range map[string]string{
		"not json":         `keep all`,
		"missing":          `{"reasoning": ""}`,
		"unknown field":    `{"reasoning": "", "resolutions": [], "facts": []}`,
		"trailing":         `{"reasoning": "", "resolutions": []} {}`,
		"index range":      `{"reasoning": "", "resolutions": [{"session_index": 3, "action": "supersede", "replaced_by": 0, "reason": "duplicate"}]}`,
		"negative":         `{"reasoning": "", "resolutions": [{"session_index": -1, "action": "supersede", "replaced_by": 0, "reason": "duplicate"}]}`,
		"replaced range":   `{"reasoning": "", "resolutions": [{"session_index": 0, "action": "supersede", "replaced_by": 5, "reason": "duplicate"}]}`,
		"itself":           `{"reasoning": "", "resolutions": [{"session_index": 1, "action": "supersede", "replaced_by": 1, "reason": "duplicate"}]}`,
		"no replaced_by":   `{"reasoning": "", "resolutions": [{"session_index": 1, "action": "supersede", "reason": "duplicate"}]}`,
		"no session_index": `{"reasoning": "", "resolutions": [{"action": "supersede", "replaced_by": 1, "reason": "duplicate"}]}`,
		"action":           `{"reasoning": "", "resolutions": [{"session_index": 1, "action": "retract", "replaced_by": 0, "reason": "duplicate"}]}`,
		"reason":           `{"reasoning": "", "resolutions": [{"session_index": 1, "action": "supersede", "replaced_by": 0, "reason": "restated"}]}`,
		"twice":            `{"reasoning": "", "resolutions": [{"session_index": 1, "action": "supersede", "replaced_by": 0, "reason": "duplicate"}, {"session_index": 1, "action": "supersede", "replaced_by": 2, "reason": "duplicate"}]}`,
		"cycle":            `{"reasoning": "", "resolutions": [{"session_index": 0, "action": "supersede", "replaced_by": 1, "reason": "duplicate"}, {"session_index": 1, "action": "supersede", "replaced_by": 0, "reason": "duplicate"}]}`,
		"none stays":       `{"reasoning": "", "resolutions": [{"session_index": 0, "action": "supersede", "replaced_by": 1, "reason": "duplicate"}, {"session_index": 1, "action": "supersede", "replaced_by": 0, "reason": "duplicate"}]}`,
	} {
		n := 3
		if name == "none stays" {
			n = 2
		}
		_, _, err := Parse(content, n)
		require.ErrorIs(t, err, llm.ErrMalformedOutput, name)
	}
}

func TestClusterize(t *testing.T) {
	t.Parallel()
	e := func(a, b int64, d float64) memory.Neighbor { return memory.Neighbor{Seed: a, ID: b, Distance: d} }
	// A chain 1-2-3-4-5 of decreasing similarity, capped at 3: the weakest links go.
	edges := []memory.Neighbor{e(4, 5, 0.15), e(1, 2, 0.01), e(2, 3, 0.02), e(3, 4, 0.1), e(2, 1, 0.01), e(7, 8, 0.05)}
	require.Equal(t, [][]int64{{1, 2, 3}, {4, 5}, {7, 8}}, clusterize(edges, 3))
	require.Equal(t, [][]int64{{1, 2, 3, 4, 5}, {7, 8}}, clusterize(edges, 8))
	require.Equal(t, [][]int64{{1, 2}, {3, 4}, {7, 8}}, clusterize(edges, 2))

	m := func(id int64, s string) memory.Belief { return memory.Belief{ID: id, Statement: s} }
	require.Equal(t, signature([]memory.Belief{m(1, "a"), m(2, "b")}), signature([]memory.Belief{m(2, "b"), m(1, "a")}))
	require.NotEqual(t, signature([]memory.Belief{m(12, "a")}), signature([]memory.Belief{m(1, "a"), m(2, "b")}))
}

// TestRunScopeEmbedsWhatExtractionLeftUnembedded: beliefs stored without vectors (an
// extraction that embedded its transcript before the chat) are embedded by the pass, in
// one call, and clustered.
func TestRunScopeEmbedsWhatExtractionLeftUnembedded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, b := setup(t)
	embed, err := llm.NewOpenAI(b.llm.OpenAIConfig())
	require.NoError(t, err)
	w.cfg.Embed = embed
	bare := func(f memory.Fact) memory.Fact { f.Embedding = nil; return f }
	ids := b.add(t, "user:1", memory.RevisionExtraction, bare(fact(miami, "location", "2026-01-10")),
		bare(fact(florida, "location", "2026-02-01")))
	b.clock.Advance(time.Hour)
	b.llm.Handle(judge(miami, florida, "duplicate"))

	rep, err := w.RunScope(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, 1, rep.Clusters)
	require.Len(t, b.llm.Embeds(), 1, "one embedding call for everything left unembedded")
	require.Equal(t, memory.StatusSuperseded, b.belief(t, ids[0]).Status)
	pending, err := b.store.Unembedded(ctx, "user:1", llmtest.DefaultEmbedModel, 10)
	require.NoError(t, err)
	for _, u := range pending {
		require.True(t, u.Event, "every belief has its vector; only the pass's own event waits for the next call")
	}
}

// Consolidation never clusters across scopes: an organisation's default beside a user's
// identical statement is not a duplicate to resolve.
func TestRunScopeNeverClustersAcrossScopes(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	b.add(t, "acme", memory.RevisionOperator, fact(miami, "location", "2026-01-10"))
	b.add(t, "acme/user:1", memory.RevisionExtraction, fact(florida, "location", "2026-02-01"))
	b.clock.Advance(time.Hour)
	for _, scope := range []string{"acme/user:1", "acme"} {
		rep, err := w.RunScope(context.Background(), scope)
		require.NoError(t, err)
		require.Zero(t, rep.Clusters, scope)
	}
	require.Zero(t, b.llm.ChatCount())
}
