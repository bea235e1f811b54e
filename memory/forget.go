package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/transcript"
)

// ErrSelection is what an error for a Selection that names nothing or several things is
// (errors.Is); the error is a *transcript.InputError.
var ErrSelection = errors.New("invalid selection")

// Selection names beliefs of one scope to forget or purge: exactly one of IDs, Match,
// Entity and All.
type Selection struct {
	Scope string
	IDs   []int64
	// Match selects every belief whose statement, quote, subject or attribute contains
	// it, ignoring case: a belief quoting the words is as much about them as one stating
	// them.
	Match string
	// Entity selects every belief about the entity of that name or alias ("forget
	// everything about my ex"); Purge also erases the entity and its names.
	Entity string
	// All selects every belief of the scope; Purge then erases the whole scope.
	All bool
}

func (sel *Selection) normalize() error {
	sel.Scope = strings.TrimSpace(sel.Scope)
	sel.Match = strings.TrimSpace(sel.Match)
	sel.Entity = strings.TrimSpace(sel.Entity)
	n := 0
	for _, set := range []bool{len(sel.IDs) > 0, sel.Match != "", sel.Entity != "", sel.All} {
		if set {
			n++
		}
	}
	switch {
	case sel.Scope == "":
		return transcript.InputErrorf(ErrSelection, "scope", "is empty")
	case n != 1:
		return transcript.InputErrorf(ErrSelection, "", "give exactly one of IDs, Match, Entity and All")
	case strings.ContainsRune(sel.Match, 0):
		return transcript.InputErrorf(ErrSelection, "match", "contains a NUL character")
	}
	sel.IDs = uniq(sel.IDs)
	return nil
}

// Forget soft-forgets the selected beliefs: they become forgotten, retired now if they
// were not already, and vanish from every read but All, from extraction prompts and
// from consolidation, while staying in storage for audit. It takes the scope's lock, so
// it never interleaves with Apply. It returns the ids it forgot, ascending; beliefs
// already forgotten are not counted again.
//
// An id not in the scope, or a scope without beliefs, is ErrNotFound.
func (s *Store) Forget(ctx context.Context, sel Selection) ([]int64, error) {
	if err := sel.normalize(); err != nil {
		return nil, err
	}
	now := s.clock()
	var forgotten []int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockScope(ctx, tx, sel.Scope); err != nil {
			return err
		}
		if len(sel.IDs) == 0 {
			if err := checkScope(ctx, tx, sel.Scope, "SELECT 1 FROM belief WHERE scope = $1"); err != nil {
				return err
			}
		}
		ids, err := selectBeliefs(ctx, tx, sel)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `UPDATE belief SET status = 'forgotten',
				retired_at = coalesce(retired_at, greatest($2, recorded_at)), updated_at = $2
			WHERE scope = $3 AND id = ANY($1) AND status <> 'forgotten' RETURNING id`, ids, now, sel.Scope)
		if err != nil {
			return err
		}
		if forgotten, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil || len(forgotten) == 0 {
			return err
		}
		slices.Sort(forgotten)
		if err := closeItems(ctx, tx, sel.Scope, forgotten, ResolvedForgotten, now); err != nil {
			return err
		}
		err = flagDependents(ctx, tx, flag{scope: sel.Scope, bases: forgotten, keepTarget: true, origin: RevisionOperator,
			change: "forgotten by an operator", now: now})
		if err != nil {
			return err
		}
		return s.announceForgottenTx(ctx, tx, sel.Scope, forgotten, now)
	})
	if err != nil {
		return nil, fmt.Errorf("forget beliefs of %q: %w", sel.Scope, err)
	}
	return forgotten, nil
}

// announceForgottenTx announces the beliefs ids of scope (ascending) forgotten at time at, then
// the review items that closed with them or that they flagged.
func (s *Store) announceForgottenTx(ctx context.Context, tx pgx.Tx, scope string, ids []int64, at time.Time) error {
	if s.announcer == nil {
		return nil
	}
	cs := make([]Change, len(ids), len(ids)+1)
	for i, id := range ids {
		cs[i] = Change{Scope: scope, Kind: ChangeBeliefForgotten, ID: id, At: at}
	}
	items, err := reviewChanges(ctx, tx, scope, at, 0)
	if err != nil {
		return err
	}
	return s.announceTx(ctx, tx, append(cs, items...))
}

// selectBeliefs is the ids of the beliefs sel names, forgotten ones included, ascending.
func selectBeliefs(ctx context.Context, tx pgx.Tx, sel Selection) ([]int64, error) {
	if len(sel.IDs) > 0 {
		rows, err := tx.Query(ctx, "SELECT id FROM belief WHERE id = ANY($1) AND scope = $2 ORDER BY id", sel.IDs, sel.Scope)
		if err != nil {
			return nil, err
		}
		found, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return nil, err
		}
		for _, id := range sel.IDs {
			if !slices.Contains(found, id) {
				return nil, fmt.Errorf("belief %d in scope %q: %w", id, sel.Scope, ErrNotFound)
			}
		}
		return found, nil
	}
	if sel.Entity != "" {
		e, err := findEntity(ctx, tx, sel.Scope, sel.Entity)
		if err != nil {
			return nil, err
		}
		rows, err := tx.Query(ctx, "SELECT id FROM belief WHERE scope = $1 AND entity = $2 ORDER BY id", sel.Scope, e.Key)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	rows, err := tx.Query(ctx, `SELECT id FROM belief WHERE scope = $1 AND ($2 = ''
			OR strpos(lower(statement), lower($2)) > 0 OR strpos(lower(coalesce(quote, '')), lower($2)) > 0
			OR strpos(lower(subject), lower($2)) > 0 OR strpos(lower(attribute), lower($2)) > 0)
		ORDER BY id`, sel.Scope, sel.Match)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// checkScope is ErrNotFound unless the query finds a row of scope: a mistyped scope is
// reported, not taken for an empty one.
func checkScope(ctx context.Context, tx pgx.Tx, scope, query string) error {
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS ("+query+")", scope).Scan(&exists); err != nil {
		return fmt.Errorf("look up scope: %w", err)
	}
	if !exists {
		return fmt.Errorf("scope %q: %w", scope, ErrNotFound)
	}
	return nil
}
