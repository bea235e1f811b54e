package memory

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/credohq/credo/entity"
	"github.com/credohq/credo/transcript"
)

// Limits on one batch. An LLM can answer with anything; the engine refuses what no
// honest answer needs.
const (
	MaxFacts        = 200
	MaxStatementLen = 2000
	MaxQuoteLen     = 4000
	MaxLabelLen     = 200 // subject, attribute
)

// Batch is one writer's revisions of one scope, applied atomically by Apply.
type Batch struct {
	Scope  string
	Origin RevisionOrigin
	// EpisodeID is the episode the batch comes from, if any.
	EpisodeID *int64
	// At is when the source happened (the episode's occurred_at): the default valid_from
	// of new beliefs and the time of retractions. Zero means now.
	At time.Time
	// Candidates are the ids of the beliefs shown to the writer; a directive's Index
	// points into it. Every candidate must belong to Scope.
	Candidates []int64
	Facts      []Fact
	// Resolutions are consolidation's verdicts on the candidates.
	Resolutions []Resolution
	// Keep are candidates found to still hold although a basis of theirs changed: their
	// review flag is cleared and their basis_changed items close as kept.
	Keep []int
	// EmbedModel names the model of every Fact.Embedding; it must be registered with
	// EnsureEmbeddingModel.
	EmbedModel string
	// Seen, when set, is what the writer saw of the scope before deciding (see
	// Store.Snapshot): if the scope has gained an active belief since, ApplyTx applies
	// nothing and returns ErrStale.
	Seen *Snapshot
	// Source is what the model read, for an extraction's batch: the containment guards
	// hold a destructive directive on a belief it does not speak of.
	Source *Source
	// decides is the review item an operator's decision carries out with this batch: the
	// decision announces its resolution, the batch does not.
	decides int64
}

// Source is the text a batch's facts were read from, as the model saw it, and its
// vector in the batch's EmbedModel when the writer embedded it (nil otherwise).
type Source struct {
	Text   string
	Vector []float32
	// Messages are the messages the model read, in order: the engine locates each
	// fact's quote in them to know who said it (speaker.go).
	Messages []SourceMessage
}

// SourceMessage is one message of a Source: its role (user, assistant, tool, system)
// and its text.
type SourceMessage struct {
	Role    string
	Content string
}

// Opinion is the second opinion on a destructive directive that speaker, entity and
// slot did not settle (see Store.Questions): without Holds, the directive is held.
type Opinion struct {
	Holds bool
	Why   string
}

// Fact is one statement to store, possibly revising a candidate.
type Fact struct {
	Statement  string
	Subject    string
	Attribute  string
	Kind       Kind
	ValidFrom  *time.Time
	Confidence float64
	Origin     Origin
	Quote      string
	Embedding  []float32
	// EventEmbedding is the vector of the revision this fact causes, for retrieving it
	// as a few-shot example (see learning.EventText).
	EventEmbedding []float32
	// QuoteEmbedding is the vector of Quote alone, for a destructive directive: what the
	// containment guards compare with the target when no statement says it.
	QuoteEmbedding []float32
	Resolves       *Directive
	// DependsOn are the candidates the fact was concluded from: when one of them is
	// superseded, retracted, forgotten or purged, the fact's belief is flagged for review.
	DependsOn []int
	// SubjectAliases are other names the conversation gives the subject ("my sister
	// Sarah": Sarah): the registry learns them for the subject's entity, unless one
	// names another entity, which becomes a proposal to merge the two (same_entity).
	SubjectAliases []string
	// SubjectKind is what sort of entity the subject is, when the writer says it; it
	// sets the kind of an entity whose kind is not known yet.
	SubjectKind entity.Kind
	// Opinion is the second opinion on the fact's destructive directive, when
	// Store.Questions asked for one.
	Opinion *Opinion
	// entity is the key of the entity Subject resolves to (entity_apply.go).
	entity string
}

// Directive says what a fact does to the candidate at Index.
type Directive struct {
	Index     int
	Action    Action
	Reason    Reason
	Rationale string
}

// Resolution is consolidation's verdict on the candidate at Index: superseded by the
// candidate at ReplacedBy, or retracted when ReplacedBy is nil.
type Resolution struct {
	Index      int
	ReplacedBy *int
	Action     Action
	Reason     Reason
	Rationale  string
	// EventEmbedding, in the batch's model, is the vector of the revision, for
	// retrieving it as a few-shot example.
	EventEmbedding []float32
	// Opinion is the second opinion on the resolution, when Store.Questions asked for
	// one.
	Opinion *Opinion
}

// ErrInvalid is what every validation error of a batch is (errors.Is): nothing of it was
// applied. The error is a *transcript.InputError, whose Message is what to tell the user.
var ErrInvalid = errors.New("invalid batch")

func invalidf(format string, args ...any) error {
	return transcript.InputErrorf(ErrInvalid, "", format, args...)
}

// normalize trims the batch's text and fills defaults, then validates it against now.
func (b *Batch) normalize(now time.Time) error {
	b.Scope = strings.TrimSpace(b.Scope)
	if b.Scope == "" {
		return invalidf("scope is empty")
	}
	if err := checkText("scope", b.Scope, MaxLabelLen); err != nil {
		return err
	}
	if !slices.Contains([]RevisionOrigin{RevisionExtraction, RevisionConsolidation, RevisionOperator}, b.Origin) {
		return invalidf("origin %q is not extraction, consolidation or operator", b.Origin)
	}
	if b.At.IsZero() {
		b.At = now
	}
	b.At = b.At.UTC().Truncate(time.Microsecond)
	if err := checkTime("batch time", b.At, now); err != nil {
		return err
	}
	if len(b.Facts) > MaxFacts {
		return invalidf("%d facts; the limit is %d", len(b.Facts), MaxFacts)
	}
	for i := range b.Facts {
		if err := b.normalizeFact(&b.Facts[i], now); err != nil {
			return fmt.Errorf("fact %d: %w", i, err)
		}
	}
	if err := b.checkVectors(); err != nil {
		return err
	}
	for i, k := range b.Keep {
		switch {
		case b.Origin == RevisionExtraction:
			return invalidf("keep %d: extraction writes facts, not reviews", i)
		case k < 0 || k >= len(b.Candidates):
			return invalidf("keep %d: index %d is not one of the %d candidates", i, k, len(b.Candidates))
		}
	}
	for i, r := range b.Resolutions {
		switch {
		case b.Origin == RevisionExtraction:
			return invalidf("resolution %d: extraction writes facts, not resolutions", i)
		case r.Action == ActionSupersede && r.ReplacedBy == nil:
			return invalidf("resolution %d: supersede needs replaced_by", i)
		case r.Action == ActionRetract && r.ReplacedBy != nil:
			return invalidf("resolution %d: retract takes no replaced_by", i)
		case r.Action != ActionSupersede && r.Action != ActionRetract:
			return invalidf("resolution %d: action %q is not supersede or retract", i, r.Action)
		case !slices.Contains([]Reason{ReasonDuplicate, ReasonTemporal, ReasonCorrection}, r.Reason):
			return invalidf("resolution %d: reason %q is not duplicate, temporal or correction", i, r.Reason)
		}
	}
	return nil
}

func (b *Batch) normalizeFact(f *Fact, now time.Time) error {
	f.Statement = strings.Join(strings.Fields(f.Statement), " ")
	f.Subject = strings.TrimSpace(f.Subject)
	f.Attribute = strings.TrimSpace(f.Attribute)
	f.Quote = strings.TrimSpace(f.Quote)
	for _, c := range []struct {
		name, value string
		max         int
	}{{"statement", f.Statement, MaxStatementLen}, {"subject", f.Subject, MaxLabelLen}, {"attribute", f.Attribute, MaxLabelLen}, {"quote", f.Quote, MaxQuoteLen}} {
		if err := checkText(c.name, c.value, c.max); err != nil {
			return err
		}
	}
	if math.IsNaN(f.Confidence) || f.Confidence < 0 || f.Confidence > 1 {
		return invalidf("confidence %v is not within 0..1", f.Confidence)
	}
	switch f.Origin {
	case OriginUserStated, OriginInferred:
	case OriginAuthoritative:
		if b.Origin != RevisionOperator {
			return invalidf("only an operator asserts authoritative beliefs")
		}
	default:
		return invalidf("origin %q is not user_stated, inferred or authoritative", f.Origin)
	}
	if f.ValidFrom != nil {
		t := f.ValidFrom.UTC().Truncate(time.Microsecond)
		if err := checkTime("valid_from", t, now); err != nil {
			return err
		}
		f.ValidFrom = &t
	}

	if err := b.normalizeDependencies(f); err != nil {
		return err
	}
	stores := f.Statement != ""
	if d := f.Resolves; d != nil {
		switch d.Action {
		case ActionSupersede:
			if !slices.Contains([]Reason{ReasonCorrection, ReasonTemporal, ReasonDuplicate}, d.Reason) {
				return invalidf("supersede reason %q is not correction or temporal", d.Reason)
			}
			if !stores {
				return invalidf("supersede without a statement")
			}
		case ActionRetract:
			if d.Reason != ReasonCorrection && d.Reason != ReasonTemporal {
				return invalidf("retract reason %q is not correction or temporal", d.Reason)
			}
		case ActionReinforce:
			if d.Reason != ReasonRestated {
				return invalidf("reinforce reason %q is not restated", d.Reason)
			}
			stores = false
		default:
			return invalidf("action %q is not supersede, retract or reinforce", d.Action)
		}
	} else if !stores {
		return invalidf("statement is empty")
	}
	if !stores {
		return nil
	}
	if f.Subject == "" {
		f.Subject = "user"
	}
	if err := normalizeSubject(f); err != nil {
		return err
	}
	if f.Attribute == "" {
		return invalidf("attribute is empty")
	}
	if f.Kind == "" {
		f.Kind = KindOther
	}
	if !slices.Contains(Kinds, f.Kind) {
		return invalidf("kind %q is not one of %v", f.Kind, Kinds)
	}
	return nil
}

func checkText(name, s string, maxLen int) error {
	switch {
	case !utf8.ValidString(s):
		return transcript.InputErrorf(ErrInvalid, name, "is not valid UTF-8")
	case strings.ContainsRune(s, 0):
		return transcript.InputErrorf(ErrInvalid, name, "contains a NUL character")
	case utf8.RuneCountInString(s) > maxLen:
		return transcript.InputErrorf(ErrInvalid, name, "is %d characters; the limit is %d", utf8.RuneCountInString(s), maxLen)
	}
	return nil
}

// Times outside this window are mistakes (year 0, year 9999), not history or plans.
const maxFuture = 5 * 365 * 24 * time.Hour

var minTime = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)

func checkTime(name string, t, now time.Time) error {
	if t.Before(minTime) || t.After(now.Add(maxFuture)) {
		return invalidf("%s %s is outside 1900-01-01..%s", name, t.Format(time.RFC3339), now.Add(maxFuture).Format("2006-01-02"))
	}
	return nil
}

// normStatement is the form exact duplicates are compared in.
func normStatement(s string) string {
	return strings.ToLower(strings.TrimSuffix(strings.Join(strings.Fields(s), " "), "."))
}

// normalizeDependencies checks that f depends only on candidates, each once, and never
// on the candidate it revises: a belief cannot rest on the one it replaces.
func (b *Batch) normalizeDependencies(f *Fact) error {
	if len(f.DependsOn) == 0 {
		f.DependsOn = nil
		return nil
	}
	deps := make([]int, 0, len(f.DependsOn))
	for _, i := range f.DependsOn {
		if i < 0 || i >= len(b.Candidates) {
			return invalidf("depends_on %d is not one of the %d candidates", i, len(b.Candidates))
		}
		if f.Resolves != nil && f.Resolves.Index == i {
			continue
		}
		deps = append(deps, i)
	}
	slices.Sort(deps)
	f.DependsOn = slices.Compact(deps)
	return nil
}

// vectors is every vector of the batch, named for errors.
func (b *Batch) vectors() iter.Seq2[string, []float32] {
	return func(yield func(string, []float32) bool) {
		for i, f := range b.Facts {
			for _, v := range [][]float32{f.Embedding, f.EventEmbedding, f.QuoteEmbedding} {
				if len(v) > 0 && !yield(fmt.Sprintf("fact %d", i), v) {
					return
				}
			}
		}
		for i, r := range b.Resolutions {
			if len(r.EventEmbedding) > 0 && !yield(fmt.Sprintf("resolution %d", i), r.EventEmbedding) {
				return
			}
		}
		if b.Source != nil && len(b.Source.Vector) > 0 {
			yield("source", b.Source.Vector)
		}
	}
}

// checkVectors checks that every vector is finite, of one dimension, in EmbedModel.
func (b *Batch) checkVectors() error {
	dim := 0
	for name, v := range b.vectors() {
		if b.EmbedModel == "" {
			return invalidf("%s: embedding without EmbedModel", name)
		}
		if dim != 0 && len(v) != dim {
			return invalidf("%s: embedding has %d dimensions, others %d", name, len(v), dim)
		}
		dim = len(v)
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return invalidf("%s: embedding is not finite", name)
			}
		}
	}
	return nil
}

// vectorDim is the dimension of the batch's vectors, 0 when it has none.
func (b *Batch) vectorDim() int {
	for _, v := range b.vectors() {
		return len(v)
	}
	return 0
}
