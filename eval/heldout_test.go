package eval_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/eval"
	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
)

// heldOut is the held-out set and its labels, by scenario name.
func heldOut(t *testing.T) ([]eval.Scenario, []eval.Labels, map[string]eval.Labels) {
	t.Helper()
	scenarios, labels, err := eval.HeldOut()
	require.NoError(t, err)
	by := map[string]eval.Labels{}
	for _, l := range labels {
		by[l.Scenario] = l
	}
	return scenarios, labels, by
}

// ownText is what the user said as their own in t: their messages without quoted
// lines ("> "), fenced blocks or forwarded messages. Everything else of t is a
// document.
func ownText(t eval.Transcript) string {
	var b strings.Builder
	for _, m := range t.Messages {
		if m.Role != "user" {
			continue
		}
		fenced, forwarded := false, false
		for line := range strings.SplitSeq(m.Content, "\n") {
			trimmed := strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(trimmed, "```"):
				fenced = !fenced
				continue
			case strings.Contains(strings.ToLower(trimmed), "forwarded message"):
				forwarded = !strings.Contains(strings.ToLower(trimmed), "end of forwarded")
				continue
			}
			if fenced || forwarded || strings.HasPrefix(trimmed, ">") {
				continue
			}
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// documents is the text of t the user did not say as their own, by kind: messages of
// another role (assistant, tool, system) and, inside the user's, quoted lines, fenced
// blocks and forwarded messages.
func documents(t eval.Transcript) map[string]string {
	out := map[string]string{}
	for _, m := range t.Messages {
		if m.Role != "user" {
			out[m.Role] += m.Content + "\n"
			continue
		}
		fenced, forwarded := false, false
		for line := range strings.SplitSeq(m.Content, "\n") {
			trimmed := strings.TrimSpace(line)
			lower := strings.ToLower(trimmed)
			switch {
			case strings.HasPrefix(trimmed, "```"):
				fenced = !fenced
			case strings.Contains(lower, "forwarded message"):
				forwarded = !strings.Contains(lower, "end of forwarded")
			case fenced:
				out["fenced"] += line + "\n"
			case forwarded:
				out["forwarded"] += line + "\n"
			case strings.HasPrefix(trimmed, ">"):
				out["quoted"] += line + "\n"
			}
		}
	}
	return out
}

// holds says whether text holds phrase as whole words, as expectations match.
func holds(text, phrase string) bool {
	return strings.Contains(" "+eval.Normalize(text)+" ", " "+eval.Normalize(phrase)+" ")
}

// destructive says whether f supersedes or retracts.
func destructive(f eval.GoldFact) bool {
	return f.Resolves != nil && (f.Resolves.Action == string(memory.ActionSupersede) || f.Resolves.Action == string(memory.ActionRetract))
}

// The held-out set loads with its labels, which agree with it; its names are its own
// (none of the shipped set's); every gold quote is something the user said as their
// own; and it has enough of each kind it is for, each labeled as that kind needs.
func TestHeldOutScenarios(t *testing.T) {
	t.Parallel()
	scenarios, labels, by := heldOut(t)
	require.GreaterOrEqual(t, len(scenarios), 44)
	require.Len(t, labels, len(scenarios))
	require.NoError(t, eval.CheckLabels(scenarios, labels))

	shipped, err := eval.Shipped()
	require.NoError(t, err)
	shippedNames := map[string]bool{}
	for _, s := range shipped {
		shippedNames[s.Name] = true
	}

	var (
		perCategory = map[string]int{}
		// What each kind is made of, counted across the set.
		renamed, renamedCorrections, renamedTemporal int
		pureInOtherLanguage                          int
		otherRevised, otherBeside                    int
		docKinds                                     = map[string]int{}
		forgets, plain                               int
		destructiveTotal                             int
	)
	names := map[string]bool{}
	for _, s := range scenarios {
		perCategory[s.Category]++
		require.True(t, strings.HasPrefix(s.Name, "ho-"), s.Name)
		require.False(t, names[s.Name], "%s: name repeats", s.Name)
		names[s.Name] = true
		require.False(t, shippedNames[s.Name], "%s: a shipped scenario's name", s.Name)
		require.False(t, shippedNames[strings.TrimPrefix(s.Name, "ho-")], "%s: a shipped scenario's name", s.Name)
		require.Equal(t, "eval:heldout:"+s.Name, s.Scope)
		require.NotEmpty(t, s.Expect.Questions, "%s: no question", s.Name)
		require.GreaterOrEqual(t, len(s.Transcripts), 2, s.Name)
		require.LessOrEqual(t, len(s.Transcripts), 3, s.Name)
		for _, tr := range s.Transcripts {
			require.True(t, tr.OccurredAt.Year() == 2025 || tr.OccurredAt.Year() == 2026, "%s/%s", s.Name, tr.ID)
		}

		l := by[s.Name]
		// The statement and attribute of every belief a fact stored, for the targets.
		attribute, subject := map[string]string{}, map[string]string{}
		var (
			pure, supersedes, reinforces, maxDestructive int
			otherSupersede, userTargeted                 bool
			docs                                         = map[string]bool{}
		)
		for _, tr := range s.Transcripts {
			own := ownText(tr)
			// The kinds of document that hold a claim the scenario expects absent.
			for kind, text := range documents(tr) {
				for _, a := range s.Expect.Absent {
					if slices.ContainsFunc(append(a.AllOf, a.AnyOf...), func(p string) bool { return holds(text, p) }) {
						docs[kind] = true
					}
				}
			}
			n := 0
			for _, f := range l.Transcripts[tr.ID] {
				// A correct model grounds what it says in what the user said.
				require.Contains(t, own, f.Quote, "%s/%s: the quote is not the user's own words", s.Name, tr.ID)
				if destructive(f) {
					n++
					destructiveTotal++
					if subject[f.Resolves.Target] == "user" {
						userTargeted = true
					}
				}
				if d := f.Resolves; d != nil {
					switch {
					case d.Action == string(memory.ActionRetract) && f.Statement == "":
						pure++
					case d.Action == string(memory.ActionSupersede):
						supersedes++
						require.Equal(t, subject[d.Target], f.Subject, "%s: a supersession keeps its subject", s.Name)
						if f.Subject != "user" {
							otherSupersede = true
						}
						if s.Category == "slot_rename" && attribute[d.Target] != f.Attribute {
							renamed++
							if d.Reason == string(memory.ReasonCorrection) {
								renamedCorrections++
							} else {
								renamedTemporal++
							}
						}
					case d.Action == string(memory.ActionReinforce):
						reinforces++
					}
				}
				if f.Statement != "" {
					attribute[f.Statement], subject[f.Statement] = f.Attribute, f.Subject
				}
			}
			maxDestructive = max(maxDestructive, n)
		}
		require.LessOrEqual(t, maxDestructive, 5, "%s: more than MAX_REVISIONS_PER_EPISODE's default in one transcript", s.Name)

		e := s.Expect
		switch s.Category {
		case "slot_rename":
			require.NotEmpty(t, e.Current, s.Name)
			require.NotEmpty(t, e.Superseded, s.Name)
			require.Positive(t, supersedes, s.Name)
		case "other_language":
			require.Positive(t, supersedes+pure, s.Name)
			require.NotEmpty(t, append(e.Superseded, e.Retracted...), s.Name)
			if pure > 0 {
				pureInOtherLanguage++
			}
		case "retraction":
			require.Positive(t, pure, s.Name)
			require.Zero(t, supersedes, "%s: a retraction replaces nothing", s.Name)
			require.NotEmpty(t, e.Retracted, s.Name)
			require.NotEmpty(t, e.Absent, s.Name)
		case "third_party":
			require.NotEmpty(t, e.Current, s.Name)
			require.NotEmpty(t, e.Absent, s.Name)
			require.False(t, userTargeted, "%s: another person's fact revises the user's", s.Name)
			if otherSupersede {
				otherRevised++
			} else {
				otherBeside++
			}
		case "not_from_user":
			require.NotEmpty(t, docs, "%s: no claim expected absent is in text the user did not say as their own", s.Name)
			require.NotEmpty(t, e.Current, s.Name)
			require.NotEmpty(t, e.Absent, s.Name)
			for k := range docs {
				docKinds[k]++
			}
		case "multi_change":
			require.GreaterOrEqual(t, maxDestructive, 3, "%s: fewer than three changes at once", s.Name)
			if pure >= 3 {
				forgets++
			}
		case "additive", "hedged", "restatement":
			require.Zero(t, supersedes+pure, "%s: no revision", s.Name)
			plain++
			if s.Category == "restatement" {
				require.Positive(t, reinforces, s.Name)
				require.NotEmpty(t, e.Reinforced, s.Name)
			}
		default:
			t.Fatalf("%s: category %q is none the held-out set counts", s.Name, s.Category)
		}
	}
	for category, least := range map[string]int{
		"slot_rename": 8, "other_language": 5, "retraction": 6, "third_party": 6, "not_from_user": 8, "multi_change": 3,
	} {
		require.GreaterOrEqual(t, perCategory[category], least, category)
	}
	require.GreaterOrEqual(t, renamed, 8, "supersessions naming their slot differently")
	require.GreaterOrEqual(t, renamedCorrections, 2)
	require.GreaterOrEqual(t, renamedTemporal, 4)
	require.GreaterOrEqual(t, pureInOtherLanguage, 2, "pure retractions said in another language")
	require.GreaterOrEqual(t, otherRevised, 2, "honest revisions of another person's facts")
	require.GreaterOrEqual(t, otherBeside, 4, "another person's facts beside the user's")
	for _, k := range []string{"assistant", "tool", "system", "quoted", "fenced", "forwarded"} {
		require.Positive(t, docKinds[k], "no %s document", k)
	}
	require.GreaterOrEqual(t, forgets, 2, "several retractions at once")
	require.GreaterOrEqual(t, plain, 4)
	require.GreaterOrEqual(t, destructiveTotal, 40, "destructive directives across the set")
}

// The gold model recognises every held-out transcript in its prompt and answers its
// labels, each target at the index the prompt shows it, in an answer the extraction
// parser takes: what the labels say is what a model would answer.
func TestHeldOutGoldAnswersEveryTranscript(t *testing.T) {
	t.Parallel()
	scenarios, labels, by := heldOut(t)
	gold, err := eval.NewGold(scenarios, labels, nil, 0)
	require.NoError(t, err)
	for _, s := range scenarios {
		l := by[s.Name]
		r := replayLabels(s, l)
		for j, tr := range s.Transcripts {
			cands := r.before[j]
			res, err := gold.Chat(context.Background(), extractionPrompt(t, s, j, cands, r.excerpts[j]))
			require.NoError(t, err, "%s/%s", s.Name, tr.ID)
			got, _, err := extract.Parse(res.Content, len(cands), tr.OccurredAt)
			require.NoError(t, err, "%s/%s: %s", s.Name, tr.ID, res.Content)
			want := l.Transcripts[tr.ID]
			require.Len(t, got, len(want), "%s/%s", s.Name, tr.ID)
			for i, f := range got {
				w := want[i]
				require.Equal(t, w.Statement, f.Statement, "%s/%s", s.Name, tr.ID)
				require.Equal(t, w.Quote, f.Quote)
				if w.Resolves == nil {
					require.Nil(t, f.Resolves)
					continue
				}
				require.NotNil(t, f.Resolves, "%s/%s: %s", s.Name, tr.ID, w.Statement)
				require.Equal(t, w.Resolves.Target, cands[f.Resolves.Index].statement, "%s/%s", s.Name, tr.ID)
				require.Equal(t, memory.Action(w.Resolves.Action), f.Resolves.Action)
			}
		}
	}
	require.Zero(t, gold.Stats())
	require.Empty(t, gold.Mistakes())
}

// The gold labels of the held-out set, through the real pipeline (enqueue, extraction
// jobs, consolidation, recall), meet every expectation: a label or an expectation that
// a correct answer cannot meet fails here, and so does an engine that refuses a
// correct answer on a scenario it was not shaped on.
func TestHeldOutGoldScoresEveryScenario(t *testing.T) {
	t.Parallel()
	scenarios, labels, _ := heldOut(t)
	gold, err := eval.NewGold(scenarios, labels, nil, 0)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := eval.Run(ctx, scenarios, eval.Config{DatabaseURL: dbtest.URL(), Chat: gold, Embed: goldEmbedder(t),
		EmbedModel: llmtest.DefaultEmbedModel, Learning: true, Workers: 8})
	require.NoError(t, err)

	var failed []string
	for _, s := range res.Scenarios {
		for _, e := range s.Errors {
			failed = append(failed, fmt.Sprintf("%s: error: %s", s.Name, e))
		}
		for _, ep := range s.Episodes {
			if ep.Error != "" {
				failed = append(failed, fmt.Sprintf("%s/%s: %s", s.Name, ep.Transcript, ep.Error))
			}
		}
		for _, c := range s.Checks {
			if !c.Pass {
				failed = append(failed, fmt.Sprintf("%s: %s %s: want %s, got %s; seen %s", s.Name, c.Kind, c.Expect, c.Want, c.Got,
					strings.Join(c.Seen, " | ")))
			}
		}
	}
	slices.Sort(failed)
	require.Empty(t, failed, "\n"+strings.Join(failed, "\n"))
	require.Zero(t, gold.Stats(), "every target shown")
	m := res.Total
	require.Equal(t, len(scenarios), m.Scenarios)
	require.Zero(t, m.Failed)
	require.Zero(t, m.Errors)
	for name, v := range map[string]*float64{
		"supersede precision": m.Supersede.Precision, "supersede recall": m.Supersede.Recall,
		"retract precision": m.Retract.Precision, "retract recall": m.Retract.Recall,
		"keep precision": m.Keep.Precision, "keep recall": m.Keep.Recall,
		"current": m.Current.Accuracy, "history": m.History.Accuracy, "questions": m.Questions.Accuracy,
	} {
		require.NotNil(t, v, name)
		require.Equal(t, 1.0, *v, name)
	}
}
