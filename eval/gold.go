package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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
// a model reads them. It gives the second opinion (schema verification) as its Verifier
// says (verifier.go). With an Injection it makes that mistake (inject.go), and with
// Perturbations it words its correct revisions otherwise (perturb.go). It is safe for
// concurrent use.
type Gold struct {
	transcripts []*goldTranscript
	merges      []scoped[GoldMerge]
	reviews     []scoped[GoldReview]
	inject      *injector
	verifier    Verifier
	perturb     *perturber
	// scenarios and labels are those answered: the ones given, with what an injection
	// added to them.
	scenarios []Scenario
	labels    []Labels
	// right are the labels' destructive directives, by scope.
	right map[string][]directive

	mu       sync.Mutex
	stats    GoldStats
	calls    GoldCalls
	mistakes []Mistake
	made     map[Mistake]bool
	// given are the correct destructive directives the model gave, by scope; renamed
	// the labels' statements of the statements perturbed answers stored, by scope.
	given     map[string][]directive
	renamed   map[string]map[string]string
	revisions []Revision
	counted   map[string]bool
}

// GoldCalls counts the prompts the gold model answered, by schema.
type GoldCalls struct {
	Extraction    int `json:"extraction"`
	Verification  int `json:"verification"`
	Consolidation int `json:"consolidation"`
	Review        int `json:"review"`
	// Verified counts the directives the verification prompts asked about; Refused
	// those answered without holds: true.
	Verified int `json:"verified"`
	Refused  int `json:"refused"`
}

// GoldOptions configure NewGoldWith.
type GoldOptions struct {
	// Inject is the mistake the model makes, nil for none; Seed draws where.
	Inject *Injection
	Seed   uint64
	// Verifier is how it answers the second opinion (VerifierGold when empty).
	Verifier Verifier
	// Perturb are the rewritings of its correct answers (perturb.go).
	Perturb []Perturbation
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
	// quote; userSentences the sentences of its user messages, as written.
	firstUser     string
	userSentences []string
	// text is every message, a line each; lang the language the user writes in.
	text  string
	lang  string
	facts []GoldFact
	// plan is what an injection put into it, if anything.
	plan *plan
}

// scoped is a label of one scenario's scope.
type scoped[T any] struct {
	scope string
	label T
}

// NewGold returns the gold model of scenarios, answered from labels (which must agree,
// see CheckLabels), making the mistake of inj when it is not nil.
func NewGold(scenarios []Scenario, labels []Labels, inj *Injection, seed uint64) (*Gold, error) {
	return NewGoldWith(scenarios, labels, GoldOptions{Inject: inj, Seed: seed})
}

// NewGoldWith returns the gold model of scenarios, answered from labels (which must
// agree, see CheckLabels), as opts say. An injection may add messages and transcripts
// to the scenarios: Scenarios are the ones to run.
func NewGoldWith(scenarios []Scenario, labels []Labels, opts GoldOptions) (*Gold, error) {
	if err := CheckLabels(scenarios, labels); err != nil {
		return nil, err
	}
	v, err := ParseVerifier(string(opts.Verifier))
	if err != nil {
		return nil, err
	}
	g := &Gold{made: map[Mistake]bool{}, verifier: v, right: map[string][]directive{}, given: map[string][]directive{},
		renamed: map[string]map[string]string{}, counted: map[string]bool{}}
	var plans map[string]*plan
	if inj := opts.Inject; inj != nil {
		if err := inj.validate(); err != nil {
			return nil, err
		}
		g.inject = &injector{Injection: *inj, seed: opts.Seed}
		scenarios, labels, plans = g.inject.prepare(scenarios, labels)
		if err := CheckLabels(scenarios, labels); err != nil {
			return nil, fmt.Errorf("gold: %s: %w", inj.Kind, err)
		}
	}
	if len(opts.Perturb) > 0 {
		if g.perturb, err = newPerturber(opts.Perturb, opts.Seed, scenarios, labels); err != nil {
			return nil, err
		}
	}
	g.scenarios, g.labels = scenarios, labels
	by := map[string]*Labels{}
	for i := range labels {
		by[labels[i].Scenario] = &labels[i]
	}
	for _, s := range scenarios {
		l := by[s.Name]
		for _, t := range s.Transcripts {
			gt := &goldTranscript{scenario: s.Name, scope: s.Scope, id: t.ID, at: t.OccurredAt, facts: l.Transcripts[t.ID],
				words: wordSet(transcriptText(t)), text: transcriptText(t), userSentences: userSentences(t),
				lang: language(t), plan: plans[planKey(s.Scope, t.ID)]}
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
			for _, f := range gt.facts {
				if d := f.Resolves; d != nil && d.Action != string(memory.ActionReinforce) {
					g.right[s.Scope] = append(g.right[s.Scope], directive{transcript: t.ID, action: memory.Action(d.Action),
						target: d.Target, statement: f.Statement})
				}
			}
		}
		for _, m := range l.Consolidation {
			g.merges = append(g.merges, scoped[GoldMerge]{s.Scope, m})
			g.right[s.Scope] = append(g.right[s.Scope], directive{action: memory.ActionSupersede, target: m.Belief, statement: m.ReplacedBy})
		}
		for _, r := range l.Review {
			g.reviews = append(g.reviews, scoped[GoldReview]{s.Scope, r})
			if r.Action != "keep" {
				g.right[s.Scope] = append(g.right[s.Scope], directive{action: memory.Action(r.Action), target: r.Belief, statement: r.Statement})
			}
		}
	}
	return g, nil
}

// Scenarios are the scenarios the model answers and their labels: those it was given,
// with what its injection added.
func (g *Gold) Scenarios() ([]Scenario, []Labels) { return g.scenarios, g.labels }

// Calls are the prompts answered so far.
func (g *Gold) Calls() GoldCalls {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls
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

// Revisions are the correct destructive directives given so far in a perturbed run, as
// given, in the order they were.
func (g *Gold) Revisions() []Revision {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Revision(nil), g.revisions...)
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
	g.count(req.SchemaName)
	switch req.SchemaName {
	case prompts.ExtractionSchemaName:
		answer, err = g.extraction(prompt)
	case prompts.ConsolidationSchemaName:
		answer = g.consolidation(prompt)
	case prompts.ReviewSchemaName:
		answer = g.review(prompt)
	case VerificationSchemaName:
		answer = g.verification(prompt)
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

// count counts a prompt of schema.
func (g *Gold) count(schema string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch schema {
	case prompts.ExtractionSchemaName:
		g.calls.Extraction++
	case prompts.ConsolidationSchemaName:
		g.calls.Consolidation++
	case prompts.ReviewSchemaName:
		g.calls.Review++
	case VerificationSchemaName:
		g.calls.Verification++
	}
}

// candidate is one "[N] " line of a prompt.
type candidate struct {
	statement, attribute string
	event                bool
	// entity is the name of the entity the line names before its attribute, "" for the
	// user; label the labels' statement of the belief (its statement, but for one a
	// perturbed answer stored).
	entity, label string
}

// candidateLine is a "[N] statement ([entity: ]attribute, since DATE[, origin])" line of
// the extraction, consolidation and review prompts, or "(attribute, event, on DATE...)".
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
		c := candidate{statement: m[2], attribute: m[3], event: m[4] != "since", label: m[2]}
		if e, a, ok := strings.Cut(c.attribute, ": "); ok {
			c.entity, c.attribute = e, a
		}
		out = append(out, c)
	}
	return out, nil
}

// relabel gives the candidates of a prompt of scope the labels' statements of those a
// perturbed answer stored.
func (g *Gold) relabel(scope string, cands []candidate) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, c := range cands {
		if l, ok := g.renamed[scope][oneSpace(c.statement)]; ok {
			cands[i].label = l
		}
	}
}

// indexLabel is the index of the candidate whose labels' statement is s, -1 when none
// is.
func indexLabel(cands []candidate, s string) int {
	s = oneSpace(s)
	for i, c := range cands {
		if oneSpace(c.label) == s {
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
	Statement string `json:"statement"`
	Subject   string `json:"subject"`
	// SubjectAliases are other names of the subject, given by a perturbed answer only.
	SubjectAliases []string         `json:"subject_aliases,omitempty"`
	Attribute      string           `json:"attribute"`
	Kind           string           `json:"kind"`
	ValidFrom      *string          `json:"valid_from"`
	Confidence     float64          `json:"confidence"`
	Origin         string           `json:"origin"`
	Quote          string           `json:"quote"`
	DependsOn      []int            `json:"depends_on"`
	Resolves       *answerDirective `json:"resolves"`
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
	g.relabel(t.scope, cands)
	unresolved := 0
	facts := make([]answerFact, 0, len(t.facts))
	for _, gf := range t.facts {
		f := answerFact{Statement: gf.Statement, Subject: gf.Subject, Attribute: gf.Attribute, Kind: gf.Kind,
			ValidFrom: gf.ValidFrom, Confidence: gf.Confidence, Origin: gf.Origin, Quote: gf.Quote, DependsOn: []int{}}
		if d := gf.Resolves; d != nil {
			i := indexLabel(cands, d.Target)
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
			if i := indexLabel(cands, s); i >= 0 {
				f.DependsOn = append(f.DependsOn, i)
			} else {
				unresolved++
			}
		}
		facts = append(facts, f)
	}
	var (
		perturbed []Revision
		renamed   map[string]string
	)
	if g.perturb != nil {
		perturbed, renamed = g.perturb.apply(t, cands, facts)
	}
	// What the correct answer revises, before a mistake moves it: the second opinion of
	// a model that judges right confirms these.
	var given []directive
	for _, f := range facts {
		if f.destructive() {
			given = append(given, directive{transcript: t.id, action: memory.Action(f.Resolves.Action),
				target: cands[f.Resolves.SessionIndex].statement, statement: f.Statement})
		}
	}
	var mistakes []Mistake
	if g.inject != nil {
		facts, mistakes = g.inject.apply(t, cands, facts)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.given[t.scope] = append(g.given[t.scope], given...)
	if len(renamed) > 0 && g.renamed[t.scope] == nil {
		g.renamed[t.scope] = map[string]string{}
	}
	maps.Copy(g.renamed[t.scope], renamed)
	// A retried extraction gives the same revisions again: each is counted once.
	for _, r := range perturbed {
		key := planKey(r.Scenario, r.Transcript) + "\x00" + string(r.Action) + "\x00" + r.Target
		if !g.counted[key] {
			g.counted[key] = true
			g.revisions = append(g.revisions, r)
		}
	}
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
	g.relabel(scope, cands)
	out := &consolidationAnswer{Reasoning: "gold labels", Resolutions: []answerResolution{}}
	done := map[int]bool{}
	for _, m := range g.merges {
		if scope != "" && m.scope != scope {
			continue
		}
		i, j := indexLabel(cands, m.label.Belief), indexLabel(cands, m.label.ReplacedBy)
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
	g.mu.Lock()
	for i, it := range items {
		if l, ok := g.renamed[scope][oneSpace(it.statement)]; ok {
			items[i].statement = l
		}
		for j, n := range it.now {
			if l, ok := g.renamed[scope][oneSpace(n)]; ok {
				items[i].now[j] = l
			}
		}
	}
	g.mu.Unlock()
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
