package eval

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"

	"github.com/credohq/credo/memory"
)

// Perturbation is a way a correct model writes a revision other than the labels do:
// eval --perturb gives the gold model's correct destructive directives one, and counts
// those the guards hold (false holds).
type Perturbation string

// The perturbations of eval --perturb.
const (
	// PerturbSlot names the new fact's slot by a synonym of the target's ("home_city"
	// for "location"), or "current_<attribute>" when the table has none.
	PerturbSlot Perturbation = "slot"
	// PerturbStatement words the new statement otherwise ("User resides in Miami" for
	// "User lives in Miami").
	PerturbStatement Perturbation = "statement"
	// PerturbQuote quotes the transcript inexactly: a contraction spelled out, a filler
	// word dropped, or another word left out.
	PerturbQuote Perturbation = "quote"
	// PerturbLanguage writes the new statement in the user's language when they do not
	// write English (the quote stays theirs), else in Spanish or French: those a table
	// of common sentence patterns translates.
	PerturbLanguage Perturbation = "language"
	// PerturbAlias writes the subject by another name of its entity: the name the labels
	// give it (the user's, stated earlier; a third party's in their subject), "the
	// user" for a user without one. The fact stating a name gives it as an alias.
	PerturbAlias Perturbation = "alias"
)

// Perturbations are the perturbations, in report order.
var Perturbations = []Perturbation{PerturbSlot, PerturbStatement, PerturbQuote, PerturbLanguage, PerturbAlias}

// ParsePerturbations reads --perturb's comma-separated list: "true" or "all" (the flag
// alone) is every perturbation, in report order.
func ParsePerturbations(s string) ([]Perturbation, error) {
	var out []Perturbation
	for e := range strings.SplitSeq(s, ",") {
		e = strings.TrimSpace(e)
		switch {
		case e == "" || e == "false":
		case e == "true" || e == "all":
			out = append(out, Perturbations...)
		case slices.Contains(Perturbations, Perturbation(e)):
			out = append(out, Perturbation(e))
		default:
			names := make([]string, len(Perturbations))
			for i, p := range Perturbations {
				names[i] = string(p)
			}
			return nil, fmt.Errorf("--perturb %s: not a perturbation (all, %s)", e, strings.Join(names, ", "))
		}
	}
	slices.SortFunc(out, func(a, b Perturbation) int { return slices.Index(Perturbations, a) - slices.Index(Perturbations, b) })
	return slices.Compact(out), nil
}

// Revision is a correct destructive directive the gold model gave in a perturbed run,
// as it gave it: Perturbations are those it was given (none when none applies).
type Revision struct {
	Scenario      string         `json:"scenario"`
	Transcript    string         `json:"transcript"`
	Action        memory.Action  `json:"action"`
	Target        string         `json:"target"`
	Statement     string         `json:"statement,omitempty"`
	Attribute     string         `json:"attribute,omitempty"`
	Subject       string         `json:"subject,omitempty"`
	Quote         string         `json:"quote"`
	Perturbations []Perturbation `json:"perturbations"`
}

// perturber rewrites the gold model's correct answers.
type perturber struct {
	kinds []Perturbation
	seed  uint64
	// names are, by scope and transcript id, the names the labels gave entities before
	// that transcript, by the entity's subject.
	names map[string]map[string]string
}

func newPerturber(kinds []Perturbation, seed uint64, scenarios []Scenario, labels []Labels) (*perturber, error) {
	for _, k := range kinds {
		if !slices.Contains(Perturbations, k) {
			return nil, fmt.Errorf("gold: %q is not a perturbation", k)
		}
	}
	p := &perturber{kinds: kinds, seed: seed, names: map[string]map[string]string{}}
	by := map[string]*Labels{}
	for i := range labels {
		by[labels[i].Scenario] = &labels[i]
	}
	for _, s := range scenarios {
		known := map[string]string{}
		for _, t := range s.Transcripts {
			p.names[planKey(s.Scope, t.ID)] = maps.Clone(known)
			for _, f := range by[s.Name].Transcripts[t.ID] {
				if subject, name := nameOf(f); name != "" {
					known[subject] = name
				}
			}
		}
	}
	return p, nil
}

// nameOf is the name a fact gives its subject: the value of a name slot ("User's name
// is Jon"), or the capitalised name its subject ends with ("user's friend sam" of "User's
// friend Sam is vegan").
func nameOf(f GoldFact) (subject, name string) {
	subject = strings.ToLower(strings.TrimSpace(f.Subject))
	if slices.Contains(strings.Split(f.Attribute, "_"), "name") {
		if _, v, ok := strings.Cut(f.Statement, " name is "); ok {
			return subject, strings.TrimSpace(v)
		}
	}
	if words := strings.Fields(subject); subject != "user" && len(words) > 1 {
		last := words[len(words)-1]
		for w := range strings.FieldsSeq(f.Statement) {
			if strings.EqualFold(w, last) && w != last {
				return subject, w // as the statement capitalises it
			}
		}
	}
	return subject, ""
}

// rng is the generator of one fact's perturbation.
func (p *perturber) rng(k Perturbation, t *goldTranscript, i int) *rand.Rand {
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d", k, t.scope, t.id, i)
	return rand.New(rand.NewPCG(p.seed, h.Sum64()))
}

// apply perturbs the destructive facts of an answer about t, given cands, and returns
// them as revisions with the labels' statements of the new statements it rewrote.
func (p *perturber) apply(t *goldTranscript, cands []candidate, facts []answerFact) ([]Revision, map[string]string) {
	var (
		out     []Revision
		renamed = map[string]string{}
	)
	for i := range facts {
		f := &facts[i]
		if slices.Contains(p.kinds, PerturbAlias) && f.Statement != "" {
			// The fact stating a name gives it as an alias, as the prompt asks, so that
			// the engine may know it.
			if subject, name := nameOf(GoldFact{Subject: f.Subject, Attribute: f.Attribute, Statement: f.Statement}); name != "" &&
				subject == strings.ToLower(f.Subject) {
				f.SubjectAliases = []string{name}
			}
		}
		if !f.destructive() {
			continue
		}
		was := f.Statement
		rev := Revision{Scenario: t.scenario, Transcript: t.id, Action: memory.Action(f.Resolves.Action),
			Target: cands[f.Resolves.SessionIndex].statement, Perturbations: []Perturbation{}}
		for _, k := range perturbOrder {
			// A statement in another language is not also reworded: the translation is
			// of the labels' wording.
			if !slices.Contains(p.kinds, k) || (k == PerturbStatement && slices.Contains(rev.Perturbations, PerturbLanguage)) {
				continue
			}
			if p.perturb(k, p.rng(k, t, i), t, f) {
				rev.Perturbations = append(rev.Perturbations, k)
			}
		}
		slices.SortFunc(rev.Perturbations, func(a, b Perturbation) int {
			return slices.Index(Perturbations, a) - slices.Index(Perturbations, b)
		})
		if f.Statement != was && was != "" {
			renamed[oneSpace(f.Statement)] = was
		}
		rev.Statement, rev.Attribute, rev.Subject, rev.Quote = f.Statement, f.Attribute, f.Subject, f.Quote
		out = append(out, rev)
	}
	return out, renamed
}

// perturbOrder is the order perturbations are given a fact in: a translation before a
// rewording.
var perturbOrder = []Perturbation{PerturbSlot, PerturbLanguage, PerturbStatement, PerturbQuote, PerturbAlias}

// perturb gives f perturbation k, reporting whether it applied.
func (p *perturber) perturb(k Perturbation, r *rand.Rand, t *goldTranscript, f *answerFact) bool {
	switch k {
	case PerturbSlot:
		if f.Attribute == "" {
			return false
		}
		f.Attribute = slotSynonym(f.Attribute, r)
		return true
	case PerturbStatement:
		if s, ok := paraphrase(f.Statement, r); ok {
			f.Statement = s
			return true
		}
	case PerturbQuote:
		if q, ok := paraphraseQuote(f.Quote, r); ok {
			f.Quote = q
			return true
		}
	case PerturbLanguage:
		lang := t.lang
		if lang == "en" || lang == "" {
			lang = []string{"es", "fr"}[r.IntN(2)]
		}
		if s, ok := translate(f.Statement, lang); ok {
			f.Statement = s
			return true
		}
	case PerturbAlias:
		subject := strings.ToLower(strings.TrimSpace(f.Subject))
		if name := p.names[planKey(t.scope, t.id)][subject]; name != "" {
			f.Subject = name
			return true
		}
		if subject == "user" {
			f.Subject = "the user"
			return true
		}
	}
	return false
}

// slotSynonyms are names models give one slot.
var slotSynonyms = [][]string{
	{"location", "home_city", "city_of_residence", "residence"},
	{"employer", "workplace", "company"},
	{"job_title", "role", "occupation"},
	{"diet", "dietary_preference"},
	{"car", "vehicle"},
	{"pet", "pets"},
	{"code_editor", "editor", "text_editor"},
	{"morning_drink", "morning_beverage"},
	{"favorite_band", "favourite_band", "favorite_music"},
	{"main_language", "primary_programming_language"},
	{"programming_language", "language"},
	{"database", "datastore"},
	{"frontend_framework", "frontend", "ui_framework"},
	{"allergy", "allergies", "food_allergy"},
	{"number_of_children", "children", "kids"},
	{"birthday", "date_of_birth"},
	{"name", "full_name"},
	{"work_location", "work_arrangement"},
	{"work_schedule", "working_hours"},
	{"answer_style", "response_style"},
	{"home_pc_os", "home_computer_os", "operating_system"},
	{"trip", "travel"},
	{"time_zone", "timezone"},
	{"currency", "preferred_currency"},
}

// slotSynonym is another name of the slot attribute: a synonym from the table, else
// "current_<attribute>".
func slotSynonym(attribute string, r *rand.Rand) string {
	for _, group := range slotSynonyms {
		if i := slices.Index(group, attribute); i >= 0 {
			others := slices.Delete(slices.Clone(group), i, i+1)
			return others[r.IntN(len(others))]
		}
	}
	return "current_" + attribute
}

type pattern struct {
	re  *regexp.Regexp
	out []string
}

func patterns(pairs ...[]string) []pattern {
	out := make([]pattern, len(pairs))
	for i, p := range pairs {
		out[i] = pattern{regexp.MustCompile(p[0]), p[1:]}
	}
	return out
}

// paraphrases word statements otherwise, the first pattern that matches.
var paraphrases = patterns(
	[]string{`^User lives in (.+)$`, "User's home is in $1", "User resides in $1"},
	[]string{`^User is based in (.+)$`, "User lives in $1", "User resides in $1"},
	[]string{`^User works at (.+)$`, "User is employed at $1", "User's employer is $1"},
	[]string{`^User works as (.+)$`, "User is employed as $1"},
	[]string{`^User works (.+)$`, "User is working $1"},
	[]string{`^User drives (.+)$`, "User's car is $1", "User now drives $1"},
	[]string{`^User codes in (.+)$`, "User writes code in $1", "User's code editor is $1"},
	[]string{`^User is allergic to (.+)$`, "User has an allergy to $1"},
	[]string{`^User prefers (.+)$`, "User's preference is $1", "User would rather have $1"},
	[]string{`^User drinks (.+)$`, "User has $1"},
	[]string{`^User visited (.+)$`, "User went to $1", "User took a trip to $1"},
	[]string{`^User's (.+?) is (.+)$`, "$2 is the user's $1", "The user's $1 is $2"},
	[]string{`^User's (.+)$`, "The user's $1"},
	[]string{`^User is (.+)$`, "The user is $1"},
	[]string{`^User has (.+)$`, "The user has $1"},
	[]string{`^User (.+)$`, "The user $1"},
)

// paraphrase words statement otherwise; false when no pattern matches.
func paraphrase(statement string, r *rand.Rand) (string, bool) {
	for _, p := range paraphrases {
		if p.re.MatchString(statement) {
			return p.re.ReplaceAllString(statement, p.out[r.IntN(len(p.out))]), true
		}
	}
	return statement, false
}

// contractions are spelled out in an inexact quote.
var contractions = strings.Fields(`I'm:I_am I've:I_have I'll:I_will I'd:I_would don't:do_not doesn't:does_not didn't:did_not
	isn't:is_not wasn't:was_not aren't:are_not it's:it_is It's:It_is we're:we_are We're:We_are can't:cannot won't:will_not
	that's:that_is That's:That_is there's:there_is we've:we_have We've:We_have I’m:I_am it’s:it_is`)

// fillers are dropped from an inexact quote.
var fillers = []string{"Quick update: ", "By the way, ", "Actually, ", "Also, ", "Well, ", "Oh, ", "So, ", "just ", "actually ",
	"finally ", "really ", "now ", "so "}

// paraphraseQuote is quote as a model that does not copy exactly quotes it: a
// contraction spelled out, else a filler dropped, else a word of four letters or more
// within it left out; false when none applies.
func paraphraseQuote(quote string, r *rand.Rand) (string, bool) {
	for _, c := range contractions {
		from, to, _ := strings.Cut(c, ":")
		if i := wordAt(quote, from); i >= 0 {
			return quote[:i] + strings.ReplaceAll(to, "_", " ") + quote[i+len(from):], true
		}
	}
	for _, f := range fillers {
		w := strings.TrimSpace(f)
		if i := wordAt(quote, w); i >= 0 {
			// The word and the space after it, or before it at the end.
			before, after := quote[:i], quote[i+len(w):]
			if strings.HasPrefix(after, " ") {
				after = after[1:]
			} else {
				before = strings.TrimSuffix(before, " ")
			}
			return before + after, true
		}
	}
	words := strings.Fields(quote)
	var inner []int
	for i := 1; i < len(words)-1; i++ {
		if len(words[i]) >= 4 && strings.ToLower(words[i]) == words[i] && strings.Trim(words[i], ".,;:!?") == words[i] {
			inner = append(inner, i)
		}
	}
	if len(inner) == 0 {
		return quote, false
	}
	i := inner[r.IntN(len(inner))]
	return strings.Join(slices.Delete(words, i, i+1), " "), true
}

// wordAt is where w starts in s as a whole word, -1 when it does not.
func wordAt(s, w string) int {
	for from := 0; ; {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return -1
		}
		i += from
		before := i == 0 || s[i-1] == ' ' || s[i-1] == '"' || s[i-1] == '('
		end := i + len(w)
		after := end == len(s) || strings.IndexByte(" ,.;:!?\"')", s[end]) >= 0 || strings.HasSuffix(w, " ")
		if before && after {
			return i
		}
		from = i + 1
	}
}

// translations translate common statement patterns into Spanish (es) and French (fr);
// names stay as they are. A statement no pattern fits is left in English rather than
// half translated.
var translations = []struct {
	re     *regexp.Regexp
	es, fr string
}{
	{regexp.MustCompile(`^User (?:lives|is based) in (.+)$`), "El usuario vive en $1", "L'utilisateur habite à $1"},
	{regexp.MustCompile(`^User works at (.+)$`), "El usuario trabaja en $1", "L'utilisateur travaille chez $1"},
	{regexp.MustCompile(`^User works remotely from home$`), "El usuario trabaja desde casa", "L'utilisateur travaille à distance depuis chez lui"},
	{regexp.MustCompile(`^User drives an? (.+)$`), "El usuario conduce un $1", "L'utilisateur conduit une $1"},
	{regexp.MustCompile(`^User codes in (.+)$`), "El usuario programa en $1", "L'utilisateur code avec $1"},
	{regexp.MustCompile(`^User's favorite band is (.+)$`), "El grupo favorito del usuario es $1", "Le groupe préféré de l'utilisateur est $1"},
	{regexp.MustCompile(`^User's main programming language at work is (.+)$`), "El lenguaje principal del usuario en el trabajo es $1",
		"Le langage principal de l'utilisateur au travail est $1"},
	{regexp.MustCompile(`^User's name is (.+)$`), "El usuario se llama $1", "L'utilisateur s'appelle $1"},
	{regexp.MustCompile(`^User's birthday is (.+)$`), "El cumpleaños del usuario es el $1", "L'anniversaire de l'utilisateur est le $1"},
	{regexp.MustCompile(`^User is allergic to (.+)$`), "El usuario es alérgico a $1", "L'utilisateur est allergique à $1"},
	{regexp.MustCompile(`^User's app runs on (.+)$`), "La aplicación del usuario funciona con $1", "L'application de l'utilisateur tourne sur $1"},
	{regexp.MustCompile(`^User's frontend is built with (.+)$`), "El frontend del usuario está hecho con $1", "Le frontend de l'utilisateur est fait avec $1"},
	{regexp.MustCompile(`^User's home PC runs (.+)$`), "El PC de casa del usuario usa $1", "Le PC de l'utilisateur à la maison tourne sous $1"},
	{regexp.MustCompile(`^User drinks green tea in the mornings$`), "El usuario bebe té verde por las mañanas", "L'utilisateur boit du thé vert le matin"},
	{regexp.MustCompile(`^User is vegetarian$`), "El usuario es vegetariano", "L'utilisateur est végétarien"},
	{regexp.MustCompile(`^User is vegan$`), "El usuario es vegano", "L'utilisateur est végan"},
	{regexp.MustCompile(`^User is pescatarian$`), "El usuario es pescetariano", "L'utilisateur est pescétarien"},
	{regexp.MustCompile(`^User has (\w+) kids$`), "El usuario tiene $1 hijos", "L'utilisateur a $1 enfants"},
	{regexp.MustCompile(`^User is a medical student$`), "El usuario es estudiante de medicina", "L'utilisateur est étudiant en médecine"},
	{regexp.MustCompile(`^User visited (.+)$`), "El usuario visitó $1", "L'utilisateur a visité $1"},
}

// numbers are the small numbers statements spell out.
var numbers = map[string][2]string{"one": {"un", "un"}, "two": {"dos", "deux"}, "three": {"tres", "trois"}, "four": {"cuatro", "quatre"},
	"five": {"cinco", "cinq"}}

// translate writes statement in lang (es or fr); false when no pattern matches.
func translate(statement, lang string) (string, bool) {
	for _, t := range translations {
		m := t.re.FindStringSubmatch(statement)
		if m == nil {
			continue
		}
		tmpl, n := t.es, 0
		if lang == "fr" {
			tmpl, n = t.fr, 1
		} else if lang != "es" {
			return statement, false
		}
		out := t.re.ReplaceAllString(statement, tmpl)
		for en, tr := range numbers {
			out = strings.Replace(out, " "+en+" ", " "+tr[n]+" ", 1)
		}
		return out, true
	}
	return statement, false
}

// stopwords tell which language a user writes in.
var stopwords = map[string]map[string]bool{
	"en": wordSet("the and i my is to in a of it we you at for on with but have was just that not me"),
	"es": wordSet("el la los las de que y en un una mi es no soy por con para ya pero lo me se del estoy"),
	"fr": wordSet("le la les de des et en un une mon ma est je suis pas que pour avec mais ne du au"),
	"de": wordSet("der die das und ich bin ist nicht mein meine ein eine mit zu auf für"),
	"pt": wordSet("o a os as de que e em um uma meu minha é não sou com para mas"),
}

// language is the language the user messages of t are written in, by their commonest
// words: en, es, fr, de or pt.
func language(t Transcript) string {
	count := map[string]int{}
	for _, m := range t.Messages {
		if m.Role != "user" {
			continue
		}
		for w := range strings.FieldsSeq(Normalize(m.Content)) {
			for lang, words := range stopwords {
				if words[w] {
					count[lang]++
				}
			}
		}
	}
	best := "en"
	for _, lang := range []string{"es", "fr", "de", "pt"} {
		if count[lang] > count[best] {
			best = lang
		}
	}
	return best
}

// perturbedName names a run with perturbations: its one's name, or "all" for more.
func perturbedName(ps []Perturbation) string {
	if len(ps) == 1 {
		return string(ps[0])
	}
	return "all"
}
