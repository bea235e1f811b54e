package prompts

import (
	"bytes"
	"fmt"
	"time"
)

// ConsolidationCandidate is a belief of a consolidation cluster; its index in
// Consolidation.Candidates is its session_index.
type ConsolidationCandidate struct {
	Statement string
	Attribute string
	// Origin is user_stated, inferred, authoritative or imported: the model must know what it
	// may not supersede.
	Origin string
	// Event marks something that happened: a later event does not replace it.
	Event     bool
	ValidFrom time.Time
}

// Since is the candidate's valid_from as a date, for the template.
func (c ConsolidationCandidate) Since() string { return c.ValidFrom.UTC().Format(time.DateOnly) }

// Consolidation is what the consolidation prompt shows: one cluster of similar beliefs
// of a scope.
type Consolidation struct {
	Scope      string
	Candidates []ConsolidationCandidate
	// Instructions are the operator's, from the policy in force in the scope; "" is
	// none. They go into the system message, in a section of their own.
	Instructions string
}

// Consolidation renders the system and user messages of one consolidation call. Every
// value is rendered on one line, so that only candidates begin a line with "[N] ".
func (p *Prompts) Consolidation(c Consolidation) (system, user string, err error) {
	cands := make([]ConsolidationCandidate, len(c.Candidates))
	for i, x := range c.Candidates {
		cands[i] = ConsolidationCandidate{Statement: oneLine(x.Statement), Attribute: oneLine(x.Attribute),
			Origin: oneLine(x.Origin), Event: x.Event, ValidFrom: x.ValidFrom}
	}
	var buf bytes.Buffer
	if err := p.consolidationUser.Execute(&buf, Consolidation{Scope: oneLine(c.Scope), Candidates: cands}); err != nil {
		return "", "", fmt.Errorf("prompts: render consolidation: %w", err)
	}
	operator, err := p.operatorSection(c.Instructions)
	if err != nil {
		return "", "", err
	}
	if operator != "" {
		return p.consolidationSystem + "\n" + operator, buf.String(), nil
	}
	return p.consolidationSystem, buf.String(), nil
}
