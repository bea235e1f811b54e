// Package prompts holds credo's prompt templates and the JSON schemas of LLM outputs, as
// embedded files so that prompts are reviewed as text, not as Go strings.
package prompts

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
	"time"

	"github.com/credohq/credo/transcript"
)

//go:embed *.tmpl *.schema.json
var files embed.FS

// Schema names, as sent to the LLM.
const (
	ExtractionSchemaName    = "extraction"
	ConsolidationSchemaName = "consolidation"
	ReviewSchemaName        = "review"
	AnswerSchemaName        = "answer"
	JudgeSchemaName         = "judgment"
	VerificationSchemaName  = "verification"
)

// Candidate is a belief shown to the LLM; its index in Extraction.Candidates is its
// session_index.
type Candidate struct {
	Statement string
	Attribute string
	// Event marks something that happened: the model must not supersede it as if the
	// world had changed.
	Event     bool
	ValidFrom time.Time
	// Entity is the name of whom it is about, "" for the user.
	Entity string
}

// Entity is an entity of the candidates that goes by other names, for the prompt's
// list of names.
type Entity struct {
	Name, Kind string
	Aliases    []string
}

// Since is the candidate's valid_from as a date, for the template.
func (c Candidate) Since() string { return c.ValidFrom.UTC().Format(time.DateOnly) }

// Example is a past revision shown as a worked example.
type Example struct {
	Old, Excerpt, New string
	Action, Reason    string
	// Kept: an operator refused to change Old to New.
	Kept bool
	// Reverted: an operator undid the change of Old to New, because Note.
	Reverted bool
	Note     string
}

// Message is one message of the transcript; an episode's stored messages (a
// transcript.Message each) decode into it, by the same names.
type Message struct {
	Role    string     `json:"role"`
	Name    string     `json:"name,omitempty"`
	Content string     `json:"content"`
	At      *time.Time `json:"at,omitempty"`
	// Continued and Continues mark a piece of a message longer than a segment of the
	// transcript: it continues one begun before, it continues after. Never stored.
	Continued bool `json:"-"`
	Continues bool `json:"-"`
}

// Extraction is what the extraction prompt shows.
type Extraction struct {
	Scope      string
	OccurredAt time.Time
	Candidates []Candidate
	// Entities are the candidates' entities that go by other names.
	Entities []Entity
	Examples []Example
	Messages []Message
	// Part, for a transcript too long for one prompt, says which part Messages are;
	// Earlier are the messages just before them, shown again so that what was said
	// across the cut reads whole. Nil for a transcript in one prompt.
	Part    *Part
	Earlier []Message
	// Instructions are the operator's, from the policy in force in the scope; "" is
	// none. They go into the system message, in a section of their own.
	Instructions string
}

// Part is a segment of a transcript extracted in segments: its number, counted from 1,
// and its messages, First to Last of Of (counted from 1).
type Part struct {
	Number, First, Last, Of int
}

// Prompts renders credo's prompts.
type Prompts struct {
	extractionSystem     string
	extractionContext    *template.Template
	extractionTranscript *template.Template
	consolidationSystem  string
	consolidationUser    *template.Template
	reviewSystem         string
	reviewUser           *template.Template
	answerSystem         string
	answerUser           *template.Template
	judgeSystem          string
	judgeUser            *template.Template
	operator             *template.Template
}

// New parses the embedded templates.
func New() (*Prompts, error) {
	p := &Prompts{}
	for _, t := range []struct {
		system, user string
		dst          *string
		tmpl         **template.Template
	}{
		{"extraction_system.tmpl", "extraction_context.tmpl", &p.extractionSystem, &p.extractionContext},
		{"consolidation_system.tmpl", "consolidation_user.tmpl", &p.consolidationSystem, &p.consolidationUser},
		{"review_system.tmpl", "review_user.tmpl", &p.reviewSystem, &p.reviewUser},
		{"answer_system.tmpl", "answer_user.tmpl", &p.answerSystem, &p.answerUser},
		{"judge_system.tmpl", "judge_user.tmpl", &p.judgeSystem, &p.judgeUser},
	} {
		system, err := files.ReadFile(t.system)
		if err != nil {
			return nil, fmt.Errorf("prompts: %w", err)
		}
		user, err := template.ParseFS(files, t.user)
		if err != nil {
			return nil, fmt.Errorf("prompts: %w", err)
		}
		*t.dst, *t.tmpl = string(system), user
	}
	transcript, err := template.ParseFS(files, "extraction_transcript.tmpl")
	if err != nil {
		return nil, fmt.Errorf("prompts: %w", err)
	}
	p.extractionTranscript = transcript
	if p.operator, err = template.ParseFS(files, "operator_instructions.tmpl"); err != nil {
		return nil, fmt.Errorf("prompts: %w", err)
	}
	return p, nil
}

// operatorSection renders an operator's instructions as a section of a system message,
// between lines of its own that say where they come from, each of their lines indented
// so that none can close the section or pass for a candidate line ("[N] "). No
// instructions is no section.
func (p *Prompts) operatorSection(instructions string) (string, error) {
	text := strings.TrimSpace(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(instructions))
	if text == "" {
		return "", nil
	}
	var quoted strings.Builder
	for line := range strings.SplitSeq(text, "\n") {
		quoted.WriteString(strings.TrimRight("  "+line, " \t") + "\n")
	}
	var b bytes.Buffer
	if err := p.operator.Execute(&b, quoted.String()); err != nil {
		return "", fmt.Errorf("prompts: render the operator's instructions: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// Extraction renders the system and user messages of one extraction call. The system
// message holds the instructions and what memory holds (the candidates, the worked
// examples); the user message holds the transcript alone, between a line <transcript>
// and a line </transcript>, as quoted data: no line of a transcript can be one of
// those, since each begins with its role or is indented (Transcript).
func (p *Prompts) Extraction(e Extraction) (system, user string, err error) {
	// Stored text may hold line breaks (an attribute or a quote as the LLM wrote it):
	// outside the transcript every value is rendered on one line, so that only
	// candidates begin a line with "[N] ".
	cands := make([]Candidate, len(e.Candidates))
	for i, c := range e.Candidates {
		cands[i] = Candidate{Statement: oneLine(c.Statement), Attribute: oneLine(c.Attribute), Event: c.Event, ValidFrom: c.ValidFrom,
			Entity: oneLine(c.Entity)}
	}
	type names struct{ Name, Kind, Aliases string }
	entities := make([]names, len(e.Entities))
	for i, n := range e.Entities {
		aliases := make([]string, len(n.Aliases))
		for j, a := range n.Aliases {
			aliases[j] = oneLine(a)
		}
		entities[i] = names{Name: oneLine(n.Name), Kind: oneLine(n.Kind), Aliases: strings.Join(aliases, ", ")}
	}
	examples := make([]Example, len(e.Examples))
	for i, x := range e.Examples {
		examples[i] = Example{Old: oneLine(x.Old), Excerpt: oneLine(x.Excerpt), New: oneLine(x.New),
			Action: oneLine(x.Action), Reason: oneLine(x.Reason), Kept: x.Kept, Reverted: x.Reverted, Note: oneLine(x.Note)}
	}
	operator, err := p.operatorSection(e.Instructions)
	if err != nil {
		return "", "", err
	}
	var context, transcript bytes.Buffer
	err = p.extractionContext.Execute(&context, map[string]any{
		"Operator":   operator,
		"Date":       e.OccurredAt.UTC().Format("2006-01-02 (Monday), 15:04 UTC"),
		"Scope":      oneLine(e.Scope),
		"Candidates": cands,
		"Entities":   entities,
		"Examples":   examples,
		"Part":       e.Part,
		"Earlier":    len(e.Earlier) > 0,
	})
	if err != nil {
		return "", "", fmt.Errorf("prompts: render extraction: %w", err)
	}
	err = p.extractionTranscript.Execute(&transcript, map[string]any{
		"Transcript": Transcript(e.Messages),
		"Earlier":    Transcript(e.Earlier),
	})
	if err != nil {
		return "", "", fmt.Errorf("prompts: render extraction: %w", err)
	}
	return p.extractionSystem + "\n" + context.String(), transcript.String(), nil
}

// Transcript renders messages one per line as "role: content". Continuation lines of a
// message are indented, so that no transcript line can pass for a "[N] " candidate line
// while every line of content still appears verbatim. In a user message, each document
// (transcript.Documents: quoted, forwarded or pasted text) stands between a line
// "<document>" and a line "</document>", indented too, so that the model can tell what
// the user did not say as their own.
func Transcript(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Role)
		if m.Name != "" {
			b.WriteString(" (" + m.Name + ")")
		}
		if m.At != nil {
			b.WriteString(" at " + m.At.UTC().Format(time.RFC3339))
		}
		content := strings.TrimSpace(m.Content)
		var docs []transcript.Span
		if m.Role == transcript.RoleUser {
			docs = transcript.Documents(content)
		}
		// The markers of a piece of a message stay with its text, inside a document that
		// begins or ends the piece.
		var lead, trail string
		if m.Continued {
			lead = "… "
		}
		if m.Continues {
			trail = " …"
		}
		if len(docs) == 0 {
			b.WriteString(": " + lead + indentLines.Replace(content) + trail + "\n")
			continue
		}
		if docs[0].Start == 0 {
			b.WriteString(":\n  <document>\n  ")
		} else {
			b.WriteString(": ")
		}
		b.WriteString(lead)
		at := 0
		for i, d := range docs {
			if d.Start > 0 {
				// A document starts a line: the text before it ends with a line break.
				b.WriteString(indentLines.Replace(content[at:d.Start]) + "<document>\n  ")
			}
			b.WriteString(indentLines.Replace(content[d.Start:d.End]))
			if i == len(docs)-1 && d.End == len(content) {
				b.WriteString(trail)
			}
			b.WriteString("\n  </document>")
			at = d.End
		}
		if at < len(content) {
			b.WriteString(indentLines.Replace(content[at:]) + trail)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// indentLines indents continuation lines; a lone carriage return counts as a line
// break, as it does for many readers.
var indentLines = strings.NewReplacer("\r\n", "\n  ", "\r", "\n  ", "\n", "\n  ")

// oneLine collapses every run of white space, line breaks included, to one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ExtractionSchema is the JSON schema of the extraction output.
func ExtractionSchema() json.RawMessage { return mustRead("extraction.schema.json") }

// AnswerSchema is the JSON schema of an answer with citations.
func AnswerSchema() json.RawMessage { return mustRead("answer.schema.json") }

// ConsolidationSchema is the JSON schema of the consolidation output.
func ConsolidationSchema() json.RawMessage { return mustRead("consolidation.schema.json") }

// ReviewSchema is the JSON schema of the review output.
func ReviewSchema() json.RawMessage { return mustRead("review.schema.json") }

func mustRead(name string) json.RawMessage {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("prompts: embedded file missing: " + name) // a build defect, caught by tests
	}
	return b
}
