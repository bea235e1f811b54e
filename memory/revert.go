package memory

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrRevertRefused is wrapped by every RevertRefusedError.
var ErrRevertRefused = errors.New("revert refused")

// RevertRefusedError says why a revision event cannot be reverted. Nothing was changed.
type RevertRefusedError struct {
	EventID int64
	// Reason is why, for people: the later revision that built on it, the belief that
	// left memory, or that it was reverted already.
	Reason string
}

func (e *RevertRefusedError) Error() string {
	return fmt.Sprintf("event %d cannot be reverted: %s", e.EventID, e.Reason)
}

func (e *RevertRefusedError) Unwrap() error { return ErrRevertRefused }

// RevertParams names the revision event an operator reverts.
type RevertParams struct {
	EventID int64
	// Scope is the event's scope when the caller has looked it up already (a visibility
	// check): the revert then skips that lookup, one index probe per shard on Citus.
	// Empty: Revert looks it up. A wrong scope is as an unknown event.
	Scope string
	// Note says why the revision was wrong. It is the revert's excerpt, and the
	// "because" of the negative example later extractions are shown. Optional.
	Note string
	// By names who reverts (an API key's name, a login), kept in the revert's
	// rationale, clipped to MaxLabelLen characters. Optional.
	By string
}

// Reverted is what Revert did.
type Reverted struct {
	// Revert is the new event that records the revert: action revert, origin operator,
	// reverts naming Event.
	Revert Event `json:"revert"`
	// Event is the reverted event, its reverted_by and reverted_at now set.
	Event Event `json:"event"`
	// Restored are the beliefs current again.
	Restored []int64 `json:"restored"`
	// Retracted are the beliefs the reverted revision wrote, now retracted as never true.
	Retracted []int64 `json:"retracted"`
	// Unreinforced is the belief whose restatement was taken back, if any.
	Unreinforced *int64 `json:"unreinforced"`
}

// Revert undoes revision event p.EventID as an operator, in one transaction under the
// scope's lock, like every write:
//   - a supersede of A by B: A is current again as it was before (status, validity,
//     links, its open review items); B, when the revision wrote it, is retracted as
//     never true. A B that existed before (consolidation's choice between two beliefs)
//     stays as it is;
//   - a retraction: the belief is current again (and what the retraction stored beside
//     it, if anything, is retracted as never true);
//   - a reinforcement or restatement: the belief's count, last_seen_at and episodes go
//     back.
//
// The revert is itself a revision event (action revert, origin operator) naming the
// reverted event, which records it in reverted_by and reverted_at; the active beliefs
// concluded from the beliefs involved are flagged for review. Only the latest revision
// of a chain is reverted: an event that a later revision built on (its new belief
// superseded, retracted, reinforced or concluded from since; a later event on its
// beliefs; a belief flagged by it and revised since; a belief recorded since that is
// current in the slot the restored belief would take), a revert, and an event reverted
// already are refused with a *RevertRefusedError, and nothing changes. An unknown event
// is ErrNotFound; a note or name too long is ErrInvalid.
func (s *Store) Revert(ctx context.Context, p RevertParams) (*Reverted, error) {
	if p.EventID <= 0 {
		return nil, invalidf("event id %d is not positive", p.EventID)
	}
	if err := checkText("note", p.Note, MaxNoteLen); err != nil {
		return nil, err
	}
	// Who reverts is a label the front end makes (a key's name and a prefix): clipped,
	// never a reason to refuse the operator.
	if by := []rune(p.By); len(by) > MaxLabelLen {
		p.By = string(by[:MaxLabelLen])
	}
	if err := checkText("by", p.By, MaxLabelLen); err != nil {
		return nil, err
	}
	scope := p.Scope
	if scope == "" {
		var err error
		scope, err = s.ScopeOf(ctx, OfEvent, p.EventID)
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("event %d: %w", p.EventID, ErrNotFound)
		}
		if err != nil {
			return nil, err
		}
	}
	now := s.clock()
	var out *Reverted
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockScope(ctx, tx, scope); err != nil {
			return err
		}
		r := &reverter{p: p, applier: &applier{store: s, tx: tx, now: now, touched: map[int64]bool{},
			b: &Batch{Scope: scope, Origin: RevisionOperator, At: now}}}
		var err error
		if out, err = r.revert(ctx); err != nil {
			return err
		}
		return r.announce(ctx)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// reverter undoes one event through the engine's applier, whose batch is the
// operator's, in the event's scope.
type reverter struct {
	*applier
	p RevertParams
}

func (r *reverter) refuse(format string, args ...any) error {
	return &RevertRefusedError{EventID: r.p.EventID, Reason: fmt.Sprintf(format, args...)}
}

func (r *reverter) revert(ctx context.Context) (*Reverted, error) {
	ev, prior, err := r.readEvent(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case ev.Action == ActionRevert:
		return nil, r.refuse("it is itself a revert; correct the belief instead")
	case ev.Reverted():
		return nil, r.refuse("it was reverted already, by event %d at %s", *ev.RevertedBy, ev.RevertedAt.Format(time.RFC3339))
	}
	old, err := r.load(ctx, ev.OldBeliefID)
	if err != nil {
		return nil, err
	}
	var nw *target
	if ev.NewBeliefID != nil {
		if nw, err = r.load(ctx, *ev.NewBeliefID); err != nil {
			return nil, err
		}
	}
	for _, t := range []*target{old, nw} {
		if t != nil && t.Status == StatusForgotten {
			return nil, r.refuse("belief %d is forgotten since", t.ID)
		}
	}
	if prior != nil && prior.History {
		return nil, r.refuse("event %d stored belief %d as history ended by belief %d; correct or forget it instead",
			ev.ID, ev.OldBeliefID, deref(ev.NewBeliefID))
	}
	if err := r.latest(ctx, ev); err != nil {
		return nil, err
	}
	out := &Reverted{}
	if ev.Action == ActionReinforce {
		err = r.unreinforce(ctx, old, prior, out)
	} else {
		err = r.restore(ctx, ev, prior, old, nw, out)
	}
	if err != nil {
		return nil, err
	}
	return r.record(ctx, ev, old, nw, out)
}

// readEvent reads the event under a row lock, with what a restatement changed.
func (r *reverter) readEvent(ctx context.Context) (*Event, *eventPrior, error) {
	var (
		ev    Event
		prior *eventPrior
	)
	err := r.tx.QueryRow(ctx, "SELECT "+eventColumns+", e.prior FROM revision_event e WHERE e.id = $1 AND e.scope = $2 FOR UPDATE",
		r.p.EventID, r.b.Scope).Scan(append(ev.fields(), &prior)...)
	if errors.Is(err, pgx.ErrNoRows) {
		// Purged since its scope was read.
		return nil, nil, fmt.Errorf("event %d: %w", r.p.EventID, ErrNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read event %d: %w", r.p.EventID, err)
	}
	return &ev, prior, nil
}

// latest refuses the event when a later revision built on it: another event on its
// beliefs that stands (not a revert, not reverted itself), or a belief it flagged for
// review that was revised since because of it.
func (r *reverter) latest(ctx context.Context, ev *Event) error {
	ids := []int64{ev.OldBeliefID}
	if ev.NewBeliefID != nil {
		ids = append(ids, *ev.NewBeliefID)
	}
	var (
		later  int64
		action Action
	)
	err := r.tx.QueryRow(ctx, `SELECT id, action FROM revision_event
		WHERE scope = $1 AND id > $2 AND (old_belief_id = ANY($3) OR new_belief_id = ANY($3))
			AND action <> 'revert' AND reverted_by IS NULL
		ORDER BY id LIMIT 1`, r.b.Scope, ev.ID, ids).Scan(&later, &action)
	switch {
	case err == nil:
		return r.refuse("event %d (%s) revised its beliefs since; only the latest revision of a chain is reverted: revert event %d first", later, action, later)
	case !errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("look for later revisions of event %d: %w", ev.ID, err)
	}
	var (
		item, dependent int64
		resolution      ItemResolution
	)
	// The items the revision opened were created with it, at its time.
	err = r.tx.QueryRow(ctx, `SELECT id, belief_id, resolution FROM belief_conflict
		WHERE scope = $1 AND kind = 'basis_changed' AND target_belief_id = $2 AND created_at = $3
			AND resolution IN ('applied', 'retracted', 'superseded')
		ORDER BY id LIMIT 1`, r.b.Scope, ev.OldBeliefID, ev.CreatedAt).Scan(&item, &dependent, &resolution)
	switch {
	case err == nil:
		return r.refuse("belief %d, concluded from belief %d, was flagged by it and revised since (review item %d: %s)",
			dependent, ev.OldBeliefID, item, resolution)
	case !errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("look for revisions built on event %d: %w", ev.ID, err)
	}
	return nil
}

// restore undoes a supersede or a retraction: old is current again, and nw, when the
// revision wrote it, is retracted as never true.
func (r *reverter) restore(ctx context.Context, ev *Event, prior *eventPrior, old, nw *target, out *Reverted) error {
	want := StatusSuperseded
	if ev.Action == ActionRetract {
		want = StatusRetracted
	}
	switch {
	case old.Status != want:
		return r.refuse("belief %d is %s now, not %s by it", old.ID, old.Status, want)
	case ev.Action == ActionSupersede && (nw == nil || deref(old.SupersededBy) != nw.ID):
		return r.refuse("belief %d is no longer superseded by belief %d", old.ID, deref(ev.NewBeliefID))
	case nw != nil && nw.Status != StatusActive:
		return r.refuse("belief %d is %s since: a later revision built on it", nw.ID, nw.Status)
	}
	wrote := false
	if nw != nil {
		var err error
		if wrote, err = r.wrote(ctx, ev, prior, nw); err != nil {
			return err
		}
	}
	if err := r.slotFree(ctx, ev, old, nw, wrote); err != nil {
		return err
	}
	if wrote {
		var dependent int64
		err := r.tx.QueryRow(ctx, `SELECT d.belief_id FROM belief_dependency d JOIN belief x ON x.scope = d.scope AND x.id = d.belief_id
			WHERE d.scope = $2 AND x.scope = $2 AND d.basis_id = $1 AND x.status <> 'forgotten'
			ORDER BY d.belief_id LIMIT 1`, nw.ID, r.b.Scope).Scan(&dependent)
		switch {
		case err == nil:
			return r.refuse("belief %d was concluded from belief %d since", dependent, nw.ID)
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("look for beliefs concluded from belief %d: %w", nw.ID, err)
		}
	}
	// The review items the revision closed when it retired old (at its time, with the
	// status as resolution) open again, and with them old's flag.
	// Two statements, never a data-modifying CTE (see flag.statements).
	rows, err := r.tx.Query(ctx, `UPDATE belief_conflict SET status = 'open', resolution = NULL, resolved_at = NULL
		WHERE scope = $4 AND belief_id = $1 AND kind = 'basis_changed' AND resolved_at = $2 AND resolution = $3 RETURNING id`,
		old.ID, ev.CreatedAt, want, r.b.Scope)
	var reopened []int64
	if err == nil {
		reopened, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	if err == nil {
		_, err = r.tx.Exec(ctx, `UPDATE belief SET status = 'active', valid_until = NULL, retired_at = NULL, superseded_by = NULL,
				updated_at = $2, needs_review = $4
			WHERE scope = $3 AND id = $1`, old.ID, r.now, r.b.Scope, len(reopened) > 0)
	}
	if err != nil {
		return fmt.Errorf("restore belief %d: %w", old.ID, err)
	}
	for _, id := range reopened {
		r.note(ChangeReviewOpened, id)
	}
	out.Restored = []int64{old.ID}
	if wrote {
		r.retire(nw.ID, StatusRetracted, nw.ValidFrom, nil, ReasonCorrection)
		// The statements below are the reverter's own: the retirement goes first.
		if err := r.flush(ctx); err != nil {
			return err
		}
		out.Retracted = []int64{nw.ID}
	}
	reason := ReasonCorrection
	r.reviewed = true
	return flagDependents(ctx, r.tx, flag{scope: r.b.Scope, bases: []int64{old.ID}, keepTarget: true, origin: RevisionOperator, reason: &reason,
		change: fmt.Sprintf("restored by an operator's revert of event %d", ev.ID), now: r.now})
}

// slotFree refuses to make old current again when a belief recorded since the revision
// ev (in its batch or later, other than the one the revert retracts) is current in old's
// slot, its subject and attribute: the revert would leave two current values for one
// slot, which no writer chose. A value that shared the slot before the revision shares
// it again, as it did; events never compete for a slot.
func (r *reverter) slotFree(ctx context.Context, ev *Event, old, nw *target, wrote bool) error {
	if old.Kind == KindEvent {
		return nil
	}
	// The restored belief itself, and the one the revert retracts.
	leaving := []int64{old.ID}
	if wrote {
		leaving = append(leaving, nw.ID)
	}
	var (
		id                 int64
		attribute, subject string
	)
	err := r.tx.QueryRow(ctx, `SELECT x.id, x.attribute, x.subject FROM belief x JOIN belief o ON o.scope = x.scope
		WHERE x.scope = $1 AND o.scope = $1 AND o.id = $2 AND x.status = 'active' AND x.kind <> 'event'
			AND x.subject = o.subject AND x.attribute = o.attribute AND x.recorded_at >= $3 AND NOT x.id = ANY($4)
		ORDER BY x.id LIMIT 1`, r.b.Scope, old.ID, ev.CreatedAt, leaving).Scan(&id, &attribute, &subject)
	switch {
	case err == nil:
		// Ids and the slot's labels, no statement, as the other refusals.
		return r.refuse("belief %d, recorded since, is current for %s of %s: belief %d would stand beside it; retract or forget belief %d first",
			id, attribute, subject, old.ID, id)
	case !errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("look for beliefs recorded since event %d in the slot of belief %d: %w", ev.ID, old.ID, err)
	}
	return nil
}

// wrote says whether the revision ev stored belief nw, rather than choosing an
// existing one. The engine says so in the event's prior; an event written before it
// did is judged by time: a belief is recorded in the transaction that writes it, at
// the event's time.
func (r *reverter) wrote(ctx context.Context, ev *Event, prior *eventPrior, nw *target) (bool, error) {
	if prior != nil {
		return prior.Wrote, nil
	}
	var recorded time.Time
	if err := r.tx.QueryRow(ctx, "SELECT recorded_at FROM belief WHERE id = $1 AND scope = $2", nw.ID, r.b.Scope).Scan(&recorded); err != nil {
		return false, fmt.Errorf("read belief %d: %w", nw.ID, err)
	}
	return recorded.Equal(ev.CreatedAt), nil
}

// unreinforce takes a restatement back: the count, last_seen_at and (through the
// reverted event, which reads leave out) the episodes. A restatement that moved the
// belief's start to an earlier statement rewrote its chain's history, which a revert
// does not guess back: it is refused.
func (r *reverter) unreinforce(ctx context.Context, t *target, prior *eventPrior, out *Reverted) error {
	var lastSeen *time.Time
	if prior != nil && prior.ValidFrom != nil {
		if !prior.ValidFrom.Equal(t.ValidFrom) || deref(prior.EpisodeID) != deref(t.EpisodeID) {
			return r.refuse("the restatement moved the start of belief %d to an earlier statement; correct the belief instead", t.ID)
		}
		lastSeen = prior.LastSeenAt
	}
	_, err := r.tx.Exec(ctx, `UPDATE belief SET reinforced_count = greatest(reinforced_count - 1, 0),
			last_seen_at = coalesce($2, last_seen_at), updated_at = $3
		WHERE scope = $4 AND id = $1`, t.ID, lastSeen, r.now, r.b.Scope)
	if err != nil {
		return fmt.Errorf("take back the restatement of belief %d: %w", t.ID, err)
	}
	out.Unreinforced = &t.ID
	return nil
}

// record writes the revert's event, marks ev reverted by it, and reads both back.
func (r *reverter) record(ctx context.Context, ev *Event, old, nw *target, out *Reverted) (*Reverted, error) {
	rationale := fmt.Sprintf("operator reverted event %d (%s's %s, %s)", ev.ID, ev.Origin, ev.Action, ev.Reason)
	if r.p.By != "" {
		rationale += " as " + r.p.By
	}
	row := eventRow{action: ActionRevert, reason: ReasonCorrection, old: old, newID: ev.NewBeliefID,
		excerpt: r.p.Note, rationale: rationale, reverts: &ev.ID}
	if nw != nil {
		row.newStatement = nw.Statement
	}
	id, err := r.writeEvent(ctx, row)
	if err != nil {
		return nil, err
	}
	if _, err := r.tx.Exec(ctx, "UPDATE revision_event SET reverted_by = $2, reverted_at = $3 WHERE id = $1 AND scope = $4",
		ev.ID, id, r.now, r.b.Scope); err != nil {
		return nil, fmt.Errorf("mark event %d reverted: %w", ev.ID, err)
	}
	rows, err := r.tx.Query(ctx, "SELECT "+eventColumns+" FROM revision_event e WHERE e.id = ANY($1) AND e.scope = $2 ORDER BY e.id",
		[]int64{ev.ID, id}, r.b.Scope)
	if err != nil {
		return nil, fmt.Errorf("read events %d and %d: %w", ev.ID, id, err)
	}
	evs, err := pgx.CollectRows(rows, scanEvent)
	if err != nil {
		return nil, fmt.Errorf("read events %d and %d: %w", ev.ID, id, err)
	}
	if len(evs) != 2 {
		return nil, fmt.Errorf("read events %d and %d: %d rows", ev.ID, id, len(evs))
	}
	out.Event, out.Revert = evs[0], evs[1]
	return out, nil
}
