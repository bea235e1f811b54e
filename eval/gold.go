package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
)

// GoldModel is the name the gold model answers under.
const GoldModel = "gold"

// Gold is a model that answers every prompt of the pipeline from the gold labels: the
// extraction of a transcript it recognises in the prompt (by its messages, verbatim),
// the consolidation of a cluster (the labeled merges among its beliefs; none keeps the
// cluster whole) and the review of flagged beliefs (the labeled verdicts; a belief
// without one is kept, as the prompt asks when unsure). Directives and dependencies
// name their targets by statement; Gold finds them among the prompt's "[N] " lines, as
// a model reads them. With an Injection it makes that mistake (inject.go). It is safe
// for concurrent use.
type Gold struct {
	transcripts []*goldTranscript
	merges      []scoped[GoldMerge]
	reviews     []scoped[GoldReview]
	inject      *injector

	mu       sync.Mutex
	stats    GoldStats
	mistakes []Mistake
	made     map[Mistake]bool
}

// GoldStats counts what the gold model could not answer from its labels. With correct
// answers throughout, every count is zero.
type GoldStats struct {
	// Unresolved counts directives and dependencies whose target the prompt did not
	// show: the fact went without them, as a model that does not see a belief answers.
	Unresolved int `json:"unresolved"`
	// Unlabeled counts flagged beliefs the review asked about without a verdict in the
	// labels: they were kept.
	Unlabeled int `json:"unlabeled"`
}

// goldTranscript is one labeled transcript and how to recognise it.
type goldTranscript struct {
	scenario, scope, id string
	at                  time.Time
	// lines are the transcript's message lines, each of which a prompt holding it shows.
	lines []string
	size  int
	// words are the transcript's words, for telling which candidates it mentions.
	words map[string]bool
	// firstUser is the first user message: what a model quotes when it has nothing to
	// quote.
	firstUser string
	facts     []GoldFact
}

// scoped is a label of one scenario's scope.
type scoped[T any] struct {
	scope string
	label T
}

// NewGold returns the gold model of scenarios, answered from labels (which must agree,
// see CheckLabels), making the mistake of inj when it is not nil.
func NewGold(scenarios []Scenario, labels []Labels, inj *Injection, seed uint64) (*Gold, error) {
	if err := CheckLabels(scenarios, labels); err != nil {
		return nil, err
	}
	by := map[string]*Labels{}
	for i := range labels {
		by[labels[i].Scenario] = &labels[i]
	}
	g := &Gold{made: map[Mistake]bool{}}
	if inj != nil {
		if err := inj.validate(); err != nil {
			return nil, err
		}
		g.inject = &injector{Injection: *inj, seed: seed}
	}
	for _, s := range scenarios {
		l := by[s.Name]
		for _, t := range s.Transcripts {
			gt := &goldTranscript{scenario: s.Name, scope: s.Scope, id: t.ID, at: t.OccurredAt, facts: l.Transcripts[t.ID],
				words: wordSet(transcriptText(t))}
			for _, m := range t.Messages {
				if gt.firstUser == "" && m.Role == "user" {
					gt.firstUser = strings.TrimSpace(m.Content)
				}
				for line := range strings.SplitSeq(m.Content, "\n") {
					if line = strings.TrimSpace(line); line != "" {
						gt.lines = append(gt.lines, line)
						gt.size += len(line)
					}
				}
			}
			g.transcripts = append(g.transcripts, gt)
		}
		for _, m := range l.Consolidation {
			g.merges = append(g.merges, scoped[GoldMerge]{s.Scope, m})
		}
		for _, r := range l.Review {
			g.reviews = append(g.reviews, scoped[GoldReview]{s.Scope, r})
		}
	}
	return g, nil
}

// Stats is what the model could not answer from its labels so far.
func (g *Gold) Stats() GoldStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stats
}

// Mistakes are the mistakes made so far, each once, in the order they were made.
func (g *Gold) Mistakes() []Mistake {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Mistake(nil), g.mistakes...)
}

// Chat answers one prompt of the pipeline.
func (g *Gold) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	if err := ctx.Err(); err != nil {
		return llm.ChatResponse{}, err
	}
	texts := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		texts[i] = m.Content
	}
	prompt := strings.Join(texts, "\n")
	var (
		answer any
		err    error
	)
	switch req.SchemaName {
	case prompts.ExtractionSchemaName:
		answer, err = g.extraction(prompt)
	case prompts.ConsolidationSchemaName:
		answer = g.consolidation(prompt)
	case prompts.ReviewSchemaName:
		answer = g.review(prompt)
	default:
		err = fmt.Errorf("gold: no labels answer a %q prompt", req.SchemaName)
	}
	if err != nil {
		return llm.ChatResponse{}, err
	}
	content, err := json.Marshal(answer)
	if err != nil {
		return llm.ChatResponse{}, err
	}
	// Tokens as a rough count, so that the report's cost columns read as for a model.
	return llm.ChatResponse{Content: string(content), Model: GoldModel, FinishReason: "stop",
		Usage: llm.Usage{PromptTokens: len(prompt) / 4, CompletionTokens: len(content) / 4}}, nil
}

// candidate is one "[N] " line of a prompt.
type candidate struct {
	statement, attribute string
	event                bool
}

// candidateLine is a "[N] statement (attribute, since DATE[, origin])" line of the
// extraction, consolidation and review prompts, or "(attribute, event, on DATE...)".
var candidateLine = regexp.MustCompile(`^\[(\d+)\] (.*) \(([^()]*), (since|event, on) \d{4}-\d{2}-\d{2}(?:, [a-z_]+)?\)$`)

// candidates reads the prompt's "[N] " lines, in index order; the indices count from
// 0 without a gap, or the prompt is not one the pipeline makes.
func candidates(prompt string) ([]candidate, error) {
	var out []candidate
	for line := range strings.SplitSeq(prompt, "\n") {
		m := candidateLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n != len(out) {
			return nil, fmt.Errorf("gold: candidate [%d] where [%d] was due", n, len(out))
		}
		out = append(out, candidate{statement: m[2], attribute: m[3], event: m[4] != "since"})
	}
	return out, nil
}

// index is the index of the candidate whose statement is s, -1 when none is.
func index(cands []candidate, s string) int {
	s = oneSpace(s)
	for i, c := range cands {
		if oneSpace(c.statement) == s {
			return i
		}
	}
	return -1
}

func oneSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// scopeLine is the prompt's "Scope: " line.
var scopeLine = regexp.MustCompile(`(?m)^Scope: (.+)$`)

// transcript is the labeled transcript the prompt holds: the one whose every line the
// prompt shows, the longest when several are (an earlier transcript's quote is a worked
// example's excerpt, never all of it), in the prompt's scope when it names one.
func (g *Gold) transcript(prompt string) (*goldTranscript, error) {
	scope := promptScope(prompt)
	var best []*goldTranscript
	for _, t := range g.transcripts {
		if scope != "" && t.scope != scope {
			continue
		}
		all := true
		for _, l := range t.lines {
			if !strings.Contains(prompt, l) {
				all = false
				break
			}
		}
		switch {
		case !all:
		case len(best) == 0 || t.size > best[0].size:
			best = []*goldTranscript{t}
		case t.size == best[0].size:
			best = append(best, t)
		}
	}
	switch len(best) {
	case 0:
		return nil, errors.New("gold: the prompt holds no labeled transcript")
	case 1:
		return best[0], nil
	}
	return nil, fmt.Errorf("gold: the prompt holds transcripts of %s and %s alike", best[0].scenario, best[1].scenario)
}

// extractionAnswer is the `extraction` schema.
type extractionAnswer struct {
	Reasoning string       `json:"reasoning"`
	Facts     []answerFact `json:"facts"`
}

type answerFact struct {
	Statement  string           `json:"statement"`
	Subject    string           `json:"subject"`
	Attribute  string           `json:"attribute"`
	Kind       string           `json:"kind"`
	ValidFrom  *string          `json:"valid_from"`
	Confidence float64          `json:"confidence"`
	Origin     string           `json:"origin"`
	Quote      string           `json:"quote"`
	DependsOn  []int            `json:"depends_on"`
	Resolves   *answerDirective `json:"resolves"`
}

type answerDirective struct {
	SessionIndex int    `json:"session_index"`
	Action       string `json:"action"`
	Reason       string `json:"reason"`
}

// destructive says whether the fact supersedes or retracts a candidate.
func (f *answerFact) destructive() bool {
	return f.Resolves != nil && (f.Resolves.Action == string(memory.ActionSupersede) || f.Resolves.Action == string(memory.ActionRetract))
}

// extraction answers an extraction prompt: the labeled facts of its transcript, their
// targets and bases found among its candidates.
func (g *Gold) extraction(prompt string) (*extractionAnswer, error) {
	t, err := g.transcript(prompt)
	if err != nil {
		return nil, err
	}
	cands, err := candidates(prompt)
	if err != nil {
		return nil, err
	}
	unresolved := 0
	facts := make([]answerFact, 0, len(t.facts))
	for _, gf := range t.facts {
		f := answerFact{Statement: gf.Statement, Subject: gf.Subject, Attribute: gf.Attribute, Kind: gf.Kind,
			ValidFrom: gf.ValidFrom, Confidence: gf.Confidence, Origin: gf.Origin, Quote: gf.Quote, DependsOn: []int{}}
		if d := gf.Resolves; d != nil {
			i := index(cands, d.Target)
			switch {
			case i >= 0:
				f.Resolves = &answerDirective{SessionIndex: i, Action: d.Action, Reason: d.Reason}
			case gf.Statement == "":
				unresolved++
				continue // a retraction of nothing shown says nothing
			default:
				unresolved++ // the statement stands on its own
			}
		}
		for _, s := range gf.DependsOn {
			if i := index(cands, s); i >= 0 {
				f.DependsOn = append(f.DependsOn, i)
			} else {
				unresolved++
			}
		}
		facts = append(facts, f)
	}
	var mistakes []Mistake
	if g.inject != nil {
		facts, mistakes = g.inject.apply(t, cands, facts)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stats.Unresolved += unresolved
	for _, m := range mistakes {
		if !g.made[m] {
			g.made[m] = true
			g.mistakes = append(g.mistakes, m)
		}
	}
	return &extractionAnswer{Reasoning: "gold labels of " + t.scenario + "/" + t.id, Facts: facts}, nil
}

// consolidationAnswer is the `consolidation` schema.
type consolidationAnswer struct {
	Reasoning   string             `json:"reasoning"`
	Resolutions []answerResolution `json:"resolutions"`
}

type answerResolution struct {
	SessionIndex int    `json:"session_index"`
	Action       string `json:"action"`
	ReplacedBy   int    `json:"replaced_by"`
	Reason       string `json:"reason"`
}

// consolidation answers a cluster: the labeled merges of its beliefs, each belief
// superseded at most once; none keeps the cluster whole.
func (g *Gold) consolidation(prompt string) *consolidationAnswer {
	cands, _ := candidates(prompt)
	scope := promptScope(prompt)
	out := &consolidationAnswer{Reasoning: "gold labels", Resolutions: []answerResolution{}}
	done := map[int]bool{}
	for _, m := range g.merges {
		if scope != "" && m.scope != scope {
			continue
		}
		i, j := index(cands, m.label.Belief), index(cands, m.label.ReplacedBy)
		if i < 0 || j < 0 || done[i] || done[j] {
			continue
		}
		done[i] = true
		out.Resolutions = append(out.Resolutions, answerResolution{SessionIndex: i, Action: string(memory.ActionSupersede),
			ReplacedBy: j, Reason: m.label.Reason})
	}
	return out
}

// reviewAnswer is the `review` schema.
type reviewAnswer struct {
	Reasoning string          `json:"reasoning"`
	Reviews   []reviewVerdict `json:"reviews"`
}

type reviewVerdict struct {
	Index     int    `json:"index"`
	Action    string `json:"action"`
	Statement string `json:"statement"`
	Reason    string `json:"reason"`
}

// reviewBasis is an indented "was concluded from" line under a review item; its
// "now" is what replaced the basis.
var reviewBasis = regexp.MustCompile(`^  was concluded from.*, now: "(.*)"$`)

// review answers flagged beliefs with their labeled verdicts; a belief without one is
// kept.
func (g *Gold) review(prompt string) *reviewAnswer {
	scope := promptScope(prompt)
	out := &reviewAnswer{Reasoning: "gold labels", Reviews: []reviewVerdict{}}
	type item struct {
		statement string
		now       []string
	}
	var items []item
	for line := range strings.SplitSeq(prompt, "\n") {
		if m := candidateLine.FindStringSubmatch(line); m != nil {
			items = append(items, item{statement: m[2]})
		} else if m := reviewBasis.FindStringSubmatch(line); m != nil && len(items) > 0 {
			items[len(items)-1].now = append(items[len(items)-1].now, m[1])
		}
	}
	unlabeled := 0
	for i, it := range items {
		v := reviewVerdict{Index: i, Action: "keep", Reason: string(memory.ReasonTemporal)}
		found := false
		for _, r := range g.reviews {
			l := r.label
			if (scope != "" && r.scope != scope) || oneSpace(l.Belief) != oneSpace(it.statement) ||
				(l.Now != "" && !containsSpaced(it.now, l.Now)) {
				continue
			}
			v.Action, v.Statement, found = l.Action, l.Statement, true
			if l.Reason != "" {
				v.Reason = l.Reason
			}
			break
		}
		if !found {
			unlabeled++
		}
		out.Reviews = append(out.Reviews, v)
	}
	g.mu.Lock()
	g.stats.Unlabeled += unlabeled
	g.mu.Unlock()
	return out
}

func containsSpaced(list []string, s string) bool {
	for _, x := range list {
		if oneSpace(x) == oneSpace(s) {
			return true
		}
	}
	return false
}

// promptScope is the scope a prompt names, "" when it names none.
func promptScope(prompt string) string {
	if m := scopeLine.FindStringSubmatch(prompt); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}

// wordSet is the set of s's lowercase words.
func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for w := range strings.FieldsSeq(Normalize(s)) {
		out[w] = true
	}
	return out
}
