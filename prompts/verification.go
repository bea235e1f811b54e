package prompts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"text/template"
	"unicode/utf8"
)

// Directive is a destructive revision shown for a second opinion; its index in
// Verification.Directives is the n of its line "[Dn] ", the directive the model
// answers with.
type Directive struct {
	// Action is supersede or retract; Reason why (temporal, correction, duplicate).
	Action, Reason string
	// Target is the statement the directive would retire, Statement the one that would
	// replace it (a supersession's), Quote the words it rests on ("" when it rests on
	// none: consolidation's).
	Target, Statement, Quote string
}

// Verification is what the verification prompt shows: the directives of one batch
// that want a second opinion.
type Verification struct {
	Directives []Directive
}

// maxVerificationQuote bounds a quote in the prompt, in characters: the words that say
// a belief changed are short, and a batch may question many directives.
const maxVerificationQuote = 300

// The verification templates are read once: an embedded file that does not parse is a
// build defect, caught by the tests, as mustRead's.
var (
	verificationSystem = string(mustRead("verification_system.tmpl"))
	verificationUser   = template.Must(template.ParseFS(files, "verification_user.tmpl"))
)

// Verification renders the system and user messages of one verification call. Each
// directive is one line beginning "[Dn] " (n counts from 0) that says in words what it
// would do; every value is on one line and a quote is cut to a bounded length, so that
// only directives begin a line with "[D".
func (p *Prompts) Verification(v Verification) (system, user string, err error) {
	ds := make([]Directive, len(v.Directives))
	for i, d := range v.Directives {
		if d.Action != "supersede" && d.Action != "retract" {
			return "", "", fmt.Errorf("prompts: render verification: directive %d: action %q is not supersede or retract", i, d.Action)
		}
		ds[i] = Directive{Action: d.Action, Reason: oneLine(d.Reason), Target: oneLine(d.Target), Statement: oneLine(d.Statement),
			Quote: capRunes(oneLine(d.Quote), maxVerificationQuote)}
	}
	var buf bytes.Buffer
	if err := verificationUser.Execute(&buf, ds); err != nil {
		return "", "", fmt.Errorf("prompts: render verification: %w", err)
	}
	return verificationSystem, buf.String(), nil
}

// capRunes cuts s to at most n characters, marking the cut with "…".
func capRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// VerificationSchema is the JSON schema of a verification: one verdict per directive.
func VerificationSchema() json.RawMessage { return mustRead("verification.schema.json") }
