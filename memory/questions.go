package memory

import "context"

// Question is a model's destructive directive of a batch that speaker, entity and slot
// neither confirm nor refuse: the writer asks the model a second opinion on it, all of a
// batch's in one call, and sets the answer as the directive's Opinion before Apply.
type Question struct {
	// Fact is the index of the directive's fact in Batch.Facts, -1 for a resolution;
	// Resolution the index in Batch.Resolutions, -1 for a fact.
	Fact, Resolution int
	Action           Action
	Reason           Reason
	// Target is the statement of the belief the directive would retire; Statement the
	// one that would replace it ("" for a pure retraction); Quote what the directive
	// quotes ("" for consolidation's).
	Target, Statement, Quote string
}

// Questions are the destructive directives of b that Apply would hold for want of a
// second opinion, in batch order: none for an operator's batch or with the guards off.
// It reads what Apply reads of the targets, without the scope's lock: Apply judges
// again, and a directive it finds unsettled without an Opinion is held.
func (s *Store) Questions(ctx context.Context, b *Batch) ([]Question, error) {
	return nil, nil
}
