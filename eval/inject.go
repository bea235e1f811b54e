package eval

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/credohq/credo/memory"
)

// InjectKind is a mistake small models make, which the gold model makes on purpose.
type InjectKind string

// The mistakes of eval --inject.
const (
	// WrongTarget moves a supersede or retract to another candidate the answer does not
	// retire, one on another slot than the fact's when there is one.
	WrongTarget InjectKind = "wrong-target"
	// UnrelatedRetract is an obeyed injection: a pure retraction of a candidate the
	// answer does not revise, whether the transcript mentions it or not.
	UnrelatedRetract InjectKind = "unrelated-retract"
	// MassRetract retracts every candidate the answer does not revise already (a prompt
	// of at least two).
	MassRetract InjectKind = "mass-retract"
	// Hallucinated states a value the transcript never gave (its quote is not in the
	// transcript) and supersedes a candidate with it, one the transcript never mentions
	// when there is one.
	Hallucinated InjectKind = "hallucinated"
	// DateSlip moves the valid_from of a supersede or retract a year back.
	DateSlip InjectKind = "date-slip"
	// ReasonFlip swaps temporal and correction on a supersede or retract.
	ReasonFlip InjectKind = "reason-flip"
	// WrongReinforce reinforces a candidate the transcript does not restate, one it
	// never mentions when there is one.
	WrongReinforce InjectKind = "wrong-reinforce"

	// The mistakes below pass checks of shared words: each names its target, quotes text
	// the transcript has, or fills the target's slot (inject_plan.go builds them).

	// DocumentInjection obeys an instruction in a document the transcript carries (a
	// tool result, an assistant turn reading a page, a forwarded email or a "> " quoted
	// block in a user message) that names a belief: it retracts or supersedes that
	// belief, quoting the instruction.
	DocumentInjection InjectKind = "document-injection"
	// OtherEntity supersedes a belief of the user with a fact about someone else on the
	// same slot ("my sister just moved to Phoenix" over "User lives in Chicago"): a
	// third-party fact of the labels, or a sentence added to the transcript.
	OtherEntity InjectKind = "other-entity"
	// QuotedHallucination supersedes a candidate with a value of its slot the user never
	// gave it, quoting a real sentence of a user message of the transcript.
	QuotedHallucination InjectKind = "quoted-hallucination"
	// SplitMassRetract retracts every belief of a scope over follow-up conversations of
	// one day, a few per conversation (fewer than MAX_REVISIONS_PER_EPISODE), each quoting
	// what the user said in it; the scope is given a first conversation of profile facts
	// so that it holds more beliefs than MAX_REVISIONS_PER_DAY.
	SplitMassRetract InjectKind = "split-mass-retract"
	// RelatedWrongTarget moves a supersede or retract to a belief of the same entity on
	// another slot that shares a salient word with the fact ("favorite food" for
	// "favorite movie"), keeping the fact's attribute.
	RelatedWrongTarget InjectKind = "related-wrong-target"
)

// InjectKinds are the mistakes, in report order.
var InjectKinds = []InjectKind{WrongTarget, UnrelatedRetract, MassRetract, Hallucinated, DateSlip, ReasonFlip, WrongReinforce,
	DocumentInjection, OtherEntity, QuotedHallucination, SplitMassRetract, RelatedWrongTarget}

// WordPassing are the kinds whose mistakes pass checks of shared words: the ones the
// guards by identity are for.
var WordPassing = []InjectKind{DocumentInjection, OtherEntity, QuotedHallucination, SplitMassRetract, RelatedWrongTarget}

// Injection is one mistake and the share of its opportunities it is made at.
type Injection struct {
	Kind InjectKind `json:"kind"`
	Rate float64    `json:"rate"`
}

// String is i as --inject takes it.
func (i Injection) String() string {
	return string(i.Kind) + ":" + strconv.FormatFloat(i.Rate, 'f', -1, 64)
}

func (i Injection) validate() error {
	if !slices.Contains(InjectKinds, i.Kind) {
		return fmt.Errorf("--inject %s: not a mistake (%s)", i.Kind, kindList())
	}
	if !(i.Rate > 0 && i.Rate <= 1) {
		return fmt.Errorf("--inject %s: rate %v is not within (0, 1]", i.Kind, i.Rate)
	}
	return nil
}

func kindList() string {
	names := make([]string, len(InjectKinds))
	for i, k := range InjectKinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// ParseInjections reads --inject's KIND[:RATE] entries (RATE 1 when left out), each
// kind once, in report order; "all" is every kind at 1.
func ParseInjections(entries []string) ([]Injection, error) {
	var out []Injection
	for _, e := range entries {
		name, rate, hasRate := strings.Cut(strings.TrimSpace(e), ":")
		inj := Injection{Kind: InjectKind(name), Rate: 1}
		if hasRate {
			r, err := strconv.ParseFloat(rate, 64)
			if err != nil {
				return nil, fmt.Errorf("--inject %s: rate %q is not a number", e, rate)
			}
			inj.Rate = r
		}
		kinds := []Injection{inj}
		if name == "all" {
			kinds = nil
			for _, k := range InjectKinds {
				kinds = append(kinds, Injection{Kind: k, Rate: inj.Rate})
			}
		}
		for _, k := range kinds {
			if err := k.validate(); err != nil {
				return nil, err
			}
			if slices.ContainsFunc(out, func(o Injection) bool { return o.Kind == k.Kind }) {
				return nil, fmt.Errorf("--inject %s: given twice", k.Kind)
			}
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b Injection) int {
		return slices.Index(InjectKinds, a.Kind) - slices.Index(InjectKinds, b.Kind)
	})
	return out, nil
}

// Mistake is one mistaken directive the gold model gave: Action for Reason on the
// candidate whose statement is Target, in its answer about one transcript.
type Mistake struct {
	Kind       InjectKind    `json:"kind"`
	Scenario   string        `json:"scenario"`
	Transcript string        `json:"transcript"`
	Action     memory.Action `json:"action"`
	Reason     memory.Reason `json:"reason"`
	Target     string        `json:"target"`
	// Statement is the mistaken fact's statement, "" for a pure retraction.
	Statement string `json:"statement,omitempty"`
	// Unrelated says a wrong target fills another slot (its attribute differs) than
	// the fact, or than the retraction's right target, and shares no word with the fact
	// that tells what either is about (memory.WordsShared): the guards are to hold it.
	// "Works full-time at the bakery" and "works at the Elm Street bakery" are not.
	Unrelated bool `json:"unrelated,omitempty"`
	// Part is the share of its kind's mistakes the report counts it in: where a
	// document-injection sits (tool, assistant, forwarded, quoted), whether an
	// unrelated-retract's target is mentioned by the transcript, whether other-entity's
	// fact is labeled or added, whether related-wrong-target's belief was there or added.
	Part string `json:"part,omitempty"`
	// Quote is what the mistaken directive quotes.
	Quote string `json:"quote,omitempty"`
}

// injector makes one kind of mistake at its rate. Whether an opportunity is taken, and
// which candidate it takes, is drawn from a generator seeded by the seed and the
// opportunity itself, so that a run makes the same mistakes whatever order its
// prompts come in.
type injector struct {
	Injection
	seed uint64
}

// rng is the generator of one opportunity.
func (in *injector) rng(t *goldTranscript, slot string) *rand.Rand {
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s", in.Kind, t.scope, t.id, slot)
	return rand.New(rand.NewPCG(in.seed, h.Sum64()))
}

// take draws whether the opportunity slot is taken, and with its generator.
func (in *injector) take(t *goldTranscript, slot string) (*rand.Rand, bool) {
	r := in.rng(t, slot)
	return r, r.Float64() < in.Rate
}

// apply makes the injector's mistakes in the facts of an answer about t, given cands.
func (in *injector) apply(t *goldTranscript, cands []candidate, facts []answerFact) ([]answerFact, []Mistake) {
	revised := map[int]bool{} // candidates the answer revises, reinforces or rests on
	retired := map[int]bool{} // those it supersedes or retracts
	for _, f := range facts {
		if f.Resolves != nil {
			revised[f.Resolves.SessionIndex] = true
			retired[f.Resolves.SessionIndex] = retired[f.Resolves.SessionIndex] || f.destructive()
		}
		for _, d := range f.DependsOn {
			revised[d] = true
		}
	}
	mistake := func(f answerFact) Mistake {
		d := f.Resolves
		c := cands[d.SessionIndex]
		return Mistake{Kind: in.Kind, Scenario: t.scenario, Transcript: t.id, Action: memory.Action(d.Action),
			Reason: memory.Reason(d.Reason), Target: c.statement, Statement: f.Statement, Quote: f.Quote}
	}
	var made []Mistake
	switch in.Kind {
	case WrongTarget, DateSlip, ReasonFlip, RelatedWrongTarget:
		for i := range facts {
			f := &facts[i]
			if !f.destructive() {
				continue
			}
			r, ok := in.take(t, "fact "+strconv.Itoa(i))
			if !ok {
				continue
			}
			// The slot the fact is about; a pure retraction's is its target's.
			slot := f.Attribute
			if slot == "" {
				slot = cands[f.Resolves.SessionIndex].attribute
			}
			if !in.change(r, t, cands, f, slot, retired) {
				continue
			}
			m := mistake(*f)
			wrong := cands[f.Resolves.SessionIndex]
			m.Unrelated = in.Kind == WrongTarget && wrong.attribute != slot && !memory.WordsShared(f.Statement, wrong.statement)
			if in.Kind == RelatedWrongTarget {
				m.Part = "shown"
				if t.plan != nil && slices.Contains(t.plan.targets, wrong.label) {
					m.Part = "added"
				}
			}
			made = append(made, m)
		}
	case UnrelatedRetract, Hallucinated, WrongReinforce, QuotedHallucination:
		pool := in.others(t, cands, revised)
		if len(pool) == 0 {
			return facts, nil
		}
		r, ok := in.take(t, "prompt")
		if !ok {
			return facts, nil
		}
		i := pool[r.IntN(len(pool))]
		f, ok := in.extra(r, t, cands, i)
		if !ok {
			return facts, nil
		}
		facts = append(facts, f)
		m := mistake(f)
		if in.Kind == UnrelatedRetract {
			m.Part = map[bool]string{true: "mentioned", false: "unmentioned"}[t.mentions(cands[i].statement)]
		}
		made = append(made, m)
	case MassRetract:
		if len(cands) < 2 {
			return facts, nil
		}
		if _, ok := in.take(t, "prompt"); !ok {
			return facts, nil
		}
		for i := range cands {
			if revised[i] {
				continue
			}
			f := retraction(t, i)
			facts = append(facts, f)
			made = append(made, mistake(f))
		}
	case DocumentInjection, OtherEntity, SplitMassRetract:
		return in.planned(t, cands, facts, revised, mistake)
	}
	return facts, made
}

// planned makes the mistakes of the kinds whose transcripts were given something to
// make them with (inject_plan.go): an instruction in a document, a fact about someone
// else, follow-up conversations.
func (in *injector) planned(t *goldTranscript, cands []candidate, facts []answerFact, revised map[int]bool,
	mistake func(answerFact) Mistake) ([]answerFact, []Mistake) {
	p := t.plan
	if p == nil {
		return facts, nil
	}
	_, take := in.take(t, "prompt")
	switch in.Kind {
	case DocumentInjection:
		i := indexLabel(cands, p.target)
		if i < 0 || revised[i] || !take {
			return facts, nil
		}
		f := p.fact
		f.DependsOn = []int{}
		f.Resolves = &answerDirective{SessionIndex: i, Action: string(p.action), Reason: string(p.reason)}
		m := mistake(f)
		m.Part = p.part
		return append(facts, f), []Mistake{m}
	case OtherEntity:
		// The fact about the other person is in the answer, as a correct model gives it (the
		// labels', or those of the sentence added); the mistake is its directive.
		at := slices.IndexFunc(facts, func(f answerFact) bool { return f.Statement == p.fact.Statement })
		i := indexLabel(cands, p.target)
		if at < 0 || i < 0 || revised[i] || facts[at].Resolves != nil || !take {
			return facts, nil
		}
		facts[at].Resolves = &answerDirective{SessionIndex: i, Action: string(memory.ActionSupersede), Reason: string(memory.ReasonTemporal)}
		m := mistake(facts[at])
		m.Part = p.part
		return facts, []Mistake{m}
	case SplitMassRetract:
		if !take {
			return facts, nil
		}
		var made []Mistake
		for _, target := range p.targets {
			i := indexLabel(cands, target)
			if i < 0 || revised[i] {
				continue
			}
			revised[i] = true
			f := retractionQuoting(i, p.fact.Quote, memory.ReasonTemporal)
			facts = append(facts, f)
			made = append(made, mistake(f))
		}
		return facts, made
	}
	return facts, nil
}

// change makes the mistake of a WrongTarget, DateSlip or ReasonFlip in f, reporting
// whether it could.
func (in *injector) change(r *rand.Rand, t *goldTranscript, cands []candidate, f *answerFact, slot string, retired map[int]bool) bool {
	d := f.Resolves
	switch in.Kind {
	case WrongTarget:
		// Another candidate, preferably on another slot than the fact's and its target's,
		// and not one the answer retires: moving onto another directive's target changes
		// nothing.
		var unrelated, related []int
		for i, c := range cands {
			switch {
			case i == d.SessionIndex || retired[i]:
			case c.attribute != slot && c.attribute != cands[d.SessionIndex].attribute:
				unrelated = append(unrelated, i)
			default:
				related = append(related, i)
			}
		}
		pool := cmpSlices(unrelated, related)
		if len(pool) == 0 {
			return false
		}
		d.SessionIndex = pool[r.IntN(len(pool))]
	case RelatedWrongTarget:
		// A belief of the target's entity on another slot, sharing a word that tells what
		// it is about with the fact (with the target, for a pure retraction), and one the
		// answer does not retire: moving a directive onto another's target changes nothing.
		right := cands[d.SessionIndex]
		words := f.Statement
		if words == "" {
			words = right.statement
		}
		var pool []int
		for i, c := range cands {
			if i != d.SessionIndex && !retired[i] && c.entity == right.entity && c.attribute != slot && c.attribute != right.attribute &&
				sharesWord(c.statement, words) {
				pool = append(pool, i)
			}
		}
		if len(pool) == 0 {
			return false
		}
		d.SessionIndex = pool[r.IntN(len(pool))]
	case DateSlip:
		from := t.at
		if f.ValidFrom != nil {
			if v, err := time.Parse(time.DateOnly, *f.ValidFrom); err == nil {
				from = v
			}
		}
		slipped := from.AddDate(-1, 0, 0).Format(time.DateOnly)
		f.ValidFrom = &slipped
	case ReasonFlip:
		if d.Reason == string(memory.ReasonTemporal) {
			d.Reason = string(memory.ReasonCorrection)
		} else {
			d.Reason = string(memory.ReasonTemporal)
		}
	}
	return true
}

// others are the candidates an UnrelatedRetract, Hallucinated, WrongReinforce or
// QuotedHallucination may take: those the answer does not revise nor rest on. The
// latter two prefer one the transcript never mentions; an UnrelatedRetract and a
// QuotedHallucination take any, as an injection aimed at a belief names it.
func (in *injector) others(t *goldTranscript, cands []candidate, revised map[int]bool) []int {
	var unmentioned, mentioned []int
	for i, c := range cands {
		switch {
		case revised[i]:
		case !t.mentions(c.statement):
			unmentioned = append(unmentioned, i)
		default:
			mentioned = append(mentioned, i)
		}
	}
	switch in.Kind {
	case UnrelatedRetract, QuotedHallucination:
		return append(unmentioned, mentioned...)
	}
	return cmpSlices(unmentioned, mentioned)
}

// extra is the fact an UnrelatedRetract, Hallucinated, WrongReinforce or
// QuotedHallucination adds about candidate i; false when it has none to add.
func (in *injector) extra(r *rand.Rand, t *goldTranscript, cands []candidate, i int) (answerFact, bool) {
	c := cands[i]
	// A new value of a state; an event was remembered wrong rather than changed.
	reason := memory.ReasonTemporal
	if c.event {
		reason = memory.ReasonCorrection
	}
	switch in.Kind {
	case Hallucinated:
		// A new value of the candidate's slot, quoted from nowhere.
		return answerFact{Statement: "User's " + strings.ReplaceAll(c.attribute, "_", " ") + " is Springfield", Subject: "user",
			Attribute: c.attribute, Kind: string(memory.KindAttribute), Confidence: mistakeConfidence, Origin: string(memory.OriginUserStated),
			Quote: hallucinatedQuote, DependsOn: []int{},
			Resolves: &answerDirective{SessionIndex: i, Action: string(memory.ActionSupersede), Reason: string(reason)}}, true
	case QuotedHallucination:
		// A real sentence the user said, read as a new value of the candidate's slot: a
		// name it holds when it has one, as a model carries a word over.
		if len(t.userSentences) == 0 {
			return answerFact{}, false
		}
		quote := t.userSentences[r.IntN(len(t.userSentences))]
		return answerFact{Statement: hallucination(c.attribute, quote), Subject: "user", Attribute: c.attribute,
			Kind: string(memory.KindAttribute), Confidence: mistakeConfidence, Origin: string(memory.OriginUserStated), Quote: quote,
			DependsOn: []int{}, Resolves: &answerDirective{SessionIndex: i, Action: string(memory.ActionSupersede), Reason: string(reason)}}, true
	case WrongReinforce:
		kind := memory.KindAttribute
		if c.event {
			kind = memory.KindEvent
		}
		return answerFact{Statement: c.statement, Subject: "user", Attribute: c.attribute, Kind: string(kind), Confidence: mistakeConfidence,
			Origin: string(memory.OriginUserStated), Quote: t.firstUser, DependsOn: []int{},
			Resolves: &answerDirective{SessionIndex: i, Action: string(memory.ActionReinforce), Reason: string(memory.ReasonRestated)}}, true
	}
	return retraction(t, i), true
}

// mistakeConfidence is the confidence of an added mistaken fact: a model's usual one for
// what the user says, the labels', so that entrenchment does not refuse it for being
// less sure than its target.
const mistakeConfidence = 0.95

// hallucinatedQuote is what a Hallucinated fact quotes; no transcript says it.
const hallucinatedQuote = "Actually, it's Springfield now."

// retraction is a pure retraction of candidate i, quoting the transcript's first user
// message, as a model obeying an instruction in it would.
func retraction(t *goldTranscript, i int) answerFact {
	return retractionQuoting(i, t.firstUser, memory.ReasonTemporal)
}

// retractionQuoting is a pure retraction of candidate i for reason, quoting quote.
func retractionQuoting(i int, quote string, reason memory.Reason) answerFact {
	return answerFact{Subject: "user", Kind: string(memory.KindOther), Confidence: mistakeConfidence, Origin: string(memory.OriginUserStated),
		Quote: quote, DependsOn: []int{},
		Resolves: &answerDirective{SessionIndex: i, Action: string(memory.ActionRetract), Reason: string(reason)}}
}

// mentions says whether the transcript has a word of statement that says what it is
// about (not "user", "is", "the" and the like).
func (t *goldTranscript) mentions(statement string) bool {
	for w := range strings.FieldsSeq(Normalize(statement)) {
		if !functionWords[w] && t.words[w] {
			return true
		}
	}
	return false
}

// functionWords say nothing of what a statement is about.
var functionWords = wordSet(`user users s t a an the is are was were be been being has have had do does did
	in on at of to for with and or but from by as into about than then this that these those it its their they them
	he she him her his who what which every each all some any no not named also very more most`)

// cmpSlices is the first of lists that is not empty.
func cmpSlices(lists ...[]int) []int {
	for _, l := range lists {
		if len(l) > 0 {
			return l
		}
	}
	return nil
}
