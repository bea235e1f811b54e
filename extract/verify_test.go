package extract_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/prompts"
)

// reports keeps what each extraction reported.
type reports struct {
	mu  sync.Mutex
	all []extract.Report
}

func (r *reports) Extracted(rep extract.Report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, rep)
}

func (r *reports) of(episode int64) extract.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rep := range r.all {
		if rep.EpisodeID == episode {
			return rep
		}
	}
	return extract.Report{}
}

// TestSecondOpinion: a move the model names in other words than the belief it replaces
// (another slot, no word in common) is one identity does not settle: the engine asks
// for a second opinion, in one more call of the episode, and the verdict decides.
// Holds: the move is applied. Refused: it waits for an operator, cause second_opinion,
// and Brooklyn stays current.
//
// It waits on the engine's Store.Questions: until it names such a directive, no second
// opinion is asked.
func TestSecondOpinion(t *testing.T) {
	t.Parallel()
	const (
		brooklyn = "User lives in Brooklyn"
		lisbon   = "User's home base is Lisbon"
		line     = `[D0] supersede (temporal): "User lives in Brooklyn" would be replaced by "User's home base is Lisbon"; quote: "We settled in Lisbon for good"`
	)
	for _, tc := range []struct {
		name    string
		verdict string
		current []string
		held    bool
	}{
		{"holds", `{"directive": 0, "why": "the user moved to Lisbon", "holds": true}`, []string{lisbon}, false},
		{"refused", `{"directive": 0, "why": "a trip, not a move", "holds": false}`, []string{brooklyn}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			reps := &reports{}
			p := pipelinetest.New(t, &pipelinetest.Options{Extract: func(c *extract.Config) { c.Observer = reps }})
			p.LLM.OnVerification(llmtest.Reply{Content: `{"verdicts": [` + tc.verdict + `]}`})
			p.LLM.Handle(func(req llmtest.Request) llmtest.Reply {
				switch {
				case strings.Contains(req.Prompt, "I live in Brooklyn"):
					return llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: brooklyn, Attribute: "home_city",
						Quote: "I live in Brooklyn"})}
				case strings.Contains(req.Prompt, "We settled in Lisbon"):
					return llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: lisbon, Attribute: "base",
						Quote: "We settled in Lisbon for good", Resolves: &pipelinetest.Resolves{
							Index: candidateIndex(t, req.Prompt, brooklyn), Action: "supersede", Reason: "temporal"}})}
				}
				return llmtest.Reply{Content: pipelinetest.Answer()}
			})
			seed := p.Enqueue(t, pipelinetest.T("user:ana", "brooklyn", "2026-01-12T09:00:00Z", "I live in Brooklyn."))
			p.Drain(t)
			move := p.Enqueue(t, pipelinetest.T("user:ana", "lisbon", "2026-03-02T09:00:00Z", "We settled in Lisbon for good."))
			p.Drain(t)

			// One call for the episode that revises nothing, two for the move: the
			// extraction and its second opinion.
			var asked []llmtest.Request
			for _, c := range p.LLM.Chats() {
				if c.SchemaName == prompts.VerificationSchemaName {
					asked = append(asked, c)
				}
			}
			require.Len(t, asked, 1, "one second opinion, for the move")
			require.Contains(t, asked[0].Messages[1].Content, line+"\n")
			first, second := reps.of(seed.EpisodeIDs[0]), reps.of(move.EpisodeIDs[0])
			require.Equal(t, 1, first.ChatCalls)
			require.Zero(t, first.Verifications)
			require.Equal(t, 2, second.ChatCalls, "chat calls per episode count the second opinion")
			require.Equal(t, 1, second.Verifications)

			current, err := p.Store.Current(ctx, "user:ana")
			require.NoError(t, err)
			require.Equal(t, tc.current, statements(current))
			items, err := p.Store.Conflicts(ctx, "user:ana", false)
			require.NoError(t, err)
			if !tc.held {
				require.Empty(t, items)
				return
			}
			require.Len(t, items, 1)
			require.Equal(t, memory.CauseSecondOpinion, *items[0].Cause)
			require.Equal(t, memory.ActionSupersede, items[0].Action)
			require.Equal(t, lisbon, items[0].Statement)
		})
	}
}
