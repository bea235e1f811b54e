package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// OutcomeKind is what Apply did with one fact or resolution.
type OutcomeKind string

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
	Action     Action      `json:"action,omitempty"`
	Reason     Reason      `json:"reason,omitempty"`
	Detail     string      `json:"detail,omitempty"`
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

	if err := lockAndCheck(ctx, tx, b); err != nil {
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
	a := &applier{store: s, tx: tx, b: b, now: now, touched: map[int64]bool{}}
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
		o, err := a.keep(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("keep candidate %d: %w", k, err)
		}
		res.Kept = append(res.Kept, o)
	}
	return res, nil
}

// lockScopeSQL serializes writers of one scope until their transaction ends.
const lockScopeSQL = "SELECT pg_advisory_xact_lock(hashtext('credo:scope'), hashtext($1))"

// queueLockScope queues the scope's lock in b, for a writer that touches rows of the
// scope (an episode's state) before it calls ApplyTx: the lock comes first, as in every
// writer, so that a writer and a purge of the scope never wait on each other in turn.
func queueLockScope(b *pgx.Batch, scope string) { b.Queue(lockScopeSQL, scope) }

func lockScope(ctx context.Context, tx pgx.Tx, scope string) error {
	if _, err := tx.Exec(ctx, lockScopeSQL, scope); err != nil {
		return fmt.Errorf("lock scope %q: %w", scope, err)
	}
	return nil
}

// lockAndCheck takes the scope's lock, then checks under it that every candidate still
// exists in the scope and that the scope gained no active belief since b.Seen: one round
// trip, as the two statements are sent together and the second runs once the first holds
// the lock (each statement reads what is committed when it starts).
func lockAndCheck(ctx context.Context, tx pgx.Tx, b *Batch) error {
	latest := int64(-1) // no snapshot: nothing counts as unseen
	if b.Seen != nil {
		latest = b.Seen.Latest
	}
	batch := &pgx.Batch{}
	batch.Queue(lockScopeSQL, b.Scope)
	// Every subquery names the scope: on Citus the check runs on the scope's shard alone.
	// Only when something is missing does checkElsewhere look at other scopes.
	batch.Queue(`SELECT
			(SELECT count(*) FROM belief WHERE scope = $2 AND id = ANY($1)),
			(SELECT count(*) FROM belief WHERE $3 >= 0 AND scope = $2 AND id > $3 AND status = 'active'),
			$4::bigint IS NULL OR EXISTS (SELECT 1 FROM episode WHERE scope = $2 AND id = $4)`,
		b.Candidates, b.Scope, latest, b.EpisodeID)
	br := tx.SendBatch(ctx, batch)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return fmt.Errorf("lock scope %q: %w", b.Scope, err)
	}
	var (
		inScope, unseen int
		episodeInScope  bool
	)
	if err := br.QueryRow().Scan(&inScope, &unseen, &episodeInScope); err != nil {
		return fmt.Errorf("check candidates: %w", err)
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("check candidates: %w", err)
	}
	if want := len(uniq(b.Candidates)); inScope != want || !episodeInScope {
		if err := checkElsewhere(ctx, tx, b, inScope, want); err != nil {
			return err
		}
	}
	if unseen > 0 {
		return fmt.Errorf("%w: %d active beliefs of %q appeared since the writer read it", ErrStale, unseen, b.Scope)
	}
	return nil
}

// checkElsewhere tells why candidates or the episode were not found in b's scope: rows
// of another scope (ErrScope), or candidates purged since they were shown (ErrStale). It
// reads every scope, so it runs only on this rare path, never on a good batch.
func checkElsewhere(ctx context.Context, tx pgx.Tx, b *Batch, inScope, want int) error {
	var found int
	var foreignEpisode bool
	err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM belief WHERE id = ANY($1)),
			EXISTS (SELECT 1 FROM episode WHERE id = $3 AND scope <> $2)`,
		b.Candidates, b.Scope, b.EpisodeID).Scan(&found, &foreignEpisode)
	if err != nil {
		return fmt.Errorf("check candidates: %w", err)
	}
	if inScope != found {
		return fmt.Errorf("%w: %d candidates, %d in scope %q", ErrScope, found, inScope, b.Scope)
	}
	if foreignEpisode {
		// Provenance of another scope would let a purge of this one rewrite it.
		return fmt.Errorf("%w: episode %d is not of scope %q", ErrScope, *b.EpisodeID, b.Scope)
	}
	if found != want {
		// Purged since they were shown: the writer decides again from what is left.
		return fmt.Errorf("%w: %d of %d candidates no longer exist", ErrStale, want-found, want)
	}
	// The episode is gone (purged): the belief's key to it fails as it always did.
	return nil
}

func uniq(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// target is the part of a belief revision decisions need.
type target struct {
	ID           int64
	Statement    string
	Status       Status
	Origin       Origin
	Kind         Kind
	Confidence   float64
	ValidFrom    time.Time
	ValidUntil   *time.Time
	SupersededBy *int64
	// EpisodeID and Quote are where it was first said.
	EpisodeID *int64
	Quote     *string
}

const targetColumns = "id, statement, status, origin, kind, confidence, valid_from, valid_until, superseded_by, episode_id, quote"

func scanTarget(row pgx.Row) (*target, error) {
	var t target
	if err := row.Scan(&t.ID, &t.Statement, &t.Status, &t.Origin, &t.Kind, &t.Confidence, &t.ValidFrom, &t.ValidUntil, &t.SupersededBy, &t.EpisodeID, &t.Quote); err != nil {
		return nil, err
	}
	t.ValidFrom = t.ValidFrom.UTC()
	return &t, nil
}

type applier struct {
	store *Store
	tx    pgx.Tx
	b     *Batch
	now   time.Time
	// touched holds the beliefs this batch already revised: a second directive on one
	// of them is stale, never a revision of the revision.
	touched map[int64]bool
}

func (a *applier) load(ctx context.Context, id int64) (*target, error) {
	t, err := scanTarget(a.tx.QueryRow(ctx, "SELECT "+targetColumns+" FROM belief WHERE scope = $2 AND id = $1 FOR UPDATE", id, a.b.Scope))
	if err != nil {
		return nil, fmt.Errorf("load belief %d: %w", id, err)
	}
	return t, nil
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
		return a.conflict(ctx, CauseInvalidIndex, d.Action, &d.Reason, nil, f,
			fmt.Sprintf("index %d is not one of the %d candidates shown", d.Index, len(a.b.Candidates)))
	}
	if a.touched[t.ID] {
		return a.conflict(ctx, CauseStaleTarget, d.Action, &d.Reason, &t.ID, f, "the target was already revised by another fact of this batch")
	}

	switch d.Action {
	case ActionReinforce:
		if t.Status != StatusActive {
			return a.conflict(ctx, CauseStaleTarget, d.Action, &d.Reason, &t.ID, f, "the target is "+string(t.Status)+", not active")
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
		return a.conflict(ctx, CauseStaleTarget, d.Action, &d.Reason, &t.ID, f,
			fmt.Sprintf("the target is %s and no other writer's active belief replaced it", t.Status))
	}
	if why := a.happened(head, d.Reason); why != "" {
		return a.beside(ctx, head, f, d, validFrom, why)
	}
	if validFrom.Before(head.ValidFrom) {
		return a.backfill(ctx, head, f, d, validFrom)
	}
	if normStatement(f.Statement) == normStatement(head.Statement) {
		return a.restate(ctx, head, f, validFrom, "restated as a revision of itself", f.EventEmbedding)
	}
	if why := a.entrenched(head, f.Origin, f.Confidence); why != "" {
		return a.conflict(ctx, CauseEntrenchment, d.Action, &d.Reason, &head.ID, f, why)
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
	if err := a.retire(ctx, head.ID, StatusSuperseded, validFrom, &id, d.Reason); err != nil {
		return Outcome{}, err
	}
	ev, err := a.event(ctx, eventRow{action: ActionSupersede, reason: d.Reason, old: head, newID: &id,
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
		if rewritten, err = a.insertIntoChain(ctx, prev, succ, nt, validFrom); err != nil {
			return Outcome{}, err
		}
	}
	var ev int64
	if rewritten == 0 {
		// No event recorded prev → succ (prev led there past a forgotten belief, or there
		// is no prev): the link new → succ gets its own.
		if ev, err = a.event(ctx, ends); err != nil {
			return Outcome{}, err
		}
	}
	if prev != nil {
		ev, err = a.event(ctx, eventRow{action: ActionSupersede, reason: d.Reason, old: prev, newID: &id,
			newStatement: f.Statement, excerpt: f.Quote, rationale: rationale, prior: storedNew()})
	}
	return Outcome{Kind: OutcomeBackfilled, BeliefID: id, TargetID: succ.ID, EventID: ev, Action: ActionSupersede, Reason: d.Reason}, err
}

// insertIntoChain relinks prev → next as prev → nt → next: prev now ends when nt
// starts, and the events that recorded prev → next now record nt → next, so that no
// few-shot example contradicts the links.
func (a *applier) insertIntoChain(ctx context.Context, prev, next, nt *target, validFrom time.Time) (rewritten int64, err error) {
	// least: prev never ends later than it did.
	if _, err := a.tx.Exec(ctx, `UPDATE belief SET superseded_by = $2, valid_until = least(valid_until, $3), updated_at = $4
		WHERE scope = $5 AND id = $1`, prev.ID, nt.ID, validFrom, a.now, a.b.Scope); err != nil {
		return 0, fmt.Errorf("relink belief %d: %w", prev.ID, err)
	}
	// A rewritten event's vector no longer matches its text: it is computed again.
	tag, err := a.tx.Exec(ctx, `UPDATE revision_event SET old_belief_id = $3, old_statement = $4, embedding = NULL, embed_model = NULL
		WHERE scope = $5 AND old_belief_id = $1 AND new_belief_id = $2 AND action = 'supersede'`, prev.ID, next.ID, nt.ID, nt.Statement, a.b.Scope)
	if err != nil {
		return 0, fmt.Errorf("rewrite events of belief %d: %w", prev.ID, err)
	}
	return tag.RowsAffected(), nil
}

func (a *applier) retract(ctx context.Context, t *target, f *Fact, d *Directive, at time.Time) (Outcome, error) {
	if t.Status != StatusActive {
		return a.conflict(ctx, CauseStaleTarget, d.Action, &d.Reason, &t.ID, f, "the target is "+string(t.Status)+", not active")
	}
	if why := a.entrenched(t, f.Origin, f.Confidence); why != "" {
		return a.conflict(ctx, CauseEntrenchment, d.Action, &d.Reason, &t.ID, f, why)
	}
	until := at
	if d.Reason == ReasonCorrection {
		until = t.ValidFrom // it was never true
		if f.ValidFrom == nil {
			at = t.ValidFrom
		}
	} else if at.Before(t.ValidFrom) {
		return a.conflict(ctx, CauseTimeOrder, d.Action, &d.Reason, &t.ID, f,
			fmt.Sprintf("the retraction (%s) is older than the belief (valid from %s)", at.Format(time.RFC3339), t.ValidFrom.Format(time.RFC3339)))
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
	if err := a.retire(ctx, t.ID, StatusRetracted, until, newID, d.Reason); err != nil {
		return Outcome{}, err
	}
	ev, err := a.event(ctx, eventRow{action: ActionRetract, reason: d.Reason, old: t, newID: newID,
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
		return a.conflict(ctx, CauseInvalidIndex, r.Action, &r.Reason, nil, proposal,
			fmt.Sprintf("index %d is not one of the %d candidates shown", r.Index, len(a.b.Candidates)))
	}
	if t.Status != StatusActive || a.touched[t.ID] {
		return a.conflict(ctx, CauseStaleTarget, r.Action, &r.Reason, &t.ID, proposal, "the target is no longer active")
	}
	if r.ReplacedBy == nil {
		// Nobody said so: consolidation's retraction is an inference.
		if why := a.entrenched(t, OriginInferred, 0); why != "" {
			return a.conflict(ctx, CauseEntrenchment, r.Action, &r.Reason, &t.ID, proposal, why)
		}
		until := a.b.At
		if r.Reason == ReasonCorrection || until.Before(t.ValidFrom) {
			until = t.ValidFrom
		}
		if err := a.retire(ctx, t.ID, StatusRetracted, until, nil, r.Reason); err != nil {
			return Outcome{}, err
		}
		ev, err := a.event(ctx, eventRow{action: ActionRetract, reason: r.Reason, old: t, rationale: r.Rationale,
			embedding: r.EventEmbedding})
		return Outcome{Kind: OutcomeRetracted, TargetID: t.ID, EventID: ev, Action: ActionRetract, Reason: r.Reason}, err
	}

	rep, ok, err := a.candidate(ctx, *r.ReplacedBy)
	if err != nil {
		return Outcome{}, err
	}
	if !ok || rep.ID == t.ID {
		return a.conflict(ctx, CauseInvalidIndex, r.Action, &r.Reason, &t.ID, proposal,
			fmt.Sprintf("replaced_by %d is not another of the %d candidates shown", *r.ReplacedBy, len(a.b.Candidates)))
	}
	proposal = &Fact{Statement: rep.Statement, Confidence: rep.Confidence, Origin: rep.Origin, Kind: rep.Kind}
	if rep.Status != StatusActive {
		return a.conflict(ctx, CauseStaleTarget, r.Action, &r.Reason, &t.ID, proposal, "the replacement is no longer active", rep.ID)
	}
	if why := a.happened(t, r.Reason); why != "" {
		return a.conflict(ctx, CauseEvent, r.Action, &r.Reason, &t.ID, proposal, why, rep.ID)
	}
	if why := a.entrenched(t, rep.Origin, rep.Confidence); why != "" {
		return a.conflict(ctx, CauseEntrenchment, r.Action, &r.Reason, &t.ID, proposal, why, rep.ID)
	}
	until := rep.ValidFrom
	if until.Before(t.ValidFrom) {
		if r.Reason != ReasonDuplicate {
			return a.conflict(ctx, CauseTimeOrder, r.Action, &r.Reason, &t.ID, proposal,
				fmt.Sprintf("the replacement (valid from %s) is older than the target (valid from %s)",
					rep.ValidFrom.Format(time.RFC3339), t.ValidFrom.Format(time.RFC3339)), rep.ID)
		}
		until = t.ValidFrom
	}
	if err := a.retire(ctx, t.ID, StatusSuperseded, until, &rep.ID, r.Reason); err != nil {
		return Outcome{}, err
	}
	ev, err := a.event(ctx, eventRow{action: ActionSupersede, reason: r.Reason, old: t, newID: &rep.ID,
		newStatement: rep.Statement, rationale: r.Rationale, embedding: r.EventEmbedding})
	return Outcome{Kind: OutcomeSuperseded, BeliefID: rep.ID, TargetID: t.ID, EventID: ev, Action: ActionSupersede, Reason: r.Reason}, err
}

// entrenched says why a belief of origin and confidence may not replace or retract t,
// or "" when it may. Operators may change anything.
func (a *applier) entrenched(t *target, origin Origin, confidence float64) string {
	if a.b.Origin == RevisionOperator {
		return ""
	}
	switch {
	case t.Origin == OriginAuthoritative:
		return fmt.Sprintf("belief %d is authoritative: only an operator changes it", t.ID)
	case t.Origin == OriginUserStated && origin == OriginInferred:
		return fmt.Sprintf("belief %d was stated by the user: an inference does not replace it", t.ID)
	case t.Origin == OriginUserStated && confidence < t.Confidence:
		return fmt.Sprintf("belief %d was stated by the user with confidence %.2f: a revision with %.2f does not replace it", t.ID, t.Confidence, confidence)
	}
	return ""
}

// happened says why a revision with reason may not supersede t, or "" when it may: an
// event happened, and a later event does not undo it (a trip to Rome does not replace
// the trip to Paris). A correction may (it was remembered wrong), and an operator may.
func (a *applier) happened(t *target, reason Reason) string {
	if t.Kind != KindEvent || reason != ReasonTemporal || a.b.Origin == RevisionOperator {
		return ""
	}
	return fmt.Sprintf("belief %d is an event: it happened, and a later event does not replace it", t.ID)
}

// beside stores f beside the event head it was meant to replace, and records the
// refused supersession for review: the new fact is as true as the old one.
func (a *applier) beside(ctx context.Context, head *target, f *Fact, d *Directive, validFrom time.Time, why string) (Outcome, error) {
	if normStatement(f.Statement) == normStatement(head.Statement) {
		return a.restate(ctx, head, f, validFrom, "restated as a revision of itself", f.EventEmbedding)
	}
	id, err := a.insert(ctx, f, validFrom, StatusActive, nil)
	if err != nil {
		return Outcome{}, err
	}
	o, err := a.conflict(ctx, CauseEvent, d.Action, &d.Reason, &head.ID, f, why, id)
	o.BeliefID = id
	return o, err
}

// keep clears the review flag of the candidate at index: it holds although a basis of
// it changed. Its open basis_changed items close as kept.
func (a *applier) keep(ctx context.Context, index int) (Outcome, error) {
	id := a.b.Candidates[index]
	_, err := a.tx.Exec(ctx, `WITH closed AS (
			UPDATE belief_conflict SET status = 'resolved', resolution = 'kept', resolved_at = $2
			WHERE scope = $3 AND belief_id = $1 AND kind = 'basis_changed' AND status = 'open'
		)
		UPDATE belief SET needs_review = false WHERE scope = $3 AND id = $1 AND needs_review`, id, a.now, a.b.Scope)
	if err != nil {
		return Outcome{}, fmt.Errorf("keep belief %d: %w", id, err)
	}
	return Outcome{Kind: OutcomeKept, TargetID: id}, nil
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

func (a *applier) activeDuplicate(ctx context.Context, statement string) (*target, error) {
	n := normStatement(statement)
	t, err := scanTarget(a.tx.QueryRow(ctx, "SELECT "+targetColumns+` FROM belief
		WHERE scope = $1 AND status = 'active' AND lower(statement) IN ($2, $2 || '.')
		ORDER BY id LIMIT 1 FOR UPDATE`, a.b.Scope, n))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up duplicate: %w", err)
	}
	if normStatement(t.Statement) != n {
		return nil, nil
	}
	return t, nil
}

// restate reinforces t with a statement of it valid from validFrom. A statement dated
// before t starts is the first record of the same belief, and the state becomes the one
// in-order processing reaches: t starts then, what t superseded ends then, t rests on
// the earlier episode and quote, and the reinforcement credits the episode t was first
// recorded from. A statement dated the day t starts, from an earlier episode, takes over
// t's provenance the same way. t never moves back past the start of a belief that held
// before it: the value then came back, and the statement is history of its own.
func (a *applier) restate(ctx context.Context, t *target, f *Fact, validFrom time.Time, rationale string, embedding []float32) (Outcome, error) {
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
		if o, done, err := a.cameBack(ctx, c, t, f, validFrom, rationale); done || err != nil {
			return o, err
		}
		e.rationale = joinText(rationale, "said earlier: holds from "+validFrom.Format(time.RFC3339))
		// What held before t ends when t now starts, also past a belief that never held.
		if _, err := a.tx.Exec(ctx, `UPDATE belief SET valid_until = greatest($2, valid_from), updated_at = $3
			WHERE scope = $4 AND id = ANY($1) AND valid_until > $2`, c.into(t.ID), validFrom, a.now, a.b.Scope); err != nil {
			return Outcome{}, fmt.Errorf("end the predecessors of belief %d: %w", t.ID, err)
		}
	}
	// Without both episodes the provenance stays; the start moves all the same.
	if swap {
		e.from, e.excerpt = t.EpisodeID, deref(t.Quote)
	}
	// The events that revised a belief into t, credited to t's first statement, now
	// credit the earlier one; their vectors are of the old excerpt, and are computed again.
	_, err := a.tx.Exec(ctx, `WITH events AS (
			UPDATE revision_event SET episode_id = $5, excerpt = $6, embedding = NULL, embed_model = NULL
			WHERE $4 AND scope = $8 AND new_belief_id = $1 AND action IN ('supersede', 'retract') AND episode_id = $7
		)
		UPDATE belief SET valid_from = $2, updated_at = $3,
			episode_id = CASE WHEN $4 THEN $5 ELSE episode_id END,
			quote = CASE WHEN $4 THEN $6 ELSE quote END
		WHERE scope = $8 AND id = $1`, t.ID, validFrom, a.now, swap, a.b.EpisodeID, nullText(f.Quote), t.EpisodeID, a.b.Scope)
	if err != nil {
		return Outcome{}, fmt.Errorf("move the start of belief %d: %w", t.ID, err)
	}
	return a.reinforce(ctx, t, e)
}

// cameBack handles a statement of t dated before t starts, when a belief that held
// before t started at or after that date: the value held then, gave way, and came back.
// The statement is placed in t's chain c by valid time, as a backfill is (done), unless
// it is the start of t itself.
func (a *applier) cameBack(ctx context.Context, c *chain, t *target, f *Fact, validFrom time.Time, rationale string) (o Outcome, done bool, err error) {
	if !slices.ContainsFunc(c.members, func(m *target) bool { return m.ID != t.ID && m.held() && !m.ValidFrom.Before(validFrom) }) {
		return Outcome{}, false, nil
	}
	at, err := c.place(validFrom)
	if err != nil {
		return Outcome{}, true, err
	}
	if at.next.ID == t.ID {
		// Only a belief that began the same day stands before t: t's start is kept.
		o, err := a.reinforce(ctx, t, eventRow{excerpt: f.Quote, rationale: joinText(rationale, "said the day the belief it replaced began: its start is kept")})
		return o, true, err
	}
	if normStatement(f.Statement) == normStatement(at.next.Statement) {
		o, err := a.restate(ctx, at.next, f, validFrom, rationale, nil)
		return o, true, err
	}
	d := &Directive{Action: ActionSupersede, Reason: ReasonTemporal, Rationale: joinText(rationale, "the value held before and came back")}
	o, err = a.storeHistory(ctx, at, f, d, validFrom)
	return o, true, err
}

// episodeBefore is whether episode x happened before episode y (by occurred_at, then id).
func (a *applier) episodeBefore(ctx context.Context, x, y int64) (bool, error) {
	var before bool
	err := a.tx.QueryRow(ctx, `SELECT coalesce((SELECT (ex.occurred_at, ex.id) < (ey.occurred_at, ey.id)
		FROM episode ex, episode ey WHERE ex.scope = $3 AND ex.id = $1 AND ey.scope = $3 AND ey.id = $2), false)`, x, y, a.b.Scope).Scan(&before)
	if err != nil {
		return false, fmt.Errorf("order episodes %d and %d: %w", x, y, err)
	}
	return before, nil
}

// reinforce counts one more statement of t and records it as event e, with what it
// changed (t as loaded, before a restatement moved its start) so that a revert can put
// it back.
func (a *applier) reinforce(ctx context.Context, t *target, e eventRow) (Outcome, error) {
	prior := &eventPrior{ValidFrom: &t.ValidFrom, EpisodeID: t.EpisodeID}
	// The CTE reads the row as the statement found it: the last_seen_at before this.
	err := a.tx.QueryRow(ctx, `WITH was AS (SELECT last_seen_at FROM belief WHERE scope = $4 AND id = $1)
		UPDATE belief SET reinforced_count = reinforced_count + 1,
			last_seen_at = greatest(last_seen_at, $2), updated_at = $3 WHERE scope = $4 AND id = $1
		RETURNING (SELECT last_seen_at FROM was)`, t.ID, a.b.At, a.now, a.b.Scope).Scan(&prior.LastSeenAt)
	if err != nil {
		return Outcome{}, fmt.Errorf("reinforce belief %d: %w", t.ID, err)
	}
	a.touched[t.ID] = true
	e.action, e.reason, e.old, e.prior = ActionReinforce, ReasonRestated, t, prior
	ev, err := a.event(ctx, e)
	return Outcome{Kind: OutcomeReinforced, TargetID: t.ID, EventID: ev, Action: ActionReinforce, Reason: ReasonRestated}, err
}

// retirement is how a belief stored as history ends.
type retirement struct {
	until time.Time
	by    int64
}

func (a *applier) insert(ctx context.Context, f *Fact, validFrom time.Time, status Status, ret *retirement) (int64, error) {
	var (
		validUntil, retiredAt *time.Time
		supersededBy          *int64
		embedding             *pgvector.Vector
		model                 *string
	)
	if ret != nil {
		validUntil, retiredAt, supersededBy = &ret.until, &a.now, &ret.by
	}
	if len(f.Embedding) > 0 {
		v := pgvector.NewVector(f.Embedding)
		embedding, model = &v, &a.b.EmbedModel
	}
	bases := make([]int64, len(f.DependsOn))
	for i, d := range f.DependsOn {
		bases[i] = a.b.Candidates[d]
	}
	var id int64
	// The belief and the beliefs it rests on are written in one statement.
	err := a.tx.QueryRow(ctx, `WITH inserted AS (
			INSERT INTO belief (scope, subject, attribute, kind, statement, status, confidence,
				origin, valid_from, valid_until, recorded_at, retired_at, superseded_by, episode_id, quote, last_seen_at,
				embedding, embed_model, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17::vector, $18, $11)
			RETURNING id
		), dependencies AS (
			INSERT INTO belief_dependency (scope, belief_id, basis_id) SELECT $1, inserted.id, basis FROM inserted, unnest($19::bigint[]) basis
		)
		SELECT id FROM inserted`,
		a.b.Scope, f.Subject, f.Attribute, f.Kind, f.Statement, status, f.Confidence,
		f.Origin, validFrom, validUntil, a.now, retiredAt, supersededBy, a.b.EpisodeID, nullText(f.Quote), a.b.At,
		embedding, model, bases).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert belief: %w", err)
	}
	a.touched[id] = true
	return id, nil
}

// retire ends belief id with status, closing its valid time at until, for reason. Its
// own open review items about a changed basis close with it, and the active beliefs
// concluded from it are flagged for review.
func (a *applier) retire(ctx context.Context, id int64, status Status, until time.Time, by *int64, reason Reason) error {
	_, err := a.tx.Exec(ctx, `WITH closed AS (
			UPDATE belief_conflict SET status = 'resolved', resolution = $2, resolved_at = $4
			WHERE scope = $6 AND belief_id = $1 AND kind = 'basis_changed' AND status = 'open'
		)
		UPDATE belief SET status = $2, valid_until = greatest($3, valid_from),
			retired_at = $4, superseded_by = $5, updated_at = $4, needs_review = false WHERE scope = $6 AND id = $1`,
		id, status, until, a.now, by, a.b.Scope)
	if err != nil {
		return fmt.Errorf("retire belief %d: %w", id, err)
	}
	a.touched[id] = true
	change := string(status)
	if by != nil {
		change += fmt.Sprintf(" by belief %d", *by)
	}
	return flagDependents(ctx, a.tx, flag{scope: a.b.Scope, bases: []int64{id}, keepTarget: true, origin: a.b.Origin, reason: &reason,
		change: change, now: a.now})
}

// eventRow is one revision_event to write.
type eventRow struct {
	action                           Action
	reason                           Reason
	old                              *target
	newID                            *int64
	newStatement, excerpt, rationale string
	// embedding, in the batch's model, lets the event be retrieved as a few-shot example.
	embedding []float32
	// from, when set, is the episode the revision is credited to instead of the batch's.
	from *int64
	// prior is what a restatement changed, kept for its revert.
	prior *eventPrior
	// reverts is the event a revert undoes.
	reverts *int64
}

// eventPrior is what a revision changed, kept with its event for its revert.
type eventPrior struct {
	// Wrote: the revision stored its new belief, rather than choosing an existing one.
	Wrote bool `json:"wrote,omitempty"`
	// History: the revision stored its old belief, as history already ended by the new
	// one (a backfill); undoing it would make that history current.
	History bool `json:"history,omitempty"`
	// The restated belief before a restatement: what its revert restores, or refuses
	// to when the restatement moved the belief's start.
	LastSeenAt *time.Time `json:"last_seen_at,omitempty"`
	ValidFrom  *time.Time `json:"valid_from,omitempty"`
	EpisodeID  *int64     `json:"episode_id,omitempty"`
}

// storedNew is the prior of a revision that stored its new belief.
func storedNew() *eventPrior { return &eventPrior{Wrote: true} }

func (a *applier) event(ctx context.Context, e eventRow) (int64, error) {
	var (
		id        int64
		embedding *pgvector.Vector
		model     *string
	)
	if len(e.embedding) > 0 {
		v := pgvector.NewVector(e.embedding)
		embedding, model = &v, &a.b.EmbedModel
	}
	episode := a.b.EpisodeID
	if e.from != nil {
		episode = e.from
	}
	err := a.tx.QueryRow(ctx, `INSERT INTO revision_event (scope, action, reason, origin, old_belief_id, new_belief_id,
			old_statement, new_statement, excerpt, rationale, episode_id, created_at, embedding, embed_model, prior, reverts)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::vector, $14, $15, $16) RETURNING id`,
		a.b.Scope, e.action, e.reason, a.b.Origin, e.old.ID, e.newID, e.old.Statement, nullText(e.newStatement),
		nullText(e.excerpt), nullText(e.rationale), episode, a.now, embedding, model, e.prior, e.reverts).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert revision event: %w", err)
	}
	return id, nil
}

// conflict records a refused revision for review. replacement, when given, is the
// stored belief that was to replace the target.
func (a *applier) conflict(ctx context.Context, cause Cause, action Action, reason *Reason, targetID *int64, f *Fact, detail string, replacement ...int64) (Outcome, error) {
	p := Proposal{Statement: f.Statement, Subject: f.Subject, Attribute: f.Attribute, Kind: f.Kind, Confidence: f.Confidence,
		Origin: f.Origin, ValidFrom: f.ValidFrom, Quote: f.Quote, At: &a.b.At}
	proposed, err := json.Marshal(p)
	if err != nil {
		return Outcome{}, fmt.Errorf("encode proposal: %w", err)
	}
	var beliefID *int64
	if len(replacement) > 0 {
		beliefID = &replacement[0]
	}
	var id int64
	err = a.tx.QueryRow(ctx, `INSERT INTO belief_conflict (scope, kind, cause, origin, action, reason, target_belief_id,
			belief_id, proposed, detail, episode_id, created_at)
		VALUES ($1, 'refused', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
		a.b.Scope, cause, a.b.Origin, action, reason, targetID, beliefID, proposed, detail, a.b.EpisodeID, a.now).Scan(&id)
	if err != nil {
		return Outcome{}, fmt.Errorf("insert conflict: %w", err)
	}
	o := Outcome{Kind: OutcomeConflict, ConflictID: id, Action: action, Detail: detail}
	if targetID != nil {
		o.TargetID = *targetID
	}
	if reason != nil {
		o.Reason = *reason
	}
	return o, nil
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
