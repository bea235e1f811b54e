package memory

import (
	"fmt"
	"math"
	"strings"
	"unicode"
)

// Containment configures the guards that hold a model's destructive directive (a
// supersede or a retract from extraction or consolidation) for review instead of
// applying it: when only a document says it, when its new belief is about another
// entity, when neither identity nor a second opinion confirms it (identity.go), or when
// a cap is passed. An operator's writes are never held. docs/design.md, "Containment",
// says how each is decided and how the defaults were chosen.
type Containment struct {
	// Off applies every valid directive as the model gave it: for measuring what the
	// guards hold (eval --inject), never for serving.
	Off bool
	// SimilarityFloor is the cosine similarity of embeddings from which a directive's new
	// belief is related to its target, and an episode grounded in it
	// (REVISION_SIMILARITY_FLOOR); zero means DefaultSimilarityFloor. It depends on the
	// embedding model: `eval calibrate` measures it.
	SimilarityFloor float64
	// MaxRevisions bounds the destructive directives one episode applies
	// (MAX_REVISIONS_PER_EPISODE); zero means DefaultMaxRevisions.
	MaxRevisions int
	// MaxRevisionsPerDay bounds the destructive directives a scope's episodes within 24
	// hours of each other apply (MAX_REVISIONS_PER_DAY), so that a mass revision split
	// over episodes is held as one; zero means DefaultMaxRevisionsPerDay.
	MaxRevisionsPerDay int
}

// DefaultMaxRevisions and DefaultMaxRevisionsPerDay are the defaults of
// Containment.MaxRevisions and MaxRevisionsPerDay.
const (
	DefaultMaxRevisions       = 5
	DefaultMaxRevisionsPerDay = 10
)

func (c Containment) withDefaults() Containment {
	if c.MaxRevisions <= 0 {
		c.MaxRevisions = DefaultMaxRevisions
	}
	if c.MaxRevisionsPerDay <= 0 {
		c.MaxRevisionsPerDay = DefaultMaxRevisionsPerDay
	}
	return c
}

// floor is the similarity floor for vectors of model: the one set, or the model's
// default.
func (c Containment) floor(model string) float64 {
	if c.SimilarityFloor != 0 {
		return c.SimilarityFloor
	}
	return DefaultSimilarityFloor(model)
}

// similarityFloors are the default floors by embedding model (the start of its name).
// Embedding models spread cosine similarity differently: nomic-embed-text puts two
// unrelated sentences of one domain at 0.6 to 0.85, OpenAI's text-embedding-3 at 0.1 to
// 0.4. These are set from published distributions, not measured here (no model weights
// can be had on the machine that built credo): `eval calibrate` measures a configured
// embedder on the labeled scenarios and prints the floor it would pick, which
// REVISION_SIMILARITY_FLOOR then sets. The floor is the guards' last signal, after the
// attribute and the words (docs/design.md, "Containment").
var similarityFloors = []struct {
	prefix string
	floor  float64
}{
	{"nomic-embed-text", 0.75}, {"mxbai-embed", 0.70}, {"snowflake-arctic-embed", 0.70}, {"bge-", 0.70},
	{"text-embedding-3", 0.45}, {"text-embedding-ada", 0.80}, {"all-minilm", 0.45},
}

// DefaultSimilarityFloor is the similarity floor credo uses for vectors of model when
// REVISION_SIMILARITY_FLOOR is not set: 0.6 for a model it has no figure for.
func DefaultSimilarityFloor(model string) float64 {
	name := strings.ToLower(model)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	for _, f := range similarityFloors {
		if strings.HasPrefix(name, f.prefix) {
			return f.floor
		}
	}
	return 0.6
}

// guard judges one batch's destructive directives by identity (identity.go) and counts
// them for the caps.
type guard struct {
	cfg   Containment
	floor float64
	// on says the batch is a model's (extraction or consolidation) and the guards are on.
	on bool
	// voices are what the model read, by who said it; nil for consolidation, which
	// quotes nothing.
	voices *voices
	// slots are the scope's learned slot synonyms, read with the scope's lock.
	slots synonyms
	// vectors are the batch's targets' (and replacements') vectors in its model, read
	// with the scope's lock; a belief without one is missing.
	vectors map[int64][]float32
	// prior are the destructive revisions the batch's episode applied before (its
	// earlier segments), day those of the scope's episodes within a day of the batch's
	// time (prior among them), applied those this batch applied.
	prior, day, applied int
}

func newGuard(cfg Containment, b *Batch) *guard {
	g := &guard{cfg: cfg, floor: cfg.floor(b.EmbedModel), on: !cfg.Off && (b.Origin == RevisionExtraction || b.Origin == RevisionConsolidation),
		vectors: map[int64][]float32{}}
	if g.on && b.Origin == RevisionExtraction {
		g.voices = newVoices(b.Source)
	}
	return g
}

// destructive are the ids of the beliefs the batch's directives would retire, with the
// replacements consolidation names: what the guards read vectors of.
func (g *guard) destructive(b *Batch) []int64 {
	if !g.on {
		return nil
	}
	var ids []int64
	name := func(i int) {
		if i >= 0 && i < len(b.Candidates) {
			ids = append(ids, b.Candidates[i])
		}
	}
	for _, f := range b.Facts {
		if d := f.Resolves; d != nil && d.Action != ActionReinforce {
			name(d.Index)
		}
	}
	for _, r := range b.Resolutions {
		if r.Action == ActionSupersede && r.ReplacedBy != nil {
			name(r.Index)
			name(*r.ReplacedBy)
		}
	}
	return uniq(ids)
}

// admit counts one more destructive revision, or says why a cap holds it: the
// episode's (MAX_REVISIONS_PER_EPISODE) or the day's (MAX_REVISIONS_PER_DAY, by the
// episodes' time). Only extraction's count, and only what identity did not confirm is
// held: the user's own words about the same entity and slot revise as much as they say.
func (g *guard) admit(origin RevisionOrigin, confirmed bool) (Cause, string) {
	if !g.on || origin != RevisionExtraction {
		return "", ""
	}
	if !confirmed {
		if n := g.prior + g.applied; n >= g.cfg.MaxRevisions {
			return CauseMassRevision, fmt.Sprintf("the episode applied %d destructive revisions already, the most MAX_REVISIONS_PER_EPISODE allows", n)
		}
		if n := g.day + g.applied; n >= g.cfg.MaxRevisionsPerDay {
			return CauseMassRevision, fmt.Sprintf("the scope's episodes within a day of this one applied %d destructive revisions already, "+
				"the most MAX_REVISIONS_PER_DAY allows", n)
		}
	}
	g.applied++
	return "", ""
}

// related is "" when a new belief (its text, attribute and vector) is about t: the
// same slot, a salient word in common, or an embedding at least the floor; else what
// was measured.
func (g *guard) related(text, attribute string, vec []float32, t *target) string {
	if attribute != "" && g.slots.same(attribute, t.Attribute) {
		return ""
	}
	if shared(salient(text), salient(t.Statement)) {
		return ""
	}
	sim, ok := cosine(vec, g.vectors[t.ID])
	if ok && sim >= g.floor {
		return ""
	}
	return fmt.Sprintf("the new belief is not about belief %d: attribute %q against %q, no salient word in common, %s",
		t.ID, attribute, t.Attribute, similarity(sim, ok, g.floor))
}

func similarity(sim float64, ok bool, floor float64) string {
	if !ok {
		return "no embedding to compare"
	}
	return fmt.Sprintf("similarity %.2f under the floor %.2f", sim, floor)
}

// news are the salient words of statement that old does not have: what a revision says
// anew ("Miami" of "User lives in Miami" against "User lives in New York").
func news(statement, old string) map[string]bool {
	out := salient(statement)
	for w := range salient(old) {
		delete(out, w)
	}
	return out
}

// cosine is the cosine similarity of a and b, false when either is missing or their
// dimensions differ.
func cosine(a, b []float32) (float64, bool) {
	if len(a) == 0 || len(a) != len(b) {
		return 0, false
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0, false
	}
	return dot / math.Sqrt(na*nb), true
}

// normAttribute is the form attributes are compared in: its first line, lower case,
// words joined by underscores ("Home City", "home-city" and "home_city" are one slot).
func normAttribute(a string) string {
	a, _, _ = strings.Cut(strings.TrimSpace(a), "\n")
	return strings.Join(strings.FieldsFunc(strings.ToLower(a), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), "_")
}

// shared says whether two sets of salient words speak of the same thing: a word in
// common that names it, or two. A verb of a slot alone ("lives", "uses", "drives") is
// no evidence: "User drives a Camry" and "User plans a drive to Utah" share only it.
func shared(a, b map[string]bool) bool {
	n, named := 0, false
	for w := range a {
		if b[w] {
			n++
			named = named || !slotVerbs[w]
		}
	}
	return named || n >= 2
}

// WordsShared says whether two statements share a word that tells what they are about,
// as the containment guards judge it: what eval reports as a wrong target between
// related beliefs.
func WordsShared(a, b string) bool { return shared(salient(a), salient(b)) }

// slotVerbs are the stems of verbs that name a slot ("lives" of a home, "works" of a
// job) but not what fills it.
var slotVerbs = func() map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(`live lives living work works working use uses using speak speaks drive drives driving
		play plays own owns prefer prefers like likes love loves want wants plan plans eat eats drink drinks read reads
		watch watches visit visits travel travels study studies teach teaches run runs walk walks cook cooks write writes
		learn learns wear wears listen listens stay stays move moves moved spend spends spent`) {
		m[stem(w)] = true
	}
	return m
}()

// salient is the words of text that tell what it is about: lower-cased and stemmed,
// without function words, the subject ("user"), the verbs that say nothing of a slot
// ("has", "gets", "is named") and words of memory itself ("belief", "forget"). The verbs
// that name a slot ("lives", "works", "prefers") stay.
func salient(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) < 3 && !unicode.IsDigit(rune(w[0])) {
			continue
		}
		w = stem(w)
		if !genericWords[w] {
			out[w] = true
		}
	}
	return out
}

// stem strips the commonest English inflections, so that "dogs" meets "dog" and
// "moved" "move".
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		return w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// genericWords are stems that say nothing of what a statement is about.
var genericWords = func() map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(`the and but for not nor with from into onto about after before than then that this
		these those there their them they she her his him its our your you yours mine are was were been being has have
		had having does did doing done will would shall should can could may might must also just now still very really
		any all some more most much many each every other such only own same too out off over under again once here when
		where why how what which who whom whose user user's users userr person someone something thing things one two
		get got go goe went make made take took need say said tell told know think feel keep kept name nam call call
		currently current new old now today
		recently recent anymore longer yes okay well really belief memory everything anything nothing retract forget hold
		ignore instruction previous rule`) {
		m[stem(w)] = true
	}
	return m
}()
