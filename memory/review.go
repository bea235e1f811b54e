package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// Verdict is an operator's decision on a review item.
type Verdict string

const (
	// VerdictApply carries out the refused revision, or retracts the belief whose
	// basis changed, as an operator through the engine.
	VerdictApply Verdict = "apply"
	// VerdictDismiss leaves memory as it is.
	VerdictDismiss Verdict = "dismiss"
)

var (
	// ErrClosed is returned for a decision on an item already resolved.
	ErrClosed = errors.New("already resolved")
	// ErrNotApplicable is returned when a refused revision cannot be carried out any
	// more, e.g. its target changed since: nothing was changed.
	ErrNotApplicable = errors.New("no longer applies")
)

// MaxNoteLen bounds an operator's note on a decision.
const MaxNoteLen = 2000

// Decision is an operator's verdict on review item ID.
type Decision struct {
	ID int64
	// Scope is the item's scope when the caller knows it: the item is then read on its
	// scope's shard alone, and an item of another scope is ErrNotFound. Empty: the scope
	// is looked up by id, which reads every shard on Citus.
	Scope   string
	Verdict Verdict
	Note    string
	// Embedding, in EmbedModel, is the vector of the item's ReviewText: with it the
	// decision is retrieved as a few-shot example of the scope. Optional.
	EmbedModel string
	Embedding  []float32
}

// Decided is what Decide did.
type Decided struct {
	Item Conflict `json:"conflict"`
	// Outcome is the revision the engine applied, for VerdictApply.
	Outcome *Outcome `json:"revision,omitempty"`
}

// ReviewText is the text of item c as a labeled example, the text to embed for Decision.
func (s *Store) ReviewText(ctx context.Context, c *Conflict) (string, error) {
	old := ""
	if c.TargetID != nil {
		if err := s.db.QueryRow(ctx, "SELECT statement FROM belief WHERE scope = $2 AND id = $1", *c.TargetID, c.Scope).Scan(&old); err != nil {
			return "", fmt.Errorf("review item %d: read target: %w", c.ID, err)
		}
	}
	if c.Kind == ConflictBasisChanged {
		return EventText(c.Statement, c.Detail, ""), nil
	}
	quote := ""
	if c.Proposed != nil {
		quote = c.Proposed.Quote
	}
	return EventText(old, quote, c.Statement), nil
}

// Decide closes review item d.ID with the operator's verdict, in one transaction under
// the scope's lock. Apply goes through the engine with origin operator, which may
// override entrenchment and the rule of events; if the revision no longer applies (its
// target changed since), Decide returns ErrNotApplicable and changes nothing. An item
// already resolved is ErrClosed, an unknown one ErrNotFound.
func (s *Store) Decide(ctx context.Context, d Decision) (*Decided, error) {
	if d.Verdict != VerdictApply && d.Verdict != VerdictDismiss {
		return nil, invalidf("verdict %q is not apply or dismiss", d.Verdict)
	}
	if err := checkText("note", d.Note, MaxNoteLen); err != nil {
		return nil, err
	}
	scope := d.Scope
	if scope == "" {
		err := s.db.QueryRow(ctx, "SELECT scope FROM belief_conflict WHERE id = $1", d.ID).Scan(&scope)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("review item %d: %w", d.ID, ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("review item %d: %w", d.ID, err)
		}
	}
	if len(d.Embedding) > 0 {
		if err := s.EnsureEmbeddingModel(ctx, d.EmbedModel, len(d.Embedding)); err != nil {
			return nil, err
		}
	}
	out := &Decided{}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The scope's lock first, as every writer takes it before touching items.
		if err := lockScope(ctx, tx, scope); err != nil {
			return err
		}
		// By id and scope: on Citus a row is locked on its shard only (the lookup of
		// the scope above is the one read of every shard).
		rows, err := tx.Query(ctx, "SELECT "+strings.ReplaceAll(conflictColumns, "{scope}", "$2")+
			" FROM belief_conflict c WHERE c.scope = $2 AND c.id = $1 FOR UPDATE OF c", d.ID, scope)
		if err != nil {
			return fmt.Errorf("read review item: %w", err)
		}
		c, err := pgx.CollectExactlyOneRow(rows, scanConflict)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("review item %d in scope %q: %w", d.ID, scope, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read review item: %w", err)
		}
		if !c.Open() {
			return fmt.Errorf("review item %d: %w (%s at %s)", d.ID, ErrClosed, deref(c.Resolution), c.ResolvedAt.Format(time.RFC3339))
		}
		switch {
		case d.Verdict == VerdictApply && c.Cause != nil && *c.Cause == CauseSameEntity:
			if err := s.applyMerge(ctx, tx, &c, d); err != nil {
				return err
			}
		case d.Verdict == VerdictApply:
			if err := activateHeld(ctx, tx, &c, s.clock()); err != nil {
				return err
			}
			if out.Outcome, err = s.applyItem(ctx, tx, &c, d); err != nil {
				return err
			}
			if err := learnItemSlot(ctx, tx, &c, s.clock()); err != nil {
				return err
			}
		default:
			if err := retireHeld(ctx, tx, &c, s.clock()); err != nil {
				return err
			}
		}
		if err := s.closeItem(ctx, tx, &c, d, out); err != nil {
			return err
		}
		return s.announceTx(ctx, tx, []Change{{Scope: c.Scope, Kind: ChangeReviewResolved, ID: c.ID, At: *c.ResolvedAt}})
	})
	if err != nil {
		return nil, err
	}
	// The item as the queue shows it: its target after the decision, its cause in words.
	items := []Conflict{out.Item}
	if err := s.explain(ctx, scope, items); err != nil {
		return nil, err
	}
	out.Item = items[0]
	return out, nil
}

// applyMerge merges the two entities a same_entity item c names, as the operator
// decided; names that no longer are two entities make it ErrNotApplicable.
func (s *Store) applyMerge(ctx context.Context, tx pgx.Tx, c *Conflict, d Decision) error {
	if c.Proposed == nil || c.Proposed.Merge == nil {
		return fmt.Errorf("review item %d: %w: it names no entities to merge", c.ID, ErrNotApplicable)
	}
	m := Merge{Scope: c.Scope, Into: c.Proposed.Merge.Into, Other: c.Proposed.Merge.Other, Note: d.Note}
	_, _, err := mergeTx(ctx, tx, m, s.clock())
	if errors.Is(err, ErrUnknownEntity) || errors.Is(err, ErrInvalid) {
		return fmt.Errorf("review item %d: %w: %v", c.ID, ErrNotApplicable, err) //nolint:errorlint // told, not wrapped, as in applyItem
	}
	return err
}

// applyItem carries out item c as an operator; any refusal is ErrNotApplicable.
func (s *Store) applyItem(ctx context.Context, tx pgx.Tx, c *Conflict, d Decision) (*Outcome, error) {
	b, err := s.itemBatch(ctx, tx, c, d)
	if err != nil {
		return nil, err
	}
	res, err := s.ApplyTx(ctx, tx, b)
	if errors.Is(err, ErrStale) {
		// The cause is told, not wrapped: to a caller the item is not applicable, not a
		// stale batch to decide again.
		return nil, fmt.Errorf("review item %d: %w: %v", c.ID, ErrNotApplicable, err) //nolint:errorlint // as said above
	}
	if err != nil {
		return nil, fmt.Errorf("review item %d: %w", c.ID, err)
	}
	o := res.All()[0]
	if o.Kind == OutcomeConflict {
		// The refusal row the engine wrote goes with the rolled-back transaction.
		return nil, fmt.Errorf("review item %d: %w: %s", c.ID, ErrNotApplicable, o.Detail)
	}
	return &o, nil
}

// itemBatch is the operator's batch that carries out item c.
func (s *Store) itemBatch(ctx context.Context, tx pgx.Tx, c *Conflict, d Decision) (*Batch, error) {
	if c.TargetID == nil && c.Kind == ConflictRefused {
		return nil, fmt.Errorf("review item %d: %w: the refused revision names no belief; dismiss it", c.ID, ErrNotApplicable)
	}
	reason := ReasonTemporal
	if c.Reason != nil {
		reason = *c.Reason
	}
	b := &Batch{Scope: c.Scope, Origin: RevisionOperator, EpisodeID: c.EpisodeID, EmbedModel: d.EmbedModel, decides: c.ID}
	var (
		target struct {
			subject, attribute string
			kind               Kind
			status             Status
			validUntil         *time.Time
		}
		occurredAt *time.Time
	)
	if c.TargetID != nil {
		err := tx.QueryRow(ctx, `SELECT subject, attribute, kind, status, valid_until,
				(SELECT occurred_at FROM episode WHERE scope = $3 AND id = $2) FROM belief WHERE scope = $3 AND id = $1`,
			*c.TargetID, c.EpisodeID, c.Scope).
			Scan(&target.subject, &target.attribute, &target.kind, &target.status, &target.validUntil, &occurredAt)
		if err != nil {
			return nil, fmt.Errorf("review item %d: read target: %w", c.ID, err)
		}
	}
	if c.Kind == ConflictRefused && target.status != StatusActive {
		// The engine would revise whatever replaced it; the operator decided on this one.
		return nil, fmt.Errorf("review item %d: %w: belief %d is %s since the revision was refused", c.ID, ErrNotApplicable, *c.TargetID, target.status)
	}
	rationale := joinText(fmt.Sprintf("operator applied review item %d (%s): %s", c.ID, c.Kind, c.Detail), d.Note)
	if c.Cause != nil {
		rationale = joinText(fmt.Sprintf("operator override of a refusal (%s): %s", *c.Cause, c.Detail), d.Note)
	}
	switch {
	case c.Kind == ConflictBasisChanged:
		// The belief stops holding when its basis did, or now when that is unknown.
		b.At = s.clock()
		if target.validUntil != nil && target.validUntil.Before(b.At) {
			b.At = *target.validUntil
		}
		if reason == ReasonDuplicate {
			reason = ReasonTemporal
		}
		b.Candidates = []int64{*c.BeliefID}
		b.Resolutions = []Resolution{{Index: 0, Action: ActionRetract, Reason: reason, Rationale: rationale, EventEmbedding: d.Embedding}}
	case c.BeliefID != nil && c.Action == ActionSupersede:
		// The replacement was stored (an event beside an event, or consolidation's
		// choice between two beliefs): supersede the target by it.
		b.Candidates = []int64{*c.TargetID, *c.BeliefID}
		b.Resolutions = []Resolution{{Index: 0, ReplacedBy: new(1), Action: ActionSupersede, Reason: reason,
			Rationale: rationale, EventEmbedding: d.Embedding}}
	case c.BeliefID != nil && c.Action == ActionRetract:
		// A held retraction: the statement it carried was stored then; the target is
		// retracted now, as of when the conversation said so.
		b.At = proposalTime(c, occurredAt)
		b.Candidates = []int64{*c.TargetID}
		b.Resolutions = []Resolution{{Index: 0, Action: ActionRetract, Reason: reason, Rationale: rationale, EventEmbedding: d.Embedding}}
	case c.Proposed == nil || (c.Proposed.Statement == "" && c.Action != ActionRetract && c.Action != ActionReinforce):
		b.Candidates = []int64{*c.TargetID}
		b.Resolutions = []Resolution{{Index: 0, Action: ActionRetract, Reason: reason, Rationale: rationale, EventEmbedding: d.Embedding}}
	default:
		p := c.Proposed
		f := Fact{Statement: p.Statement, Subject: cmp.Or(p.Subject, target.subject), Attribute: cmp.Or(p.Attribute, target.attribute),
			Kind: Kind(cmp.Or(string(p.Kind), string(target.kind))), ValidFrom: p.ValidFrom, Confidence: p.Confidence,
			Origin: Origin(cmp.Or(string(p.Origin), string(OriginUserStated))), Quote: p.Quote, EventEmbedding: d.Embedding,
			Resolves: &Directive{Index: 0, Action: c.Action, Reason: reason, Rationale: rationale}}
		if c.Action == ActionReinforce {
			f.Resolves.Reason = ReasonRestated
		}
		b.Candidates, b.Facts = []int64{*c.TargetID}, []Fact{f}
		b.At = proposalTime(c, occurredAt)
	}
	if len(d.Embedding) == 0 {
		b.EmbedModel = ""
	}
	return b, nil
}

// proposalTime is when a refused proposal was said: a revision carried out later dates
// from its conversation, not from the decision.
func proposalTime(c *Conflict, occurredAt *time.Time) time.Time {
	switch {
	case c.Proposed != nil && c.Proposed.At != nil:
		return *c.Proposed.At
	case occurredAt != nil:
		return *occurredAt
	}
	return c.CreatedAt
}

// closeItem marks item c resolved with the verdict and note. A dismissed item keeps its
// vector: it teaches later extractions what not to do. A belief whose last open item
// closes is no longer flagged.
func (s *Store) closeItem(ctx context.Context, tx pgx.Tx, c *Conflict, d Decision, out *Decided) error {
	resolution := ResolvedApplied
	var (
		embedding *pgvector.Vector
		model     *string
	)
	if d.Verdict == VerdictDismiss {
		resolution = ResolvedDismissed
		if len(d.Embedding) > 0 {
			v := pgvector.NewVector(d.Embedding)
			embedding, model = &v, &d.EmbedModel
		}
	}
	now := s.clock()
	// Two statements, never a data-modifying CTE: on Citus, the item's close was lost
	// with an outer statement pruned to no shard (an item without a belief: b.id = NULL).
	tag, err := tx.Exec(ctx, `UPDATE belief_conflict SET status = 'resolved', resolution = $2, note = $3, resolved_at = $4,
			embedding = $5::vector, embed_model = $6
		WHERE scope = $7 AND id = $1`, c.ID, resolution, nullText(d.Note), now, embedding, model, c.Scope)
	if err == nil && tag.RowsAffected() != 1 {
		err = fmt.Errorf("%d rows closed", tag.RowsAffected())
	}
	if err == nil && c.BeliefID != nil {
		// The item is closed now: the belief keeps its flag while another is open.
		_, err = tx.Exec(ctx, `UPDATE belief b SET needs_review = false WHERE b.scope = $2 AND b.id = $1 AND b.needs_review
			AND NOT EXISTS (SELECT 1 FROM belief_conflict c WHERE c.scope = $2 AND c.belief_id = b.id AND c.status = 'open')`,
			*c.BeliefID, c.Scope)
	}
	if err != nil {
		return fmt.Errorf("close review item %d: %w", c.ID, err)
	}
	c.Status, c.Resolution, c.ResolvedAt = "resolved", &resolution, &now
	c.Note = nullText(d.Note)
	out.Item = *c
	return nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
