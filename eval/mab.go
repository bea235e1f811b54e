package eval

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/credohq/credo/transcript"
)

// MemoryAgentBench (Hu et al., ICLR 2026, https://github.com/HUST-AI-HYZ/MemoryAgentBench;
// data on Hugging Face, ai-hyz/MemoryAgentBench) tests, in its Conflict_Resolution split,
// FactConsolidation: a long list of numbered facts, some later ones overwriting earlier
// ones ("the newer fact has larger serial number"), then questions about the current
// state, single-hop (factconsolidation_sh_*) or multi-hop (factconsolidation_mh_*). A row
// of the split is {context, questions, answers, metadata: {source, ...}}: context holds
// the facts, one "N. fact" a line; answers[i] lists the acceptable answers of
// questions[i]. The accuracy its paper reports is substring exact match (README,
// "Clarification on Evaluation Metrics").

// MAB splits of FactConsolidation.
const (
	MABSingleHop = "single-hop"
	MABMultiHop  = "multi-hop"
)

// MABScopePrefix starts the scope of every FactConsolidation row.
const MABScopePrefix = "mab:"

// DefaultMABFactsPerEpisode is how many facts one episode holds. One fact an episode
// would make factconsolidation_*_262k thousands of extraction calls; a few hundred an
// episode would make one prompt too long for a 7B model to extract every fact from,
// and put a fact and the one overwriting it in the same episode more often (they are
// then one statement apart in the prompt rather than in time). Twenty one-line facts
// are a few hundred tokens: one bounded call, in order.
const DefaultMABFactsPerEpisode = 20

// mabEpoch is when the first fact is said; fact N is said N minutes later, so that a
// later number is a later statement.
var mabEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// MABRow is one FactConsolidation row: its facts and its questions.
type MABRow struct {
	// Source is metadata.source, e.g. factconsolidation_sh_6k; Split MABSingleHop or
	// MABMultiHop.
	Source    string
	Split     string
	Facts     []MABFact
	Questions []MABQuestion
}

// Scope is the scope the row's facts are remembered in.
func (r MABRow) Scope() string { return MABScopePrefix + r.Source }

// MABFact is one numbered fact.
type MABFact struct {
	N    int
	Text string
}

// At is when the fact is said: a later number is a later statement.
func (f MABFact) At() time.Time { return mabEpoch.Add(time.Duration(f.N) * time.Minute) }

// MABQuestion is a question with its acceptable answers.
type MABQuestion struct {
	Index    int
	Question string
	Answers  []string
}

// Episodes are the row's facts as transcripts of up to perEpisode facts each, in order:
// each fact a user message dated by its number, the episode dated by its last fact.
func (r MABRow) Episodes(perEpisode int) []transcript.Transcript {
	if perEpisode < 1 {
		perEpisode = DefaultMABFactsPerEpisode
	}
	var out []transcript.Transcript
	for start := 0; start < len(r.Facts); start += perEpisode {
		batch := r.Facts[start:min(start+perEpisode, len(r.Facts))]
		at := batch[len(batch)-1].At()
		t := transcript.Transcript{Scope: r.Scope(), ID: fmt.Sprintf("facts_%d-%d", batch[0].N, batch[len(batch)-1].N), OccurredAt: &at}
		for _, f := range batch {
			fat := f.At()
			t.Messages = append(t.Messages, transcript.Message{Role: transcript.RoleUser, Content: f.Text, At: &fat})
		}
		out = append(out, t)
	}
	return out
}

// AskedAt is when the row's questions are asked: a day after its last fact.
func (r MABRow) AskedAt() time.Time {
	if len(r.Facts) == 0 {
		return mabEpoch
	}
	return r.Facts[len(r.Facts)-1].At().Add(24 * time.Hour)
}

var mabFactLine = regexp.MustCompile(`^(\d+)\. (.*)$`)

// MABFilter selects the rows and questions read: of Split only (both when empty), the
// first Limit questions of each row (all when 0).
type MABFilter struct {
	Split string
	Limit int
}

// mabItem is one row as the file writes it; source is at the top of rows that
// MemoryAgentBench's loader has processed, in metadata in the published ones.
type mabItem struct {
	Context   *string         `json:"context"`
	Questions json.RawMessage `json:"questions"`
	Answers   json.RawMessage `json:"answers"`
	Metadata  map[string]any  `json:"metadata"`
	Source    string          `json:"source"`
}

// ParseMAB reads the FactConsolidation rows of a MemoryAgentBench Conflict_Resolution
// file: a JSON array of rows, or JSON lines (as a Hugging Face dataset's to_json writes
// them). Rows of other sources are skipped. name is the file's name, for errors, which
// are *DataError.
func ParseMAB(name string, r io.Reader, f MABFilter) ([]MABRow, error) {
	if f.Split != "" && f.Split != MABSingleHop && f.Split != MABMultiHop {
		return nil, &DataError{Field: "split", Problem: fmt.Sprintf("%q is neither %s nor %s", f.Split, MABSingleHop, MABMultiHop)}
	}
	fail := func(item int, id, field, problem string) error {
		return &DataError{File: name, What: "row", Item: item, ID: id, Field: field, Problem: problem}
	}
	br := bufio.NewReaderSize(r, 1<<20)
	dec := json.NewDecoder(br)
	first, err := br.Peek(1)
	for err == nil && unicode.IsSpace(rune(first[0])) {
		br.ReadByte()
		first, err = br.Peek(1)
	}
	if err != nil {
		return nil, fail(0, "", "", "empty; a MemoryAgentBench file is a JSON array or JSON lines of rows")
	}
	array := first[0] == '['
	if array {
		if _, err := dec.Token(); err != nil {
			return nil, fail(0, "", "", "invalid JSON: "+err.Error())
		}
	}
	var out []MABRow
	// A row's source names its scope: two rows of one source would share a memory.
	seen := map[string]int{}
	for n := 1; dec.More(); n++ {
		var it mabItem
		if err := dec.Decode(&it); err != nil {
			return nil, fail(n, "", "", "invalid JSON: "+err.Error())
		}
		row, ok, err := it.row(n, f, fail)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if first, dup := seen[row.Source]; dup {
			return nil, fail(n, row.Source, "metadata.source", fmt.Sprintf("also the source of row %d", first))
		}
		seen[row.Source] = n
		out = append(out, row)
	}
	if len(out) == 0 {
		return nil, fail(0, "", "", "no FactConsolidation rows (metadata.source factconsolidation_sh_* or _mh_*) of the split asked")
	}
	return out, nil
}

func (it mabItem) row(n int, f MABFilter, fail func(int, string, string, string) error) (MABRow, bool, error) {
	var row MABRow
	source, _ := it.Metadata["source"].(string)
	source = strings.TrimSpace(cmp.Or(source, it.Source))
	switch {
	case strings.HasPrefix(source, "factconsolidation_sh"):
		row.Split = MABSingleHop
	case strings.HasPrefix(source, "factconsolidation_mh"):
		row.Split = MABMultiHop
	default:
		return row, false, nil // another task of the benchmark
	}
	if f.Split != "" && f.Split != row.Split {
		return row, false, nil
	}
	row.Source = source
	bad := func(field, problem string) (MABRow, bool, error) { return row, false, fail(n, source, field, problem) }
	if it.Context == nil {
		return bad("context", "missing")
	}
	for line := range strings.SplitSeq(*it.Context, "\n") {
		m := mabFactLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue // the preamble
		}
		num, err := strconv.Atoi(m[1])
		if err != nil {
			return bad("context", fmt.Sprintf("fact number %s is too large", m[1]))
		}
		if k := len(row.Facts); k > 0 && num <= row.Facts[k-1].N {
			return bad("context", fmt.Sprintf("fact %d follows fact %d: the numbers must grow", num, row.Facts[k-1].N))
		}
		if text := strings.TrimSpace(m[2]); text != "" {
			row.Facts = append(row.Facts, MABFact{N: num, Text: text})
		}
	}
	if len(row.Facts) == 0 {
		return bad("context", `no numbered facts: FactConsolidation's context holds one "N. fact" a line`)
	}
	var questions []string
	if err := json.Unmarshal(it.Questions, &questions); err != nil {
		var one string
		if json.Unmarshal(it.Questions, &one) != nil {
			return bad("questions", "not a list of questions")
		}
		questions = []string{one}
	}
	answers, err := mabAnswers(it.Answers)
	if err != nil {
		return bad("answers", err.Error())
	}
	if len(answers) != len(questions) {
		return bad("answers", fmt.Sprintf("%d answers for %d questions", len(answers), len(questions)))
	}
	for i, q := range questions {
		if f.Limit > 0 && i == f.Limit {
			break
		}
		if q = strings.TrimSpace(q); q == "" {
			return bad(fmt.Sprintf("questions[%d]", i), "is empty")
		}
		if len(answers[i]) == 0 {
			return bad(fmt.Sprintf("answers[%d]", i), "no acceptable answer")
		}
		row.Questions = append(row.Questions, MABQuestion{Index: i, Question: q, Answers: answers[i]})
	}
	return row, true, nil
}

// mabAnswers reads answers: a list, each item a list of acceptable answers or one.
func mabAnswers(raw json.RawMessage) ([][]string, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errors.New("not a list of answers")
	}
	out := make([][]string, len(items))
	for i, it := range items {
		var list []json.RawMessage
		if kindOf(it) == "an array" {
			if err := json.Unmarshal(it, &list); err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
		} else {
			list = []json.RawMessage{it}
		}
		for _, a := range list {
			s, ok := scalarText(a)
			if !ok {
				return nil, fmt.Errorf("[%d]: not a string or a number", i)
			}
			if s != "" {
				out[i] = append(out[i], s)
			}
		}
	}
	return out, nil
}

// MABMatch is how an answer matches the acceptable ones, as MemoryAgentBench scores it
// (utils/eval_other_utils.py): SubstringMatch (its accuracy for FactConsolidation) when
// a normalized acceptable answer is in the normalized answer, ExactMatch when equal;
// each also tried on the answer's parsed form (after "Answer:", or its first line).
type MABMatch struct {
	SubstringMatch bool
	ExactMatch     bool
}

// MatchMAB scores answer against the acceptable answers.
func MatchMAB(answer string, acceptable []string) MABMatch {
	var m MABMatch
	for _, pred := range []string{answer, parseMABOutput(answer)} {
		p := normalizeMABAnswer(pred)
		for _, gold := range acceptable {
			g := normalizeMABAnswer(gold)
			m.SubstringMatch = m.SubstringMatch || strings.Contains(p, g)
			m.ExactMatch = m.ExactMatch || p == g
		}
	}
	return m
}

var mabAnswerPrefix = regexp.MustCompile(`(?i)Answer:(.*)(?:\n|$)`)

// parseMABOutput is MemoryAgentBench's parse_output: what follows "Answer:" on its
// line, else the first line, trimmed.
func parseMABOutput(s string) string {
	if m := mabAnswerPrefix.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(m[1]), "Answer:"))
	}
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// asciiPunctuation is Python's string.punctuation.
const asciiPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// normalizeMABAnswer is MemoryAgentBench's normalize_answer: lowercased, ASCII
// punctuation removed, the articles a, an and the removed as words, spaces collapsed.
func normalizeMABAnswer(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if r < 128 && strings.ContainsRune(asciiPunctuation, r) {
			return -1
		}
		return r
	}, s)
	// Python's \b(a|an|the)\b, with Unicode word characters.
	isWord := func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	var b bytes.Buffer
	rs := []rune(s)
	for i := 0; i < len(rs); {
		if !isWord(rs[i]) {
			b.WriteRune(rs[i])
			i++
			continue
		}
		j := i
		for j < len(rs) && isWord(rs[j]) {
			j++
		}
		switch w := string(rs[i:j]); w {
		case "a", "an", "the":
			b.WriteByte(' ')
		default:
			b.WriteString(w)
		}
		i = j
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
