package transfer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/credohq/credo/entity"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
)

// What a mem0 memory becomes (docs/api.md, "From mem0"): a belief of origin imported
// about the user, or about the assistant when mem0 kept it as the agent's, its entity
// the subject's as the engine resolves it, holding from when mem0 last wrote its text.
// mem0 keeps no confidence, slot or kind: the confidence is mem0Confidence, the slot the
// memory's first category (else its metadata's category, else mem0Attribute), the kind
// other.
const (
	mem0Confidence = 0.9
	mem0Attribute  = "general"
	mem0Subject    = "user"
	// mem0Agent is the subject of the memories mem0 keeps for an agent ("Assistant
	// should answer in Spanish"): what the assistant does is not a fact about the user.
	mem0Agent = "assistant"
)

// DefaultScopeTemplate is the scope of a mem0 memory when no template is given.
const DefaultScopeTemplate = "user:{user_id}"

// mem0Memory is one memory of mem0's get_all (or its export): the fields credo keeps.
// Others (hash, score, actor_id...) are read past.
type mem0Memory struct {
	ID             json.RawMessage `json:"id"`
	Memory         *string         `json:"memory"`
	UserID         json.RawMessage `json:"user_id"`
	AgentID        json.RawMessage `json:"agent_id"`
	AppID          json.RawMessage `json:"app_id"`
	RunID          json.RawMessage `json:"run_id"`
	Role           *string         `json:"role"`
	CreatedAt      *string         `json:"created_at"`
	UpdatedAt      *string         `json:"updated_at"`
	ExpirationDate *string         `json:"expiration_date"`
	Metadata       map[string]any  `json:"metadata"`
	Categories     []string        `json:"categories"`
}

// mem0IDs are the ids mem0 scopes a memory by, as a template names them.
var mem0IDs = []string{"{user_id}", "{agent_id}", "{app_id}", "{run_id}"}

// ids is m's ids by the template field they fill.
func (m *mem0Memory) ids() map[string]json.RawMessage {
	return map[string]json.RawMessage{"{user_id}": m.UserID, "{agent_id}": m.AgentID, "{app_id}": m.AppID, "{run_id}": m.RunID}
}

// templateField finds the fields of a scope template.
var templateField = regexp.MustCompile(`\{[^{}]*\}`)

// checkTemplate refuses a template that names a field mem0 has not. A template without
// a field is one scope for every memory: mem0's get_all for one user lists its
// memories without their user_id.
func checkTemplate(tmpl string) error {
	for _, f := range templateField.FindAllString(tmpl, -1) {
		if !slices.Contains(mem0IDs, f) {
			return transcript.InputErrorf(ErrInput, "scope template", "%q names %s: mem0's ids are %s", tmpl, f, strings.Join(mem0IDs, ", "))
		}
	}
	if !templateField.MatchString(tmpl) {
		if err := transcript.CheckScope("scope template", tmpl); err != nil {
			msg, _ := transcript.InputMessage(err)
			return transcript.InputErrorf(ErrInput, "", "%s", msg)
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
	object, err := openMemories(dec)
	if err != nil {
		return nil, envelopeError(lineAt(dec.InputOffset()), err)
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
	if object {
		if err := closeMemories(dec); err != nil {
			return nil, envelopeError(lineAt(dec.InputOffset()), err)
		}
	}
	if len(p.scopes) == 0 {
		return nil, inputErrorf(0, "the mem0 export holds no memory")
	}
	return p, nil
}

// envelopeError is what is wrong around the memories, on line.
func envelopeError(line int, err error) error {
	if rel, ok := errors.AsType[relationsError](err); ok {
		return inputErrorf(line, "%v", rel)
	}
	return inputErrorf(line, "is not a mem0 export: %v (mem0's get_all answers {\"results\": [...]}, or give the array)", err)
}

// relationsError is an export that holds graph relations.
type relationsError struct{ n int }

func (e relationsError) Error() string {
	n := "graph relations"
	if e.n > 0 {
		n = fmt.Sprintf("%d graph relations", e.n)
	}
	return fmt.Sprintf(`"relations" holds %s (mem0's graph memory): credo imports memories, not relations, and drops nothing `+
		`without a word; export the memories without the graph (enable_graph off) or remove "relations" to import the memories alone`, n)
}

// leadingSpace counts the separators before the next value in b.
func leadingSpace(b []byte) int { return len(b) - len(bytes.TrimLeft(b, " \t\r\n,")) }

// openMemories moves dec into the list of memories: the array itself, or the "results"
// of an object (mem0's paginated envelope), then object is true and closeMemories reads
// the keys after it.
func openMemories(dec *json.Decoder) (object bool, err error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	if tok == json.Delim('[') {
		return false, nil
	}
	if tok != json.Delim('{') {
		return false, errors.New("neither an object nor an array")
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return true, err
		}
		if key == "results" {
			tok, err := dec.Token()
			if err != nil {
				return true, err
			}
			if tok != json.Delim('[') {
				return true, errors.New(`"results" is not an array`)
			}
			return true, nil
		}
		if err := readPast(dec, key); err != nil {
			return true, err
		}
	}
	return true, errors.New(`the object has no "results"`)
}

// closeMemories reads the keys of the envelope after "results", and its end.
func closeMemories(dec *json.Decoder) error {
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		if err := readPast(dec, key); err != nil {
			return err
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return errors.New("the object does not end: the file was cut short")
	}
	return nil
}

// readPast reads the value of an envelope's key other than "results": count, next and
// previous say nothing about a memory; "relations" (graph memory, which mem0's v1.1
// get_all adds, empty since its v3) is refused unless empty, never dropped.
func readPast(dec *json.Decoder, key any) error {
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if key != "relations" {
		return nil
	}
	var rels []json.RawMessage
	if err := json.Unmarshal(v, &rels); err != nil {
		return relationsError{}
	}
	if len(rels) > 0 {
		return relationsError{n: len(rels)}
	}
	return nil
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
	// mem0 rewrites a memory's text in place when it learns better ("Lives in San
	// Francisco" becomes "Moved to Seattle"), and stamps updated_at: the text as
	// exported holds, and was recorded, from then.
	since := created
	if m.UpdatedAt != nil && *m.UpdatedAt != "" {
		updated, err := parseMem0Time("updated_at", *m.UpdatedAt)
		if err != nil {
			return "", b, err
		}
		since = later(updated, created)
	}
	attribute := m.attribute()
	if err := checkLabel("category", attribute, memory.MaxLabelLen); err != nil {
		return "", b, err
	}
	expires, expiring, err := m.expires()
	if err != nil {
		return "", b, err
	}
	expired := expiring && !expires.After(now)
	note, err := m.note(expiring && !expired)
	if err != nil {
		return "", b, err
	}
	var quote *string
	if note != "" {
		quote = &note
	}
	subject := mem0Subject
	if m.agents() {
		subject = mem0Agent
	}
	b = memory.ExportedBelief{Type: memory.RecordBelief, Subject: subject, Entity: entity.Key(subject), Attribute: attribute, Kind: memory.KindOther,
		Statement: statement, Status: memory.StatusActive, Confidence: mem0Confidence, Origin: memory.OriginImported, Quote: quote,
		ValidFrom: since, RecordedAt: since, LastSeenAt: since, UpdatedAt: now.UTC().Truncate(time.Microsecond)}
	if expired {
		// mem0 hides an expired memory from its reads and keeps it: here it is history,
		// retracted when it expired, never current.
		until, retired := later(expires, since), later(expires, since) // two pointers, one time
		b.Status, b.ValidUntil, b.RetiredAt = memory.StatusRetracted, &until, &retired
	}
	return scope, b, nil
}

// agents says whether m is a memory mem0 keeps for an agent rather than about the user:
// one an assistant's message made (role), or one scoped by an agent and no user.
func (m *mem0Memory) agents() bool {
	if m.Role != nil {
		return strings.EqualFold(strings.TrimSpace(*m.Role), "assistant")
	}
	return idText(m.AgentID) != "" && idText(m.UserID) == ""
}

// expires is when m stops holding: the end of its expiration_date (mem0 shows a memory
// through that day); ok is false when it has none.
func (m *mem0Memory) expires() (t time.Time, ok bool, err error) {
	if m.ExpirationDate == nil || strings.TrimSpace(*m.ExpirationDate) == "" {
		return time.Time{}, false, nil
	}
	if t, err = parseMem0Time("expiration_date", *m.ExpirationDate); err != nil {
		return time.Time{}, false, err
	}
	if _, err := time.Parse(time.DateOnly, strings.TrimSpace(*m.ExpirationDate)); err == nil {
		t = t.AddDate(0, 0, 1)
	}
	return t, true, nil
}

// note is what m holds beyond a belief's fields, kept as the belief's quote (an
// imported belief has no words of the user to quote): its metadata but the category,
// and its expiration when still to come. "" when there is none.
func (m *mem0Memory) note(toCome bool) (string, error) {
	var parts []string
	meta := map[string]any{}
	for k, v := range m.Metadata {
		if k != "category" {
			meta[k] = v
		}
	}
	if len(meta) > 0 {
		raw, err := json.Marshal(meta) // keys sorted: one memory, one note
		if err != nil {
			return "", fmt.Errorf(`"metadata": %w`, err)
		}
		parts = append(parts, "mem0 metadata "+string(raw))
	}
	if toCome {
		parts = append(parts, "mem0 expiration_date "+strings.TrimSpace(*m.ExpirationDate))
	}
	if len(parts) == 0 {
		return "", nil
	}
	note := strings.Join(parts, "; ")
	if err := checkLabel("metadata", note, memory.MaxQuoteLen); err != nil {
		return "", err
	}
	return note, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// scope fills tmpl with m's ids. An id fills one level of the scope: one that would
// make levels of its own ("/", "." or "..") is refused, as any scope that is not one.
func (m *mem0Memory) scope(tmpl string) (string, error) {
	var problem error
	ids := m.ids()
	scope := templateField.ReplaceAllStringFunc(tmpl, func(f string) string {
		v := idText(ids[f])
		name := strings.Trim(f, "{}")
		switch {
		case problem != nil:
		case v == "":
			problem = fmt.Errorf("has no %s, which the scope template %q needs (mem0's get_all lists memories without the ids it was "+
				"filtered by: give the scope, e.g. --scope-template 'user:alex')", name, tmpl)
		case strings.Contains(v, "/") || v == "." || v == "..":
			problem = fmt.Errorf("%s %q is not one level of a scope (\"/\" separates a scope's levels; \".\" and \"..\" name none)", name, v)
		}
		return v
	})
	if problem != nil {
		return "", problem
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
