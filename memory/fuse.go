package memory

import (
	"cmp"
	"slices"
)

// Recall by a text fuses three rankings of a scope's beliefs (docs/design.md, "Recall by
// vectors, words and entities"): by embedding (exact, nearestRead), by the words they
// share with the text and by the entities the text names (textRanksSQL, all in one
// statement). Each gives a belief a score within 0..1: its cosine similarity to the
// text, its share of the weight of the text's words, 1 when it is about an entity the
// text names. The fused score is their weighted sum, so that how much better the best of
// a ranking is counts, not only that it is first: reciprocal rank fusion, tried first,
// put a belief holding the one rare code the question says below look-alikes that were
// middling in both rankings, as every belief of a small scope is in every ranking.
// Weights measured on LoCoMo's evidence annotations afterwards (docs/evaluation.md,
// "Retrieval"); they were set on the issue's own case (a code the embedding blurs), not
// tuned on that table.
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

// fuse is the beliefs of the vector ranking (nearest first) and of the text's rankings
// (each with its words and entity ranks from the statement, textRanksSQL), each once, by
// fused score, best first, at most k; each carries its Match. Equal scores keep the
// nearer first, then by id, as the vector read does.
func fuse(k int, vector, text []Belief) []Belief {
	out := make([]Belief, 0, len(vector)+len(text))
	at := make(map[int64]int, len(vector)+len(text))
	for i, b := range vector {
		m := textMatch(b.Match)
		m.VectorRank = i + 1
		b.Match = &m
		at[b.ID] = len(out)
		out = append(out, b)
	}
	for _, b := range text {
		if i, ok := at[b.ID]; ok {
			// Read twice: by the scope's own index, and by the text.
			m := textMatch(b.Match)
			m.VectorRank = out[i].Match.VectorRank
			out[i].Match = &m
			if out[i].Distance == nil {
				out[i].Distance = b.Distance
			}
			continue
		}
		m := textMatch(b.Match)
		b.Match = &m
		at[b.ID] = len(out)
		out = append(out, b)
	}
	for i := range out {
		b := &out[i]
		m := b.Match
		if b.Distance != nil {
			m.Vector = WeightVector * min(1, max(0, 1-*b.Distance))
		}
		m.Words = WeightWords * m.WordsScore
		if m.EntityRank > 0 {
			m.Entity = WeightEntity
		}
		m.Fused = m.Vector + m.Words + m.Entity
	}
	slices.SortStableFunc(out, func(a, b Belief) int {
		return cmp.Or(cmp.Compare(b.Match.Fused, a.Match.Fused), compareDistance(a.Distance, b.Distance), cmp.Compare(a.ID, b.ID))
	})
	return out[:min(k, len(out))]
}

// textMatch is the text's part of m, as a fused statement read it: the words score and
// ranks. Nil reads nothing.
func textMatch(m *Match) Match {
	if m == nil {
		return Match{}
	}
	return Match{WordsScore: m.WordsScore, WordsRank: m.WordsRank, EntityRank: m.EntityRank}
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
