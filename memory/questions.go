package memory

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

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
// second opinion, in batch order: none for an operator's batch or with the guards off,
// and no read when b has no destructive directive. It reads what Apply reads, without
// the scope's lock: Apply judges again, and a directive it finds unsettled without an
// Opinion is held. An invalid batch is the error Apply would return.
func (s *Store) Questions(ctx context.Context, b *Batch) ([]Question, error) {
	if s.containment.Off || (b.Origin != RevisionExtraction && b.Origin != RevisionConsolidation) || !destroys(b) {
		return nil, nil
	}
	nb := *b
	nb.Facts, nb.Seen = slices.Clone(b.Facts), nil
	if err := nb.normalize(s.clock()); err != nil {
		return nil, err
	}
	var qs []Question
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		a := &applier{store: s, tx: tx, b: &nb, now: s.clock(), touched: map[int64]bool{}, guard: newGuard(s.containment, &nb), peek: true}
		if err := a.lockAndCheck(ctx); err != nil {
			return err
		}
		target := func(i int) *target {
			if i < 0 || i >= len(nb.Candidates) {
				return nil
			}
			t, ok := a.ahead.target(nb.Candidates[i])
			if !ok || t.Status != StatusActive {
				return nil // Apply refuses it, whatever a second opinion says
			}
			return t
		}
		for i := range nb.Facts {
			f := &nb.Facts[i]
			d := f.Resolves
			if d == nil || d.Action == ActionReinforce || f.Confidence < s.floor {
				continue
			}
			if t := target(d.Index); t != nil && a.guard.judge(f, t).unsettled() {
				qs = append(qs, Question{Fact: i, Resolution: -1, Action: d.Action, Reason: d.Reason, Target: t.Statement,
					Statement: f.Statement, Quote: f.Quote})
			}
		}
		for i, r := range nb.Resolutions {
			if r.Action != ActionSupersede || r.ReplacedBy == nil {
				continue
			}
			t, rep := target(r.Index), target(*r.ReplacedBy)
			if t != nil && rep != nil && t.ID != rep.ID && a.guard.judgeResolution(t, rep, a.guard.vectors[rep.ID]).unsettled() {
				qs = append(qs, Question{Fact: -1, Resolution: i, Action: r.Action, Reason: r.Reason, Target: t.Statement,
					Statement: rep.Statement})
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("questions of scope %q: %w", b.Scope, err)
	}
	return qs, nil
}

// destroys says whether b has a destructive directive a guard judges.
func destroys(b *Batch) bool {
	return slices.ContainsFunc(b.Facts, func(f Fact) bool { return f.Resolves != nil && f.Resolves.Action != ActionReinforce }) ||
		slices.ContainsFunc(b.Resolutions, func(r Resolution) bool { return r.Action == ActionSupersede && r.ReplacedBy != nil })
}
