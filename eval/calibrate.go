package eval

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

// Calibration is what `eval calibrate` measures of an embedding model: how similar it
// finds what the gold labels revise to what revises it (the correct pairs), and a
// revision to a belief of another slot that shares no word with it (the wrong pairs a
// wrong candidate index makes), and the REVISION_SIMILARITY_FLOOR it would pick.
type Calibration struct {
	EmbedModel string       `json:"embed_model"`
	Correct    Distribution `json:"correct"`
	Wrong      Distribution `json:"wrong"`
	// Floor is the floor picked: just above 99% of the wrong pairs, so that a vector
	// alone relates almost no wrong target.
	Floor float64 `json:"floor"`
	// Default is the floor credo uses for the model when REVISION_SIMILARITY_FLOOR is
	// not set (memory.DefaultSimilarityFloor).
	Default float64 `json:"default"`
	// Rescued are the correct pairs under Floor that the attribute or a word in common
	// relates anyway; Held those that nothing relates: what a correct model would see
	// held with this floor.
	Rescued int `json:"rescued"`
	Held    int `json:"held"`
	// WrongAbove are the wrong pairs at Floor or above.
	WrongAbove int `json:"wrong_above"`
}

// Distribution summarizes similarities.
type Distribution struct {
	N   int     `json:"n"`
	Min float64 `json:"min"`
	P1  float64 `json:"p1"`
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// calibrationPair is one pair of texts to compare.
type calibrationPair struct {
	text, target string
	// related says the attribute or the words relate the pair without vectors.
	related bool
}

// calibrationBatch bounds the texts of one embedding call.
const calibrationBatch = 128

// Calibrate embeds the pairs of the gold labels with embedder and measures them.
func Calibrate(ctx context.Context, embedder llm.Embedder, model string, scenarios []Scenario, labels []Labels) (*Calibration, error) {
	if err := CheckLabels(scenarios, labels); err != nil {
		return nil, err
	}
	correct, wrong := calibrationPairs(scenarios, labels)
	var texts []string
	seen := map[string]int{}
	for _, p := range slices.Concat(correct, wrong) {
		for _, t := range []string{p.text, p.target} {
			if _, ok := seen[t]; !ok {
				seen[t] = len(texts)
				texts = append(texts, t)
			}
		}
	}
	vecs := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += calibrationBatch {
		res, err := embedder.Embed(ctx, texts[start:min(start+calibrationBatch, len(texts))])
		if err != nil {
			return nil, fmt.Errorf("calibrate: %w", err)
		}
		vecs = append(vecs, res.Vectors...)
	}
	sims := func(ps []calibrationPair) []float64 {
		out := make([]float64, len(ps))
		for i, p := range ps {
			out[i] = cosine(vecs[seen[p.text]], vecs[seen[p.target]])
		}
		return out
	}
	c := &Calibration{EmbedModel: model, Default: memory.DefaultSimilarityFloor(model)}
	cs, ws := sims(correct), sims(wrong)
	c.Correct, c.Wrong = distribution(cs), distribution(ws)
	c.Floor = math.Ceil((c.Wrong.P99+0.02)*100) / 100
	for i, s := range cs {
		if s >= c.Floor {
			continue
		}
		if correct[i].related {
			c.Rescued++
		} else {
			c.Held++
		}
	}
	for _, s := range ws {
		if s >= c.Floor {
			c.WrongAbove++
		}
	}
	return c, nil
}

// calibrationPairs walks the labels as the pipeline applies them: the correct pairs are
// each supersession's new statement (or a pure retraction's quote) against its target;
// the wrong pairs the same against every other current belief of another slot that
// shares no word with it.
func calibrationPairs(scenarios []Scenario, labels []Labels) (correct, wrong []calibrationPair) {
	by := map[string]Labels{}
	for _, l := range labels {
		by[l.Scenario] = l
	}
	type belief struct{ statement, attribute string }
	for _, s := range scenarios {
		var current []belief
		for _, t := range s.Transcripts {
			facts := by[s.Name].Transcripts[t.ID]
			for _, f := range facts {
				d := f.Resolves
				if d == nil || (d.Action != string(memory.ActionSupersede) && d.Action != string(memory.ActionRetract)) {
					continue
				}
				text := f.Statement
				if text == "" {
					text = f.Quote
				}
				for _, b := range current {
					if b.statement == d.Target {
						correct = append(correct, calibrationPair{text: text, target: b.statement,
							related: f.Attribute == b.attribute || memory.WordsShared(text, b.statement)})
						continue
					}
					target := slices.IndexFunc(current, func(c belief) bool { return c.statement == d.Target })
					if target >= 0 && b.attribute != current[target].attribute && !memory.WordsShared(text, b.statement) {
						wrong = append(wrong, calibrationPair{text: text, target: b.statement})
					}
				}
			}
			for _, f := range facts {
				if d := f.Resolves; d != nil && d.Action != string(memory.ActionReinforce) {
					current = slices.DeleteFunc(current, func(b belief) bool { return b.statement == d.Target })
				}
				if f.Statement != "" && (f.Resolves == nil || f.Resolves.Action != string(memory.ActionReinforce)) {
					current = append(current, belief{f.Statement, f.Attribute})
				}
			}
		}
	}
	return correct, wrong
}

func distribution(xs []float64) Distribution {
	if len(xs) == 0 {
		return Distribution{}
	}
	s := slices.Sorted(slices.Values(xs))
	at := func(p float64) float64 { return round(s[min(len(s)-1, int(math.Floor(p*float64(len(s)))))], 3) }
	return Distribution{N: len(s), Min: round(s[0], 3), P1: at(0.01), P50: at(0.5), P99: at(0.99), Max: round(s[len(s)-1], 3)}
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range min(len(a), len(b)) {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// WriteTable prints the calibration for a person.
func (c *Calibration) WriteTable(w io.Writer) error {
	tw := table(w, "PAIRS\tN\tMIN\tP1\tP50\tP99\tMAX")
	for _, r := range []struct {
		name string
		d    Distribution
	}{{"correct revisions", c.Correct}, {"wrong targets", c.Wrong}} {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", r.name, r.d.N, r.d.Min, r.d.P1, r.d.P50, r.d.P99, r.d.Max)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nembedding model %s: REVISION_SIMILARITY_FLOOR=%.2f would pick (credo's default for it: %.2f)\n"+
		"with it, %d wrong pairs of %d are related by their vectors alone; %d correct pairs fall under it, %d of them related by\n"+
		"their attribute or a word in common anyway, %d held.\n",
		c.EmbedModel, c.Floor, c.Default, c.WrongAbove, c.Wrong.N, c.Rescued+c.Held, c.Rescued, c.Held)
	return err
}
