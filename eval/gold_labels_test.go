package eval_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
)

// shippedGold is the shipped scenarios and their labels.
func shippedGold(t *testing.T) ([]eval.Scenario, []eval.Labels) {
	t.Helper()
	scenarios, err := eval.Shipped()
	require.NoError(t, err)
	labels, err := eval.ShippedLabels()
	require.NoError(t, err)
	return scenarios, labels
}

// shown is a belief as an extraction prompt shows it.
type shown struct {
	statement, attribute string
	event                bool
}

// replay is what a scenario's memory holds before each of its transcripts when the
// gold facts are applied as the engine would apply them, and the worked examples
// (quotes of earlier revisions) a prompt may show.
type replay struct {
	before   [][]shown
	excerpts [][]string
}

func replayLabels(s eval.Scenario, l eval.Labels) replay {
	var (
		r        replay
		active   []shown
		excerpts []string
	)
	without := func(statement string) {
		for i, b := range active {
			if b.statement == statement {
				active = append(active[:i], active[i+1:]...)
				return
			}
		}
	}
	for _, tr := range s.Transcripts {
		r.before = append(r.before, append([]shown(nil), active...))
		r.excerpts = append(r.excerpts, append([]string(nil), excerpts...))
		for _, f := range l.Transcripts[tr.ID] {
			if d := f.Resolves; d != nil {
				excerpts = append(excerpts, f.Quote)
				if d.Action == string(memory.ActionReinforce) {
					continue
				}
				without(d.Target)
			}
			if f.Statement != "" {
				active = append(active, shown{f.Statement, f.Attribute, f.Kind == string(memory.KindEvent)})
			}
		}
	}
	return r
}

// extractionPrompt renders the extraction prompt of transcript j of s, as the
// pipeline would with memory as cands and earlier quotes as worked examples.
func extractionPrompt(t *testing.T, s eval.Scenario, j int, cands []shown, excerpts []string) llm.ChatRequest {
	t.Helper()
	p, err := prompts.New()
	require.NoError(t, err)
	tr := s.Transcripts[j]
	e := prompts.Extraction{Scope: s.Scope, OccurredAt: tr.OccurredAt}
	for _, c := range cands {
		e.Candidates = append(e.Candidates, prompts.Candidate{Statement: c.statement, Attribute: c.attribute, Event: c.event,
			ValidFrom: tr.OccurredAt.AddDate(0, -1, 0)})
	}
	for _, x := range excerpts {
		e.Examples = append(e.Examples, prompts.Example{Old: "User lives in Springfield", Excerpt: x, New: "User lives in Shelbyville",
			Action: "supersede", Reason: "temporal"})
	}
	for _, m := range tr.Messages {
		e.Messages = append(e.Messages, prompts.Message{Role: m.Role, Name: m.Name, Content: m.Content, At: m.At})
	}
	system, user, err := p.Extraction(e)
	require.NoError(t, err)
	return llm.SchemaRequest(system, user, prompts.ExtractionSchemaName, prompts.ExtractionSchema())
}

// Every shipped transcript is labeled, every quote is a span of its transcript, and the
// gold model recognises each transcript in its prompt (beside worked examples quoting
// the scenario's earlier ones) and answers its labels, each target and basis at the
// index the prompt shows it, in an answer the extraction parser takes.
func TestGoldAnswersEveryTranscript(t *testing.T) {
	t.Parallel()
	scenarios, labels := shippedGold(t)
	require.NoError(t, eval.CheckLabels(scenarios, labels))
	require.Len(t, labels, len(scenarios), "one line a scenario")
	gold, err := eval.NewGold(scenarios, labels, nil, 0)
	require.NoError(t, err)
	by := map[string]eval.Labels{}
	for _, l := range labels {
		by[l.Scenario] = l
	}
	transcripts, facts := 0, 0
	for _, s := range scenarios {
		l := by[s.Name]
		r := replayLabels(s, l)
		for j, tr := range s.Transcripts {
			transcripts++
			cands := r.before[j]
			res, err := gold.Chat(context.Background(), extractionPrompt(t, s, j, cands, r.excerpts[j]))
			require.NoError(t, err, "%s/%s", s.Name, tr.ID)
			got, _, err := extract.Parse(res.Content, len(cands), tr.OccurredAt)
			require.NoError(t, err, "%s/%s: %s", s.Name, tr.ID, res.Content)
			want := l.Transcripts[tr.ID]
			require.Len(t, got, len(want), "%s/%s", s.Name, tr.ID)
			for i, f := range got {
				facts++
				w := want[i]
				require.Equal(t, w.Statement, f.Statement, "%s/%s", s.Name, tr.ID)
				require.Equal(t, w.Quote, f.Quote)
				require.Equal(t, memory.Origin(w.Origin), f.Origin)
				if w.Resolves == nil {
					require.Nil(t, f.Resolves)
				} else {
					require.NotNil(t, f.Resolves, "%s/%s: %s", s.Name, tr.ID, w.Statement)
					require.Equal(t, w.Resolves.Target, cands[f.Resolves.Index].statement, "%s/%s", s.Name, tr.ID)
					require.Equal(t, memory.Action(w.Resolves.Action), f.Resolves.Action)
				}
				require.Len(t, f.DependsOn, len(w.DependsOn))
				for k, d := range f.DependsOn {
					require.Equal(t, w.DependsOn[k], cands[d].statement)
				}
			}
		}
	}
	require.Equal(t, 177, transcripts)
	require.Greater(t, facts, transcripts)
	require.Zero(t, gold.Stats())
	require.Empty(t, gold.Mistakes())
}

// A transcript no label knows is an error, not an empty answer; a target the prompt
// does not show is left out and counted.
func TestGoldUnknownTranscriptAndTarget(t *testing.T) {
	t.Parallel()
	scenarios, labels := shippedGold(t)
	gold, err := eval.NewGold(scenarios, labels, nil, 0)
	require.NoError(t, err)
	s := scenarios[0] // move-brooklyn-to-miami
	require.Equal(t, "move-brooklyn-to-miami", s.Name)

	other := s
	other.Transcripts = []eval.Transcript{{ID: "x", OccurredAt: s.Transcripts[0].OccurredAt, Messages: s.Transcripts[0].Messages[:1]}}
	other.Transcripts[0].Messages = append(other.Transcripts[0].Messages, other.Transcripts[0].Messages[0])
	other.Transcripts[0].Messages[1].Content = "Something nobody labeled."
	_, err = gold.Chat(context.Background(), extractionPrompt(t, other, 0, nil, nil))
	require.ErrorContains(t, err, "gold: the prompt holds no labeled transcript")

	// The move, with Brooklyn not among the candidates: Miami stands on its own.
	res, err := gold.Chat(context.Background(), extractionPrompt(t, s, 1, []shown{{"User has a dog named Rex", "pet", false}}, nil))
	require.NoError(t, err)
	facts, _, err := extract.Parse(res.Content, 1, s.Transcripts[1].OccurredAt)
	require.NoError(t, err)
	require.Len(t, facts, 1)
	require.Equal(t, "User lives in Miami", facts[0].Statement)
	require.Nil(t, facts[0].Resolves)
	require.Equal(t, eval.GoldStats{Unresolved: 1}, gold.Stats())

	_, err = gold.Chat(context.Background(), llm.SchemaRequest("s", "u", prompts.AnswerSchemaName, prompts.AnswerSchema()))
	require.ErrorContains(t, err, `gold: no labels answer a "answer" prompt`)
}

// The review of dependents answers each flagged belief with its label, for the change
// of basis it was labeled for; anything else is kept, and counted.
func TestGoldReview(t *testing.T) {
	t.Parallel()
	scenarios, labels := shippedGold(t)
	gold, err := eval.NewGold(scenarios, labels, nil, 0)
	require.NoError(t, err)
	p, err := prompts.New()
	require.NoError(t, err)
	since := time.Date(2024, 10, 14, 0, 0, 0, 0, time.UTC)
	system, user, err := p.Review(prompts.Review{Scope: "eval:dep-timezone-new-york-to-los-angeles", Items: []prompts.ReviewItem{
		{Statement: "User has a weekly check-in on Mondays at 9am their time", Attribute: "weekly_check_in", ValidFrom: since,
			Bases: []prompts.ReviewBasis{{Statement: "User lives in Queens, New York", Status: "superseded", Now: "User lives in Los Angeles"}}},
		{Statement: "User's time zone is US Eastern", Attribute: "time_zone", ValidFrom: since,
			Bases: []prompts.ReviewBasis{{Statement: "User lives in Queens, New York", Status: "superseded", Now: "User lives in Los Angeles"}}},
	}})
	require.NoError(t, err)
	res, err := gold.Chat(context.Background(), llm.SchemaRequest(system, user, prompts.ReviewSchemaName, prompts.ReviewSchema()))
	require.NoError(t, err)
	var out struct {
		Reviews []struct {
			Index     int    `json:"index"`
			Action    string `json:"action"`
			Statement string `json:"statement"`
			Reason    string `json:"reason"`
		} `json:"reviews"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content), &out))
	require.Len(t, out.Reviews, 2)
	require.Equal(t, "keep", out.Reviews[0].Action, "unlabeled: kept")
	require.Equal(t, 1, out.Reviews[1].Index)
	require.Equal(t, "supersede", out.Reviews[1].Action)
	require.Equal(t, "User's time zone is US Pacific", out.Reviews[1].Statement)
	require.Equal(t, "temporal", out.Reviews[1].Reason)
	require.Equal(t, eval.GoldStats{Unlabeled: 1}, gold.Stats())

	// The same belief, its basis changed otherwise (in another scenario, moving to
	// Miami): that scenario's label, keep.
	system, user, err = p.Review(prompts.Review{Scope: "eval:dep-timezone-new-york-to-miami-kept", Items: []prompts.ReviewItem{
		{Statement: "User's time zone is US Eastern", Attribute: "time_zone", ValidFrom: since,
			Bases: []prompts.ReviewBasis{{Statement: "User lives on the Upper West Side of New York City", Status: "superseded", Now: "User lives in Miami"}}},
	}})
	require.NoError(t, err)
	res, err = gold.Chat(context.Background(), llm.SchemaRequest(system, user, prompts.ReviewSchemaName, prompts.ReviewSchema()))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(res.Content), &out))
	require.Len(t, out.Reviews, 1)
	require.Equal(t, "keep", out.Reviews[0].Action)
	require.Equal(t, eval.GoldStats{Unlabeled: 1}, gold.Stats(), "labeled")
}

// A consolidation cluster is kept whole unless the labels merge two of its beliefs.
func TestGoldConsolidation(t *testing.T) {
	t.Parallel()
	scenarios, labels := shippedGold(t)
	s := scenarios[0]
	labels = append([]eval.Labels(nil), labels...)
	for i := range labels {
		if labels[i].Scenario == s.Name {
			labels[i].Consolidation = []eval.GoldMerge{{Belief: "User lives in Miami", ReplacedBy: "User lives in Miami, Florida", Reason: "duplicate"}}
		}
	}
	gold, err := eval.NewGold(scenarios, labels, nil, 0)
	require.NoError(t, err)
	p, err := prompts.New()
	require.NoError(t, err)
	ask := func(scope string, statements ...string) string {
		var cands []prompts.ConsolidationCandidate
		for _, st := range statements {
			cands = append(cands, prompts.ConsolidationCandidate{Statement: st, Attribute: "location", Origin: "user_stated",
				ValidFrom: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)})
		}
		system, user, err := p.Consolidation(prompts.Consolidation{Scope: scope, Candidates: cands})
		require.NoError(t, err)
		res, err := gold.Chat(context.Background(), llm.SchemaRequest(system, user, prompts.ConsolidationSchemaName, prompts.ConsolidationSchema()))
		require.NoError(t, err)
		return res.Content
	}
	require.JSONEq(t, `{"reasoning": "gold labels", "resolutions": [{"session_index": 1, "action": "supersede", "replaced_by": 0, "reason": "duplicate"}]}`,
		ask(s.Scope, "User lives in Miami, Florida", "User lives in Miami", "User has a dog"))
	require.JSONEq(t, `{"reasoning": "gold labels", "resolutions": []}`, ask(s.Scope, "User lives in Miami", "User has a dog"))
	require.JSONEq(t, `{"reasoning": "gold labels", "resolutions": []}`, ask("eval:other", "User lives in Miami", "User lives in Miami, Florida"),
		"another scope's labels")
}

// Bad labels are refused with the file, line and what is wrong; labels that disagree
// with their scenarios too.
func TestLoadLabelsErrors(t *testing.T) {
	t.Parallel()
	_, err := eval.LoadLabels("g.jsonl", strings.NewReader(`{"scenario": "a", "transcripts": {"c1": []}}
{"scenario": "b", "transcripts": {"c1": [{"statement": "User lives in X", "subject": "user", "attribute": "location", "kind": "place", "confidence": 2, "origin": "user_stated", "quote": "X", "resolves": {"target": "Y", "action": "forget", "reason": "temporal"}}]}}
{"scenario": "a", "transcripts": {}, "bogus": 1}
{"scenario": "a", "transcripts": {}}`))
	require.Error(t, err)
	for _, want := range []string{
		"g.jsonl:2: b: transcripts.c1[0]: confidence 2 is not within (0, 1]",
		"g.jsonl:2: b: transcripts.c1[0]: statement, subject, attribute and kind are needed",
		`g.jsonl:2: b: transcripts.c1[0]: resolves: action "forget" is not supersede, retract or reinforce`,
		`g.jsonl:3: json: unknown field "bogus"`,
		"g.jsonl:4: a: labeled already on line 1",
	} {
		require.ErrorContains(t, err, want)
	}

	scenarios, labels := shippedGold(t)
	labels = append([]eval.Labels(nil), labels[:3]...)
	labels[0].Transcripts = map[string][]eval.GoldFact{"c1": labels[0].Transcripts["c1"], "c2": {{Statement: "User lives in Miami",
		Subject: "user", Attribute: "location", Kind: "attribute", Confidence: 0.9, Origin: "user_stated", Quote: "I moved to Miami in May",
		Resolves: &eval.GoldDirective{Target: "User lives in Queens", Action: "supersede", Reason: "temporal"}}}}
	err = eval.CheckLabels(scenarios[:4], labels)
	require.ErrorContains(t, err, `move-brooklyn-to-miami/c2: fact 0: quote "I moved to Miami in May" is not in the transcript`)
	require.ErrorContains(t, err, `move-brooklyn-to-miami/c2: fact 0: target "User lives in Queens" is no belief of an earlier transcript`)
	require.ErrorContains(t, err, "move-chicago-austin-chicago: no gold labels")
}
