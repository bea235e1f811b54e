package memory

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"unicode"
)

// Containment configures the guards that hold a model's destructive directive (a
// supersede or a retract from extraction or consolidation) for review instead of
// applying it: when its new belief is not related to the target, when the episode does
// not speak of the target, or when the episode's destructive directives pass a cap. An
// operator's writes are never held. docs/design.md, "Containment", says how each is
// measured and how the defaults were chosen.
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
}

// DefaultMaxRevisions is the default of Containment.MaxRevisions.
const DefaultMaxRevisions = 5

func (c Containment) withDefaults() Containment {
	if c.MaxRevisions <= 0 {
		c.MaxRevisions = DefaultMaxRevisions
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

// guard measures one batch's destructive directives for the containment rules.
type guard struct {
	cfg   Containment
	floor float64
	// on says the batch is a model's (extraction or consolidation) and the guards are on.
	on bool
	// source are the salient words of what the model read and its text; nil when the
	// batch has none (consolidation): grounding is then not measured.
	source     map[string]bool
	sourceText string
	sourceVec  []float32
	// told are the salient words of the beliefs the batch's revisions store: what the
	// conversation says of them grounds them, not a pure retraction beside them.
	told map[string]bool
	// companions are, by the episode the belief was learned from, the quotes of the
	// batch's supersessions whose new belief is related to the old one: a belief learned
	// with the old one, retracted on words of the same quote, goes with it.
	companions map[int64][]string
	// vectors are the batch's targets' (and replacements') vectors in its model, read
	// with the scope's lock; a belief without one is missing.
	vectors map[int64][]float32
	// prior are the destructive revisions the batch's episode applied before (its
	// earlier segments), applied those this batch applied.
	prior, applied int
}

func newGuard(cfg Containment, b *Batch) *guard {
	g := &guard{cfg: cfg, floor: cfg.floor(b.EmbedModel), on: !cfg.Off && (b.Origin == RevisionExtraction || b.Origin == RevisionConsolidation),
		vectors: map[int64][]float32{}}
	if g.on && b.Source != nil {
		g.source, g.sourceText, g.sourceVec = salient(b.Source.Text), b.Source.Text, b.Source.Vector
		g.told = map[string]bool{}
		for _, f := range b.Facts {
			if f.Statement != "" && f.Resolves != nil && f.Resolves.Action != ActionReinforce {
				maps.Copy(g.told, salient(f.Statement))
			}
		}
	}
	return g
}

// noteCompanions notes, from the candidates read ahead, the episodes of the beliefs the
// batch's supersessions retire when the new belief is related to the old: "I left
// nursing" supersedes "User is an ER nurse", and "User works night shifts", said in the
// same conversation ("I'm an ER nurse, working night shifts"), may be retracted with it.
func (g *guard) noteCompanions(b *Batch, ahead *readAhead) {
	if g.source == nil {
		return
	}
	g.companions = map[int64][]string{}
	for _, f := range b.Facts {
		d := f.Resolves
		if d == nil || d.Action != ActionSupersede || d.Index < 0 || d.Index >= len(b.Candidates) || f.Quote == "" {
			continue
		}
		t, ok := ahead.target(b.Candidates[d.Index])
		if ok && t.EpisodeID != nil && g.related(f.Statement, f.Attribute, f.Embedding, t) == "" {
			g.companions[*t.EpisodeID] = append(g.companions[*t.EpisodeID], f.Quote)
		}
	}
}

// goesWith says whether a pure retraction of t, quoting quote, goes with a supersession
// of the batch: t was learned in the episode of the belief superseded, and quote is part
// of the supersession's.
func (g *guard) goesWith(t *target, quote string) bool {
	if t.EpisodeID == nil || strings.TrimSpace(quote) == "" {
		return false
	}
	for _, q := range g.companions[*t.EpisodeID] {
		if strings.Contains(normQuote(q), normQuote(quote)) {
			return true
		}
	}
	return false
}

// normQuote is a quote as its words, lower case, one space apart.
func normQuote(q string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
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

// fact is why a model's destructive directive f on t is held, "" when it is trusted:
// its new belief is related to t, and the conversation speaks of t.
func (g *guard) fact(f *Fact, t *target) (Cause, string) {
	if !g.on {
		return "", ""
	}
	if f.Statement != "" {
		// The statement, not the quote: a quote holds what else was said beside it.
		if why := g.related(f.Statement, f.Attribute, f.Embedding, t); why != "" {
			return CauseUnrelated, why
		}
	}
	if g.source == nil {
		return "", ""
	}
	if why := g.grounded(f, t); why != "" {
		return CauseUngrounded, why
	}
	return "", ""
}

// sameEntity is why a model's supersession of t by a belief about entity is held, ""
// when entity is t's: a fact about the user's sister replaces nothing of the user's.
func (g *guard) sameEntity(entity string, t *target) (Cause, string) {
	if !g.on || entity == "" || t.Entity == "" || entity == t.Entity {
		return "", ""
	}
	return CauseOtherEntity, fmt.Sprintf("the new belief is about %q, belief %d about %q: a fact of another entity replaces nothing of it",
		entity, t.ID, t.Entity)
}

// resolution is why consolidation's supersession of t by rep is held, "" when it is
// trusted: rep is related to t.
func (g *guard) resolution(t, rep *target) (Cause, string) {
	if !g.on {
		return "", ""
	}
	if why := g.related(rep.Statement, rep.Attribute, g.vectors[rep.ID], t); why != "" {
		return CauseUnrelated, why
	}
	return "", ""
}

// admit counts one more destructive revision of the episode, or says why the cap holds
// it. Only extraction's count: consolidation revises what several episodes said.
func (g *guard) admit(origin RevisionOrigin) (Cause, string) {
	if !g.on || origin != RevisionExtraction {
		return "", ""
	}
	if n := g.prior + g.applied; n >= g.cfg.MaxRevisions {
		return CauseMassRevision, fmt.Sprintf("the episode applied %d destructive revisions already, the most MAX_REVISIONS_PER_EPISODE allows", n)
	}
	g.applied++
	return "", ""
}

// related is "" when a new belief (its text, attribute and vector) is about t: the
// same slot, a salient word in common, or an embedding at least the floor; else what
// was measured.
func (g *guard) related(text, attribute string, vec []float32, t *target) string {
	if attribute != "" && normAttribute(attribute) == normAttribute(t.Attribute) {
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

// grounded is "" when the conversation holds what the directive rests on; else what was
// measured. A supersession rests on its new belief: the conversation says it. A
// retraction rests on its target: the conversation speaks of it.
func (g *guard) grounded(f *Fact, t *target) string {
	if f.Resolves != nil && f.Resolves.Action == ActionSupersede {
		return g.says(f, t)
	}
	// A pure retraction rests on what the conversation says beyond what the answer's
	// other revisions store: "my home machine" of a new operating system does not speak
	// of the home PC's games.
	source := g.source
	if f.Statement == "" {
		source = maps.Clone(g.source)
		for w := range g.told {
			delete(source, w)
		}
	}
	if shared(salient(t.Statement), source) {
		return ""
	}
	if f.Statement == "" && g.goesWith(t, f.Quote) {
		return "" // learned with a belief the conversation supersedes, on the same words
	}
	tv := g.vectors[t.ID]
	quoteSim, quoteOK := cosine(f.QuoteEmbedding, tv)
	sourceSim, sourceOK := cosine(g.sourceVec, tv)
	if quoteOK && quoteSim >= g.floor || sourceOK && sourceSim >= g.floor {
		return ""
	}
	return fmt.Sprintf("the conversation does not speak of belief %d: it names none of its words; quote %s; conversation %s",
		t.ID, similarity(quoteSim, quoteOK, g.floor), similarity(sourceSim, sourceOK, g.floor))
}

// says is "" when the conversation says the new belief of a supersession of t: its
// quote is in it, or what the statement says that t does not ("Miami" of a move from
// Brooklyn), or the statement's vector is near the conversation's; else what was
// measured. The old value need not be named: "I moved to Miami" replaces Brooklyn.
func (g *guard) says(f *Fact, t *target) string {
	if quoteIsIn(f.Quote, g.source) || shared(news(f.Statement, t.Statement), g.source) {
		return ""
	}
	sim, ok := cosine(f.Embedding, g.sourceVec)
	if ok && sim >= g.floor {
		return ""
	}
	return fmt.Sprintf("the conversation does not say the belief that would replace belief %d: its quote is not in it, nor "+
		"what it says anew; statement %s", t.ID, similarity(sim, ok, g.floor))
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

// quoteIsIn says whether quote is in the conversation: most of its salient words are.
func quoteIsIn(quote string, source map[string]bool) bool {
	words := salient(quote)
	if len(words) == 0 {
		return false
	}
	in := 0
	for w := range words {
		if source[w] {
			in++
		}
	}
	return float64(in) >= 0.7*float64(len(words))
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
