package recall_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/internal/testclock"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
	"github.com/credohq/credo/recall"
)

type testBundle struct {
	store *memory.Store
	llm   *llmtest.Server
	clock *testclock.Clock
	pool  *dbtest.Schema
}

func setup(t *testing.T, opts ...llmtest.Option) (*recall.Reader, *testBundle) {
	t.Helper()
	schema := dbtest.New(t)
	clock := testclock.New(day("2026-03-01"))
	store := memory.NewStore(schema.Pool, &memory.Config{Now: clock.Now})
	srv := llmtest.NewServer(t, opts...)
	provider, err := llm.NewOpenAI(srv.OpenAIConfig())
	require.NoError(t, err)
	r, err := recall.New(recall.Config{Store: store, Chat: provider, Embed: provider, Now: clock.Now})
	require.NoError(t, err)
	return r, &testBundle{store: store, llm: srv, clock: clock, pool: schema}
}

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// belief stores statement in scope, said at `at`, valid from validFrom.
func (b *testBundle) belief(t *testing.T, scope, statement, attribute, validFrom, at string) int64 {
	t.Helper()
	vf := day(validFrom)
	res, err := b.store.Apply(context.Background(), &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, At: day(at),
		Facts: []memory.Fact{{Statement: statement, Attribute: attribute, Confidence: 0.9, Origin: memory.OriginUserStated, ValidFrom: &vf}}})
	require.NoError(t, err)
	return res.Facts[0].BeliefID
}

func (b *testBundle) reinforce(t *testing.T, scope string, id int64, times int) {
	t.Helper()
	for range times {
		_, err := b.store.Apply(context.Background(), &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, At: day("2026-01-01"),
			Candidates: []int64{id}, Facts: []memory.Fact{{Confidence: 0.9, Origin: memory.OriginUserStated,
				Resolves: &memory.Directive{Index: 0, Action: memory.ActionReinforce, Reason: memory.ReasonRestated}}}})
		require.NoError(t, err)
	}
}

func statements(bs []memory.Belief) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Statement
	}
	return out
}

// Each ranking signal, alone, decides the order of two beliefs otherwise alike.
func TestContextSignals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("similarity", func(t *testing.T) {
		t.Parallel()
		r, b := setup(t)
		b.belief(t, "u", "User plays the cello", "instrument", "2025-01-01", "2025-06-01")
		b.belief(t, "u", "User drinks green tea", "drink", "2025-01-01", "2025-06-01")
		got, err := r.Context(ctx, recall.Query{Scope: "u", Query: "green tea"})
		require.NoError(t, err)
		require.Equal(t, []string{"User drinks green tea", "User plays the cello"}, statements(got.Beliefs))
	})
	t.Run("recency", func(t *testing.T) {
		t.Parallel()
		r, b := setup(t)
		b.belief(t, "u", "User plays the cello", "instrument", "2024-01-01", "2024-01-01")
		b.belief(t, "u", "User drinks green tea", "drink", "2024-01-01", "2026-02-01")
		got, err := r.Context(ctx, recall.Query{Scope: "u"})
		require.NoError(t, err)
		require.Equal(t, []string{"User drinks green tea", "User plays the cello"}, statements(got.Beliefs), "said last month beats said two years ago")
	})
	t.Run("reinforcement", func(t *testing.T) {
		t.Parallel()
		r, b := setup(t)
		b.belief(t, "u", "User plays the cello", "instrument", "2024-01-01", "2025-01-01")
		tea := b.belief(t, "u", "User drinks green tea", "drink", "2024-01-01", "2025-01-01")
		b.reinforce(t, "u", tea, 3)
		got, err := r.Context(ctx, recall.Query{Scope: "u"})
		require.NoError(t, err)
		require.Equal(t, []string{"User drinks green tea", "User plays the cello"}, statements(got.Beliefs), "said four times beats said once")
	})
}

func TestContextBlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, b := setup(t)
	nyc := b.belief(t, "acme/u", "User lives in New York", "location", "2025-01-10", "2025-01-10")
	_, err := b.store.Apply(ctx, &memory.Batch{Scope: "acme/u", Origin: memory.RevisionExtraction, At: day("2026-02-01"),
		Candidates: []int64{nyc}, Facts: []memory.Fact{{Statement: "User lives in Miami", Attribute: "location", Confidence: 0.9,
			Origin: memory.OriginUserStated, Resolves: &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}}}})
	require.NoError(t, err)
	b.belief(t, "acme", "Support hours are 9 to 5", "support_hours", "2024-01-01", "2024-01-01")

	got, err := r.Context(ctx, recall.Query{Scope: "acme/u"})
	require.NoError(t, err)
	require.Equal(t, memory.RecallCurrent, got.Mode)
	require.Equal(t, "Memory of acme/u (today is 2026-03-01):\n- User lives in Miami (since 2026-02-01)\n", got.Text)

	got, err = r.Context(ctx, recall.Query{Scope: "acme/u", Inherit: true})
	require.NoError(t, err)
	require.Contains(t, got.Text, "- Support hours are 9 to 5 (since 2024-01-01; default of acme)\n")

	got, err = r.Context(ctx, recall.Query{Scope: "acme/u", Query: "Where did the user live before?"})
	require.NoError(t, err)
	require.Equal(t, memory.RecallHistory, got.Mode)
	require.Equal(t, "Memory of acme/u (today is 2026-03-01):\n- User lives in Miami (since 2026-02-01)\nNo longer true:\n"+
		"- User lives in New York (from 2025-01-10 until 2026-02-01)\n", got.Text)

	asOf := day("2025-06-01")
	got, err = r.Context(ctx, recall.Query{Scope: "acme/u", AsOf: &asOf})
	require.NoError(t, err)
	require.Equal(t, "Memory of acme/u, as of 2025-06-01:\n- User lives in New York (from 2025-01-10 until 2026-02-01)\n", got.Text)

	got, err = r.Context(ctx, recall.Query{Scope: "nobody"})
	require.NoError(t, err)
	require.Contains(t, got.Text, "nothing is known yet")
	require.Empty(t, got.Beliefs)
}

func TestContextBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, b := setup(t)
	for i := range 30 {
		b.belief(t, "u", fmt.Sprintf("User owns book number %02d", i), fmt.Sprintf("book_%02d", i), "2025-01-01", "2025-01-01")
	}
	got, err := r.Context(ctx, recall.Query{Scope: "u", K: 5})
	require.NoError(t, err)
	require.Len(t, got.Beliefs, 5)
	require.Equal(t, 5, strings.Count(got.Text, "\n- "))

	got, err = r.Context(ctx, recall.Query{Scope: "u", K: 30, Budget: 200})
	require.NoError(t, err)
	require.LessOrEqual(t, len(got.Text), 200)
	require.Equal(t, len(got.Beliefs), strings.Count(got.Text, "\n- "), "only whole lines, each a belief of the answer")
	require.NotEmpty(t, got.Beliefs)

	for _, q := range []recall.Query{{Scope: " "}, {Scope: "u", K: recall.MaxK + 1}, {Scope: "u", Budget: -1}, {Scope: "u", Query: "a\x00b"}} {
		_, err := r.Context(ctx, q)
		require.ErrorIs(t, err, recall.ErrQuery, "%+v", q)
	}
}

func TestAsk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, b := setup(t)
	miami := b.belief(t, "u", "User lives in Miami", "location", "2026-02-01", "2026-02-01")
	b.belief(t, "u", "User plays the cello", "instrument", "2025-01-01", "2025-01-01")
	var prompt string
	b.llm.Handle(func(req llmtest.Request) llmtest.Reply {
		require.Equal(t, prompts.AnswerSchemaName, req.SchemaName)
		prompt = req.Prompt
		i := strings.Index(req.Prompt, "] User lives in Miami")
		return llmtest.Reply{Content: fmt.Sprintf(`{"reasoning": "r", "answer": "Miami", "citations": [%s]}`, req.Prompt[i-1:i])}
	})
	started := time.Now()
	got, err := r.Ask(ctx, recall.Query{Scope: "u", Query: "Where does the user live?"})
	elapsed := time.Since(started)
	require.NoError(t, err)
	require.Equal(t, "Miami", got.Answer)
	require.Positive(t, got.Read, "the read is timed")
	require.Less(t, got.Read, elapsed, "the read is part of the answer, without the model's call")
	require.Equal(t, []int64{miami}, got.Citations, "citations are belief ids")
	require.Len(t, got.Beliefs, 2)
	require.Equal(t, 1, got.ChatCalls)
	require.Contains(t, prompt, "Question: Where does the user live?")

	// A citation out of range is malformed: asked again.
	b.llm.Handle(nil)
	b.llm.Script(llmtest.Reply{Content: `{"reasoning": "r", "answer": "Miami", "citations": [7]}`},
		llmtest.Reply{Content: `{"reasoning": "r", "answer": "Miami", "citations": [0, 0]}`})
	before := b.llm.ChatCount()
	got, err = r.Ask(ctx, recall.Query{Scope: "u", Query: "Where does the user live?"})
	require.NoError(t, err)
	require.Equal(t, 2, b.llm.ChatCount()-before)
	require.Equal(t, 2, got.ChatCalls)
	require.Len(t, got.Citations, 1, "a citation repeated counts once")

	b.llm.Script(llmtest.Reply{Content: `{"reasoning": "r", "answer": "Miami", "citations": [9]}`})
	_, err = r.Ask(ctx, recall.Query{Scope: "u", Query: "Where does the user live?"})
	require.ErrorIs(t, err, llm.ErrMalformedOutput, "still out of range after the retries")

	// An empty memory says so without a call.
	before = b.llm.ChatCount()
	got, err = r.Ask(ctx, recall.Query{Scope: "nobody", Query: "Where does the user live?"})
	require.NoError(t, err)
	require.Equal(t, recall.NothingKnown, got.Answer)
	require.Empty(t, got.Citations)
	require.Equal(t, before, b.llm.ChatCount())

	_, err = r.Ask(ctx, recall.Query{Scope: "u"})
	require.ErrorIs(t, err, recall.ErrQuery, "a question is needed")
}
