package prompts

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"
	"time"
)

// ConsolidationCandidate is a belief of a consolidation cluster; its index in
// Consolidation.Candidates is its session_index.
type ConsolidationCandidate struct {
	Statement string
	Attribute string
	// Origin is user_stated, inferred or authoritative: the model must know what it
	// may not supersede.
	Origin    string
	ValidFrom time.Time
}

// Line is the statement on one line. The engine stores statements whitespace-folded,
// but the candidate format must hold even if one is not: a line break inside a
// statement could otherwise start a line that passes for another "[N] " candidate.
func (c ConsolidationCandidate) Line() string { return strings.Join(strings.Fields(c.Statement), " ") }

// Since is the candidate's valid_from as a date, for the template.
func (c ConsolidationCandidate) Since() string { return c.ValidFrom.UTC().Format(time.DateOnly) }

// Consolidation is what the consolidation prompt shows: one cluster of similar beliefs
// of a scope.
type Consolidation struct {
	Scope      string
	Candidates []ConsolidationCandidate
}

// Consolidation renders the system and user messages of one consolidation call. The
// templates are parsed on each call, which costs microseconds next to the LLM call and
// keeps Prompts as New builds it.
func (p *Prompts) Consolidation(c Consolidation) (system, user string, err error) {
	sys, err := files.ReadFile("consolidation_system.tmpl")
	if err != nil {
		return "", "", fmt.Errorf("prompts: %w", err)
	}
	tmpl, err := template.ParseFS(files, "consolidation_user.tmpl")
	if err != nil {
		return "", "", fmt.Errorf("prompts: %w", err)
	}
	// A scope is a caller's label and may hold a line break; folded, it cannot start a
	// candidate line.
	c.Scope = strings.Join(strings.Fields(c.Scope), " ")
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, c); err != nil {
		return "", "", fmt.Errorf("prompts: render consolidation: %w", err)
	}
	return string(sys), buf.String(), nil
}
