package memory

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ItemBelief is a belief a review item names, as it is now: what a reviewer reads
// beside the proposal before Apply or Dismiss, without a click through.
type ItemBelief struct {
	ID         int64      `json:"id"`
	Statement  string     `json:"statement"`
	Subject    string     `json:"subject"`
	Entity     string     `json:"entity"`
	Attribute  string     `json:"attribute"`
	Kind       Kind       `json:"kind"`
	Origin     Origin     `json:"origin"`
	Status     Status     `json:"status"`
	ValidFrom  time.Time  `json:"valid_from"`
	ValidUntil *time.Time `json:"valid_until"`
}

// explain sets each item's Target (the belief it would revise, or the changed basis)
// and Why (its cause in words), reading the targets of scope in one statement.
func (s *Store) explain(ctx context.Context, scope string, cs []Conflict) error {
	var ids []int64
	for _, c := range cs {
		if c.TargetID != nil {
			ids = append(ids, *c.TargetID)
		}
	}
	targets := map[int64]*ItemBelief{}
	if len(ids) > 0 {
		rows, err := s.db.Query(ctx, `SELECT id, statement, subject, entity, attribute, kind, origin, status, valid_from, valid_until
			FROM belief WHERE scope = $1 AND id = ANY($2)`, scope, ids)
		if err != nil {
			return fmt.Errorf("targets of review items of %q: %w", scope, err)
		}
		bs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ItemBelief, error) {
			var b ItemBelief
			err := row.Scan(&b.ID, &b.Statement, &b.Subject, &b.Entity, &b.Attribute, &b.Kind, &b.Origin, &b.Status, &b.ValidFrom, &b.ValidUntil)
			b.ValidFrom, b.ValidUntil = b.ValidFrom.UTC(), utcPtr(b.ValidUntil)
			return b, err
		})
		if err != nil {
			return fmt.Errorf("targets of review items of %q: %w", scope, err)
		}
		for i := range bs {
			targets[bs[i].ID] = &bs[i]
		}
	}
	for i := range cs {
		c := &cs[i]
		if c.TargetID != nil {
			c.Target = targets[*c.TargetID]
		}
		c.Why = c.because()
	}
	return nil
}

// because is the item's cause in words, for a reviewer: what made the engine hold or
// refuse it, said of its own proposal and target rather than by the measures in Detail.
func (c *Conflict) because() string {
	t := c.Target
	p := c.Proposed
	if p == nil {
		p = &Proposal{}
	}
	// "the target", not its id: the item shows it beside, and the sentence reads the
	// same in an export imported elsewhere.
	const target = "the target"
	if c.Kind == ConflictBasisChanged {
		return "The belief this one was concluded from changed: does this one still hold without it?"
	}
	if c.Cause == nil {
		return ""
	}
	verb := "revise"
	switch c.Action {
	case ActionSupersede:
		verb = "replace"
	case ActionRetract:
		verb = "retract"
	}
	switch *c.Cause {
	case CauseOtherEntity:
		return fmt.Sprintf("The new fact is about %s, %s about %s: a fact about someone or something else replaces nothing; "+
			"the new fact was kept as its own.", whom(p.Subject, ""), target, whom(subjectOf(t), entityOf(t)))
	case CauseNotFromUser:
		return "The quote was found only in text the user did not say as their own (a message of the assistant or a tool, " +
			"or a quoted, forwarded or pasted block): a document does not " + verb + " what the user said."
	case CauseSecondOpinion:
		if p.Opinion != "" {
			return fmt.Sprintf("Neither who said it nor whom or which slot it is about settled whether to %s %s; second opinion: %s",
				verb, target, strings.TrimSpace(p.Opinion))
		}
		return fmt.Sprintf("Neither who said it nor whom or which slot it is about settled whether to %s %s, and no second opinion confirmed it.",
			verb, target)
	case CauseUnrelated:
		return fmt.Sprintf("The new fact does not seem to be about %s: another slot, no word in common, and a meaning far from it.", target)
	case CauseUngrounded:
		return fmt.Sprintf("The conversation never speaks of %s: the model may have obeyed an instruction in the text.", target)
	case CauseMassRevision:
		return "Too many revisions at once: the episode, or the scope's episodes within a day, had already made as many " +
			"destructive revisions as MAX_REVISIONS_PER_EPISODE or MAX_REVISIONS_PER_DAY allow."
	case CauseSameEntity:
		if m := p.Merge; m != nil {
			return fmt.Sprintf("%q and %q may be one entity: applying merges %q into %q.", m.Other, m.Into, m.Other, m.Into)
		}
		return "Two entities may be one."
	case CauseEntrenchment:
		return "The target is held more firmly than this revision" + held(t, p) + ": only an operator overrides it."
	case CauseStaleTarget:
		if t != nil && t.Status != StatusActive {
			return fmt.Sprintf("The target is no longer current (%s): the revision came too late to %s it.", t.Status, verb)
		}
		return "The target or its replacement changed while the revision was being made."
	case CauseTimeOrder:
		return fmt.Sprintf("The revision would end %s before it began.", target)
	case CauseInvalidIndex:
		return "The model named a belief it was not shown."
	case CauseEvent:
		return "The target is an event: it happened, and a later event does not replace it."
	}
	return ""
}

// held says why t is entrenched against proposal p, "" when t is unknown.
func held(t *ItemBelief, p *Proposal) string {
	switch {
	case t == nil:
		return ""
	case t.Origin == OriginAuthoritative:
		return " (it is authoritative)"
	case t.Origin == OriginUserStated && p.Origin == OriginInferred:
		return " (the user stated it; this is an inference)"
	case t.Origin == OriginUserStated && p.Origin == OriginImported:
		return " (the user stated it; this is imported)"
	case t.Origin == OriginUserStated:
		return " (the user stated it, more confidently)"
	}
	return ""
}

func subjectOf(t *ItemBelief) string {
	if t == nil {
		return ""
	}
	return t.Subject
}

func entityOf(t *ItemBelief) string {
	if t == nil {
		return ""
	}
	return t.Entity
}

// whom names whom a fact is about: "the user" for the user, else its subject quoted.
func whom(subject, entity string) string {
	switch {
	case entity == "user", strings.EqualFold(strings.TrimSpace(subject), "user"):
		return "the user"
	case subject != "":
		return fmt.Sprintf("%q", subject)
	case entity != "":
		return fmt.Sprintf("%q", entity)
	}
	return "another entity"
}
