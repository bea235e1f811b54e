package memory

import (
	"cmp"
	"slices"
)

// Recall by a text fuses three rankings of a scope's beliefs (docs/design.md, "Recall by
// vectors, words and entities"): by embedding (exact, nearestRead), by the words they
// share with the text (queueWords) and by the entities the text names (queueEntities).
// Each gives a belief a score within 0..1: its cosine similarity to the text, its share
// of the weight of the text's words, 1 when it is about an entity the text names. The
// fused score is their weighted sum, so that how much better the best of a ranking is
// counts, not only that it is first: reciprocal rank fusion, tried first, put a belief
// holding the one rare code the question says below look-alikes that were middling in
// both rankings, as every belief of a small scope is in every ranking. Weights measured
// on LoCoMo's evidence annotations afterwards (docs/evaluation.md, "Retrieval"); they were
// set on the issue's own case (a code the embedding blurs), not tuned on that table.
const (
	WeightVector = 1.0
	WeightWords  = 0.5
	WeightEntity = 0.25
)

// Match is why a belief came where it did in a read by a text: its rank in each ranking
// fused (0: not in it), what each added to its score, and their sum, the read's order.
type Match struct {
	Vector     float64 `json:"vector"`
	Words      float64 `json:"words"`
	Entity     float64 `json:"entity"`
	Fused      float64 `json:"fused"`
	VectorRank int     `json:"vector_rank,omitempty"`
	WordsRank  int     `json:"words_rank,omitempty"`
	EntityRank int     `json:"entity_rank,omitempty"`
	// WordsScore is the words ranking's own score: the share of the weight of the text's
	// terms the belief holds, each term weighted by its inverse document frequency.
	WordsScore float64 `json:"words_score,omitempty"`
}

// fuse is the beliefs of the three rankings, each once, by fused score, best first, at
// most k; each carries its Match. Equal scores keep the nearer first, then by id, as the
// vector read does.
func fuse(k int, vector, words, named []Belief) []Belief {
	byID := map[int64]*Belief{}
	var order []int64
	add := func(list []Belief, set func(m *Match, rank int)) {
		for i, b := range list {
			got, ok := byID[b.ID]
			if !ok {
				var wordsScore float64
				if b.Match != nil {
					wordsScore = b.Match.WordsScore
				}
				b.Match = &Match{WordsScore: wordsScore}
				byID[b.ID], got = &b, &b
				order = append(order, b.ID)
			}
			if got.Distance == nil {
				got.Distance = b.Distance
			}
			if b.Match != nil && b.Match.WordsScore > got.Match.WordsScore {
				got.Match.WordsScore = b.Match.WordsScore
			}
			set(got.Match, i+1)
		}
	}
	add(vector, func(m *Match, r int) { m.VectorRank = r })
	add(words, func(m *Match, r int) { m.WordsRank = r })
	add(named, func(m *Match, r int) { m.EntityRank = r })
	out := make([]Belief, 0, len(order))
	for _, id := range order {
		b := byID[id]
		m := b.Match
		if b.Distance != nil {
			m.Vector = WeightVector * min(1, max(0, 1-*b.Distance))
		}
		m.Words = WeightWords * m.WordsScore
		if m.EntityRank > 0 {
			m.Entity = WeightEntity
		}
		m.Fused = m.Vector + m.Words + m.Entity
		out = append(out, *b)
	}
	slices.SortStableFunc(out, func(a, b Belief) int {
		return cmp.Or(cmp.Compare(b.Match.Fused, a.Match.Fused), compareDistance(a.Distance, b.Distance), cmp.Compare(a.ID, b.ID))
	})
	return out[:min(k, len(out))]
}

// compareDistance orders the nearer first, a belief without a distance last.
func compareDistance(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*a, *b)
}

// fused is b's fused score, 0 outside a read by a text.
func fused(b Belief) float64 {
	if b.Match == nil {
		return 0
	}
	return b.Match.Fused
}
