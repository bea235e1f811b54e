package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/entity"
	"github.com/credohq/credo/transcript"
)

// Entity is one entity of a scope's registry: whom beliefs are about. Its JSON form is
// the contract of `beliefs entities --json`.
type Entity struct {
	Scope string `json:"scope"`
	// Key is the normalised name beliefs point at (Belief.Entity); Name is how it was
	// first said.
	Key  string      `json:"key"`
	Name string      `json:"name"`
	Kind entity.Kind `json:"kind"`
	// Aliases are the other names it goes by, as said, in the order learned.
	Aliases []string `json:"aliases"`
	// CurrentBeliefs counts its active beliefs.
	CurrentBeliefs int       `json:"current_beliefs"`
	CreatedAt      time.Time `json:"created_at,omitzero"` // zero: the user, before a belief about them
}

// Slot is one slot (attribute) of an entity: its current beliefs and, in a read with
// history, every belief it held, oldest first.
type Slot struct {
	Attribute string   `json:"attribute"`
	Current   []Belief `json:"current"`
	History   []Belief `json:"history,omitempty"`
}

// EntityView is one entity with its beliefs by slot: the contract of `beliefs entity
// --json`.
type EntityView struct {
	Entity
	Slots []Slot `json:"slots"`
}

// ErrUnknownEntity is what an entity name no entity of the scope goes by is
// (errors.As *UnknownEntityError).
var ErrUnknownEntity = errors.New("unknown entity")

// UnknownEntityError names the entity not found and the nearest name the scope knows.
type UnknownEntityError struct {
	Scope, Name string
	// Nearest is the known name nearest to Name, "" when the scope has none.
	Nearest string
}

func (e *UnknownEntityError) Error() string {
	msg := fmt.Sprintf("no entity of %q is called %q", e.Scope, e.Name)
	if e.Nearest != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", e.Nearest)
	}
	return msg
}

func (e *UnknownEntityError) Unwrap() error { return ErrUnknownEntity }

// entityColumns are an entity e's, with its aliases, then {current}: the count of its
// current beliefs, for the reads that show it (a count scans the scope's beliefs, as no
// index leads with the entity); the scope is $1.
const entityColumns = `e.scope, e.key, e.name, e.kind, e.created_at,
	coalesce((SELECT array_agg(a.name ORDER BY a.created_at, a.alias) FROM entity_alias a
		WHERE a.scope = $1 AND a.entity = e.key AND a.alias <> e.key), '{}'),
	{current}`

// entitySQL is entityColumns with current as the count of current beliefs.
func entitySQL(current string) string {
	return "SELECT " + strings.Replace(entityColumns, "{current}", current, 1)
}

// currentOfEntity counts one entity's current beliefs.
const currentOfEntity = `(SELECT count(*) FROM belief b WHERE b.scope = $1 AND b.entity = e.key AND b.status = 'active')`

func scanEntity(row pgx.CollectableRow) (Entity, error) {
	var e Entity
	err := row.Scan(&e.Scope, &e.Key, &e.Name, &e.Kind, &e.CreatedAt, &e.Aliases, &e.CurrentBeliefs)
	e.CreatedAt = e.CreatedAt.UTC()
	return e, err
}

// Entities lists the entities of scope, the user first, then by name. A scope without
// any is an empty list.
func (s *Store) Entities(ctx context.Context, scope string) ([]Entity, error) {
	// The counts of every entity in one pass over the scope's current beliefs.
	rows, err := s.db.Query(ctx, entitySQL("coalesce(c.n, 0)")+` FROM entity e
		LEFT JOIN (SELECT b.entity, count(*) AS n FROM belief b WHERE b.scope = $1 AND b.status = 'active' GROUP BY b.entity) c
			ON c.entity = e.key
		WHERE e.scope = $1 ORDER BY e.key <> 'user', lower(e.name), e.key`, scope)
	if err != nil {
		return nil, fmt.Errorf("list entities of %q: %w", scope, err)
	}
	es, err := pgx.CollectRows(rows, scanEntity)
	if err != nil {
		return nil, fmt.Errorf("list entities of %q: %w", scope, err)
	}
	if len(es) > 0 && es[0].Key == entity.User {
		return es, nil
	}
	user, _, err := implicitUser(ctx, s.db, scope)
	if err != nil || user == nil {
		return es, err
	}
	return append([]Entity{*user}, es...), nil
}

// implicitUser is the user of scope while the registry has no row for them (one is
// written when the user gets another name, or absorbs an entity): nil when no belief is
// about the user. held says whether memory ever held the scope.
func implicitUser(ctx context.Context, db querier, scope string) (user *Entity, held bool, err error) {
	var (
		first   *time.Time
		current int
	)
	err = db.QueryRow(ctx, `SELECT min(recorded_at), count(*) FILTER (WHERE status = 'active'),
			EXISTS (SELECT 1 FROM belief WHERE scope = $1) OR EXISTS (SELECT 1 FROM episode WHERE scope = $1)
		FROM belief WHERE scope = $1 AND entity = 'user'`, scope).Scan(&first, &current, &held)
	if err != nil {
		return nil, false, fmt.Errorf("read the user of %q: %w", scope, err)
	}
	if first == nil {
		return nil, held, nil
	}
	return &Entity{Scope: scope, Key: entity.User, Name: entity.User, Kind: entity.KindUser, Aliases: []string{},
		CurrentBeliefs: current, CreatedAt: first.UTC()}, held, nil
}

// EntityNames are the names of the entities keys of scope, by key: what the extraction
// prompt shows of its candidates' entities. One read, on the scope's shard, that counts
// no beliefs (CurrentBeliefs is 0).
func (s *Store) EntityNames(ctx context.Context, scope string, keys []string) (map[string]Entity, error) {
	out := map[string]Entity{}
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := s.db.Query(ctx, entitySQL("0")+" FROM entity e WHERE e.scope = $1 AND e.key = ANY($2)", scope, keys)
	if err != nil {
		return nil, fmt.Errorf("read entities of %q: %w", scope, err)
	}
	es, err := pgx.CollectRows(rows, scanEntity)
	if err != nil {
		return nil, fmt.Errorf("read entities of %q: %w", scope, err)
	}
	for _, e := range es {
		out[e.Key] = e
	}
	return out, nil
}

// findEntity is the entity of scope that name is the name or an alias of, or an
// *UnknownEntityError with the nearest known name.
func findEntity(ctx context.Context, db querier, scope, name string) (*Entity, error) {
	if why := entity.CheckName(name); why != "" {
		return nil, transcript.InputErrorf(ErrInvalid, "name", "%s", why)
	}
	rows, err := db.Query(ctx, entitySQL(currentOfEntity)+` FROM entity e WHERE e.scope = $1
		AND e.key = (SELECT a.entity FROM entity_alias a WHERE a.scope = $1 AND a.alias = $2)`, scope, entity.Key(name))
	if err != nil {
		return nil, fmt.Errorf("find entity %q of %q: %w", name, scope, err)
	}
	e, err := pgx.CollectExactlyOneRow(rows, scanEntity)
	switch {
	case err == nil:
		return &e, nil
	case errors.Is(err, pgx.ErrNoRows) && entity.Key(name) == entity.User:
		// Every scope memory holds has the user, registered or not; a scope it never
		// held has no one.
		user, held, err := implicitUser(ctx, db, scope)
		switch {
		case err != nil:
			return nil, err
		case !held:
			return nil, &UnknownEntityError{Scope: scope, Name: name}
		case user == nil:
			return &Entity{Scope: scope, Key: entity.User, Name: entity.User, Kind: entity.KindUser, Aliases: []string{}}, nil
		}
		return user, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return nil, fmt.Errorf("find entity %q of %q: %w", name, scope, err)
	}
	rows, err = db.Query(ctx, "SELECT name FROM entity_alias WHERE scope = $1", scope)
	if err != nil {
		return nil, fmt.Errorf("find entity %q of %q: %w", name, scope, err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("find entity %q of %q: %w", name, scope, err)
	}
	return nil, &UnknownEntityError{Scope: scope, Name: name, Nearest: entity.Nearest(name, names)}
}

// EntityByName reads the entity of scope called name (its name or an alias) with its
// current beliefs by slot and, with history, every belief of each slot but forgotten
// ones, oldest first. An unknown name is an *UnknownEntityError.
func (s *Store) EntityByName(ctx context.Context, scope, name string, history bool) (*EntityView, error) {
	e, err := findEntity(ctx, s.db, scope, name)
	if err != nil {
		return nil, err
	}
	view := currentView
	if history {
		view = historyView
	}
	bs, err := s.queryBeliefs(ctx, view+" AND b.entity = $2 ORDER BY b.valid_from, b.recorded_at, b.id", scope, e.Key)
	if err != nil {
		return nil, fmt.Errorf("read beliefs of entity %q: %w", e.Name, err)
	}
	return &EntityView{Entity: *e, Slots: slots(bs)}, nil
}

// slots groups beliefs, oldest first, by attribute: each slot's current ones, and all of
// them as its history when any is not current. Slots are in the order of their first
// belief.
func slots(bs []Belief) []Slot {
	var out []Slot
	index := map[string]int{}
	for _, b := range bs {
		i, ok := index[b.Attribute]
		if !ok {
			i = len(out)
			index[b.Attribute] = i
			out = append(out, Slot{Attribute: b.Attribute, Current: []Belief{}})
		}
		if b.Status == StatusActive {
			out[i].Current = append(out[i].Current, b)
		}
		out[i].History = append(out[i].History, b)
	}
	for i := range out {
		if len(out[i].History) == len(out[i].Current) {
			out[i].History = nil // nothing but what is current
		}
	}
	return out
}

// Merge says an operator's decision that two names of a scope are one entity.
type Merge struct {
	Scope string
	// Into is the entity that stays; Other's aliases and beliefs move to it.
	Into, Other string
	// Note is the operator's, kept on the review item a merge closes.
	Note string
}

// Merged is what MergeEntities did.
type Merged struct {
	Entity EntityView `json:"entity"`
	// Moved counts the beliefs that are now Into's.
	Moved int64 `json:"moved"`
	// Closed are the same_entity review items about the pair that the merge closed.
	Closed []int64 `json:"closed_items"`
}

// MergeEntities merges entity m.Other into m.Into, both found by name or alias: Other's
// names become aliases of Into and its beliefs Into's; nothing else changes (no belief
// is revised, no statement rewritten). Open same_entity items about the pair close as
// applied. The user may absorb another entity, never be absorbed; a name of neither is
// an *UnknownEntityError; the same entity twice is ErrInvalid. One transaction under
// the scope's lock.
func (s *Store) MergeEntities(ctx context.Context, m Merge) (*Merged, error) {
	m.Scope = strings.TrimSpace(m.Scope)
	if m.Scope == "" {
		return nil, transcript.InputErrorf(ErrInvalid, "scope", "is empty")
	}
	if err := checkText("note", m.Note, MaxNoteLen); err != nil {
		return nil, err
	}
	out := &Merged{}
	now := s.clock()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockScope(ctx, tx, m.Scope); err != nil {
			return err
		}
		var err error
		if out.Moved, out.Closed, err = mergeTx(ctx, tx, m, now); err != nil || len(out.Closed) == 0 {
			return err
		}
		return s.announceReviewTx(ctx, tx, m.Scope, now)
	})
	if err != nil {
		return nil, err
	}
	view, err := s.EntityByName(ctx, m.Scope, m.Into, false)
	if err != nil {
		return nil, err
	}
	out.Entity = *view
	return out, nil
}

// mergeTx merges m.Other into m.Into inside tx, which holds the scope's lock.
func mergeTx(ctx context.Context, tx pgx.Tx, m Merge, now time.Time) (moved int64, closed []int64, err error) {
	into, err := findEntity(ctx, tx, m.Scope, m.Into)
	if err != nil {
		return 0, nil, err
	}
	other, err := findEntity(ctx, tx, m.Scope, m.Other)
	if err != nil {
		return 0, nil, err
	}
	switch {
	case into.Key == other.Key:
		return 0, nil, transcript.InputErrorf(ErrInvalid, "", "%q and %q are already one entity, %q", m.Into, m.Other, into.Name)
	case other.Key == entity.User:
		return 0, nil, transcript.InputErrorf(ErrInvalid, "", "the user is never merged into another entity: merge %q into the user instead", m.Into)
	}
	batch := &pgx.Batch{}
	if into.Key == entity.User {
		batch.Queue(`INSERT INTO entity (scope, key, name, kind, created_at) VALUES ($1, 'user', 'user', 'user', $2)
			ON CONFLICT (scope, key) DO NOTHING`, m.Scope, now)
		batch.Queue(`INSERT INTO entity_alias (scope, alias, entity, name, created_at) VALUES ($1, 'user', 'user', 'user', $2)
			ON CONFLICT (scope, alias) DO NOTHING`, m.Scope, now)
	}
	batch.Queue("UPDATE entity_alias SET entity = $3 WHERE scope = $1 AND entity = $2", m.Scope, other.Key, into.Key)
	batch.Queue("UPDATE belief SET entity = $3, updated_at = $4 WHERE scope = $1 AND entity = $2", m.Scope, other.Key, into.Key, now)
	// Into takes Other's kind when its own is not known.
	batch.Queue(`UPDATE entity SET kind = $3 WHERE scope = $1 AND key = $2 AND kind = 'other'`, m.Scope, into.Key, other.Kind)
	batch.Queue("DELETE FROM entity WHERE scope = $1 AND key = $2", m.Scope, other.Key)
	batch.Queue(`UPDATE belief_conflict SET status = 'resolved', resolution = 'applied', resolved_at = $4, note = nullif($5, '')
		WHERE scope = $1 AND status = 'open' AND cause = 'same_entity'
			AND ((proposed->'merge'->>'into' = $2 AND proposed->'merge'->>'other' = $3)
				OR (proposed->'merge'->>'into' = $3 AND proposed->'merge'->>'other' = $2))
		RETURNING id`, m.Scope, into.Key, other.Key, now, m.Note)
	br := tx.SendBatch(ctx, batch)
	defer br.Close()
	for i := range batch.Len() - 1 {
		tag, err := br.Exec()
		if err != nil {
			return 0, nil, fmt.Errorf("merge %q into %q: %w", other.Name, into.Name, err)
		}
		if i == batch.Len()-4 {
			moved = tag.RowsAffected() // the beliefs' update
		}
	}
	rows, err := br.Query()
	if err == nil {
		closed, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	if err != nil {
		return 0, nil, fmt.Errorf("merge %q into %q: close review items: %w", other.Name, into.Name, err)
	}
	if err := br.Close(); err != nil {
		return 0, nil, fmt.Errorf("merge %q into %q: %w", other.Name, into.Name, err)
	}
	return moved, closed, nil
}

// ProposeMerges records, for every pair of scope's entities that entity.Proposals finds
// may be one, a same_entity review item, once per pair (an item decided either way is
// not proposed again); it returns the ids of the items it opened. Consolidation runs it;
// nothing merges until an operator applies an item.
func (s *Store) ProposeMerges(ctx context.Context, scope string) ([]int64, error) {
	var opened []int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockScope(ctx, tx, scope); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT e.key, e.name, e.kind,
				coalesce((SELECT array_agg(a.alias ORDER BY a.alias) FROM entity_alias a WHERE a.scope = $1 AND a.entity = e.key), '{}')
			FROM entity e WHERE e.scope = $1 ORDER BY e.key`, scope)
		if err != nil {
			return fmt.Errorf("read entities: %w", err)
		}
		known, err := pgx.CollectRows(rows, pgx.RowToStructByPos[entity.Known])
		if err != nil {
			return fmt.Errorf("read entities: %w", err)
		}
		now := s.clock()
		for _, p := range entity.Proposals(known) {
			id, err := insertMergeItem(ctx, tx, mergeItem{Scope: scope, Origin: RevisionConsolidation,
				Merge: MergeProposal{Into: p.Into, Other: p.Other}, Detail: p.Why, Now: now})
			if err != nil {
				return err
			}
			if id != 0 {
				opened = append(opened, id)
			}
		}
		if len(opened) > 0 {
			return s.announceReviewTx(ctx, tx, scope, now)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("propose entity merges in %q: %w", scope, err)
	}
	return opened, nil
}
