package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/recall"
)

// LoCoMo's evidence annotations give each question the turns that answer it, so recall
// can be measured without a model: each turn is stored as a belief of its speaker, and
// each question asks the agent's read (recall's Context) for the k beliefs it ranks
// best, by the vector ranking alone and by the fused one (memory/fuse.go). Recall@k is
// the share of a question's evidence turns among them.

// DefaultRetrievalKs are the k of recall@k measured: a small context, recall's default
// and extraction's candidates.
var DefaultRetrievalKs = []int{5, 10, 24}

// LocomoRetrievalConfig configures RunLocomoRetrieval.
type LocomoRetrievalConfig struct {
	// DatabaseURL is where the throwaway schema is created, and dropped unless Keep.
	DatabaseURL string
	Embed       llm.Embedder
	EmbedModel  string
	// Conversations keeps the first N samples; 0 keeps all.
	Conversations int
	// Ks are the k of recall@k (DefaultRetrievalKs when nil), at most recall.MaxK.
	Ks       []int
	Keep     bool
	Logger   *slog.Logger
	Progress io.Writer
}

func (c LocomoRetrievalConfig) withDefaults() LocomoRetrievalConfig {
	if c.Ks == nil {
		c.Ks = DefaultRetrievalKs
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c
}

func (c LocomoRetrievalConfig) validate() error {
	switch {
	case c.Embed == nil || c.EmbedModel == "":
		return errors.New("eval: Embed and EmbedModel are required")
	case len(c.Ks) == 0 || slices.Min(c.Ks) < 1 || slices.Max(c.Ks) > recall.MaxK:
		return fmt.Errorf("eval: each k of recall@k must be within 1..%d", recall.MaxK)
	}
	return nil
}

// LocomoRetrievalResult is the outcome of RunLocomoRetrieval.
type LocomoRetrievalResult struct {
	Schema        string  `json:"schema"`
	SchemaKept    bool    `json:"schema_kept"`
	Seconds       float64 `json:"seconds"`
	Conversations int     `json:"conversations"`
	// Beliefs counts the turns stored, one belief each.
	Beliefs int   `json:"beliefs"`
	Ks      []int `json:"ks"`
	// Categories are 1 to 4, in order, then Overall, all of them.
	Categories []RetrievalScore `json:"categories"`
	Overall    RetrievalScore   `json:"overall"`
	// Unanswerable counts the questions left out because the file gives no evidence turn
	// for them, or none that exists.
	Unanswerable int `json:"unanswerable"`
}

// RetrievalScore is the mean recall@k of a category's questions, for each k of the run,
// by the vector ranking alone and fused.
type RetrievalScore struct {
	Category  int       `json:"category"`
	Name      string    `json:"name"`
	Questions int       `json:"questions"`
	Vectors   []float64 `json:"vectors"`
	Fused     []float64 `json:"fused"`
}

// add counts one question's recall at each k, by each ranking.
func (s *RetrievalScore) add(vectors, fused []float64) {
	if s.Vectors == nil {
		s.Vectors, s.Fused = make([]float64, len(vectors)), make([]float64, len(fused))
	}
	s.Questions++
	for i := range vectors {
		s.Vectors[i] += vectors[i]
		s.Fused[i] += fused[i]
	}
}

// finish turns the sums into means.
func (s *RetrievalScore) finish() {
	for i := range s.Vectors {
		s.Vectors[i] /= float64(max(1, s.Questions))
		s.Fused[i] /= float64(max(1, s.Questions))
	}
}

// RunLocomoRetrieval stores every turn of the samples as a belief of its speaker, in a
// new schema of cfg.DatabaseURL, and measures how many of each question's evidence turns
// recall's Context ranks among its first k, by the vector ranking alone and fused. It
// calls the embedder only: no chat model.
func RunLocomoRetrieval(ctx context.Context, samples []LocomoSample, cfg LocomoRetrievalConfig) (res *LocomoRetrievalResult, err error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	started := time.Now()
	pool, schema, drop, err := createSchema(ctx, cfg.DatabaseURL, 4)
	if err != nil {
		return nil, err
	}
	res = &LocomoRetrievalResult{Schema: schema, SchemaKept: cfg.Keep, Ks: cfg.Ks}
	defer func() {
		pool.Close()
		if !cfg.Keep {
			err = errors.Join(err, drop())
		}
	}()
	if err := migrate(ctx, pool, schema, cfg.Logger); err != nil {
		return nil, err
	}
	store := memory.NewStore(pool, nil)
	if cfg.Conversations > 0 {
		samples = samples[:min(len(samples), cfg.Conversations)]
	}
	res.Conversations = len(samples)
	scores := map[int]*RetrievalScore{}
	for i, s := range samples {
		fmt.Fprintf(cfg.Progress, "retrieval: conversation %d of %d (%s)\n", i+1, len(samples), s.ID)
		turns, last, err := storeTurns(ctx, store, cfg, s)
		if err != nil {
			return nil, fmt.Errorf("sample %s: %w", s.ID, err)
		}
		res.Beliefs += len(turns)
		r, err := recall.New(recall.Config{Store: store, Embed: cfg.Embed, EmbedModel: cfg.EmbedModel, Logger: cfg.Logger,
			Now: func() time.Time { return last.Add(24 * time.Hour) }})
		if err != nil {
			return nil, err
		}
		for _, q := range s.Questions {
			var want []int64
			for _, id := range q.Evidence {
				if b, ok := turns[id]; ok {
					want = append(want, b)
				}
			}
			if len(want) == 0 {
				res.Unanswerable++
				continue
			}
			var byMode [2][]float64
			for m, vectorsOnly := range []bool{true, false} {
				got, err := r.Context(ctx, recall.Query{Scope: s.Scope(), Query: q.Question, K: slices.Max(cfg.Ks),
					Budget: recall.MaxBudget, VectorsOnly: vectorsOnly})
				if err != nil {
					return nil, fmt.Errorf("sample %s, question %d: %w", s.ID, q.Index, err)
				}
				for _, k := range cfg.Ks {
					byMode[m] = append(byMode[m], recallAt(got.Beliefs, want, k))
				}
			}
			if scores[q.Category] == nil {
				scores[q.Category] = &RetrievalScore{Category: q.Category, Name: LocomoCategoryName(q.Category)}
			}
			scores[q.Category].add(byMode[0], byMode[1])
			res.Overall.add(byMode[0], byMode[1])
		}
	}
	for _, c := range LocomoCategories {
		if sc := scores[c]; sc != nil {
			sc.finish()
			res.Categories = append(res.Categories, *sc)
		}
	}
	res.Overall.Name = "overall"
	res.Overall.finish()
	res.Seconds = time.Since(started).Seconds()
	return res, nil
}

// recallAt is the share of want among the first k of got.
func recallAt(got []memory.Belief, want []int64, k int) float64 {
	found := 0
	for _, b := range got[:min(k, len(got))] {
		if slices.Contains(want, b.ID) {
			found++
		}
	}
	return float64(found) / float64(len(want))
}

// nonLabel is what a dia_id loses to become part of an attribute.
var nonLabel = regexp.MustCompile(`[^a-z0-9]+`)

// storeTurns stores each turn of s as a belief of its speaker, valid from its session's
// date, one batch a session, and embeds them: the beliefs by dia_id, and the last
// session's date.
func storeTurns(ctx context.Context, store *memory.Store, cfg LocomoRetrievalConfig, s LocomoSample) (map[string]int64, time.Time, error) {
	ids := map[string]int64{}
	var last time.Time
	for _, sess := range s.Sessions {
		at := sess.At
		last = at
		var facts []memory.Fact
		var keys []string
		for _, t := range sess.Turns {
			content := strings.TrimSpace(t.Content())
			if content == "" || t.DiaID == "" {
				continue
			}
			statement := t.Speaker + ": " + content
			if r := []rune(statement); len(r) > memory.MaxStatementLen {
				statement = string(r[:memory.MaxStatementLen])
			}
			facts = append(facts, memory.Fact{Statement: statement, Subject: cmp.Or(t.Speaker, "user"),
				Attribute: "turn_" + strings.Trim(nonLabel.ReplaceAllString(strings.ToLower(t.DiaID), "_"), "_"),
				Kind:      memory.KindOther, Confidence: 1, Origin: memory.OriginUserStated, ValidFrom: &at})
			keys = append(keys, t.DiaID)
		}
		if len(facts) == 0 {
			continue
		}
		applied, err := store.Apply(ctx, &memory.Batch{Scope: s.Scope(), Origin: memory.RevisionOperator, At: at, Facts: facts})
		if err != nil {
			return nil, last, fmt.Errorf("store %s: %w", sess.ID, err)
		}
		for i, f := range applied.Facts {
			ids[keys[i]] = f.BeliefID
		}
	}
	// The words most of the conversation's turns hold, as its consolidation pass counts
	// them: the words ranking leaves them out, as it does for the worker's scopes.
	if _, err := store.CountCommonWords(ctx, s.Scope()); err != nil {
		return nil, last, err
	}
	for {
		pending, err := store.Unembedded(ctx, s.Scope(), cfg.EmbedModel, 64)
		if err != nil || len(pending) == 0 {
			return ids, last, err
		}
		texts := make([]string, len(pending))
		for i, p := range pending {
			texts[i] = p.Text
		}
		vecs, err := llm.EmbedTexts(ctx, cfg.Embed, texts)
		if err != nil {
			return nil, last, err
		}
		if err := store.EnsureEmbeddingModel(ctx, cfg.EmbedModel, len(vecs[0])); err != nil {
			return nil, last, err
		}
		if _, err := store.SetEmbeddings(ctx, cfg.EmbedModel, pending, vecs); err != nil {
			return nil, last, err
		}
	}
}

// WriteTable writes the recall@k of each category, vectors alone beside fused.
func (res *LocomoRetrievalResult) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "CATEGORY\tQUESTIONS")
	for _, k := range res.Ks {
		fmt.Fprintf(tw, "\tVECTORS@%d\tFUSED@%d", k, k)
	}
	fmt.Fprintln(tw)
	for _, c := range append(slices.Clone(res.Categories), res.Overall) {
		name := c.Name
		if c.Category > 0 {
			name = fmt.Sprintf("%d %s", c.Category, c.Name)
		}
		fmt.Fprintf(tw, "%s\t%d", name, c.Questions)
		for i := range res.Ks {
			fmt.Fprintf(tw, "\t%.3f\t%.3f", c.Vectors[i], c.Fused[i])
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintf(tw, "\n%d conversations, %d beliefs (a turn each), %d questions without evidence left out, %.0f s\n",
		res.Conversations, res.Beliefs, res.Unanswerable, res.Seconds)
	return tw.Flush()
}
