package transfer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/credohq/credo/entity"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
)

// What a mem0 memory becomes (docs/api.md, "From mem0"): an active belief of origin
// imported about the user (its entity the subject's, as the engine resolves it),
// holding from when mem0 stored it. mem0 keeps no confidence, slot or kind: the
// confidence is mem0Confidence, the slot the memory's first category (else its
// metadata's category, else mem0Attribute), the kind other.
const (
	mem0Confidence = 0.9
	mem0Attribute  = "general"
	mem0Subject    = "user"
)

// DefaultScopeTemplate is the scope of a mem0 memory when no template is given.
const DefaultScopeTemplate = "user:{user_id}"

// mem0Memory is one memory of mem0's get_all (or its export): the fields credo keeps.
// Others (hash, score, expiration_date, actor_id, role...) are read past.
type mem0Memory struct {
	ID         json.RawMessage `json:"id"`
	Memory     *string         `json:"memory"`
	UserID     json.RawMessage `json:"user_id"`
	AgentID    json.RawMessage `json:"agent_id"`
	RunID      json.RawMessage `json:"run_id"`
	CreatedAt  *string         `json:"created_at"`
	UpdatedAt  *string         `json:"updated_at"`
	Metadata   map[string]any  `json:"metadata"`
	Categories []string        `json:"categories"`
}

// templateField finds the fields of a scope template.
var templateField = regexp.MustCompile(`\{[^{}]*\}`)

// checkTemplate refuses a template that names a field mem0 has not, or none at all (every
// memory would go to one scope: say so with a scope, not a template).
func checkTemplate(tmpl string) error {
	fields := templateField.FindAllString(tmpl, -1)
	if len(fields) == 0 {
		return transcript.InputErrorf(ErrInput, "scope template", "%q names no field: use {user_id}, {agent_id} or {run_id}", tmpl)
	}
	for _, f := range fields {
		switch f {
		case "{user_id}", "{agent_id}", "{run_id}":
		default:
			return transcript.InputErrorf(ErrInput, "scope template", "%q names %s: only {user_id}, {agent_id} and {run_id} are mem0's", tmpl, f)
		}
	}
	return nil
}

// readMem0 reads mem0's exported memories, {"results": [...]} or a bare array, into
// beliefs grouped by the scope tmpl makes of each, in the order the scopes first come.
// A memory that is not one (no text, no time, a field the template needs missing) is
// refused with its line.
func readMem0(r io.Reader, tmpl string, now time.Time) (*plan, error) {
	if err := checkTemplate(tmpl); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read the mem0 export: %w", err)
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	dec := json.NewDecoder(bytes.NewReader(data))
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:min(off, int64(len(data)))], []byte("\n")) }
	if err := openMemories(dec); err != nil {
		return nil, inputErrorf(lineAt(dec.InputOffset()), "is not a mem0 export: %v (mem0's get_all answers {\"results\": [...]}, or give the array)", err)
	}
	p := &plan{mem0: true}
	byName := map[string]*memory.ScopeImport{}
	for dec.More() {
		// The decoder stands before the separator; the memory starts after it.
		off := dec.InputOffset()
		line := lineAt(off + int64(leadingSpace(data[off:])))
		var m mem0Memory
		if err := dec.Decode(&m); err != nil {
			return nil, inputErrorf(line, "is not a mem0 memory: %v", err)
		}
		scope, b, err := m.belief(tmpl, now)
		if err != nil {
			return nil, inputErrorf(line, "mem0 memory %s: %v", m.name(), err)
		}
		sc := byName[scope]
		if sc == nil {
			sc = &memory.ScopeImport{Scope: scope}
			byName[scope] = sc
			p.scopes = append(p.scopes, sc)
		}
		b.ID, b.Line, b.Scope = int64(len(sc.Beliefs)+1), line, scope
		sc.Beliefs = append(sc.Beliefs, b)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
		return nil, inputErrorf(lineAt(dec.InputOffset()), "the list of memories does not end: the file was cut short")
	}
	if len(p.scopes) == 0 {
		return nil, inputErrorf(0, "the mem0 export holds no memory")
	}
	return p, nil
}

// leadingSpace counts the separators before the next value in b.
func leadingSpace(b []byte) int { return len(b) - len(bytes.TrimLeft(b, " \t\r\n,")) }

// openMemories moves dec into the list of memories: the array itself, or the "results"
// of an object (mem0's paginated envelope: count, next and previous are read past).
func openMemories(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == json.Delim('[') {
		return nil
	}
	if tok != json.Delim('{') {
		return errors.New("neither an object nor an array")
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		if key == "results" {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			if tok != json.Delim('[') {
				return errors.New(`"results" is not an array`)
			}
			return nil
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return errors.New(`the object has no "results"`)
}

// name is how an error names the memory: its mem0 id, when it has one.
func (m *mem0Memory) name() string {
	if id := idText(m.ID); id != "" {
		return strconv.Quote(id)
	}
	return "without an id"
}

// idText is a mem0 id (a string, or a number) as text; "" when absent or null.
func idText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// belief is the scope and the belief m becomes.
func (m *mem0Memory) belief(tmpl string, now time.Time) (string, memory.ExportedBelief, error) {
	var b memory.ExportedBelief
	scope, err := m.scope(tmpl)
	if err != nil {
		return "", b, err
	}
	if m.Memory == nil {
		return "", b, errors.New(`"memory" is missing`)
	}
	statement := strings.Join(strings.Fields(*m.Memory), " ")
	if err := checkLabel("memory", statement, memory.MaxStatementLen); err != nil {
		return "", b, err
	}
	if m.CreatedAt == nil {
		return "", b, errors.New(`"created_at" is missing`)
	}
	created, err := parseMem0Time("created_at", *m.CreatedAt)
	if err != nil {
		return "", b, err
	}
	seen := created
	if m.UpdatedAt != nil && *m.UpdatedAt != "" {
		if seen, err = parseMem0Time("updated_at", *m.UpdatedAt); err != nil {
			return "", b, err
		}
		seen = later(seen, created)
	}
	attribute := m.attribute()
	if err := checkLabel("category", attribute, memory.MaxLabelLen); err != nil {
		return "", b, err
	}
	b = memory.ExportedBelief{Type: memory.RecordBelief, Subject: mem0Subject, Entity: entity.Key(mem0Subject), Attribute: attribute, Kind: memory.KindOther,
		Statement: statement, Status: memory.StatusActive, Confidence: mem0Confidence, Origin: memory.OriginImported,
		ValidFrom: created, RecordedAt: created, LastSeenAt: seen, UpdatedAt: now.UTC().Truncate(time.Microsecond)}
	return scope, b, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// scope fills tmpl with m's ids.
func (m *mem0Memory) scope(tmpl string) (string, error) {
	var missing string
	scope := templateField.ReplaceAllStringFunc(tmpl, func(f string) string {
		raw := map[string]json.RawMessage{"{user_id}": m.UserID, "{agent_id}": m.AgentID, "{run_id}": m.RunID}[f]
		v := idText(raw)
		if v == "" && missing == "" {
			missing = strings.Trim(f, "{}")
		}
		return v
	})
	if missing != "" {
		return "", fmt.Errorf("has no %s, which the scope template %q needs", missing, tmpl)
	}
	if err := transcript.CheckScope("its scope", scope); err != nil {
		msg, _ := transcript.InputMessage(err)
		return "", fmt.Errorf("%s (%q)", msg, scope)
	}
	return scope, nil
}

// attribute is the slot a memory fills: its first category, or its metadata's.
func (m *mem0Memory) attribute() string {
	for _, c := range m.Categories {
		if c = strings.TrimSpace(c); c != "" {
			return c
		}
	}
	if c, ok := m.Metadata["category"].(string); ok && strings.TrimSpace(c) != "" {
		return strings.TrimSpace(c)
	}
	return mem0Attribute
}

// checkLabel refuses empty or overlong text, or text PostgreSQL cannot store.
func checkLabel(name, s string, maxLen int) error {
	switch {
	case s == "":
		return fmt.Errorf("%q is empty", name)
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		return fmt.Errorf("%q is not text (invalid UTF-8, or a NUL character)", name)
	case utf8.RuneCountInString(s) > maxLen:
		return fmt.Errorf("%q is %d characters; the limit is %d", name, utf8.RuneCountInString(s), maxLen)
	}
	return nil
}

// mem0Layouts are the times mem0 writes: Python's isoformat, with a zone (mem0 stores
// US/Pacific times) or, from some stores, without one, then read as UTC.
var mem0Layouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999", time.DateOnly}

func parseMem0Time(name, s string) (time.Time, error) {
	for _, layout := range mem0Layouts {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t.UTC().Truncate(time.Microsecond), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q %q is not a time (ISO 8601, as mem0 writes it)", name, s)
}
