package memory

// Containment configures the guards that hold a model's destructive directive (a
// supersede or a retract from extraction or consolidation) for review instead of
// applying it: when its new belief is not related to the target, when the episode does
// not speak of the target, or when the episode's destructive directives pass a cap. An
// operator's writes are never held. docs/design.md, "Containment", says how each is
// measured and how the defaults were chosen.
type Containment struct {
	// Off applies every valid directive as the model gave it: for measuring what the
	// guards hold (eval --inject), never for serving.
	Off bool
	// SimilarityFloor is the cosine similarity of embeddings from which a directive's new
	// belief is related to its target, and an episode grounded in it
	// (REVISION_SIMILARITY_FLOOR); zero means DefaultSimilarityFloor. It depends on the
	// embedding model: `eval calibrate` measures it.
	SimilarityFloor float64
	// MaxRevisions bounds the destructive directives one episode applies
	// (MAX_REVISIONS_PER_EPISODE); zero means DefaultMaxRevisions.
	MaxRevisions int
}

// Defaults of Containment.
const (
	DefaultSimilarityFloor = 0.35
	DefaultMaxRevisions    = 5
)

func (c Containment) withDefaults() Containment {
	if c.SimilarityFloor == 0 {
		c.SimilarityFloor = DefaultSimilarityFloor
	}
	if c.MaxRevisions <= 0 {
		c.MaxRevisions = DefaultMaxRevisions
	}
	return c
}

