package eval

import (
	"fmt"
	"io"
	"strings"
)

// MABReport is what `eval mab` prints: the models and the run.
type MABReport struct {
	BenchModels
	MABResult
}

// WriteTable prints r as aligned tables: accuracy (substring exact match) and exact
// match per split and overall, then the run's cost. With verbose, every question
// answered wrongly follows.
func (r *MABReport) WriteTable(w io.Writer, verbose bool) error {
	r.writeModels(w, r.BenchRun)
	facts := 0
	for _, row := range r.Rows {
		facts += row.Facts
	}
	fmt.Fprintf(w, "%d rows, %d facts in %d episodes of up to %d, %d questions, %s\n\n", len(r.Rows), facts,
		r.Ingest.Sessions, r.FactsPerEpisode, r.Overall.Questions, r.describe())
	tw := table(w, "SPLIT"+strings.Join(QATableHeader, "\t")+"\tEXACT")
	row := func(name string, s MABScore) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", name, s.Questions, s.Correct, rate(s.Accuracy), rate(s.ExactMatchAccuracy))
	}
	for _, s := range r.Splits {
		row(s.Split, s.MABScore)
	}
	row("OVERALL", r.Overall)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ningest: %d episodes extracted, %d failed, %d pending; consolidation: %d chat calls, %d revisions applied; answers: %d failed\n",
		r.Ingest.Applied, r.Ingest.Failed, r.Ingest.Pending, r.Ingest.ConsolidationCalls, r.Ingest.ConsolidationApplied, r.AnswerFailures)
	return writeEnd(w, r.Cost, verbose, func() { r.writeWrong(w) })
}

// writeWrong prints every question answered wrongly.
func (r *MABReport) writeWrong(w io.Writer) {
	for _, row := range r.Rows {
		writeErrors(w, row.Source, row.Errors)
		for _, a := range row.Questions {
			if a.Correct {
				continue
			}
			writeWrong(w, fmt.Sprintf("%s [%d]", row.Source, a.Index), a.Question, strings.Join(a.Gold, " | "), a.Answer,
				labeled("error", a.Error))
		}
	}
}
