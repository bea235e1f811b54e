package extract_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
)

const (
	nyc   = "User lives in New York City"
	miami = "User lives in Miami"
)

func statements(bs []memory.Belief) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Statement
	}
	return out
}

func TestEndToEndNYCThenMiami(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{llm.ProviderOpenAI, llm.ProviderOllama} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			p := pipelinetest.New(t, &pipelinetest.Options{Provider: provider})
			p.LLM.OnPrompt("I live in New York City", llmtest.Reply{Content: pipelinetest.Answer(
				pipelinetest.Fact{Statement: nyc, Attribute: "location", ValidFrom: "2026-01-15"})})
			p.LLM.OnPrompt("I moved to Miami last month", llmtest.Reply{Content: pipelinetest.Answer(
				pipelinetest.Fact{Statement: miami, Attribute: "location", ValidFrom: "2026-02-20", Quote: "I moved to Miami last month",
					Resolves: &pipelinetest.Resolves{Index: 0, Action: "supersede", Reason: "temporal"}})})

			p.Enqueue(t, pipelinetest.T("user:1", "nyc", "2026-01-15T10:00:00Z", "I live in New York City."))
			p.Drain(t)
			p.Enqueue(t, pipelinetest.T("user:1", "miami", "2026-03-20T14:00:00Z", "I moved to Miami last month."))
			p.Drain(t)

			current, err := p.Store.Current(ctx, "user:1")
			require.NoError(t, err)
			require.Equal(t, []string{miami}, statements(current))
			all, err := p.Store.All(ctx, "user:1")
			require.NoError(t, err)
			require.Equal(t, []string{nyc, miami}, statements(all))
			require.Equal(t, memory.StatusSuperseded, all[0].Status)
			require.Equal(t, all[1].ValidFrom, *all[0].ValidUntil)

			chats := p.LLM.Chats()
			require.Len(t, chats, 2, "one chat call per episode")
			require.NotContains(t, chats[0].Prompt, "[0] ")
			require.Contains(t, chats[1].Prompt, "\n[0] "+nyc)
			require.Contains(t, chats[1].Prompt, "I moved to Miami last month.")
			require.Contains(t, string(chats[1].Schema), `"resolves"`, "the extraction schema is enforced")
			require.Len(t, p.LLM.Embeds(), 2, "one embedding call per episode")
			require.Equal(t, 2, countRows(t, p, "SELECT count(*) FROM episode WHERE state = 'applied'"))
			require.Equal(t, 2, countRows(t, p, "SELECT count(*) FROM river_job WHERE state = 'completed'"))
		})
	}
}

func countRows(t *testing.T, p *pipelinetest.Pipeline, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, p.Schema.Pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

func TestDuplicateTranscriptIsOneEpisode(t *testing.T) {
	t.Parallel()
	p := pipelinetest.New(t, nil)
	tr := pipelinetest.T("user:1", "c1", "2026-01-15T10:00:00Z", "I live in New York City.")
	first := p.Enqueue(t, tr)
	require.Equal(t, 1, first.Enqueued)
	again := tr
	again.ID = "another-id"
	second := p.Enqueue(t, again, tr)
	require.Equal(t, 0, second.Enqueued)
	require.Equal(t, 2, second.Duplicates)
	require.Equal(t, first.EpisodeIDs[0], second.EpisodeIDs[0])
	p.Drain(t)
	ep := p.Episode(t, first.EpisodeIDs[0])
	require.Nil(t, ep.LastError)
	require.Equal(t, "applied", ep.State)
	require.Equal(t, 1, p.LLM.ChatCount())
	require.Equal(t, 1, countRows(t, p, "SELECT count(*) FROM episode"))
	require.Equal(t, 1, countRows(t, p, "SELECT count(*) FROM river_job"))
}

func TestMalformedOutput(t *testing.T) {
	t.Parallel()
	valid := func(f pipelinetest.Fact) string { return pipelinetest.Answer(f) }
	supersede := &pipelinetest.Resolves{Index: 0, Action: "supersede", Reason: "temporal"}
	cases := []struct {
		name  string
		reply llmtest.Reply
		want  string
	}{
		{"not JSON", llmtest.Reply{Body: "", Content: "I think the user moved."}, "malformed"},
		{"empty", llmtest.Reply{Content: ""}, "malformed"},
		{"truncated", llmtest.Reply{Content: `{"reasoning": "x", "facts": [{"statement": "User li`, FinishReason: "length"}, "truncated"},
		{"wrong types", llmtest.Reply{Content: `{"reasoning": "x", "facts": [{"statement": 7}]}`}, "not the extraction schema"},
		{"facts missing", llmtest.Reply{Content: `{"reasoning": "x"}`}, "facts is missing"},
		{"unknown action", llmtest.Reply{Content: valid(pipelinetest.Fact{Statement: miami, Attribute: "location",
			Resolves: &pipelinetest.Resolves{Index: 0, Action: "delete", Reason: "temporal"}})}, `action "delete"`},
		{"unknown reason", llmtest.Reply{Content: valid(pipelinetest.Fact{Statement: miami, Attribute: "location",
			Resolves: &pipelinetest.Resolves{Index: 0, Action: "supersede", Reason: "whim"}})}, `reason "whim"`},
		{"index out of range", llmtest.Reply{Content: valid(pipelinetest.Fact{Statement: miami, Attribute: "location",
			Resolves: &pipelinetest.Resolves{Index: 3, Action: "supersede", Reason: "temporal"}})}, "session_index 3"},
		{"year 9999", llmtest.Reply{Content: valid(pipelinetest.Fact{Statement: miami, Attribute: "location", ValidFrom: "9999-01-01",
			Resolves: supersede})}, "implausible"},
		{"half valid", llmtest.Reply{Content: pipelinetest.Answer(
			pipelinetest.Fact{Statement: "User has a cat", Attribute: "pet"},
			pipelinetest.Fact{Statement: miami, Attribute: "location", Confidence: 7})}, "confidence 7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			p := pipelinetest.New(t, nil)
			seed, err := p.Store.Apply(ctx, &memory.Batch{Scope: "user:1", Origin: memory.RevisionOperator,
				Facts: []memory.Fact{{Statement: nyc, Attribute: "location", Confidence: 0.9, Origin: memory.OriginUserStated}}})
			require.NoError(t, err)
			nycID := seed.Facts[0].BeliefID

			p.LLM.Script(tc.reply)
			res := p.Enqueue(t, pipelinetest.T("user:1", "miami", "2026-03-20T14:00:00Z", "I moved to Miami last month."))
			p.Drain(t)

			require.Len(t, p.LLM.Chats(), 1+extract.DefaultMalformedRetries, "a malformed answer is asked again a bounded number of times")
			ep := p.Episode(t, res.EpisodeIDs[0])
			require.Equal(t, "failed", ep.State)
			require.NotNil(t, ep.LastError)
			require.Contains(t, *ep.LastError, tc.want)
			require.Equal(t, 1, countRows(t, p, "SELECT count(*) FROM river_job WHERE state = 'completed'"),
				"a failed episode fails alone: its scope's job completes")

			all, err := p.Store.All(ctx, "user:1")
			require.NoError(t, err)
			require.Len(t, all, 1, "nothing of a malformed answer is written")
			require.Equal(t, nycID, all[0].ID)
			require.Equal(t, memory.StatusActive, all[0].Status)
			require.Equal(t, 0, countRows(t, p, "SELECT count(*) FROM revision_event"))
			require.Empty(t, p.LLM.Embeds())
		})
	}
}

func TestMalformedThenValidIsAskedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pipelinetest.New(t, nil)
	p.LLM.Script(llmtest.Reply{Content: `{"reasoning": "x", "facts": [{"statement": "User has a cat"}]}`},
		llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: "User has a cat", Attribute: "pet"})})
	p.Enqueue(t, pipelinetest.T("user:1", "cat", "2026-03-20T14:00:00Z", "I have a cat."))
	p.Drain(t)

	chats := p.LLM.Chats()
	require.Len(t, chats, 2)
	require.Contains(t, chats[1].Prompt, "That answer was rejected")
	current, err := p.Store.Current(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, []string{"User has a cat"}, statements(current))
}

func TestServerErrorIsRetriedByRiver(t *testing.T) {
	t.Parallel()
	for _, status := range []int{500, 429, 503} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			p := pipelinetest.New(t, nil)
			p.LLM.Script(llmtest.Reply{Status: status},
				llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: "User has a cat", Attribute: "pet"})})
			res := p.Enqueue(t, pipelinetest.T("user:1", "cat", "2026-03-20T14:00:00Z", "I have a cat."))
			p.Drain(t)

			require.Len(t, p.LLM.Chats(), 2)
			ep := p.Episode(t, res.EpisodeIDs[0])
			require.Equal(t, "applied", ep.State)
			require.Equal(t, 2, ep.Attempts)
			require.Nil(t, ep.LastError)
			current, err := p.Store.Current(ctx, "user:1")
			require.NoError(t, err)
			require.Equal(t, []string{"User has a cat"}, statements(current))
		})
	}
}

func TestOutageLongerThanAttemptsFailsTheEpisode(t *testing.T) {
	t.Parallel()
	p := pipelinetest.New(t, &pipelinetest.Options{MaxAttempts: 2})
	p.LLM.Script(llmtest.Reply{Status: 502})
	res := p.Enqueue(t, pipelinetest.T("user:1", "cat", "2026-03-20T14:00:00Z", "I have a cat."))
	p.Drain(t)
	ep := p.Episode(t, res.EpisodeIDs[0])
	require.Equal(t, "failed", ep.State)
	require.Equal(t, 2, ep.Attempts)
	require.Contains(t, *ep.LastError, "502")
	require.Equal(t, 1, countRows(t, p, "SELECT count(*) FROM river_job WHERE state = 'completed'"),
		"the episode's attempts are counted, not the job's")
}

func TestCandidatesAreBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const k = 5
	p := pipelinetest.New(t, &pipelinetest.Options{Extract: func(c *extract.Config) { c.MaxCandidates = k }})
	var facts []memory.Fact
	for i := range 40 {
		s := fmt.Sprintf("User collects stamp series %d", i)
		facts = append(facts, memory.Fact{Statement: s, Attribute: fmt.Sprintf("hobby_%d", i), Confidence: 0.9,
			Origin: memory.OriginUserStated, Embedding: llmtest.Embed(s, llmtest.DefaultDim)})
	}
	home := "User lives in a house by the lake"
	facts = append(facts, memory.Fact{Statement: home, Attribute: "location", Confidence: 0.9, Origin: memory.OriginUserStated,
		Embedding: llmtest.Embed(home, llmtest.DefaultDim)})
	_, err := p.Store.Apply(ctx, &memory.Batch{Scope: "user:1", Origin: memory.RevisionOperator, Facts: facts, EmbedModel: p.Provider.EmbedModel()})
	require.NoError(t, err)

	p.Enqueue(t, pipelinetest.T("user:1", "lake", "2026-03-20T14:00:00Z", "My house by the lake is lovely in spring."))
	p.Drain(t)

	chats := p.LLM.Chats()
	require.Len(t, chats, 1)
	lines := 0
	for l := range strings.SplitSeq(chats[0].Prompt, "\n") {
		if len(l) > 3 && l[0] == '[' && strings.Contains(l, "] ") {
			lines++
		}
	}
	require.Equal(t, k, lines, "at most K candidates however many beliefs the scope holds")
	require.Contains(t, chats[0].Prompt, "] "+home, "the nearest belief is among them")
}

// A refused key or an unknown model does not improve by waiting: the episode fails at
// once, saying what to check, instead of retrying for hours.
func TestRefusedRequestFailsTheEpisode(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusUnauthorized, http.StatusNotFound} {
		p := pipelinetest.New(t, &pipelinetest.Options{MaxAttempts: 5})
		p.LLM.Script(llmtest.Reply{Status: status})
		res := p.Enqueue(t, pipelinetest.T("u", "c1", "2026-01-10T10:00:00Z", "I live in Oslo."))
		p.Drain(t)
		ep := p.Episode(t, res.EpisodeIDs[0])
		require.Equal(t, "failed", ep.State, status)
		require.Equal(t, 1, ep.Attempts, "no retry")
		require.Contains(t, *ep.LastError, "check OPENAI_API_KEY, CHAT_MODEL and EMBED_MODEL")
		require.Equal(t, 1, p.LLM.ChatCount())
	}
}
