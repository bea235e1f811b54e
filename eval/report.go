package eval

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/credohq/credo/memory"
)

// Report is what the eval command prints: the model evaluated and one run, or two
// with and without learning.
type Report struct {
	Provider      string       `json:"provider"`
	ChatModel     string       `json:"chat_model"`
	EmbedProvider string       `json:"embed_provider"`
	EmbedModel    string       `json:"embed_model"`
	Scenarios     string       `json:"scenarios"`
	K             int          `json:"k"`
	Runs          []*RunResult `json:"runs"`
}

// WriteJSON prints r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error { return WriteJSON(w, r) }

// TableHeader are the columns of WriteTable (LEARNING only when several runs are
// compared).
var TableHeader = []string{"CATEGORY", "N", "SUP-P", "SUP-R", "RET-P", "RET-R", "KEEP-P", "KEEP-R",
	"CURRENT", "HISTORY", "DEPENDS", "QUESTIONS", "CALLS/EP", "TOKENS/EP", "P50", "P95", "FAILED"}

// WriteTable prints r as an aligned table: a row per category and a TOTAL row, each
// category's runs side by side when there are several. With verbose, every failed
// check follows, scenario by scenario.
func (r *Report) WriteTable(w io.Writer, verbose bool) error {
	if len(r.Runs) == 0 {
		return errors.New("eval: no run to report")
	}
	compare := len(r.Runs) > 1
	fmt.Fprintf(w, "model %s (%s), embeddings %s (%s), scenarios %s, recall k=%d\n",
		r.ChatModel, r.Provider, r.EmbedModel, r.EmbedProvider, r.Scenarios, r.K)
	for _, run := range r.Runs {
		fmt.Fprintf(w, "learning %s: %d scenarios, %d episodes, %s, schema %s%s\n", onOff(run.Learning),
			run.Total.Scenarios, run.Total.Episodes, time.Duration(run.Seconds*float64(time.Second)).Round(100*time.Millisecond),
			run.Schema, map[bool]string{true: " (kept)", false: " (dropped)"}[run.SchemaKept])
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := TableHeader
	if compare {
		header = append([]string{header[0], "LEARNING"}, header[1:]...)
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	row := func(name string, run *RunResult, m Metrics) {
		cells := []string{name}
		if compare {
			cells = append(cells, onOff(run.Learning))
		}
		cells = append(cells, strconv.Itoa(m.Scenarios),
			rate(m.Supersede.Precision), rate(m.Supersede.Recall),
			rate(m.Retract.Precision), rate(m.Retract.Recall),
			rate(m.Keep.Precision), rate(m.Keep.Recall),
			rate(m.Current.Accuracy), rate(m.History.Accuracy), rate(m.Dependencies.Accuracy), rate(m.Questions.Accuracy),
			fmt.Sprintf("%.2f", m.Cost.CallsPerEpisode), fmt.Sprintf("%.0f", m.Cost.TokensPerEpisode),
			millis(m.Latency.P50), millis(m.Latency.P95), strconv.Itoa(m.Failed))
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	for i, c := range r.Runs[0].Categories {
		for _, run := range r.Runs {
			if i < len(run.Categories) {
				row(c.Category, run, run.Categories[i].Metrics)
			}
		}
	}
	for _, run := range r.Runs {
		row("TOTAL", run, run.Total)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writePrecision(w, r.Runs)
	if !verbose {
		return nil
	}
	for _, run := range r.Runs {
		fmt.Fprintf(w, "\nfailed checks, learning %s:\n", onOff(run.Learning))
		for _, s := range run.Scenarios {
			for _, e := range s.Errors {
				fmt.Fprintf(w, "  %s/%s: error: %s\n", s.Category, s.Name, e)
			}
			for _, ep := range s.Episodes {
				if ep.State != memory.EpisodeApplied {
					fmt.Fprintf(w, "  %s/%s: episode %s %s: %s\n", s.Category, s.Name, ep.Transcript, ep.State, ep.Error)
				}
			}
			for _, c := range s.Checks {
				if c.Pass {
					continue
				}
				got := ""
				if c.Want != "" {
					got = fmt.Sprintf(": want %s, got %s", c.Want, c.Got)
				}
				fmt.Fprintf(w, "  %s/%s: %s %s%s\n", s.Category, s.Name, c.Kind, c.Expect, got)
				for _, seen := range c.Seen {
					fmt.Fprintf(w, "      %s\n", seen)
				}
			}
		}
	}
	return nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// rate is a share with two decimals, "-" when there was nothing to measure.
func rate(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v)
}

// millis is a latency in milliseconds as a short duration.
func millis(v *float64) string {
	if v == nil {
		return "-"
	}
	d := time.Duration(*v * float64(time.Millisecond))
	switch {
	case d >= 10*time.Second:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}
