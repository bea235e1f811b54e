package eval

import (
	"fmt"
	"io"
	"strings"
)

// LocomoReport is what `eval locomo` prints: the models and the run.
type LocomoReport struct {
	BenchModels
	LocomoResult
}

// LocomoTableHeader are the columns of the accuracy table of WriteTable.
var LocomoTableHeader = []string{"CATEGORY", "QUESTIONS", "CORRECT", "ACCURACY"}

// LocomoCostHeader are the columns of the cost table of WriteTable.
var LocomoCostHeader = []string{"", "CALLS/Q", "PROMPT-TOK/Q", "COMPL-TOK/Q", "SECONDS/Q", "P95", "FAILED"}

// WriteTable prints r as aligned tables: accuracy per category and overall, then what
// answering and judging cost per question, then what ingesting cost per session. With
// verbose, every question answered wrongly follows.
func (r *LocomoReport) WriteTable(w io.Writer, verbose bool) error {
	r.writeModels(w, r.BenchRun)
	in := r.Ingest
	fmt.Fprintf(w, "%d conversations, %d sessions, %d questions (%d of category 5 left out: no gold answer), %s\n\n",
		r.Conversations, in.Sessions, r.Overall.Questions, r.Adversarial, r.describe())

	tw := table(w, strings.Join(LocomoTableHeader, "\t"))
	for _, c := range r.Categories {
		fmt.Fprintf(tw, "%d %s\t%d\t%d\t%s\n", c.Category, c.Name, c.Questions, c.Correct, rate(c.Accuracy))
	}
	fmt.Fprintf(tw, "OVERALL\t%d\t%d\t%s\n", r.Overall.Questions, r.Overall.Correct, rate(r.Overall.Accuracy))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)

	tw = table(w, strings.Join(LocomoCostHeader, "\t"))
	for _, row := range []struct {
		name   string
		c      LocomoCost
		failed int
	}{{"answer", r.Answer, r.AnswerFailures}, {"judge", r.Judge, r.JudgeFailures}} {
		p95 := "-"
		if row.c.P95Seconds != nil {
			p95 = fmt.Sprintf("%.2f", *row.c.P95Seconds)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.0f\t%.0f\t%.2f\t%s\t%d\n", row.name, row.c.CallsPerQuestion,
			row.c.PromptTokensPerQuestion, row.c.CompletionTokensPerQuestion, row.c.SecondsPerQuestion, p95, row.failed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nextraction: %.2f chat calls per session (%d calls, %d sessions), %.0f tokens and %.2fs per session; "+
		"%d sessions extracted, %d failed, %d pending\n",
		in.ChatCallsPerSession, in.ChatCalls, in.Sessions, in.TokensPerSession, in.SecondsPerSession, in.Applied, in.Failed, in.Pending)
	fmt.Fprintf(w, "consolidation: %d chat calls, %d revisions applied\n", in.ConsolidationCalls, in.ConsolidationApplied)
	return writeEnd(w, r.Cost, verbose, func() { r.writeWrong(w) })
}

// writeWrong prints every question answered wrongly.
func (r *LocomoReport) writeWrong(w io.Writer) {
	for _, s := range r.Samples {
		writeErrors(w, s.ID, s.Errors)
		for _, a := range s.Questions {
			if a.Verdict == VerdictCorrect {
				continue
			}
			note := labeled("judge", a.Reasoning)
			switch {
			case a.Error != "":
				note = labeled("error", a.Error)
			case a.JudgeError != "":
				note = labeled("judge failed", a.JudgeError)
			}
			writeWrong(w, fmt.Sprintf("%s qa[%d] (%s)", s.ID, a.Index, LocomoCategoryName(a.Category)), a.Question, a.Gold, a.Answer, note)
		}
	}
}
