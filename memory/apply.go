package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// OutcomeKind is what Apply did with one fact or resolution.
type OutcomeKind string

// The outcomes of Apply, one per fact or resolution.
const (
	OutcomeAccepted   OutcomeKind = "accepted"   // stored as a new active belief
	OutcomeSuperseded OutcomeKind = "superseded" // stored, and its target superseded
	OutcomeBackfilled OutcomeKind = "backfilled" // older than its target: stored already superseded
	OutcomeRetracted  OutcomeKind = "retracted"  // target retracted (and the statement stored, if any)
	OutcomeReinforced OutcomeKind = "reinforced" // target reinforced, nothing stored
	OutcomeDuplicate  OutcomeKind = "duplicate"  // same as an active belief: that one reinforced
	OutcomeRejected   OutcomeKind = "rejected"   // under the confidence floor: nothing stored
	OutcomeConflict   OutcomeKind = "conflict"   // refused: a conflict row records it
	OutcomeKept       OutcomeKind = "kept"       // found to hold although its basis changed
)

// Outcome is the result of one fact or resolution.
type Outcome struct {
	Kind       OutcomeKind `json:"outcome"`
	BeliefID   int64       `json:"belief_id,omitempty"` // the belief stored, if any
	TargetID   int64       `json:"target_id,omitempty"` // the belief revised, if any
	EventID    int64       `json:"event_id,omitempty"`
	ConflictID int64       `json:"conflict_id,omitempty"`
	// Cause is why a conflict was refused or held.
	Cause  Cause  `json:"cause,omitempty"`
	Action Action `json:"action,omitempty"`
	Reason Reason `json:"reason,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Result holds one outcome per fact, resolution and kept belief, in batch order.
type Result struct {
	Facts       []Outcome
	Resolutions []Outcome
	Kept        []Outcome
}

// All is every outcome: facts, resolutions, then kept beliefs.
func (r *Result) All() []Outcome {
	return slices.Concat(r.Facts, r.Resolutions, r.Kept)
}

// ErrScope is returned when a batch names a candidate outside its scope: a caller bug,
// never the LLM's doing, since the LLM only sees indices.
var ErrScope = errors.New("candidate outside the batch's scope")

// Apply applies b in its own transaction. See ApplyTx.
func (s *Store) Apply(ctx context.Context, b *Batch) (*Result, error) {
	if err := s.ensureBatchModel(ctx, b); err != nil {
		return nil, err
	}
	var res *Result
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		res, err = s.ApplyTx(ctx, tx, b)
		return err
	})
	return res, err
}

func (s *Store) ensureBatchModel(ctx context.Context, b *Batch) error {
	if dim := b.vectorDim(); dim > 0 && b.EmbedModel != "" {
		return s.EnsureEmbeddingModel(ctx, b.EmbedModel, dim)
	}
	return nil
}

// ApplyTx is the revision engine. It applies every fact and resolution of b inside tx,
// holding the scope's advisory lock so that no two writers revise one scope at once, and
// writes one revision_event per applied revision and one conflict per refused one. An
// invalid batch changes nothing and returns an error wrapping ErrInvalid; the caller
// must roll tx back on any error.
func (s *Store) ApplyTx(ctx context.Context, tx pgx.Tx, b *Batch) (*Result, error) {
	now := s.clock()
	nb := *b
	nb.Facts = slices.Clone(b.Facts)
	if err := nb.normalize(now); err != nil {
		return nil, err
	}
	b = &nb

	a := &applier{store: s, tx: tx, b: b, now: now, touched: map[int64]bool{}, guard: newGuard(s.containment, b)}
	if err := a.lockAndCheck(ctx); err != nil {
		return nil, err
	}
	if dim := b.vectorDim(); dim > 0 {
		registered, err := s.embeddingDim(ctx, tx, b.EmbedModel)
		if err != nil {
			return nil, err
		}
		if dim != registered {
			return nil, fmt.Errorf("%w: vectors have %d dimensions, model %q has %d", ErrEmbeddingModel, dim, b.EmbedModel, registered)
		}
	}
	res := &Result{}
	for i := range b.Facts {
		o, err := a.fact(ctx, &b.Facts[i])
		if err != nil {
			return nil, fmt.Errorf("apply fact %d: %w", i, err)
		}
		res.Facts = append(res.Facts, o)
	}
	for i, r := range b.Resolutions {
		o, err := a.resolution(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("apply resolution %d: %w", i, err)
		}
		res.Resolutions = append(res.Resolutions, o)
	}
	for _, k := range b.Keep {
		res.Kept = append(res.Kept, a.keep(k))
	}
	if err := a.announce(ctx); err != nil {
		return nil, err
	}
	return res, nil
}

type applier struct {
	store *Store
	// changes are what the batch changed, announced when it ends; reviewed: a queued
	// statement may have opened or closed review items (a flag, a retirement, a keep).
	changes  []Change
	reviewed bool
	tx       pgx.Tx
	b        *Batch
	now      time.Time
	// touched holds the beliefs this batch already revised: a second directive on one
	// of them is stale, never a revision of the revision.
	touched map[int64]bool
	// queued are the writes not sent yet (apply_send.go): a caller that also uses tx
	// itself flushes them first.
	queued pipeline
	// ahead is what was read with the scope's lock, until the batch first writes.
	ahead *readAhead
	// guard holds a model's destructive directives it does not trust (containment.go).
	guard *guard
	// entities is what the batch knows of its scope's registry (entity_apply.go).
	entities *registry
	// peek: the applier reads what Apply would decide on without the scope's lock, and
	// writes nothing (Store.Questions).
	peek bool
}

func (a *applier) candidate(ctx context.Context, index int) (*target, bool, error) {
	if index < 0 || index >= len(a.b.Candidates) {
		return nil, false, nil
	}
	t, err := a.load(ctx, a.b.Candidates[index])
	return t, err == nil, err
}

func (a *applier) fact(ctx context.Context, f *Fact) (Outcome, error) {
	validFrom := a.b.At
	if f.ValidFrom != nil {
		validFrom = *f.ValidFrom
	}
	if f.Confidence < a.store.floor {
		return Outcome{Kind: OutcomeRejected, Detail: fmt.Sprintf("confidence %.2f is under the floor %.2f", f.Confidence, a.store.floor)}, nil
	}
	d := f.Resolves
	if d == nil {
		dup, err := a.activeDuplicate(ctx, f.Statement)
		if err != nil {
			return Outcome{}, err
		}
		if dup != nil {
			o, err := a.restate(ctx, dup, f, validFrom, "same statement as an active belief", nil)
			if o.Kind == OutcomeReinforced {
				o.Kind = OutcomeDuplicate // else it came back, and was stored as history
			}
			return o, err
		}
		id, err := a.insert(ctx, f, validFrom, StatusActive, nil)
		return Outcome{Kind: OutcomeAccepted, BeliefID: id}, err
	}

	t, ok, err := a.candidate(ctx, d.Index)
	if err != nil {
		return Outcome{}, err
	}
	if !ok {
		return a.refuse(ctx, refusal{Cause: CauseInvalidIndex, Action: d.Action, Reason: d.Reason, Proposal: f,
			Detail: fmt.Sprintf("index %d is not one of the %d candidates shown", d.Index, len(a.b.Candidates)),
		})
	}
	if a.touched[t.ID] {
		return a.refuse(ctx, refusal{Cause: CauseStaleTarget, Action: d.Action, Reason: d.Reason, Target: t.ID, Proposal: f,
			Detail: "the target was already revised by another fact of this batch",
		})
	}

	switch d.Action {
	case ActionReinforce:
		if t.Status != StatusActive {
			return a.refuse(ctx, refusal{Cause: CauseStaleTarget, Action: d.Action, Reason: d.Reason, Target: t.ID, Proposal: f,
				Detail: "the target is " + string(t.Status) + ", not active",
			})
		}
		return a.restate(ctx, t, f, validFrom, d.Rationale, f.EventEmbedding)
	case ActionRetract:
		return a.retract(ctx, t, f, d, validFrom)
	default:
		return a.supersede(ctx, t, f, d, validFrom)
	}
}

func (a *applier) supersede(ctx context.Context, t *target, f *Fact, d *Directive, validFrom time.Time) (Outcome, error) {
	// A correction says the old belief was never true: unless the writer dated it, the
	// new one holds from when the old one was thought to.
	if d.Reason == ReasonCorrection && f.ValidFrom == nil {
		validFrom = t.ValidFrom
	}
	head, err := a.head(ctx, t)
	if err != nil {
		return Outcome{}, err
	}
	if head.Status != StatusActive || (head.ID != t.ID && a.touched[head.ID]) {
		return a.refuse(ctx, refusal{Cause: CauseStaleTarget, Action: d.Action, Reason: d.Reason, Target: t.ID, Proposal: f,
			Detail: fmt.Sprintf("the target is %s and no other writer's active belief replaced it", t.Status),
		})
	}
	j := a.guard.judge(f, head)
	if j.cause != "" {
		return a.beside(ctx, head, f, d, validFrom, j.cause, j.why)
	}
	if j.unsettled() {
		if cause, why := opinion(j, f.Opinion); cause != "" {
			return a.beside(ctx, head, f, d, validFrom, cause, why)
		}
	}
	if why := happened(a.b.Origin, head, d.Reason); why != "" {
		return a.beside(ctx, head, f, d, validFrom, CauseEvent, why)
	}
	if validFrom.Before(head.ValidFrom) {
		return a.backfill(ctx, head, f, d, validFrom)
	}
	if normStatement(f.Statement) == normStatement(head.Statement) {
		return a.restate(ctx, head, f, validFrom, "restated as a revision of itself", f.EventEmbedding)
	}
	if why := entrenched(a.b.Origin, head, f.Origin, f.Confidence); why != "" {
		return a.refuse(ctx, refusal{Cause: CauseEntrenchment, Action: d.Action, Reason: d.Reason, Target: head.ID, Proposal: f,
			Detail: why,
		})
	}
	if cause, why := a.guard.admit(a.b.Origin, j.confirmed); cause != "" {
		return a.beside(ctx, head, f, d, validFrom, cause, why)
	}
	if j.unsettled() && f.entity == head.Entity {
		// The second opinion said the two attributes name one slot of the entity.
		a.learnSlot(f.Attribute, head.Attribute, learnedFromSecondOpinion)
	}
	rationale, embedding := d.Rationale, f.EventEmbedding
	if head.ID != t.ID {
		// Another writer superseded the target since it was shown; the rules were
		// re-checked against the belief that replaced it. The vector is of the revision
		// of the target: the event's is computed later, from its own text.
		rationale = joinText(rationale, fmt.Sprintf("target %d was superseded by %d since it was shown; revised %d", t.ID, head.ID, head.ID))
		embedding = nil
	}
	id, err := a.insert(ctx, f, validFrom, StatusActive, nil)
	if err != nil {
		return Outcome{}, err
	}
	a.retire(head.ID, StatusSuperseded, validFrom, &id, d.Reason)
	ev, err := a.writeEvent(ctx, eventRow{action: ActionSupersede, reason: d.Reason, old: head, newID: &id,
		newStatement: f.Statement, excerpt: f.Quote, rationale: rationale, embedding: embedding, prior: storedNew()})
	return Outcome{Kind: OutcomeSuperseded, BeliefID: id, TargetID: head.ID, EventID: ev, Action: ActionSupersede, Reason: d.Reason}, err
}

// backfill stores a belief older than the active one it would replace as history: it
// goes into the supersession chain at its place in valid time, so the final state does
// not depend on the order in which episodes were processed.
func (a *applier) backfill(ctx context.Context, head *target, f *Fact, d *Directive, validFrom time.Time) (Outcome, error) {
	c, err := a.chainOf(ctx, head.ID)
	if err != nil {
		return Outcome{}, err
	}
	at, err := c.place(validFrom)
	if err != nil {
		return Outcome{}, err
	}
	if normStatement(f.Statement) == normStatement(at.next.Statement) {
		// Said before it was first recorded: the same belief, known to hold earlier.
		return a.restate(ctx, at.next, f, validFrom, "restated before the recorded start", f.EventEmbedding)
	}
	return a.storeHistory(ctx, at, f, d, validFrom)
}

// storeHistory stores f, valid from validFrom, at its place in a chain: between prev
// and succ, or before succ at the chain's start. The revision events follow the links:
// prev → succ becomes new → succ, and prev → new is recorded, as in-order processing
// would have recorded them. A statement of prev is a restatement of prev.
func (a *applier) storeHistory(ctx context.Context, at place, f *Fact, d *Directive, validFrom time.Time) (Outcome, error) {
	prev, succ := at.prev, at.succ
	if prev != nil && normStatement(f.Statement) == normStatement(prev.Statement) {
		// Said again while it held: nothing changed then.
		return a.reinforce(ctx, prev, eventRow{excerpt: f.Quote, rationale: "restated while it held"})
	}
	id, err := a.insert(ctx, f, validFrom, StatusSuperseded, &retirement{until: succ.ValidFrom, by: succ.ID})
	if err != nil {
		return Outcome{}, err
	}
	nt := &target{ID: id, Statement: f.Statement}
	rationale := joinText(d.Rationale, fmt.Sprintf("valid from %s, before %d (valid from %s): stored as history",
		validFrom.Format(time.RFC3339), succ.ID, succ.ValidFrom.Format(time.RFC3339)))
	// The writer's vector is of the revision of the belief it was shown; these events
	// link other beliefs, and get their own vectors later (Store.Unembedded).
	ends := eventRow{action: ActionSupersede, reason: d.Reason, old: nt, newID: &succ.ID,
		newStatement: succ.Statement, excerpt: f.Quote, rationale: rationale, prior: &eventPrior{History: true}}
	if succ.EpisodeID != nil {
		// What ends the new belief is what succ's episode said.
		ends.from, ends.excerpt = succ.EpisodeID, deref(succ.Quote)
	}
	rewritten := int64(0)
	if prev != nil {
		// prev → succ becomes prev → new → succ: prev now ends when the new belief
		// starts, and the events that recorded prev → succ now record new → succ, so
		// that no few-shot example contradicts the links.
		if rewritten, err = a.writeRelink(ctx, relinkParams{Prev: prev.ID, Next: succ.ID, New: nt, ValidFrom: validFrom}); err != nil {
			return Outcome{}, err
		}
	}
	var ev int64
	if rewritten == 0 {
		// No event recorded prev → succ (prev led there past a forgotten belief, or there
		// is no prev): the link new → succ gets its own.
		if ev, err = a.writeEvent(ctx, ends); err != nil {
			return Outcome{}, err
		}
	}
	if prev != nil {
		ev, err = a.writeEvent(ctx, eventRow{action: ActionSupersede, reason: d.Reason, old: prev, newID: &id,
			newStatement: f.Statement, excerpt: f.Quote, rationale: rationale, prior: storedNew()})
	}
	return Outcome{Kind: OutcomeBackfilled, BeliefID: id, TargetID: succ.ID, EventID: ev, Action: ActionSupersede, Reason: d.Reason}, err
}

func (a *applier) retract(ctx context.Context, t *target, f *Fact, d *Directive, at time.Time) (Outcome, error) {
	if t.Status != StatusActive {
		return a.refuse(ctx, refusal{Cause: CauseStaleTarget, Action: d.Action, Reason: d.Reason, Target: t.ID, Proposal: f,
			Detail: "the target is " + string(t.Status) + ", not active",
		})
	}
	j := a.guard.judge(f, t)
	if j.cause != "" {
		return a.holdRetraction(ctx, t, f, d, at, j.cause, j.why)
	}
	if j.unsettled() {
		if cause, why := opinion(j, f.Opinion); cause != "" {
			return a.holdRetraction(ctx, t, f, d, at, cause, why)
		}
	}
	if why := entrenched(a.b.Origin, t, f.Origin, f.Confidence); why != "" {
		return a.refuse(ctx, refusal{Cause: CauseEntrenchment, Action: d.Action, Reason: d.Reason, Target: t.ID, Proposal: f,
			Detail: why,
		})
	}
	until := at
	if d.Reason == ReasonCorrection {
		until = t.ValidFrom // it was never true
		if f.ValidFrom == nil {
			at = t.ValidFrom
		}
	} else if at.Before(t.ValidFrom) {
		return a.refuse(ctx, refusal{Cause: CauseTimeOrder, Action: d.Action, Reason: d.Reason, Target: t.ID, Proposal: f,
			Detail: fmt.Sprintf("the retraction (%s) is older than the belief (valid from %s)", at.Format(time.RFC3339), t.ValidFrom.Format(time.RFC3339)),
		})
	}
	if cause, why := a.guard.admit(a.b.Origin, j.confirmed); cause != "" {
		return a.holdRetraction(ctx, t, f, d, at, cause, why)
	}
	var (
		newID *int64
		prior *eventPrior
	)
	if f.Statement != "" {
		id, err := a.insert(ctx, f, at, StatusActive, nil)
		if err != nil {
			return Outcome{}, err
		}
		newID, prior = &id, storedNew()
	}
	a.retire(t.ID, StatusRetracted, until, newID, d.Reason)
	ev, err := a.writeEvent(ctx, eventRow{action: ActionRetract, reason: d.Reason, old: t, newID: newID,
		newStatement: f.Statement, excerpt: f.Quote, rationale: d.Rationale, embedding: f.EventEmbedding, prior: prior})
	o := Outcome{Kind: OutcomeRetracted, TargetID: t.ID, EventID: ev, Action: ActionRetract, Reason: d.Reason}
	if newID != nil {
		o.BeliefID = *newID
	}
	return o, err
}

func (a *applier) resolution(ctx context.Context, r Resolution) (Outcome, error) {
	proposal := &Fact{Confidence: 0, Origin: OriginInferred}
	t, ok, err := a.candidate(ctx, r.Index)
	if err != nil {
		return Outcome{}, err
	}
	if !ok {
		return a.refuse(ctx, refusal{Cause: CauseInvalidIndex, Action: r.Action, Reason: r.Reason, Proposal: proposal,
			Detail: fmt.Sprintf("index %d is not one of the %d candidates shown", r.Index, len(a.b.Candidates)),
		})
	}
	if t.Status != StatusActive || a.touched[t.ID] {
		return a.refuse(ctx, refusal{Cause: CauseStaleTarget, Action: r.Action, Reason: r.Reason, Target: t.ID, Proposal: proposal,
			Detail: "the target is no longer active",
		})
	}
	if r.ReplacedBy == nil {
		// Nobody said so: consolidation's retraction is an inference.
		if why := entrenched(a.b.Origin, t, OriginInferred, 0); why != "" {
			return a.refuse(ctx, refusal{Cause: CauseEntrenchment, Action: r.Action, Reason: r.Reason, Target: t.ID, Proposal: proposal,
				Detail: why,
			})
		}
		until := a.b.At
		if r.Reason == ReasonCorrection || until.Before(t.ValidFrom) {
			until = t.ValidFrom
		}
		a.retire(t.ID, StatusRetracted, until, nil, r.Reason)
		ev, err := a.writeEvent(ctx, eventRow{action: ActionRetract, reason: r.Reason, old: t, rationale: r.Rationale,
			embedding: r.EventEmbedding})
		return Outcome{Kind: OutcomeRetracted, TargetID: t.ID, EventID: ev, Action: ActionRetract, Reason: r.Reason}, err
	}

	rep, ok, err := a.candidate(ctx, *r.ReplacedBy)
	if err != nil {
		return Outcome{}, err
	}
	if !ok || rep.ID == t.ID {
		return a.refuse(ctx, refusal{Cause: CauseInvalidIndex, Action: r.Action, Reason: r.Reason, Target: t.ID, Proposal: proposal,
			Detail: fmt.Sprintf("replaced_by %d is not another of the %d candidates shown", *r.ReplacedBy, len(a.b.Candidates)),
		})
	}
	proposal = &Fact{Statement: rep.Statement, Confidence: rep.Confidence, Origin: rep.Origin, Kind: rep.Kind}
	if rep.Status != StatusActive {
		return a.refuse(ctx, refusal{Cause: CauseStaleTarget, Action: r.Action, Reason: r.Reason, Target: t.ID, Replacement: rep.ID, Proposal: proposal,
			Detail: "the replacement is no longer active",
		})
	}
	// The opinion goes with the proposal, for the reviewer to read (refuse).
	proposal.Opinion = r.Opinion
	j := a.guard.judgeResolution(t, rep, a.guard.vectors[rep.ID])
	cause, why := j.cause, j.why
	if j.unsettled() {
		cause, why = opinion(j, r.Opinion)
	}
	if cause != "" {
		return a.refuse(ctx, refusal{Cause: cause, Action: r.Action, Reason: r.Reason, Target: t.ID, Replacement: rep.ID, Proposal: proposal,
			Detail: why,
		})
	}
	if why := happened(a.b.Origin, t, r.Reason); why != "" {
		return a.refuse(ctx, refusal{Cause: CauseEvent, Action: r.Action, Reason: r.Reason, Target: t.ID, Replacement: rep.ID, Proposal: proposal,
			Detail: why,
		})
	}
	if why := entrenched(a.b.Origin, t, rep.Origin, rep.Confidence); why != "" {
		return a.refuse(ctx, refusal{Cause: CauseEntrenchment, Action: r.Action, Reason: r.Reason, Target: t.ID, Replacement: rep.ID, Proposal: proposal,
			Detail: why,
		})
	}
	until := rep.ValidFrom
	if until.Before(t.ValidFrom) {
		if r.Reason != ReasonDuplicate {
			return a.refuse(ctx, refusal{Cause: CauseTimeOrder, Action: r.Action, Reason: r.Reason, Target: t.ID, Replacement: rep.ID, Proposal: proposal,
				Detail: fmt.Sprintf("the replacement (valid from %s) is older than the target (valid from %s)",
					rep.ValidFrom.Format(time.RFC3339), t.ValidFrom.Format(time.RFC3339))})
		}
		until = t.ValidFrom
	}
	a.retire(t.ID, StatusSuperseded, until, &rep.ID, r.Reason)
	ev, err := a.writeEvent(ctx, eventRow{action: ActionSupersede, reason: r.Reason, old: t, newID: &rep.ID,
		newStatement: rep.Statement, rationale: r.Rationale, embedding: r.EventEmbedding})
	return Outcome{Kind: OutcomeSuperseded, BeliefID: rep.ID, TargetID: t.ID, EventID: ev, Action: ActionSupersede, Reason: r.Reason}, err
}

// beside stores f beside the belief head it was meant to replace, and records the
// refused supersession for review with its cause: an event, which the new fact does not
// undo, a fact of another entity, which is its own entity's belief, or a directive the
// guards hold, whose new belief waits with the item, held, never current. An operator
// who applies the item supersedes head by the belief stored; one who dismisses it
// retires a held one.
func (a *applier) beside(ctx context.Context, head *target, f *Fact, d *Directive, validFrom time.Time, cause Cause, why string) (Outcome, error) {
	if normStatement(f.Statement) == normStatement(head.Statement) {
		return a.restate(ctx, head, f, validFrom, "restated as a revision of itself", f.EventEmbedding)
	}
	status := StatusActive
	if cause.Held() && cause != CauseOtherEntity {
		status = StatusHeld
	}
	id, err := a.insert(ctx, f, validFrom, status, nil)
	if err != nil {
		return Outcome{}, err
	}
	o, err := a.refuse(ctx, refusal{Cause: cause, Action: d.Action, Reason: d.Reason, Target: head.ID, Replacement: id, Proposal: f,
		Detail: why,
	})
	o.BeliefID = id
	return o, err
}

// holdRetraction keeps t and records the retraction the guards hold for review; a
// statement the retraction carried is stored as a belief of its own, which an operator
// who applies the item keeps beside the retraction.
func (a *applier) holdRetraction(ctx context.Context, t *target, f *Fact, d *Directive, at time.Time, cause Cause, why string) (Outcome, error) {
	var id int64
	if f.Statement != "" && normStatement(f.Statement) != normStatement(t.Statement) {
		var err error
		if id, err = a.insert(ctx, f, at, StatusActive, nil); err != nil {
			return Outcome{}, err
		}
	}
	o, err := a.refuse(ctx, refusal{Cause: cause, Action: d.Action, Reason: d.Reason, Target: t.ID, Replacement: id, Proposal: f,
		Detail: why,
	})
	o.BeliefID = id
	return o, err
}

// keep clears the review flag of the candidate at index: it holds although a basis of
// it changed. Its open basis_changed items close as kept.
func (a *applier) keep(index int) Outcome {
	id := a.b.Candidates[index]
	a.writeKeep(id)
	return Outcome{Kind: OutcomeKept, TargetID: id}
}

// head follows superseded_by links from t to the newest belief of its chain.
func (a *applier) head(ctx context.Context, t *target) (*target, error) {
	for range 1000 {
		if t.Status != StatusSuperseded || t.SupersededBy == nil {
			return t, nil
		}
		next, err := a.load(ctx, *t.SupersededBy)
		if err != nil {
			return nil, err
		}
		t = next
	}
	return nil, fmt.Errorf("supersession chain through belief %d is longer than 1000", t.ID)
}

// restate reinforces t with a statement of it valid from validFrom. A statement dated
// before t starts is the first record of the same belief, and the state becomes the one
// in-order processing reaches: t starts then, what t superseded ends then, t rests on
// the earlier episode and quote, and the reinforcement credits the episode t was first
// recorded from. A statement dated the day t starts, from an earlier episode, takes over
// t's provenance the same way. t never moves back past the start of a belief that held
// before it: the value then came back, and the statement is history of its own.
func (a *applier) restate(ctx context.Context, t *target, f *Fact, validFrom time.Time, rationale string, embedding []float32) (Outcome, error) {
	// Each turn restates t, or finds that the statement is of an earlier member of t's
	// chain, and restates that one in the next.
	for {
		e := eventRow{excerpt: f.Quote, rationale: rationale, embedding: embedding}
		swap := t.EpisodeID != nil && a.b.EpisodeID != nil
		switch {
		case validFrom.After(t.ValidFrom):
			return a.reinforce(ctx, t, e)
		case validFrom.Equal(t.ValidFrom):
			if !swap {
				return a.reinforce(ctx, t, e)
			}
			earlier, err := a.episodeBefore(ctx, *a.b.EpisodeID, *t.EpisodeID)
			if err != nil {
				return Outcome{}, err
			}
			if !earlier {
				return a.reinforce(ctx, t, e)
			}
		default:
			c, err := a.chainOf(ctx, t.ID)
			if err != nil {
				return Outcome{}, err
			}
			how, at, err := c.earlier(t, f.Statement, validFrom)
			switch {
			case err != nil:
				return Outcome{}, err
			case how == startKept:
				return a.reinforce(ctx, t, eventRow{excerpt: f.Quote, rationale: joinText(rationale, "said the day the belief it replaced began: its start is kept")})
			case how == restatesEarlier:
				t, embedding = at.next, nil
				continue
			case how == cameBack:
				d := &Directive{Action: ActionSupersede, Reason: ReasonTemporal, Rationale: joinText(rationale, "the value held before and came back")}
				return a.storeHistory(ctx, at, f, d, validFrom)
			}
			e.rationale = joinText(rationale, "said earlier: holds from "+validFrom.Format(time.RFC3339))
			// What held before t ends when t now starts, also past a belief that never held.
			a.writePredecessorsEnd(t.ID, c.into(t.ID), validFrom)
		}
		// Without both episodes the provenance stays; the start moves all the same.
		if swap {
			e.from, e.excerpt = t.EpisodeID, deref(t.Quote)
		}
		// The events that revised a belief into t, credited to t's first statement, now
		// credit the earlier one.
		a.writeStart(startParams{ID: t.ID, ValidFrom: validFrom, Swap: swap, Quote: f.Quote, OldEpisode: t.EpisodeID})
		return a.reinforce(ctx, t, e)
	}
}

// reinforce counts one more statement of t and records it as event e, with what it
// changed (t as loaded, before a restatement moved its start) so that a revert can put
// it back.
func (a *applier) reinforce(ctx context.Context, t *target, e eventRow) (Outcome, error) {
	was, err := a.writeReinforcement(ctx, t.ID)
	if err != nil {
		return Outcome{}, err
	}
	prior := &eventPrior{LastSeenAt: was, ValidFrom: &t.ValidFrom, EpisodeID: t.EpisodeID}
	a.touched[t.ID] = true
	e.action, e.reason, e.old, e.prior = ActionReinforce, ReasonRestated, t, prior
	ev, err := a.writeEvent(ctx, e)
	return Outcome{Kind: OutcomeReinforced, TargetID: t.ID, EventID: ev, Action: ActionReinforce, Reason: ReasonRestated}, err
}

// insert stores f as a belief valid from validFrom, with status, ended by ret when it
// is stored as history.
func (a *applier) insert(ctx context.Context, f *Fact, validFrom time.Time, status Status, ret *retirement) (int64, error) {
	if err := a.storeEntity(ctx, f); err != nil {
		return 0, err
	}
	bases := make([]int64, len(f.DependsOn))
	for i, d := range f.DependsOn {
		bases[i] = a.b.Candidates[d]
	}
	id, err := a.writeBelief(ctx, beliefParams{Fact: f, ValidFrom: validFrom, Status: status, Retired: ret, Bases: bases})
	if err != nil {
		return 0, err
	}
	a.touched[id] = true
	return id, nil
}

// retire ends belief id with status, closing its valid time at until, for reason. Its
// own open review items about a changed basis close with it, and the active beliefs
// concluded from it are flagged for review.
func (a *applier) retire(id int64, status Status, until time.Time, by *int64, reason Reason) {
	a.touched[id] = true
	a.writeRetirement(retireParams{ID: id, Status: status, Until: until, By: by, Reason: reason})
}

// refusal is one revision the rules refuse, with why: it is recorded for review.
type refusal struct {
	Cause  Cause
	Action Action
	Reason Reason
	// Target is the belief the revision was to change, 0 when the directive named none.
	Target int64
	// Replacement is the stored belief that was to replace Target, 0 when none was.
	Replacement int64
	// Proposal is what was proposed: the fact, or the replacement of a resolution.
	Proposal *Fact
	Detail   string
}

// refuse records r for review.
func (a *applier) refuse(ctx context.Context, r refusal) (Outcome, error) {
	f := r.Proposal
	pr := Proposal{Statement: f.Statement, Subject: f.Subject, Attribute: f.Attribute, Kind: f.Kind,
		Confidence: f.Confidence, Origin: f.Origin, ValidFrom: f.ValidFrom, Quote: f.Quote, At: &a.b.At}
	if o := f.Opinion; r.Cause == CauseSecondOpinion && o != nil && !o.Holds {
		// Kept in its own words: the reviewer reads the model's reason, not a summary.
		pr.Opinion = o.Why
	}
	proposed, err := json.Marshal(pr)
	if err != nil {
		return Outcome{}, fmt.Errorf("encode proposal: %w", err)
	}
	id, err := a.writeConflict(ctx, conflictParams{Cause: r.Cause, Action: r.Action, Reason: r.Reason, TargetID: nonZero(r.Target),
		BeliefID: nonZero(r.Replacement), Proposed: proposed, Detail: r.Detail})
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Kind: OutcomeConflict, ConflictID: id, TargetID: r.Target, Cause: r.Cause, Action: r.Action, Reason: r.Reason, Detail: r.Detail}, nil
}

func nonZero(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

func nullText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
