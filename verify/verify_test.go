package verify_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
	"github.com/credohq/credo/verify"
)

// questions is a Questioner that names what it is given.
type questions []memory.Question

func (q questions) Questions(context.Context, *memory.Batch) ([]memory.Question, error) {
	return q, nil
}

// asker asks srv through the real OpenAI provider and counts its calls.
func asker(t *testing.T, srv *llmtest.Server, cfg func(*llm.Config)) (verify.Asker, *int) {
	t.Helper()
	c := srv.OpenAIConfig()
	if cfg != nil {
		cfg(&c)
	}
	chat, err := llm.NewOpenAI(c)
	require.NoError(t, err)
	p, err := prompts.New()
	require.NoError(t, err)
	calls := new(int)
	return verify.Asker{Chat: chat, Prompts: p, Retries: 2, Observe: func(llm.Attempt) { *calls++ }}, calls
}

// batch has two facts, the first superseding candidate 0, the second retracting
// candidate 1, and a resolution, for Set to find each by its indices.
func batch() (*memory.Batch, questions) {
	b := &memory.Batch{Scope: "u", Origin: memory.RevisionExtraction, Candidates: []int64{1, 2},
		Facts: []memory.Fact{
			{Statement: "User's home base is Lisbon", Attribute: "base",
				Resolves: &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}},
			{Resolves: &memory.Directive{Index: 1, Action: memory.ActionRetract, Reason: memory.ReasonCorrection}},
		},
		Resolutions: []memory.Resolution{{Index: 1, Action: memory.ActionRetract, Reason: memory.ReasonTemporal}},
	}
	return b, questions{
		{Fact: 0, Resolution: -1, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal, Target: "User lives in Brooklyn",
			Statement: "User's home base is Lisbon", Quote: "we settled in Lisbon"},
		{Fact: 1, Resolution: -1, Action: memory.ActionRetract, Reason: memory.ReasonCorrection, Target: "User has a dog",
			Quote: "I never had a dog"},
		{Fact: -1, Resolution: 0, Action: memory.ActionRetract, Reason: memory.ReasonTemporal, Target: "User owns a bike"},
	}
}

func verdicts(vs ...string) llmtest.Reply {
	return llmtest.Reply{Content: `{"verdicts": [` + strings.Join(vs, ",") + `]}`}
}

func TestNoQuestionsNoCall(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	a, calls := asker(t, srv, nil)
	b, _ := batch()

	out, err := a.Opinions(context.Background(), questions(nil), b)
	require.NoError(t, err)
	require.Equal(t, verify.Outcome{}, out)
	ops, err := a.Ask(context.Background(), nil)
	require.NoError(t, err)
	require.Empty(t, ops)
	require.Zero(t, srv.ChatCount())
	require.Zero(t, *calls)
	require.Nil(t, b.Facts[0].Opinion)
}

// TestOneCallForAllQuestions: a batch's questions are asked in one call, with the
// verification schema, and each verdict is set on its directive; one the model did not
// answer keeps no opinion.
func TestOneCallForAllQuestions(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.OnVerification(verdicts(`{"directive": 2, "why": "the bike was sold", "holds": true}`,
		`{"directive": 0, "why": "  a move to Lisbon  ", "holds": true}`))
	a, calls := asker(t, srv, nil)
	b, qs := batch()

	out, err := a.Opinions(context.Background(), qs, b)
	require.NoError(t, err)
	require.Positive(t, out.Duration, "the time spent asking")
	out.Duration = 0
	require.Equal(t, verify.Outcome{Asked: 3, Holds: 2}, out)
	require.Equal(t, &memory.Opinion{Holds: true, Why: "a move to Lisbon"}, b.Facts[0].Opinion)
	require.Nil(t, b.Facts[1].Opinion, "no verdict, no opinion: the engine holds it")
	require.Equal(t, &memory.Opinion{Holds: true, Why: "the bike was sold"}, b.Resolutions[0].Opinion)

	require.Equal(t, 1, *calls)
	chats := srv.Chats()
	require.Len(t, chats, 1)
	require.Equal(t, prompts.VerificationSchemaName, chats[0].SchemaName)
	require.JSONEq(t, string(prompts.VerificationSchema()), string(chats[0].Schema))
	user := chats[0].Messages[1].Content
	require.Contains(t, user, `[D0] supersede (temporal): "User lives in Brooklyn" would be replaced by "User's home base is Lisbon"; quote: "we settled in Lisbon"`)
	require.Contains(t, user, `[D1] retract (correction): "User has a dog" would no longer be believed; quote: "I never had a dog"`)
	require.Contains(t, user, `[D2] retract (temporal): "User owns a bike" would no longer be believed`+"\n")
}

// TestHoldsFalseIsAnOpinion: a verdict that refuses is set as it is; the engine holds
// the directive and shows why.
func TestHoldsFalseIsAnOpinion(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.OnVerification(verdicts(`{"directive": 0, "why": "about someone else", "holds": false}`))
	a, _ := asker(t, srv, nil)
	ops, err := a.Ask(context.Background(), questions{{Fact: 0, Resolution: -1, Action: memory.ActionRetract, Reason: memory.ReasonTemporal, Target: "x"}})
	require.NoError(t, err)
	require.Equal(t, []*memory.Opinion{{Holds: false, Why: "about someone else"}}, ops)
}

// TestMalformedIsAskedAgain: a directive out of range, or answered twice, is a
// malformed answer: asked again, showing the model why, within the retries.
func TestMalformedIsAskedAgain(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.OnVerification(
		verdicts(`{"directive": 3, "why": "", "holds": true}`),
		verdicts(`{"directive": 0, "why": "", "holds": true}`, `{"directive": 0, "why": "", "holds": false}`),
		verdicts(`{"directive": 1, "why": "never had one", "holds": true}`))
	a, calls := asker(t, srv, nil)
	b, qs := batch()

	out, err := a.Opinions(context.Background(), qs, b)
	require.NoError(t, err)
	require.Positive(t, out.Duration, "the time spent asking")
	out.Duration = 0
	require.Equal(t, verify.Outcome{Asked: 3, Holds: 1}, out)
	require.Equal(t, &memory.Opinion{Holds: true, Why: "never had one"}, b.Facts[1].Opinion)
	require.Nil(t, b.Facts[0].Opinion)

	require.Equal(t, 3, *calls)
	chats := srv.Chats()
	require.Len(t, chats, 3)
	require.Contains(t, chats[1].Prompt, "directive 3 is not one of the 3 lines shown")
	require.Contains(t, chats[2].Prompt, "directive 0 is answered twice")
}

// TestUnanswered: when every answer is malformed (here an extraction), or the prompt
// does not fit the model's window, no opinion is set and the engine holds what was
// asked about; it is not an error.
func TestUnanswered(t *testing.T) {
	t.Parallel()
	t.Run("malformed", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(t)
		srv.OnVerification(llmtest.Reply{Content: llmtest.DefaultContent})
		a, calls := asker(t, srv, nil)
		b, qs := batch()
		out, err := a.Opinions(context.Background(), qs, b)
		require.NoError(t, err)
		require.True(t, llm.IsMalformed(out.Unanswered), "%v", out.Unanswered)
		require.Equal(t, 3, out.Asked)
		require.Zero(t, out.Holds)
		require.Equal(t, 3, *calls, "asked again twice")
		require.Nil(t, b.Facts[0].Opinion)
		require.Nil(t, b.Resolutions[0].Opinion)
	})
	t.Run("window", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(t)
		a, _ := asker(t, srv, func(c *llm.Config) { c.Context, c.AnswerTokens = 200, 100 })
		b, qs := batch()
		out, err := a.Opinions(context.Background(), qs, b)
		require.NoError(t, err)
		require.True(t, llm.IsContextLength(out.Unanswered), "%v", out.Unanswered)
		require.Zero(t, srv.ChatCount(), "a prompt that does not fit is not sent")
		require.Nil(t, b.Facts[0].Opinion)
	})
}

// TestServerErrorIsAnError: a server that refuses the call is the caller's to retry.
func TestServerErrorIsAnError(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.OnVerification(llmtest.Reply{Status: http.StatusBadRequest})
	a, _ := asker(t, srv, nil)
	b, qs := batch()
	_, err := a.Opinions(context.Background(), qs, b)
	require.Error(t, err)
	require.True(t, llm.IsRefused(err), "%v", err)
	require.Nil(t, b.Facts[0].Opinion)
}

type failing struct{}

var errRead = errors.New("read failed")

func (failing) Questions(context.Context, *memory.Batch) ([]memory.Question, error) {
	return nil, errRead
}

type stale struct{}

func (stale) Questions(context.Context, *memory.Batch) ([]memory.Question, error) {
	return nil, fmt.Errorf("questions: %w", memory.ErrStale)
}

func TestQuestionsError(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	a, _ := asker(t, srv, nil)
	b, _ := batch()
	_, err := a.Opinions(context.Background(), failing{}, b)
	require.ErrorIs(t, err, errRead)

	// A batch whose candidates are gone asks nothing: Apply tells its writer.
	out, err := a.Opinions(context.Background(), stale{}, b)
	require.NoError(t, err)
	require.Equal(t, verify.Outcome{}, out)
	require.Zero(t, srv.ChatCount())
}

// TestOllama: the same call through Ollama's own API, which sends the schema as format.
func TestOllama(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.OnVerification(verdicts(`{"directive": 0, "why": "moved", "holds": true}`))
	chat, err := llm.NewOllama(srv.OllamaConfig())
	require.NoError(t, err)
	p, err := prompts.New()
	require.NoError(t, err)
	ops, err := verify.Asker{Chat: chat, Prompts: p}.Ask(context.Background(),
		questions{{Fact: 0, Resolution: -1, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal, Target: "a", Statement: "b"}})
	require.NoError(t, err)
	require.Equal(t, []*memory.Opinion{{Holds: true, Why: "moved"}}, ops)
	require.JSONEq(t, string(prompts.VerificationSchema()), string(srv.Chats()[0].Schema))
}

func TestParse(t *testing.T) {
	t.Parallel()
	ops, err := verify.Parse(`{"verdicts": []}`, 2)
	require.NoError(t, err)
	require.Equal(t, []*memory.Opinion{nil, nil}, ops)

	for name, content := range map[string]string{
		"verdicts missing":   `{}`,
		"verdicts null":      `{"verdicts": null}`,
		"directive missing":  `{"verdicts": [{"why": "", "holds": true}]}`,
		"holds missing":      `{"verdicts": [{"directive": 0, "why": ""}]}`,
		"negative directive": `{"verdicts": [{"directive": -1, "why": "", "holds": true}]}`,
		"out of range":       `{"verdicts": [{"directive": 2, "why": "", "holds": true}]}`,
		"twice":              `{"verdicts": [{"directive": 1, "why": "", "holds": true}, {"directive": 1, "why": "", "holds": true}]}`,
		"unknown member":     `{"verdicts": [{"directive": 0, "why": "", "holds": true, "confidence": 1}]}`,
		"member spelled":     `{"verdicts": [{"Directive": 0, "why": "", "holds": true}]}`,
		"holds a string":     `{"verdicts": [{"directive": 0, "why": "", "holds": "true"}]}`,
		"NUL":                `{"verdicts": [{"directive": 0, "why": "a\u0000b", "holds": true}]}`,
		"why too long":       `{"verdicts": [{"directive": 0, "why": "` + strings.Repeat("w", verify.MaxWhy+1) + `", "holds": true}]}`,
		"text after":         `{"verdicts": []} and more`,
		"too big":            `{"verdicts": [], "pad": "` + strings.Repeat(" ", verify.MaxAnswerBytes) + `"}`,
	} {
		_, err := verify.Parse(content, 2)
		require.True(t, llm.IsMalformed(err), "%s: %v", name, err)
	}
}

func TestSet(t *testing.T) {
	t.Parallel()
	b, qs := batch()
	yes, no := &memory.Opinion{Holds: true}, &memory.Opinion{Why: "no"}
	verify.Set(b, qs, []*memory.Opinion{no, nil, yes})
	require.Same(t, no, b.Facts[0].Opinion)
	require.Nil(t, b.Facts[1].Opinion)
	require.Same(t, yes, b.Resolutions[0].Opinion)
}
