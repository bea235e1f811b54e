package prompts

import (
	"bytes"
	"fmt"
	"time"
)

// Known is a belief shown to answer a question or put in an agent's context: its
// index in Answer.Beliefs is the number the model cites.
type Known struct {
	Statement string
	ValidFrom time.Time
	// ValidUntil is set when the belief no longer holds.
	ValidUntil *time.Time
	// Inherited marks an organisation's default, read from an ancestor scope.
	Inherited bool
}

// When is the belief's valid time as the prompts show it: "since DATE", or "from DATE
// until DATE" for one that no longer holds.
func (k Known) When() string {
	if k.ValidUntil != nil {
		return "from " + date(k.ValidFrom) + " until " + date(*k.ValidUntil)
	}
	return "since " + date(k.ValidFrom)
}

func date(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// Answer is what the answer prompt shows: the beliefs recalled for a question.
type Answer struct {
	Scope    string
	Today    time.Time
	Question string
	Beliefs  []Known
}

// Answer renders the system and user messages of one answer call. Every value is on one
// line, so that only beliefs begin a line with "[N] ".
func (p *Prompts) Answer(a Answer) (system, user string, err error) {
	bs := make([]Known, len(a.Beliefs))
	for i, b := range a.Beliefs {
		bs[i] = b
		bs[i].Statement = oneLine(b.Statement)
	}
	var buf bytes.Buffer
	err = p.answerUser.Execute(&buf, map[string]any{
		"Today": date(a.Today), "Scope": oneLine(a.Scope), "Question": oneLine(a.Question), "Beliefs": bs,
	})
	if err != nil {
		return "", "", fmt.Errorf("prompts: render answer: %w", err)
	}
	return p.answerSystem, buf.String(), nil
}
