package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// BenchModels are the models a benchmark ran with, and its file.
type BenchModels struct {
	Provider      string `json:"provider"`
	ChatModel     string `json:"chat_model"`
	EmbedProvider string `json:"embed_provider"`
	EmbedModel    string `json:"embed_model"`
	JudgeModel    string `json:"judge_model,omitempty"`
	// Data is the benchmark's file read.
	Data string `json:"data"`
}

// QATableHeader are the columns of the accuracy tables of the benchmark reports.
var QATableHeader = []string{"", "QUESTIONS", "CORRECT", "ACCURACY"}

// WriteJSON prints a report (Report, LocomoReport, LongMemEvalReport, MABReport) as
// indented JSON.
func WriteJSON(w io.Writer, report any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(report)
}

// writeModels prints the first line of a benchmark's table: models, data, recall.
func (m BenchModels) writeModels(w io.Writer, run BenchRun) {
	judge := ""
	if m.JudgeModel != "" {
		judge = ", judge " + m.JudgeModel
	}
	fmt.Fprintf(w, "model %s (%s), embeddings %s (%s)%s, data %s, recall k=%d, learning %s\n",
		m.ChatModel, m.Provider, m.EmbedModel, m.EmbedProvider, judge, m.Data, run.K, onOff(run.Learning))
}

// describe is how long the run took and where its schema is.
func (run *BenchRun) describe() string {
	s := fmt.Sprintf("%s, schema %s", time.Duration(run.Seconds*float64(time.Second)).Round(100*time.Millisecond), run.Schema)
	if run.SchemaKept {
		s += fmt.Sprintf(" (kept; go on with --run %s)", run.RunID)
	} else {
		s += " (dropped)"
	}
	if run.Resumed {
		s += ", resumed: the ingest costs count this run's extractions only"
	}
	return s
}

// writeWrong prints one question answered wrongly, under "questions answered
// wrongly:", with its notes (errors, the judge's reasons), those not empty.
func writeWrong(w io.Writer, label, question, gold, answer string, notes ...string) {
	fmt.Fprintf(w, "  %s: %s\n      gold: %s\n      answer: %s\n", label, question, gold, answer)
	for _, n := range notes {
		if n != "" {
			fmt.Fprintf(w, "      %s\n", n)
		}
	}
}

// labeled is "label: text", or "" when text is.
func labeled(label, text string) string {
	if text == "" {
		return ""
	}
	return label + ": " + text
}

// writeCost prints the cost table under a blank line and a title.
func writeCost(w io.Writer, c BenchCost) error {
	fmt.Fprintln(w, "\ncost (per session ingested, per question asked, memory per conversation in tokens):")
	return c.WriteTable(w)
}

// writeEnd prints the end of a benchmark's table: the run's cost, then, with verbose,
// the questions answered wrongly, which wrong prints.
func writeEnd(w io.Writer, c BenchCost, verbose bool, wrong func()) error {
	if err := writeCost(w, c); err != nil {
		return err
	}
	if verbose {
		fmt.Fprintln(w, "\nquestions answered wrongly:")
		wrong()
	}
	return nil
}

// writeErrors prints the failures around a conversation's questions.
func writeErrors(w io.Writer, id string, errs []string) {
	for _, e := range errs {
		fmt.Fprintf(w, "  %s: error: %s\n", id, e)
	}
}

// table is an aligned table on w under header, its columns separated by tabs.
func table(w io.Writer, header string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	return tw
}
