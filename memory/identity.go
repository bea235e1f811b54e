package memory

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/credohq/credo/entity"
)

// Revision by identity: a model's destructive directive is judged by who said what it
// quotes, whom its new fact is about and which slot it fills, not by the words it
// shares with its target. A directive only a document grounds is held (not_from_user);
// a supersession by a fact about another entity replaces nothing (other_entity); the
// user's own words about the same entity and slot confirm it; anything else waits for a
// second opinion (Store.Questions), and without one that holds, it is held
// (second_opinion). Words and vectors are evidence for the confirmation and for the
// operator, never a verdict alone.

// judgement is what identity says of one directive: held with a cause, confirmed, or
// neither (a second opinion decides), with what was measured.
type judgement struct {
	cause     Cause
	why       string
	confirmed bool
	evidence  string
}

func (j judgement) unsettled() bool { return j.cause == "" && !j.confirmed }

// judge is identity's judgement of a model's destructive directive f on t. A batch
// without a Source has no words to find a speaker in: its supersessions are judged as
// consolidation's, its retractions confirmed, as before the speaker was known (only a
// library caller writes such a batch; extraction always says what the model read).
func (g *guard) judge(f *Fact, t *target) judgement {
	d := f.Resolves
	switch {
	case !g.on, d.Action == ActionSupersede && normStatement(f.Statement) == normStatement(t.Statement):
		// Off, or a supersession by the same statement, which Apply restates.
		return judgement{confirmed: true}
	case g.voices == nil && d.Action == ActionSupersede:
		return g.judgeResolution(t, &target{ID: -1, Statement: f.Statement, Attribute: f.Attribute, Entity: f.entity}, f.Embedding)
	case g.voices == nil:
		return judgement{confirmed: true}
	}
	who, by := g.voices.of(f.Quote), "its quote"
	if who == speakerUnknown && d.Action == ActionSupersede {
		// A quote not found as copied (a paraphrase) leaves the new value's own words to
		// say who said it.
		who, by = g.voices.wordsOf(news(f.Statement, t.Statement)), "what its statement says anew"
	}
	if who == speakerDocument {
		return judgement{cause: CauseNotFromUser, why: fmt.Sprintf("%s (quote %q) is only in text the user did not say as their own "+
			"(another role's message, a quoted, forwarded or pasted block): a document does not revise what the user said",
			by, clip(f.Quote, 120)+ellipsis(f.Quote, 120))}
	}
	if d.Action == ActionSupersede && f.entity != "" && t.Entity != "" && f.entity != t.Entity {
		return otherEntity(f.entity, t)
	}
	evidence := []string{by + ": " + who.String()}
	// "My sister just moved to Denver": the user's words, of someone else.
	other := otherRelation(f.Quote, t.Entity)
	if other != "" {
		evidence = append(evidence, "the quote names the user's "+other)
	}
	switch d.Action {
	case ActionSupersede:
		same := g.slots.same(f.Attribute, t.Attribute)
		// The user's own words hold what the statement says anew, or the quote says it.
		says := who == speakerUser && by != "its quote" || g.says(f, t)
		// "I might move to Austin" names the value and moves nothing.
		supposes := hedged(f.Quote)
		if who == speakerUser && same && says && !supposes && other == "" {
			return judgement{confirmed: true}
		}
		evidence = append(evidence, fmt.Sprintf("slot %q against %q: %s", f.Attribute, t.Attribute, yesNo(same, "the same", "another")),
			"the quote "+yesNo(says, "says", "does not say")+" what the new statement says anew")
		if supposes {
			evidence = append(evidence, "the quote supposes, wishes or asks")
		}
	case ActionRetract:
		speaks := g.speaksOf(f, t)
		// "I love my dog Rex" speaks of the dog and ends nothing.
		ended := ends(f.Quote)
		if who == speakerUser && speaks && ended && other == "" {
			return judgement{confirmed: true}
		}
		evidence = append(evidence, "the quote "+yesNo(speaks, "speaks", "does not speak")+fmt.Sprintf(" of belief %d", t.ID),
			yesNo(ended, "says", "does not say")+" that something ended or was wrong")
	}
	return judgement{evidence: strings.Join(evidence, "; ")}
}

// judgeResolution is identity's judgement of consolidation's supersession of t by rep
// (of vector vec), two beliefs memory holds: another entity's replaces nothing; the
// same slot, or a related statement, confirms it.
func (g *guard) judgeResolution(t, rep *target, vec []float32) judgement {
	if !g.on {
		return judgement{confirmed: true}
	}
	if rep.Entity != "" && t.Entity != "" && rep.Entity != t.Entity {
		return otherEntity(rep.Entity, t)
	}
	why := g.related(rep.Statement, rep.Attribute, vec, t)
	if why == "" {
		return judgement{confirmed: true}
	}
	return judgement{evidence: why}
}

func otherEntity(entity string, t *target) judgement {
	return judgement{cause: CauseOtherEntity, why: fmt.Sprintf("the new belief is about %q, belief %d about %q: a fact of another "+
		"entity replaces nothing of it", entity, t.ID, t.Entity)}
}

// opinion is the cause and why of a directive identity left unsettled, "" when its
// second opinion holds.
func opinion(j judgement, o *Opinion) (Cause, string) {
	switch {
	case o == nil:
		return CauseSecondOpinion, "identity did not settle it (" + j.evidence + ") and no second opinion confirmed it"
	case !o.Holds:
		return CauseSecondOpinion, "identity did not settle it (" + j.evidence + "); the second opinion: " + o.Why
	}
	return "", ""
}

// says says whether the quote of a supersession of t says its new belief: what the
// statement says anew ("Lisbon" of a move from Brooklyn) is in the quote, or the
// statement's vector is near the quote's.
func (g *guard) says(f *Fact, t *target) bool {
	anew := news(f.Statement, t.Statement)
	if looselyShared(anew, salient(f.Quote)) {
		return true
	}
	if len(anew) == 0 && g.speaksOf(f, t) {
		return true // "User no longer works as a nurse" says nothing anew but that t ended
	}
	sim, ok := cosine(f.Embedding, f.QuoteEmbedding)
	return ok && sim >= g.floor
}

// speaksOf says whether the quote of a retraction of t speaks of t: a word that names
// what t is about, or a vector near t's.
func (g *guard) speaksOf(f *Fact, t *target) bool {
	if looselyShared(salient(t.Statement), salient(f.Quote)) {
		return true
	}
	sim, ok := cosine(f.QuoteEmbedding, g.vectors[t.ID])
	return ok && sim >= g.floor
}

// looselyShared is shared, with words that begin alike counted as one: "allergic" and
// "allergy", "vegetariana" and "vegetarian".
func looselyShared(a, b map[string]bool) bool {
	if shared(a, b) {
		return true
	}
	for w := range a {
		if slotVerbs[w] {
			continue
		}
		for v := range b {
			if alike(w, v) {
				return true
			}
		}
	}
	return false
}

// alike says whether two words share a beginning of at least five letters and most of
// the shorter one, or the shorter, of four letters at least, begins the other ("nurs"
// of "nursing" and "nurse").
func alike(a, b string) bool {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	short, long := min(len(a), len(b)), max(len(a), len(b))
	return n >= 5 && float64(n) >= 0.75*float64(short) || n >= 4 && n == short && long-short <= 2
}

// otherRelation is a person the quote names by their relation to the user ("my
// sister") who is not the entity the directive revises, "" when it names none.
func otherRelation(quote, entityKey string) string {
	for _, r := range entity.Relations(quote) {
		if r != entityKey {
			return r
		}
	}
	return ""
}

// hedged says whether a quote supposes, wishes, plans or asks rather than tells: its
// value is no fact yet. A cue is evidence to ask a second opinion, never a verdict.
func hedged(quote string) bool {
	if strings.Contains(quote, "?") {
		return true
	}
	for _, w := range words(quote) {
		if hedges[w] {
			return true
		}
	}
	return false
}

// ends says whether a quote tells that something ended, stopped, was left or was never
// so: a negation, or a verb or word of ending, in English or a few other languages
// (the beginnings of words, so that "cancelled" and "cancelamos" count). Without one,
// a retraction is put to a second opinion.
func ends(quote string) bool {
	q := strings.ToLower(quote)
	if strings.Contains(q, "n't") || strings.Contains(q, "n’t") {
		return true
	}
	for _, w := range words(quote) {
		if endings[w] {
			return true
		}
		for _, p := range endingStems {
			if strings.HasPrefix(w, p) {
				return true
			}
		}
	}
	return false
}

// words are the lower-cased words of s.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

var (
	// Not "may": the month as often as the verb.
	hedges = wordSet(`might maybe perhaps possibly probably considering thinking wonder wondering if whether would could
		should hope hoping wish wishing plan planning planned someday eventually quizás quizas peut-être vielleicht talvez`)
	endings = wordSet(`no not never nor none nothing nobody neither anymore longer ex former formerly over off gone
		end ended ending ends stop stopped stopping stops quit quits quitting sold sell selling left leave leaving gave give
		given broke broken dropped drop lost died dies passed forget forgot forgotten wrong mistake mistaken false cancel
		cancelled canceled cancelling canceling retired divorced separated split finished abandoned moved moving
		nunca jamás jamas ya plus pas jamais nicht kein keine mehr não nao nie niet`)
	// endingStems begin words of ending in other languages: cancelamos, dejé, acabó.
	endingStems = []string{"cancel", "dej", "acab", "aufgeh", "termin"}
)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(s) {
		m[w] = true
	}
	return m
}

func yesNo(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

// ellipsis is "…" when s is longer than n characters: what clip cut.
func ellipsis(s string, n int) string {
	if len([]rune(s)) > n {
		return "…"
	}
	return ""
}
