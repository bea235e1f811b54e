package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/credohq/credo/transcript"
)

// LongMemEval (Wu et al., ICLR 2025, https://github.com/xiaowu0162/LongMemEval) asks 500
// questions, each over its own history of dated user-assistant chat sessions. Its
// files (longmemeval_s.json, _m, _oracle) are JSON arrays of questions with question_id,
// question_type, question, answer, question_date, haystack_session_ids, haystack_dates,
// haystack_sessions (lists of turns {role, content, has_answer}) and
// answer_session_ids. A question_id ending in "_abs" is an abstention question: the
// history does not hold its answer, which the model should say.

// LongMemEval's question types, knowledge-update first: the type about revision.
const (
	LongMemEvalKnowledgeUpdate         = "knowledge-update"
	LongMemEvalSingleSessionUser       = "single-session-user"
	LongMemEvalSingleSessionAssistant  = "single-session-assistant"
	LongMemEvalSingleSessionPreference = "single-session-preference"
	LongMemEvalTemporalReasoning       = "temporal-reasoning"
	LongMemEvalMultiSession            = "multi-session"
)

// LongMemEvalTypes are the question types in the order reports list them.
var LongMemEvalTypes = []string{LongMemEvalKnowledgeUpdate, LongMemEvalSingleSessionUser,
	LongMemEvalSingleSessionAssistant, LongMemEvalSingleSessionPreference, LongMemEvalTemporalReasoning,
	LongMemEvalMultiSession}

// LongMemEvalScopePrefix starts the scope of every LongMemEval question's history.
const LongMemEvalScopePrefix = "longmemeval:"

// longMemEvalDateLayouts are LongMemEval's dates, "2023/05/20 (Sat) 02:21", and plainer.
var longMemEvalDateLayouts = []string{"2006/01/02 (Mon) 15:04", "2006/01/02 15:04", "2006/01/02"}

// ParseLongMemEvalTime reads a LongMemEval date, in UTC (the files give no zone).
func ParseLongMemEvalTime(s string) (time.Time, error) {
	v := strings.Join(strings.Fields(s), " ")
	for _, l := range longMemEvalDateLayouts {
		if t, err := time.ParseInLocation(l, v, time.UTC); err == nil {
			return t, nil
		}
	}
	for _, l := range isoLayouts {
		if t, err := time.ParseInLocation(l, v, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date like \"2023/05/20 (Sat) 02:21\"", s)
}

// LongMemEvalQuestion is one question with its history.
type LongMemEvalQuestion struct {
	ID       string
	Type     string
	Question string
	// Answer is the gold answer as text; a number in the file is written as it was.
	Answer string
	// Date is the question's date as the file writes it; At, the same parsed.
	Date string
	At   time.Time
	// Abstention says the history does not hold the answer (the id ends in "_abs").
	Abstention bool
	// Sessions are the history's sessions with at least one turn, in file order.
	Sessions         []LongMemEvalSession
	AnswerSessionIDs []string
}

// Scope is the scope the question's history is remembered in.
func (q LongMemEvalQuestion) Scope() string { return LongMemEvalScopePrefix + q.ID }

// LongMemEvalSession is one session of a history.
type LongMemEvalSession struct {
	ID    string
	Date  string
	At    time.Time
	Turns []LongMemEvalTurn
}

// LongMemEvalTurn is one message.
type LongMemEvalTurn struct {
	Role      string
	Content   string
	HasAnswer bool
}

// Tokens estimates the session's tokens, 4 bytes a token: what one extraction prompt
// carries of it, beside the instructions and the candidate beliefs.
func (s LongMemEvalSession) Tokens() int {
	n := 0
	for _, t := range s.Turns {
		n += approxTokens(t.Content)
	}
	return n
}

// Transcript is the session as credo enqueues it: its turns as user and assistant
// messages, its date as occurred_at.
func (s LongMemEvalSession) Transcript(scope string) transcript.Transcript {
	at := s.At
	t := transcript.Transcript{Scope: scope, ID: s.ID, OccurredAt: &at}
	for _, turn := range s.Turns {
		t.Messages = append(t.Messages, transcript.Message{Role: turn.Role, Content: turn.Content})
	}
	return t
}

// LongMemEvalFilter selects the questions read: of Types only (all when empty), the
// first Limit of them (all when 0).
type LongMemEvalFilter struct {
	Types []string
	Limit int
}

// longMemEvalItem is one question as the file writes it.
type longMemEvalItem struct {
	QuestionID       *string             `json:"question_id"`
	QuestionType     *string             `json:"question_type"`
	Question         *string             `json:"question"`
	Answer           json.RawMessage     `json:"answer"`
	QuestionDate     *string             `json:"question_date"`
	SessionIDs       []string            `json:"haystack_session_ids"`
	Dates            []string            `json:"haystack_dates"`
	Sessions         [][]longMemEvalTurn `json:"haystack_sessions"`
	AnswerSessionIDs []json.RawMessage   `json:"answer_session_ids"`
}

type longMemEvalTurn struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	HasAnswer bool   `json:"has_answer"`
}

// ParseLongMemEval reads a LongMemEval file, one question at a time (longmemeval_m.json
// is gigabytes): those f selects. name is the file's name, for errors, which are
// *DataError naming the question and the field.
func ParseLongMemEval(name string, r io.Reader, f LongMemEvalFilter) ([]LongMemEvalQuestion, error) {
	for _, t := range f.Types {
		if !slices.Contains(LongMemEvalTypes, t) {
			return nil, &DataError{Field: "types", Problem: fmt.Sprintf("%q is not a LongMemEval question type (%s)", t, strings.Join(LongMemEvalTypes, ", "))}
		}
	}
	fail := func(item int, id, field, problem string) error {
		return &DataError{File: name, What: "question", Item: item, ID: id, Field: field, Problem: problem}
	}
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('[') {
		return nil, fail(0, "", "", "not a LongMemEval file: it must be a JSON array of questions")
	}
	var out []LongMemEvalQuestion
	seen := map[string]int{}
	now := time.Now()
	for n := 1; dec.More(); n++ {
		var it longMemEvalItem
		if err := dec.Decode(&it); err != nil {
			return nil, fail(n, "", "", "invalid JSON: "+err.Error())
		}
		q, err := it.question(n, now, fail)
		if err != nil {
			return nil, err
		}
		if first, ok := seen[q.ID]; ok {
			return nil, fail(n, q.ID, "question_id", fmt.Sprintf("also the id of question %d", first))
		}
		seen[q.ID] = n
		if len(f.Types) > 0 && !slices.Contains(f.Types, q.Type) {
			continue
		}
		out = append(out, q)
		if f.Limit > 0 && len(out) == f.Limit {
			return out, nil
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, fail(0, "", "", "invalid JSON: "+err.Error())
	}
	if len(out) == 0 {
		return nil, fail(0, "", "", "no questions (of the types asked)")
	}
	return out, nil
}

func (it longMemEvalItem) question(n int, now time.Time, fail func(int, string, string, string) error) (LongMemEvalQuestion, error) {
	var q LongMemEvalQuestion
	if it.QuestionID == nil || strings.TrimSpace(*it.QuestionID) == "" {
		return q, fail(n, "", "question_id", "missing")
	}
	q.ID = strings.TrimSpace(*it.QuestionID)
	q.Abstention = strings.HasSuffix(q.ID, "_abs")
	bad := func(field, problem string) (LongMemEvalQuestion, error) { return q, fail(n, q.ID, field, problem) }
	if it.QuestionType == nil || !slices.Contains(LongMemEvalTypes, *it.QuestionType) {
		return bad("question_type", "missing or not one of "+strings.Join(LongMemEvalTypes, ", "))
	}
	q.Type = *it.QuestionType
	if it.Question == nil || strings.TrimSpace(*it.Question) == "" {
		return bad("question", "missing")
	}
	q.Question = strings.TrimSpace(*it.Question)
	answer, ok := scalarText(it.Answer)
	if !ok || answer == "" {
		return bad("answer", "missing, or not a string or a number")
	}
	q.Answer = answer
	if it.QuestionDate == nil {
		return bad("question_date", "missing")
	}
	var err error
	q.Date = *it.QuestionDate
	if q.At, err = ParseLongMemEvalTime(q.Date); err != nil {
		return bad("question_date", err.Error())
	}
	if len(it.Dates) != len(it.Sessions) || (it.SessionIDs != nil && len(it.SessionIDs) != len(it.Sessions)) {
		return bad("haystack_sessions", fmt.Sprintf("%d sessions, %d dates and %d ids: one each", len(it.Sessions), len(it.Dates), len(it.SessionIDs)))
	}
	for _, raw := range it.AnswerSessionIDs {
		if id, ok := scalarText(raw); ok {
			q.AnswerSessionIDs = append(q.AnswerSessionIDs, id)
		}
	}
	for i, turns := range it.Sessions {
		field := fmt.Sprintf("haystack_sessions[%d]", i)
		s := LongMemEvalSession{ID: fmt.Sprintf("session_%d", i+1), Date: it.Dates[i]}
		if it.SessionIDs != nil && it.SessionIDs[i] != "" {
			s.ID = it.SessionIDs[i]
		}
		if s.At, err = ParseLongMemEvalTime(s.Date); err != nil {
			return bad(fmt.Sprintf("haystack_dates[%d]", i), err.Error())
		}
		for j, t := range turns {
			if t.Role != transcript.RoleUser && t.Role != transcript.RoleAssistant {
				return bad(fmt.Sprintf("%s[%d].role", field, j), fmt.Sprintf("%q is neither user nor assistant", t.Role))
			}
			if t.Content = strings.TrimSpace(t.Content); t.Content != "" {
				s.Turns = append(s.Turns, LongMemEvalTurn(t))
			}
		}
		if len(s.Turns) == 0 {
			continue
		}
		// What enqueue would refuse is bad input, found before any work.
		if err := s.Transcript(q.Scope()).Validate(now, transcript.Limits{}); err != nil {
			return bad(field, "not a valid transcript: "+err.Error())
		}
		q.Sessions = append(q.Sessions, s)
	}
	if len(q.Sessions) == 0 {
		return bad("haystack_sessions", "no session with a turn")
	}
	// longmemeval_oracle.json does not sort them.
	slices.SortStableFunc(q.Sessions, func(a, b LongMemEvalSession) int { return a.At.Compare(b.At) })
	return q, nil
}

// scalarText is a JSON string or number as text, spaces collapsed.
func scalarText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	switch kindOf(raw) {
	case "a string":
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return strings.Join(strings.Fields(s), " "), true
	case "a number":
		return string(raw), true
	}
	return "", false
}
