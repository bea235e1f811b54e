package eval

import (
	"fmt"
	"io"
	"strings"
)

// LongMemEvalReport is what `eval longmemeval` prints: the models and the run.
type LongMemEvalReport struct {
	BenchModels
	LongMemEvalResult
}

// WriteTable prints r as aligned tables: accuracy per question type, knowledge-update
// first, then overall, task-averaged and abstention; then the judge's cost and the
// run's. With verbose, every question answered wrongly follows.
func (r *LongMemEvalReport) WriteTable(w io.Writer, verbose bool) error {
	r.writeModels(w, r.BenchRun)
	fmt.Fprintf(w, "%d questions, %d sessions, %s\n\n", r.Overall.Questions, r.Ingest.Sessions, r.describe())
	tw := table(w, "TYPE"+strings.Join(QATableHeader, "\t"))
	for _, t := range r.Types {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", t.Type, t.Questions, t.Correct, rate(t.Accuracy))
	}
	fmt.Fprintf(tw, "OVERALL\t%d\t%d\t%s\n", r.Overall.Questions, r.Overall.Correct, rate(r.Overall.Accuracy))
	fmt.Fprintf(tw, "TASK-AVERAGED\t\t\t%s\n", rate(r.TaskAveraged))
	fmt.Fprintf(tw, "ABSTENTION\t%d\t%d\t%s\n", r.Abstention.Questions, r.Abstention.Correct, rate(r.Abstention.Accuracy))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\njudge: %.2f calls and %.0f prompt tokens per question, %d failed; answers: %d failed\n",
		r.Judge.CallsPerQuestion, r.Judge.PromptTokensPerQuestion, r.JudgeFailures, r.AnswerFailures)
	fmt.Fprintf(w, "ingest: %d sessions extracted, %d failed, %d pending; consolidation: %d chat calls, %d revisions applied\n",
		r.Ingest.Applied, r.Ingest.Failed, r.Ingest.Pending, r.Ingest.ConsolidationCalls, r.Ingest.ConsolidationApplied)
	return writeEnd(w, r.Cost, verbose, func() { r.writeWrong(w) })
}

// writeWrong prints every question answered wrongly.
func (r *LongMemEvalReport) writeWrong(w io.Writer) {
	for _, a := range r.Questions {
		if a.Verdict == VerdictCorrect {
			continue
		}
		notes := []string{labeled("error", a.Error), labeled("judge failed", a.JudgeError), labeled("judge", a.Judgment)}
		for _, e := range a.Errors {
			notes = append(notes, labeled("error", e))
		}
		writeWrong(w, fmt.Sprintf("%s (%s)", a.ID, a.Type), a.Question, a.Gold, a.Answer, notes...)
	}
}
