package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// LocomoReport is what `eval locomo` prints: the models and the run.
type LocomoReport struct {
	Provider      string `json:"provider"`
	ChatModel     string `json:"chat_model"`
	EmbedProvider string `json:"embed_provider"`
	EmbedModel    string `json:"embed_model"`
	JudgeModel    string `json:"judge_model"`
	// Data is the LoCoMo file read.
	Data string `json:"data"`
	LocomoResult
}

// WriteJSON prints r as indented JSON.
func (r *LocomoReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// LocomoTableHeader are the columns of the accuracy table of WriteTable.
var LocomoTableHeader = []string{"CATEGORY", "QUESTIONS", "CORRECT", "ACCURACY"}

// LocomoCostHeader are the columns of the cost table of WriteTable.
var LocomoCostHeader = []string{"", "CALLS/Q", "PROMPT-TOK/Q", "COMPL-TOK/Q", "SECONDS/Q", "P95", "FAILED"}

// WriteTable prints r as aligned tables: accuracy per category and overall, then what
// answering and judging cost per question, then what ingesting cost per session. With
// verbose, every question answered wrongly follows.
func (r *LocomoReport) WriteTable(w io.Writer, verbose bool) error {
	fmt.Fprintf(w, "model %s (%s), embeddings %s (%s), judge %s, data %s, recall k=%d, learning %s\n",
		r.ChatModel, r.Provider, r.EmbedModel, r.EmbedProvider, r.JudgeModel, r.Data, r.K, onOff(r.Learning))
	in := r.Ingest
	fmt.Fprintf(w, "%d conversations, %d sessions, %d questions (%d of category 5 left out: no gold answer), %s, schema %s%s\n\n",
		r.Conversations, in.Sessions, r.Overall.Questions, r.Adversarial,
		time.Duration(r.Seconds*float64(time.Second)).Round(100*time.Millisecond), r.Schema,
		map[bool]string{true: " (kept)", false: " (dropped)"}[r.SchemaKept])

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(LocomoTableHeader, "\t"))
	for _, c := range r.Categories {
		fmt.Fprintf(tw, "%d %s\t%d\t%d\t%s\n", c.Category, c.Name, c.Questions, c.Correct, rate(c.Accuracy))
	}
	fmt.Fprintf(tw, "OVERALL\t%d\t%d\t%s\n", r.Overall.Questions, r.Overall.Correct, rate(r.Overall.Accuracy))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)

	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(LocomoCostHeader, "\t"))
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
	if !verbose {
		return nil
	}
	fmt.Fprintln(w, "\nquestions answered wrongly:")
	for _, s := range r.Samples {
		for _, e := range s.Errors {
			fmt.Fprintf(w, "  %s: error: %s\n", s.ID, e)
		}
		for _, a := range s.Questions {
			if a.Verdict == VerdictCorrect {
				continue
			}
			fmt.Fprintf(w, "  %s qa[%d] (%s): %s\n      gold: %s\n      answer: %s\n", s.ID, a.Index,
				LocomoCategoryName(a.Category), a.Question, a.Gold, a.Answer)
			switch {
			case a.Error != "":
				fmt.Fprintf(w, "      error: %s\n", a.Error)
			case a.JudgeError != "":
				fmt.Fprintf(w, "      judge failed: %s\n", a.JudgeError)
			case a.Reasoning != "":
				fmt.Fprintf(w, "      judge: %s\n", a.Reasoning)
			}
		}
	}
	return nil
}
