package eval

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/credohq/credo/transcript"
)

// LoCoMo (Maharana et al., ACL 2024, https://github.com/snap-research/locomo) is a set of
// long conversations between two people, each followed by questions with gold answers.
// Its public file, data/locomo10.json, holds 10 conversations of 19 to 32 dated sessions
// (272 in all) and 1,986 questions, 1,540 of them in categories 1 to 4.

// LoCoMo's question categories, as numbered in locomo10.json. The dataset does not name
// them; these names are those of its authors' evaluation code (task_eval/evaluation.py
// scores category 1 as multi-hop and 5 as adversarial, and asks category 2 for dates),
// and what the questions themselves show. Mem0's paper (arXiv 2504.19413) numbers them
// otherwise: its "single-hop" column is category 1, "multi-hop" 3 and "open-domain" 4
// (mem0ai/mem0#2609; its overall scores are the question-weighted means under that
// mapping). Compare categories by number, not by name.
const (
	LocomoMultiHop    = 1
	LocomoTemporal    = 2
	LocomoOpenDomain  = 3
	LocomoSingleHop   = 4
	LocomoAdversarial = 5
)

// LocomoCategories are the categories scored, in order; adversarial questions have no
// gold answer and are left out, as in the literature.
var LocomoCategories = []int{LocomoMultiHop, LocomoTemporal, LocomoOpenDomain, LocomoSingleHop}

// LocomoCategoryName names a category.
func LocomoCategoryName(c int) string {
	switch c {
	case LocomoMultiHop:
		return "multi-hop"
	case LocomoTemporal:
		return "temporal"
	case LocomoOpenDomain:
		return "open-domain"
	case LocomoSingleHop:
		return "single-hop"
	case LocomoAdversarial:
		return "adversarial"
	}
	return "category " + strconv.Itoa(c)
}

// LocomoScopePrefix starts the scope of every LoCoMo conversation.
const LocomoScopePrefix = "locomo:"

// LocomoSample is one conversation of a LoCoMo file with its questions.
type LocomoSample struct {
	ID string
	// Speakers are speaker_a and speaker_b, when the file names them.
	Speakers []string
	// Sessions are the sessions with at least one turn, in the order of their numbers.
	Sessions []LocomoSession
	// Questions are those of categories 1 to 4, in file order.
	Questions []LocomoQuestion
	// Adversarial counts the category 5 questions, left out: they have no gold answer.
	Adversarial int
}

// Scope is the scope the conversation is remembered in.
func (s LocomoSample) Scope() string { return LocomoScopePrefix + s.ID }

// LocomoSession is one session: a transcript of its own, dated.
type LocomoSession struct {
	// ID is the session's key, "session_N".
	ID string
	// DateTime is the date as the file writes it; At, the same parsed, in UTC.
	DateTime string
	At       time.Time
	Turns    []LocomoTurn
}

// LocomoTurn is one message of a session.
type LocomoTurn struct {
	Speaker string
	DiaID   string
	Text    string
	// Caption describes a photo the speaker shared (blip_caption), "" if none.
	Caption string
}

// Content is what the speaker said, with the shared photo's caption.
func (t LocomoTurn) Content() string {
	if t.Caption == "" {
		return t.Text
	}
	return strings.TrimSpace(t.Text + " [shares a photo: " + t.Caption + "]")
}

// Transcript is the session as credo enqueues it: every turn a user message named by its
// speaker, the session's date as occurred_at.
func (s LocomoSession) Transcript(scope string) transcript.Transcript {
	at := s.At
	t := transcript.Transcript{Scope: scope, ID: s.ID, OccurredAt: &at}
	for _, turn := range s.Turns {
		t.Messages = append(t.Messages, transcript.Message{Role: transcript.RoleUser, Name: turn.Speaker, Content: turn.Content()})
	}
	return t
}

// LocomoQuestion is a question with its gold answer.
type LocomoQuestion struct {
	// Index is the question's place in the sample's qa list, from 0.
	Index    int
	Question string
	// Answer is the gold answer as text; a number in the file is written as it was.
	Answer   string
	Category int
	// Evidence are the dia_ids of the turns that answer it ("D1:3"), as the file gives
	// them; empty when it gives none.
	Evidence []string
}

// LocomoError is a problem with a LoCoMo file: which sample, which field.
type LocomoError = DataError

// DataError is a problem with a benchmark's file: which item, which field.
type DataError struct {
	File string
	// What names the file's items ("sample", "question", "row"; "item" when empty), Item
	// is the item's place in the file, from 1; 0 for the file as a whole.
	What string
	Item int
	// ID is the item's id, when it has one.
	ID      string
	Field   string
	Problem string
}

// Error is "file: what n (id): field: problem", each part only when known.
func (e *DataError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File + ": ")
	}
	if e.Item > 0 {
		fmt.Fprintf(&b, "%s %d", cmp.Or(e.What, "item"), e.Item)
		if e.ID != "" {
			fmt.Fprintf(&b, " (%s)", e.ID)
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Problem)
	return b.String()
}

// MaxLocomoBytes bounds a LoCoMo file (locomo10.json is 2.8 MB).
const MaxLocomoBytes = 256 << 20

var (
	sessionKey = regexp.MustCompile(`^session_([0-9]+)$`)
	// locomoLayouts are the date formats read, tried in order on the date lowercased
	// with its spaces collapsed: LoCoMo writes "1:56 pm on 8 May, 2023".
	locomoLayouts = []string{
		"3:04 pm on 2 January, 2006", "3:04 pm on 2 January 2006", "3:04 pm on January 2, 2006",
		"3:04pm on 2 January, 2006", "3:04 pm, 2 January, 2006", "15:04 on 2 January, 2006",
		"3:04 pm on 2 Jan, 2006", "3:04 pm on 2 Jan 2006",
		"2 January, 2006", "2 January 2006", "January 2, 2006", "2 Jan, 2006", "2 Jan 2006",
	}
	isoLayouts = []string{time.RFC3339, "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"}
)

// ParseLocomoTime reads a session date such as "1:56 pm on 8 May, 2023", in UTC (the
// file gives no time zone). RFC 3339 and ISO dates are read too.
func ParseLocomoTime(s string) (time.Time, error) {
	v := strings.Join(strings.Fields(s), " ")
	for _, l := range isoLayouts {
		if t, err := time.ParseInLocation(l, v, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	// Go reads month names in any case, but "pm" only in the layout's case.
	low := strings.ToLower(v)
	for _, l := range locomoLayouts {
		if t, err := time.ParseInLocation(l, low, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date like \"1:56 pm on 8 May, 2023\"", s)
}

// ParseLocomo reads a LoCoMo file: a JSON array of samples, each with a sample_id, a
// conversation (speaker_a, speaker_b, session_N lists of turns and their
// session_N_date_time) and qa (question, answer, category; category 5 has an
// adversarial_answer instead; evidence, the turns that answer it, for the retrieval
// measurement). Fields it does not use (observations, summaries, events, image URLs) are
// ignored. name is the file's name, for errors, which are
// *LocomoError naming the sample and the field.
func ParseLocomo(name string, r io.Reader) ([]LocomoSample, error) {
	fileErr := func(problem string) error { return &LocomoError{File: name, Problem: problem} }
	data, err := io.ReadAll(io.LimitReader(r, MaxLocomoBytes+1))
	if err != nil {
		return nil, fileErr(err.Error())
	}
	if len(data) > MaxLocomoBytes {
		return nil, fileErr(fmt.Sprintf("larger than %d MiB", MaxLocomoBytes>>20))
	}
	data = bytes.TrimSpace(data)
	var raws []json.RawMessage
	switch {
	case len(data) == 0:
		return nil, fileErr("empty; a LoCoMo file is a JSON array of samples")
	case data[0] == '{': // one sample on its own
		raws = []json.RawMessage{data}
		if !json.Valid(data) {
			return nil, fileErr("invalid JSON: " + jsonProblem(data))
		}
	case data[0] == '[':
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, fileErr("invalid JSON: " + jsonProblem(data))
		}
	default:
		return nil, fileErr("not a LoCoMo file: it must be a JSON array of samples")
	}
	if len(raws) == 0 {
		return nil, fileErr("no samples")
	}
	out := make([]LocomoSample, 0, len(raws))
	seen := map[string]int{}
	now := time.Now()
	for i, raw := range raws {
		p := &sampleParser{file: name, n: i + 1}
		s, err := p.parse(raw, now)
		if err != nil {
			return nil, err
		}
		if first, ok := seen[s.ID]; ok {
			return nil, p.fail("sample_id", fmt.Sprintf("%q is also the id of sample %d", s.ID, first))
		}
		seen[s.ID] = i + 1
		out = append(out, s)
	}
	return out, nil
}

func jsonProblem(data []byte) string {
	var v any
	err := json.Unmarshal(data, &v)
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte{'\n'})
		return fmt.Sprintf("line %d: %v", line, se)
	}
	if err != nil {
		return err.Error()
	}
	return "unexpected structure"
}

type sampleParser struct {
	file string
	n    int
	id   string
}

func (p *sampleParser) fail(field, problem string) error {
	return &LocomoError{File: p.file, What: "sample", Item: p.n, ID: p.id, Field: field, Problem: problem}
}

func (p *sampleParser) parse(raw json.RawMessage, now time.Time) (LocomoSample, error) {
	var s LocomoSample
	top, err := p.object(raw, "")
	if err != nil {
		return s, err
	}
	idRaw, ok := top["sample_id"]
	if !ok || isNull(idRaw) {
		return s, p.fail("sample_id", "missing")
	}
	if s.ID, err = p.text(idRaw, "sample_id", true); err != nil {
		return s, err
	}
	if s.ID = strings.TrimSpace(s.ID); s.ID == "" {
		return s, p.fail("sample_id", "is empty")
	}
	p.id = s.ID
	convRaw, ok := top["conversation"]
	if !ok || isNull(convRaw) {
		return s, p.fail("conversation", "missing")
	}
	conv, err := p.object(convRaw, "conversation")
	if err != nil {
		return s, err
	}
	for _, k := range []string{"speaker_a", "speaker_b"} {
		if v, ok := conv[k]; ok && !isNull(v) {
			name, err := p.text(v, "conversation."+k, false)
			if err != nil {
				return s, err
			}
			s.Speakers = append(s.Speakers, name)
		}
	}
	if s.Sessions, err = p.sessions(conv, s.Scope(), now); err != nil {
		return s, err
	}
	if qaRaw, ok := top["qa"]; ok && !isNull(qaRaw) {
		if s.Questions, s.Adversarial, err = p.questions(qaRaw); err != nil {
			return s, err
		}
	}
	return s, nil
}

// sessions reads the session_N lists in the order of N; a date without a session
// (locomo10.json has some) is ignored, a session without a date is an error.
func (p *sampleParser) sessions(conv map[string]json.RawMessage, scope string, now time.Time) ([]LocomoSession, error) {
	type key struct {
		name string
		n    int
	}
	var keys []key
	for k := range conv {
		if m := sessionKey.FindStringSubmatch(k); m != nil {
			n, err := strconv.Atoi(m[1])
			if err != nil {
				return nil, p.fail("conversation."+k, "the session number is too large")
			}
			keys = append(keys, key{k, n})
		}
	}
	slices.SortFunc(keys, func(a, b key) int { return a.n - b.n })
	var out []LocomoSession
	for _, k := range keys {
		field := "conversation." + k.name
		raw := conv[k.name]
		if isNull(raw) {
			continue
		}
		if kindOf(raw) != "an array" {
			return nil, p.fail(field, "is "+kindOf(raw)+", not a list of turns")
		}
		var turnsRaw []json.RawMessage
		if err := json.Unmarshal(raw, &turnsRaw); err != nil {
			return nil, p.fail(field, err.Error())
		}
		ses := LocomoSession{ID: k.name}
		for i, tr := range turnsRaw {
			turn, err := p.turn(tr, fmt.Sprintf("%s[%d]", field, i))
			if err != nil {
				return nil, err
			}
			if strings.TrimSpace(turn.Content()) != "" {
				ses.Turns = append(ses.Turns, turn)
			}
		}
		if len(ses.Turns) == 0 {
			continue
		}
		dateField := field + "_date_time"
		dateRaw, ok := conv[k.name+"_date_time"]
		if !ok || isNull(dateRaw) {
			return nil, p.fail(dateField, "missing; every session needs its date")
		}
		var err error
		if ses.DateTime, err = p.text(dateRaw, dateField, false); err != nil {
			return nil, err
		}
		if ses.At, err = ParseLocomoTime(ses.DateTime); err != nil {
			return nil, p.fail(dateField, err.Error())
		}
		// What enqueue would refuse (a speaker name too long, a date in the future, too
		// many turns) is bad input, found before any work.
		if err := ses.Transcript(scope).Validate(now, transcript.Limits{}); err != nil {
			return nil, p.fail(field, "not a valid transcript: "+err.Error())
		}
		out = append(out, ses)
	}
	if len(out) == 0 {
		return nil, p.fail("conversation", "no sessions: a LoCoMo conversation has session_1, session_2, ... lists of turns, each with its session_N_date_time")
	}
	return out, nil
}

func (p *sampleParser) turn(raw json.RawMessage, field string) (LocomoTurn, error) {
	var t LocomoTurn
	obj, err := p.object(raw, field)
	if err != nil {
		return t, err
	}
	if t.Speaker, err = p.optText(obj, "speaker", field, false); err != nil {
		return t, err
	}
	if t.Speaker = strings.TrimSpace(t.Speaker); t.Speaker == "" {
		return t, p.fail(field+".speaker", "missing")
	}
	if t.Text, err = p.optText(obj, "text", field, false); err != nil {
		return t, err
	}
	if t.DiaID, err = p.optText(obj, "dia_id", field, true); err != nil {
		return t, err
	}
	if t.Caption, err = p.optText(obj, "blip_caption", field, false); err != nil {
		return t, err
	}
	t.Text, t.Caption = strings.TrimSpace(t.Text), strings.Join(strings.Fields(t.Caption), " ")
	return t, nil
}

// questions reads qa: the questions of categories 1 to 4, and how many of category 5
// were left out.
func (p *sampleParser) questions(raw json.RawMessage) ([]LocomoQuestion, int, error) {
	if kindOf(raw) != "an array" {
		return nil, 0, p.fail("qa", "is "+kindOf(raw)+", not a list of questions")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, 0, p.fail("qa", err.Error())
	}
	var (
		out         []LocomoQuestion
		adversarial int
	)
	for i, item := range items {
		field := fmt.Sprintf("qa[%d]", i)
		obj, err := p.object(item, field)
		if err != nil {
			return nil, 0, err
		}
		catRaw, ok := obj["category"]
		if !ok || isNull(catRaw) {
			return nil, 0, p.fail(field+".category", "missing")
		}
		cat, err := p.category(catRaw, field+".category")
		if err != nil {
			return nil, 0, err
		}
		if cat == LocomoAdversarial {
			adversarial++
			continue
		}
		q := LocomoQuestion{Index: i, Category: cat}
		if q.Question, err = p.optText(obj, "question", field, false); err != nil {
			return nil, 0, err
		}
		if q.Question = strings.TrimSpace(q.Question); q.Question == "" {
			return nil, 0, p.fail(field+".question", "missing")
		}
		ansRaw, ok := obj["answer"]
		if !ok || isNull(ansRaw) {
			return nil, 0, p.fail(field+".answer", fmt.Sprintf("missing; a question of category %d needs its gold answer", cat))
		}
		if q.Answer, err = p.answer(ansRaw, field+".answer"); err != nil {
			return nil, 0, err
		}
		q.Evidence = evidenceOf(obj["evidence"])
		out = append(out, q)
	}
	return out, adversarial, nil
}

// diaID is a turn's id as evidence names it.
var diaID = regexp.MustCompile(`D[0-9]+:[0-9]+`)

// evidenceOf reads a question's evidence: a list of dia_ids, some of which locomo10.json
// writes several to a string ("D8:6; D9:17"). Anything else is no evidence: it serves
// only the retrieval measurement, never the answers.
func evidenceOf(raw json.RawMessage) []string {
	var items []string
	if len(raw) == 0 || json.Unmarshal(raw, &items) != nil {
		return nil
	}
	var out []string
	for _, it := range items {
		for _, id := range diaID.FindAllString(it, -1) {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

func (p *sampleParser) category(raw json.RawMessage, field string) (int, error) {
	s, err := p.text(raw, field, true)
	if err != nil {
		return 0, err
	}
	c, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || c < 1 || c > 5 {
		return 0, p.fail(field, s+" is not a category from 1 to 5")
	}
	return c, nil
}

// answer reads a gold answer: a string, a number (2022), a boolean, or a list of them.
func (p *sampleParser) answer(raw json.RawMessage, field string) (string, error) {
	var a string
	if kindOf(raw) == "an array" {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return "", p.fail(field, err.Error())
		}
		parts := make([]string, 0, len(items))
		for i, it := range items {
			s, err := p.scalar(it, fmt.Sprintf("%s[%d]", field, i))
			if err != nil {
				return "", err
			}
			if s = strings.TrimSpace(s); s != "" {
				parts = append(parts, s)
			}
		}
		a = strings.Join(parts, ", ")
	} else {
		s, err := p.scalar(raw, field)
		if err != nil {
			return "", err
		}
		a = s
	}
	if a = strings.Join(strings.Fields(a), " "); a == "" {
		return "", p.fail(field, "is empty")
	}
	return a, nil
}

// scalar is a string, a number or a boolean as text.
func (p *sampleParser) scalar(raw json.RawMessage, field string) (string, error) {
	if k := kindOf(raw); k == "a boolean" {
		return string(raw), nil
	}
	return p.text(raw, field, true)
}

// text reads a string, or with numbers also a JSON number, written as in the file.
func (p *sampleParser) text(raw json.RawMessage, field string, numbers bool) (string, error) {
	switch k := kindOf(raw); {
	case k == "a string":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", p.fail(field, err.Error())
		}
		return s, nil
	case k == "a number" && numbers:
		return string(raw), nil
	default:
		want := "a string"
		if numbers {
			want = "a string or a number"
		}
		return "", p.fail(field, "is "+k+", not "+want)
	}
}

// optText reads obj[key] as text, "" when absent or null.
func (p *sampleParser) optText(obj map[string]json.RawMessage, key, field string, numbers bool) (string, error) {
	raw, ok := obj[key]
	if !ok || isNull(raw) {
		return "", nil
	}
	return p.text(raw, field+"."+key, numbers)
}

func (p *sampleParser) object(raw json.RawMessage, field string) (map[string]json.RawMessage, error) {
	if k := kindOf(raw); k != "an object" {
		if field == "" {
			return nil, p.fail("", "is "+k+", not a sample object")
		}
		return nil, p.fail(field, "is "+k+", not an object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, p.fail(field, err.Error())
	}
	return m, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// kindOf names the JSON type of raw, for errors.
func kindOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
