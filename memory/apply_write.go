package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// The writers of the revision engine (apply.go), inside its transaction. Each takes
// what varies in named fields; the scope, origin, episode, model and clock are the
// batch's.

// beliefParams is one belief to store.
type beliefParams struct {
	Fact      *Fact
	ValidFrom time.Time
	Status    Status
	// Retired, when set, is how a belief stored as history ends.
	Retired *retirement
	// Bases are the beliefs it was concluded from.
	Bases []int64
}

// retirement is how a belief stored as history ends.
type retirement struct {
	until time.Time
	by    int64
}

// writeBelief stores a belief, and queues the insert of the beliefs it rests on.
func (a *applier) writeBelief(ctx context.Context, p beliefParams) (int64, error) {
	var (
		validUntil, retiredAt *time.Time
		supersededBy          *int64
	)
	if p.Retired != nil {
		validUntil, retiredAt, supersededBy = &p.Retired.until, &a.now, &p.Retired.by
	}
	embedding, model := a.vector(p.Fact.Embedding)
	a.written()
	var id int64
	// Two statements, not a data-modifying CTE: Citus runs such a chain in steps and
	// sends the first step's rows to every node, so a write of one scope would need
	// every node up. The dependencies' insert is queued: nothing waits for it.
	err := a.queryRow(ctx, "insert belief", `INSERT INTO belief (scope, subject, attribute, kind, statement, status, confidence,
			origin, valid_from, valid_until, recorded_at, retired_at, superseded_by, episode_id, quote, last_seen_at,
			embedding, embed_model, updated_at, entity)
		VALUES (@scope, @subject, @attribute, @kind, @statement, @status, @confidence,
			@origin, @valid_from, @valid_until, @now, @retired_at, @superseded_by, @episode_id, @quote, @last_seen_at,
			@embedding::vector, @embed_model, @now, @entity)
		RETURNING id`, []any{pgx.NamedArgs{
		"scope": a.b.Scope, "subject": p.Fact.Subject, "attribute": p.Fact.Attribute, "kind": p.Fact.Kind,
		"statement": p.Fact.Statement, "status": p.Status, "confidence": p.Fact.Confidence, "origin": p.Fact.Origin,
		"valid_from": p.ValidFrom, "valid_until": validUntil, "now": a.now, "retired_at": retiredAt,
		"superseded_by": supersededBy, "episode_id": a.b.EpisodeID, "quote": nullText(p.Fact.Quote),
		"last_seen_at": a.b.At, "embedding": embedding, "embed_model": model, "entity": p.Fact.entity,
	}}, &id)
	if err == nil {
		// Announced with the batch's other changes, in its one write of the feed.
		a.note(ChangeBeliefCreated, id)
	}
	if err == nil && len(p.Bases) > 0 {
		a.exec("insert dependencies", "INSERT INTO belief_dependency (scope, belief_id, basis_id) SELECT $1, $2, unnest($3::bigint[])",
			a.b.Scope, id, p.Bases)
	}
	return id, err
}

// vector is v in the batch's model, nil and nil when there is none.
func (a *applier) vector(v []float32) (*pgvector.Vector, *string) {
	if len(v) == 0 {
		return nil, nil
	}
	vec := pgvector.NewVector(v)
	return &vec, &a.b.EmbedModel
}

// retireParams ends one belief.
type retireParams struct {
	ID     int64
	Status Status
	// Until is when its valid time ends (never before it starts).
	Until time.Time
	// By is the belief that replaced it, if any.
	By     *int64
	Reason Reason
}

// writeRetirement ends a belief. Its own open review items about a changed basis close
// with it, and the active beliefs concluded from it are flagged for review. Both are
// queued: nothing waits for them.
func (a *applier) writeRetirement(p retireParams) {
	// Separate statements, never a data-modifying CTE: on Citus a CTE's write is lost
	// when its outer statement is pruned to no shard.
	a.exec(fmt.Sprintf("close the review items of belief %d", p.ID), closeItemsSQL, []int64{p.ID}, ItemResolution(p.Status), a.now, a.b.Scope)
	a.exec(fmt.Sprintf("retire belief %d", p.ID), `UPDATE belief SET status = @status, valid_until = greatest(@until, valid_from),
			retired_at = @now, superseded_by = @by, updated_at = @now, needs_review = false WHERE scope = @scope AND id = @id`,
		pgx.NamedArgs{"id": p.ID, "status": p.Status, "until": p.Until, "now": a.now, "by": p.By, "scope": a.b.Scope})
	change := string(p.Status)
	if p.By != nil {
		change += fmt.Sprintf(" by belief %d", *p.By)
	}
	f := flag{scope: a.b.Scope, bases: []int64{p.ID}, keepTarget: true, origin: a.b.Origin, reason: &p.Reason, change: change, now: a.now}
	sql, args := f.statement()
	a.exec(fmt.Sprintf("flag beliefs concluded from %v", f.bases), sql, args...)
	a.reviewed = true
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

// writeEvent records one revision.
func (a *applier) writeEvent(ctx context.Context, e eventRow) (int64, error) {
	embedding, model := a.vector(e.embedding)
	episode := a.b.EpisodeID
	if e.from != nil {
		episode = e.from
	}
	a.written()
	var id int64
	err := a.queryRow(ctx, "insert revision event", `INSERT INTO revision_event (scope, action, reason, origin, old_belief_id, new_belief_id,
			old_statement, new_statement, excerpt, rationale, episode_id, created_at, embedding, embed_model, prior, reverts)
		VALUES (@scope, @action, @reason, @origin, @old_belief_id, @new_belief_id,
			@old_statement, @new_statement, @excerpt, @rationale, @episode_id, @now, @embedding::vector, @embed_model, @prior, @reverts)
		RETURNING id`, []any{pgx.NamedArgs{
		"scope": a.b.Scope, "action": e.action, "reason": e.reason, "origin": a.b.Origin, "old_belief_id": e.old.ID,
		"new_belief_id": e.newID, "old_statement": e.old.Statement, "new_statement": nullText(e.newStatement),
		"excerpt": nullText(e.excerpt), "rationale": nullText(e.rationale), "episode_id": episode, "now": a.now,
		"embedding": embedding, "embed_model": model, "prior": e.prior, "reverts": e.reverts,
	}}, &id)
	if err == nil {
		kind := ChangeRevisionApplied
		if e.action == ActionRevert {
			kind = ChangeRevisionReverted
		}
		a.note(kind, id)
	}
	return id, err
}

// conflictParams is one refused revision to record for review.
type conflictParams struct {
	Cause    Cause
	Action   Action
	Reason   Reason
	TargetID *int64
	// BeliefID is the stored belief that was to replace the target, if any.
	BeliefID *int64
	// Proposed is the refused proposal, as JSON.
	Proposed []byte
	Detail   string
}

// writeConflict records a refused revision.
func (a *applier) writeConflict(ctx context.Context, p conflictParams) (int64, error) {
	a.written()
	var id int64
	err := a.queryRow(ctx, "insert conflict", `INSERT INTO belief_conflict (scope, kind, cause, origin, action, reason, target_belief_id,
			belief_id, proposed, detail, episode_id, created_at)
		VALUES (@scope, 'refused', @cause, @origin, @action, @reason, @target_belief_id,
			@belief_id, @proposed, @detail, @episode_id, @now) RETURNING id`, []any{pgx.NamedArgs{
		"scope": a.b.Scope, "cause": p.Cause, "origin": a.b.Origin, "action": p.Action, "reason": p.Reason,
		"target_belief_id": p.TargetID, "belief_id": p.BeliefID, "proposed": p.Proposed, "detail": p.Detail,
		"episode_id": a.b.EpisodeID, "now": a.now,
	}}, &id)
	if err == nil {
		a.note(ChangeReviewOpened, id)
	}
	return id, err
}

// writeKeep clears belief id's review flag and closes its open basis_changed items as
// kept.
func (a *applier) writeKeep(id int64) {
	a.exec(fmt.Sprintf("close the review items of belief %d", id), closeItemsSQL, []int64{id}, ResolvedKept, a.now, a.b.Scope)
	a.exec(fmt.Sprintf("keep belief %d", id), clearFlagsSQL, []int64{id}, a.b.Scope)
	a.reviewed = true
}

// writeReinforcement counts one more statement of belief id, seen at the batch's time,
// and returns its last_seen_at before.
func (a *applier) writeReinforcement(ctx context.Context, id int64) (*time.Time, error) {
	a.written()
	var was *time.Time
	// The CTE reads the row as the statement found it: the last_seen_at before this.
	err := a.queryRow(ctx, fmt.Sprintf("reinforce belief %d", id), `WITH was AS (SELECT last_seen_at FROM belief WHERE scope = $4 AND id = $1)
		UPDATE belief SET reinforced_count = reinforced_count + 1,
			last_seen_at = greatest(last_seen_at, $2), updated_at = $3 WHERE scope = $4 AND id = $1
		RETURNING (SELECT last_seen_at FROM was)`, []any{id, a.b.At, a.now, a.b.Scope}, &was)
	return was, err
}

// writePredecessorsEnd ends the beliefs ids, which held before belief of, when of now
// starts: at from, or when they start if later.
func (a *applier) writePredecessorsEnd(of int64, ids []int64, from time.Time) {
	a.exec(fmt.Sprintf("end the predecessors of belief %d", of), `UPDATE belief SET valid_until = greatest($2, valid_from), updated_at = $3
		WHERE scope = $4 AND id = ANY($1) AND valid_until > $2`, ids, from, a.now, a.b.Scope)
}

// startParams moves the start of a belief, and with Swap its provenance.
type startParams struct {
	ID        int64
	ValidFrom time.Time
	// Swap: the belief now rests on the batch's episode and Quote, and the events that
	// revised a belief into it, credited to its OldEpisode, credit the batch's episode.
	Swap       bool
	Quote      string
	OldEpisode *int64
}

// writeStart moves a belief's start. The rewritten events' vectors are of the old
// excerpt, and are computed again.
func (a *applier) writeStart(p startParams) {
	if p.Swap {
		a.exec(fmt.Sprintf("credit the events of belief %d", p.ID), `UPDATE revision_event
			SET episode_id = $3, excerpt = $4, embedding = NULL, embed_model = NULL
			WHERE scope = $2 AND new_belief_id = $1 AND action IN ('supersede', 'retract') AND episode_id = $5`,
			p.ID, a.b.Scope, a.b.EpisodeID, nullText(p.Quote), p.OldEpisode)
	}
	a.exec(fmt.Sprintf("move the start of belief %d", p.ID), `UPDATE belief SET valid_from = @valid_from, updated_at = @now,
			episode_id = CASE WHEN @swap THEN @episode_id ELSE episode_id END,
			quote = CASE WHEN @swap THEN @quote ELSE quote END
		WHERE scope = @scope AND id = @id`, pgx.NamedArgs{
		"id": p.ID, "valid_from": p.ValidFrom, "now": a.now, "swap": p.Swap, "episode_id": a.b.EpisodeID,
		"quote": nullText(p.Quote), "old_episode_id": p.OldEpisode, "scope": a.b.Scope,
	})
}

// relinkParams puts belief New between Prev and Next of a chain.
type relinkParams struct {
	Prev, Next int64
	New        *target
	// ValidFrom is when New starts, and Prev now ends (never later than it did).
	ValidFrom time.Time
}

// writeRelink links Prev to New, and rewrites the events that recorded Prev → Next to
// record New → Next; it returns how many it rewrote. A rewritten event's vector no
// longer matches its text: it is computed again.
func (a *applier) writeRelink(ctx context.Context, p relinkParams) (rewritten int64, err error) {
	a.exec(fmt.Sprintf("relink belief %d", p.Prev), `UPDATE belief SET superseded_by = $2, valid_until = least(valid_until, $3), updated_at = $4
		WHERE scope = $5 AND id = $1`, p.Prev, p.New.ID, p.ValidFrom, a.now, a.b.Scope)
	err = a.send(ctx, fmt.Sprintf("rewrite events of belief %d", p.Prev), `UPDATE revision_event
		SET old_belief_id = $3, old_statement = $4, embedding = NULL, embed_model = NULL
		WHERE scope = $5 AND old_belief_id = $1 AND new_belief_id = $2 AND action = 'supersede'`,
		[]any{p.Prev, p.Next, p.New.ID, p.New.Statement, a.b.Scope}, func(br pgx.BatchResults) error {
			tag, err := br.Exec()
			rewritten = tag.RowsAffected()
			return err
		})
	return rewritten, err
}
