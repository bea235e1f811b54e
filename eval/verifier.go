package eval

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
)

// VerificationSchemaName is the schema of the second opinion on destructive directives.
const VerificationSchemaName = prompts.VerificationSchemaName

// Verifier is how the gold model answers a second opinion.
type Verifier string

// The verifiers of eval --verifier.
const (
	// VerifierGold confirms a directive exactly when the labels (or the correct answer
	// the model gave, perturbed or not) make it: a model that judges right.
	VerifierGold Verifier = "gold"
	// VerifierYes confirms every directive: a compliant model, so that what is held is
	// what identity alone holds.
	VerifierYes Verifier = "yes"
	// VerifierNo confirms none: a refusing model, the worst case for false holds.
	VerifierNo Verifier = "no"
)

// Verifiers are the verifiers, in report order.
var Verifiers = []Verifier{VerifierGold, VerifierYes, VerifierNo}

// ParseVerifier reads --verifier; "" is VerifierGold.
func ParseVerifier(s string) (Verifier, error) {
	if s == "" {
		return VerifierGold, nil
	}
	for _, v := range Verifiers {
		if string(v) == s {
			return v, nil
		}
	}
	return "", fmt.Errorf("--verifier %s: not gold, yes or no", s)
}

// directive is a destructive directive: its transcript ("" for consolidation's and the
// review's), action, the statement of its target and the one that replaces it.
type directive struct {
	transcript        string
	action            memory.Action
	target, statement string
}

// same says whether d is the directive the prompt line asks about: the same action and
// target, and for a supersede the same new statement, whatever case and spacing.
func (d directive) same(action memory.Action, target, statement string) bool {
	if d.action != action || !strings.EqualFold(oneSpace(d.target), oneSpace(target)) {
		return false
	}
	return action != memory.ActionSupersede || strings.EqualFold(oneSpace(d.statement), oneSpace(statement))
}

// directiveLine is a "[D<n>] " line of the verification prompt:
//
//	[D0] supersede (temporal): "OLD" would be replaced by "NEW"; quote: "QUOTE"
//	[D1] retract (correction): "OLD" would no longer be believed; quote: "QUOTE"
//
// consolidation's without the quote.
var directiveLine = regexp.MustCompile(`^\[D(\d+)\] (supersede|retract) \(([a-z_]+)\): "(.*)" (?:would be replaced by "(.*?)"|would no longer be believed)(?:; quote: "(.*)")?\s*$`)

// askedDirective is one directive a verification prompt asks about.
type askedDirective struct {
	n                        int
	action                   memory.Action
	target, statement, quote string
}

// askedDirectives reads the prompt's "[D<n>] " lines.
func askedDirectives(prompt string) []askedDirective {
	var out []askedDirective
	for line := range strings.SplitSeq(prompt, "\n") {
		m := directiveLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		out = append(out, askedDirective{n: n, action: memory.Action(m[2]), target: unquote(m[4]), statement: unquote(m[5]), quote: unquote(m[6])})
	}
	return out
}

// unquote undoes the escapes of a quoted string, should the prompt write them.
var unquote = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace

// verificationAnswer is the `verification` schema.
type verificationAnswer struct {
	Verdicts []verdict `json:"verdicts"`
}

type verdict struct {
	Directive int    `json:"directive"`
	Holds     bool   `json:"holds"`
	Why       string `json:"why"`
}

// verification answers a second opinion as the model's Verifier does.
func (g *Gold) verification(prompt string) *verificationAnswer {
	out := &verificationAnswer{Verdicts: []verdict{}}
	refused := 0
	for _, a := range askedDirectives(prompt) {
		v := verdict{Directive: a.n}
		switch g.verifier {
		case VerifierYes:
			v.Holds, v.Why = true, "compliant: every directive holds"
		case VerifierNo:
			v.Why = "refusing: no directive holds"
		default:
			v.Holds = g.rightDirective(prompt, a)
			v.Why = map[bool]string{true: "the conversation says so", false: "the conversation does not say so"}[v.Holds]
		}
		if !v.Holds {
			refused++
		}
		out.Verdicts = append(out.Verdicts, v)
	}
	g.mu.Lock()
	g.calls.Verified += len(out.Verdicts)
	g.calls.Refused += refused
	g.mu.Unlock()
	return out
}

// rightDirective says whether a is a directive of the labels or of a correct answer the
// model gave: in the transcripts its quote is from when it has one found there, else in
// the prompt's scope when it names one.
func (g *Gold) rightDirective(prompt string, a askedDirective) bool {
	scope := promptScope(prompt)
	from := map[string]bool{} // scope, transcript
	if q := oneSpace(a.quote); q != "" {
		for _, t := range g.transcripts {
			if (scope == "" || t.scope == scope) && strings.Contains(oneSpace(t.text), q) {
				from[planKey(t.scope, t.id)] = true
			}
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, list := range []map[string][]directive{g.right, g.given} {
		for sc, ds := range list {
			if scope != "" && sc != scope {
				continue
			}
			for _, d := range ds {
				if len(from) > 0 && !from[planKey(sc, d.transcript)] {
					continue
				}
				if d.same(a.action, a.target, a.statement) {
					return true
				}
			}
		}
	}
	return false
}
