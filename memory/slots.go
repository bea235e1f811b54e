package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// synonyms are a scope's learned slot synonyms: pairs of normalised attributes that
// name one slot, the lesser first (table slot_synonym).
type synonyms map[[2]string]bool

// same says whether attributes a and b name one slot: the same name, as attributes are
// compared (normAttribute), or a synonym the scope learned.
func (s synonyms) same(a, b string) bool {
	na, nb := normAttribute(a), normAttribute(b)
	return na != "" && na == nb || s[slotPair(na, nb)]
}

func slotPair(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// Where a slot synonym was learned.
const (
	learnedFromOperator      = "operator"
	learnedFromSecondOpinion = "second_opinion"
)

// learnSlot records that attributes a and b name one slot of the scope, as from says;
// nothing when they already do or one has no name.
func (a *applier) learnSlot(x, y, from string) {
	nx, ny := normAttribute(x), normAttribute(y)
	if nx == "" || ny == "" || a.guard.slots.same(nx, ny) || len(nx) > MaxLabelLen || len(ny) > MaxLabelLen {
		return
	}
	p := slotPair(nx, ny)
	if a.guard.slots == nil {
		a.guard.slots = synonyms{}
	}
	a.guard.slots[p] = true
	a.exec(fmt.Sprintf("learn slot synonym %s = %s", p[0], p[1]), learnSlotSQL, a.b.Scope, p[0], p[1], from, a.now)
}

const learnSlotSQL = `INSERT INTO slot_synonym (scope, slot, synonym, learned_from, created_at)
	VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`

// learnItemSlot learns, from an operator's decision to apply held item c (a
// supersession), that its two beliefs' attributes name one slot, when they are about
// one entity.
func learnItemSlot(ctx context.Context, tx pgx.Tx, c *Conflict, now time.Time) error {
	if c.Cause == nil || !c.Cause.Held() || c.Action != ActionSupersede || c.TargetID == nil || c.BeliefID == nil {
		return nil
	}
	var ta, te, ba, be string
	err := tx.QueryRow(ctx, `SELECT t.attribute, t.entity, b.attribute, b.entity FROM belief t JOIN belief b ON b.scope = t.scope
		WHERE t.scope = $1 AND b.scope = $1 AND t.id = $2 AND b.id = $3`, c.Scope, *c.TargetID, *c.BeliefID).Scan(&ta, &te, &ba, &be)
	if err != nil {
		return fmt.Errorf("review item %d: read its slots: %w", c.ID, err)
	}
	x, y := normAttribute(ta), normAttribute(ba)
	if te != be || x == y || x == "" || y == "" || len(x) > MaxLabelLen || len(y) > MaxLabelLen {
		return nil
	}
	p := slotPair(x, y)
	if _, err := tx.Exec(ctx, learnSlotSQL, c.Scope, p[0], p[1], learnedFromOperator, now); err != nil {
		return fmt.Errorf("review item %d: learn slot synonym: %w", c.ID, err)
	}
	return nil
}

// activateHeld makes the held belief of item c current, before the operator's batch
// supersedes the target by it; retireHeld retires it, as the item is dismissed.
func activateHeld(ctx context.Context, tx pgx.Tx, c *Conflict, now time.Time) error {
	if c.BeliefID == nil {
		return nil
	}
	_, err := tx.Exec(ctx, "UPDATE belief SET status = 'active', updated_at = $3 WHERE scope = $1 AND id = $2 AND status = 'held'",
		c.Scope, *c.BeliefID, now)
	if err != nil {
		return fmt.Errorf("review item %d: make belief %d current: %w", c.ID, *c.BeliefID, err)
	}
	return nil
}

func retireHeld(ctx context.Context, tx pgx.Tx, c *Conflict, now time.Time) error {
	if c.BeliefID == nil {
		return nil
	}
	// It never held: its valid time closes where it began.
	_, err := tx.Exec(ctx, `UPDATE belief SET status = 'retracted', valid_until = valid_from, retired_at = $3, updated_at = $3
		WHERE scope = $1 AND id = $2 AND status = 'held'`, c.Scope, *c.BeliefID, now)
	if err != nil {
		return fmt.Errorf("review item %d: retire belief %d: %w", c.ID, *c.BeliefID, err)
	}
	return nil
}
