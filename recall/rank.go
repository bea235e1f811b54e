package recall

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

// The ranking of beliefs for a question: a weighted sum of signals, each within 0..1 but
// similarity, which the words and entities of the query raise up to 1.75.
// Similarity leads when there is a query: the belief's score in memory's fused read
// (memory.Match.Fused): its cosine similarity to the query, plus what the query's words
// and the entities it names add (up to 0.75 more); recency (when the belief was last said) and reinforcement (how often it
// was said again) order what ranked alike, and rank alone when there is no query.
const (
	WeightSimilarity    = 0.70
	WeightRecency       = 0.20
	WeightReinforcement = 0.10
	// RecencyHalfLife: a belief last said this long ago has half the recency of one said
	// today.
	RecencyHalfLife = 90 * 24 * time.Hour
	// ReinforcementSaturation: a belief said again this many times has full
	// reinforcement.
	ReinforcementSaturation = 8
)

// Score is a belief's rank for a question: the weighted sum of its signals.
type Score struct {
	Similarity, Recency, Reinforcement, Total float64
}

// score ranks b at now; ranked says whether similarity counts (there is a query).
func score(b memory.Belief, now time.Time, ranked bool) Score {
	s := Score{
		Recency:       math.Pow(0.5, max(0, now.Sub(b.LastSeenAt).Hours())/RecencyHalfLife.Hours()),
		Reinforcement: min(1, math.Log1p(float64(b.ReinforcedCount))/math.Log1p(ReinforcementSaturation)),
	}
	if !ranked {
		// Without a query the other weights share its part, in their proportion.
		rest := WeightRecency + WeightReinforcement
		s.Total = (WeightRecency*s.Recency + WeightReinforcement*s.Reinforcement) / rest
		return s
	}
	switch {
	case b.Match != nil:
		s.Similarity = b.Match.Fused
	case b.Distance != nil:
		s.Similarity = min(1, max(0, 1-*b.Distance))
	}
	s.Total = WeightSimilarity*s.Similarity + WeightRecency*s.Recency + WeightReinforcement*s.Reinforcement
	return s
}

// selection is what a query selects: the beliefs that hold (now, or at AsOf), and for a
// question about the past those that no longer do, each section best first.
type selection struct {
	mode    memory.RecallMode
	holding []memory.Belief
	earlier []memory.Belief
}

// poolSize is how many nearest beliefs are re-ranked for k shown: the nearest by
// embedding are not always the best once recency and reinforcement count.
func poolSize(k int) int { return min(memory.MaxRecallK, max(4*k, 40)) }

// selectFor reads and ranks what q selects.
func (r *Reader) selectFor(ctx context.Context, q Query, pending []memory.Unembedded) (*selection, error) {
	rq := memory.RecallQuery{Scope: q.Scope, Text: q.Query, Inherit: q.Inherit, Sees: q.Sees, AsOf: q.AsOf, VectorsOnly: q.VectorsOnly}
	if q.Query != "" && r.embeds() {
		vec, err := r.embedQuery(ctx, q.Query, pending)
		if err != nil {
			return nil, err
		}
		rq.Vector, rq.EmbedModel, rq.K = vec, r.cfg.EmbedModel, poolSize(q.K)
	}
	rec, err := r.cfg.Store.Recall(ctx, rq)
	if err != nil {
		return nil, err
	}
	now := r.cfg.Now()
	ranked := slices.Clone(rec.Beliefs)
	scores := make(map[int64]float64, len(ranked))
	for _, b := range ranked {
		scores[b.ID] = score(b, now, rec.Ranked).Total
	}
	slices.SortStableFunc(ranked, func(a, b memory.Belief) int { return cmp.Compare(scores[b.ID], scores[a.ID]) })
	sel := &selection{mode: rec.Mode}
	for _, b := range ranked {
		switch {
		case rec.Mode == memory.RecallAsOf || b.Status == memory.StatusActive:
			sel.holding = append(sel.holding, b)
		case rec.Mode == memory.RecallHistory:
			sel.earlier = append(sel.earlier, b)
		}
	}
	sel.holding = sel.holding[:min(q.K, len(sel.holding))]
	sel.earlier = sel.earlier[:min(q.K, len(sel.earlier))]
	return sel, nil
}

// errNoEmbedder is EmbedQuery's answer when the reader was given no embedder.
var errNoEmbedder = errors.New("recall: no embedder configured")

// embeds says whether the reader embeds questions.
func (r *Reader) embeds() bool { return r.cfg.Embed != nil && r.cfg.EmbedModel != "" }

// EmbedQuery embeds the query with what the scope stored without vectors, in one call,
// and stores theirs, so that what was learned since the last extraction is ranked too.
// A model that did not answer, or answered in another dimension than it was registered
// with, is ErrEmbedding: nothing was read.
func (r *Reader) EmbedQuery(ctx context.Context, scope, query string) ([]float32, error) {
	if !r.embeds() {
		return nil, errNoEmbedder
	}
	pending, err := r.redact(ctx, scope, &query)
	if err != nil {
		return nil, err
	}
	return r.embedQuery(ctx, query, pending)
}

// embedQuery is EmbedQuery of a query redacted already, with what its scope stored
// without vectors.
func (r *Reader) embedQuery(ctx context.Context, query string, pending []memory.Unembedded) ([]float32, error) {
	texts := []string{query}
	for _, u := range pending {
		texts = append(texts, u.Text)
	}
	vecs, err := llm.EmbedTexts(ctx, r.cfg.Embed, texts)
	if err != nil {
		return nil, err
	}
	if err := r.cfg.Store.EnsureEmbeddingModel(ctx, r.cfg.EmbedModel, len(vecs[0])); err != nil {
		if _, ok := errors.AsType[*memory.DimensionError](err); ok {
			// The model answers in another space under the same name: it failed.
			return nil, &llm.EmbeddingError{Err: err}
		}
		return nil, err
	}
	if _, err := r.cfg.Store.SetEmbeddings(ctx, r.cfg.EmbedModel, pending, vecs[1:]); err != nil {
		return nil, err
	}
	return vecs[0], nil
}
