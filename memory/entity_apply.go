package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/entity"
)

// The entity registry inside the revision engine: every fact's subject resolves to an
// entity of the batch's scope, by its key and the scope's aliases, read with the scope's
// lock in the engine's first round trip. A new name makes a new entity when its first
// belief is stored; the aliases a fact gives are learned then too. An alias that names
// another entity is never taken: the two become a proposal (same_entity).

// normalizeSubject checks what a fact says of its subject's names and kind.
func normalizeSubject(f *Fact) error {
	if why := entity.CheckName(f.Subject); why != "" && f.Subject != "" {
		return invalidf("subject %s", why)
	}
	if len(f.SubjectAliases) > entity.MaxAliases {
		return invalidf("%d subject_aliases; the limit is %d", len(f.SubjectAliases), entity.MaxAliases)
	}
	for _, a := range f.SubjectAliases {
		if why := entity.CheckName(a); why != "" {
			return invalidf("subject_alias %q %s", a, why)
		}
	}
	if f.SubjectKind != "" && !entity.ValidKind(f.SubjectKind) {
		return invalidf("subject_kind %q is not one of %v", f.SubjectKind, entity.Kinds)
	}
	return nil
}

// entityNames are the names whose registry entries a batch reads: its facts' subjects
// and the aliases they give, as keys. The user is no name to look up: every name of
// the user is the key user, and the user is never merged into another entity.
func (b *Batch) entityNames() []string {
	var keys []string
	for _, f := range b.Facts {
		if f.Statement == "" {
			continue
		}
		if key := entity.Key(f.Subject); key != entity.User {
			keys = append(keys, key)
		}
		for _, a := range f.SubjectAliases {
			keys = append(keys, entity.Key(a))
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// registry is what a batch knows of its scope's entities.
type registry struct {
	// aliases maps a name's key to its entity's key, for the names read and those the
	// batch adds.
	aliases map[string]string
	// kinds are the kinds of the registered entities read, by key.
	kinds map[string]entity.Kind
	// created are the entities the batch stored already; pending the aliases its facts
	// give that no entity had, stored with the first belief of their entity.
	created, pending map[string]bool
}

// queueEntityRead queues the read of the batch's names in the scope's registry, and
// returns what reads its result.
func (a *applier) queueEntityRead(batch *pgx.Batch) func(pgx.BatchResults) error {
	a.entities = &registry{aliases: map[string]string{}, kinds: map[string]entity.Kind{}, created: map[string]bool{},
		pending: map[string]bool{}}
	names := a.b.entityNames()
	if len(names) == 0 {
		// Every subject is the user's, with no other name: nothing to read.
		a.entities.resolveAll(a.b.Facts)
		return func(pgx.BatchResults) error { return nil }
	}
	batch.Queue(`SELECT a.alias, a.entity, e.kind FROM entity_alias a JOIN entity e ON e.scope = a.scope AND e.key = a.entity
		WHERE a.scope = $1 AND a.alias = ANY($2)`, a.b.Scope, names)
	return func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return fmt.Errorf("read the scope's entities: %w", err)
		}
		var (
			alias, key string
			kind       entity.Kind
		)
		_, err = pgx.ForEachRow(rows, []any{&alias, &key, &kind}, func() error {
			a.entities.aliases[alias], a.entities.kinds[key] = key, kind
			return nil
		})
		if err != nil {
			return fmt.Errorf("read the scope's entities: %w", err)
		}
		a.entities.resolveAll(a.b.Facts)
		return nil
	}
}

// resolveAll resolves the subjects of facts in order: an alias a fact gives that no
// entity has is its entity's for the facts after it ("my sister Sarah", then "Sarah").
func (r *registry) resolveAll(facts []Fact) {
	for i := range facts {
		f := &facts[i]
		if f.Statement == "" {
			continue
		}
		f.entity = r.resolve(f.Subject)
		for _, name := range f.SubjectAliases {
			if alias := entity.Key(name); alias != entity.User {
				if _, known := r.aliases[alias]; !known {
					r.aliases[alias], r.pending[alias] = f.entity, true
				}
			}
		}
	}
}

// resolve is the key of the entity subject names: the entity its key is an alias of,
// else the new entity of that key.
func (r *registry) resolve(subject string) string {
	key := entity.Key(subject)
	if key == entity.User {
		return key
	}
	if e, ok := r.aliases[key]; ok {
		return e
	}
	return key
}

// storeEntity queues what the registry learns from f, whose belief is being stored: its
// entity, if new, and the aliases f gives it. An alias of another entity is a proposal
// to merge the two, recorded for review.
func (a *applier) storeEntity(ctx context.Context, f *Fact) error {
	r, key := a.entities, f.entity
	if key == "" {
		// A fact of a batch read before the registry (never from Apply): resolved now.
		key = r.resolve(f.Subject)
		f.entity = key
	}
	// A registered entity is written again only to learn its kind. The user is
	// registered once they have another name: until then every scope has them, with no
	// row (Entities, findEntity).
	if known, ok := r.kinds[key]; ok && (known != entity.KindOther || f.SubjectKind == "" || f.SubjectKind == entity.KindOther) {
		r.created[key] = true
	}
	if !r.created[key] && (key != entity.User || len(f.SubjectAliases) > 0) {
		r.created[key] = true
		kind := f.SubjectKind
		if kind == "" || key == entity.User {
			kind = entity.KindOf(key)
		}
		name := entity.Name(f.Subject)
		if entity.Key(name) != key {
			name = key // the subject is an alias of it: the entity keeps its own name
		}
		// A known entity whose kind nobody said yet takes the one this fact says.
		a.exec("store entity "+key, `INSERT INTO entity (scope, key, name, kind, created_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (scope, key) DO UPDATE SET kind = EXCLUDED.kind WHERE entity.kind = 'other' AND EXCLUDED.kind <> 'other'`,
			a.b.Scope, key, name, kind, a.now)
		a.exec("store alias "+key, `INSERT INTO entity_alias (scope, alias, entity, name, created_at) VALUES ($1, $2, $2, $3, $4)
			ON CONFLICT (scope, alias) DO NOTHING`, a.b.Scope, key, name, a.now)
		r.aliases[key] = key
	}
	// The subject itself may be an alias the batch gave ("Sarah", after "my sister Sarah").
	for _, name := range append([]string{f.Subject}, f.SubjectAliases...) {
		alias := entity.Key(name)
		owner, known := r.aliases[alias]
		switch {
		case alias == entity.User || (owner == key && !r.pending[alias]):
		case !known || owner == key:
			r.aliases[alias], r.pending[alias] = key, false
			a.exec("store alias "+alias, `INSERT INTO entity_alias (scope, alias, entity, name, created_at) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (scope, alias) DO NOTHING`, a.b.Scope, alias, key, entity.Name(name), a.now)
		default:
			// "Sarah" is an entity of its own, and this conversation says the sister is
			// Sarah: the same person, maybe, which only an operator decides. The user
			// absorbs, never is absorbed.
			m := MergeProposal{Into: key, Other: owner}
			if owner == entity.User {
				m = MergeProposal{Into: owner, Other: key}
			}
			if err := a.proposeMerge(ctx, m,
				fmt.Sprintf("the conversation calls %s %q, the name of %s", key, name, owner)); err != nil {
				return err
			}
		}
	}
	return nil
}

// proposeMerge records, once per pair of entities, the proposal that they are one: an
// open item of cause same_entity, unless one for the pair is open or was decided.
func (a *applier) proposeMerge(ctx context.Context, m MergeProposal, why string) error {
	if err := a.flush(ctx); err != nil {
		return err
	}
	a.written()
	id, err := insertMergeItem(ctx, a.tx, mergeItem{Scope: a.b.Scope, Origin: a.b.Origin, Merge: m, Detail: why,
		EpisodeID: a.b.EpisodeID, Now: a.now})
	if err == nil && id != 0 {
		a.note(ChangeReviewOpened, id)
	}
	return err
}

// mergeItem is one proposal to merge two entities, for review.
type mergeItem struct {
	Scope     string
	Origin    RevisionOrigin
	Merge     MergeProposal
	Detail    string
	EpisodeID *int64
	Now       time.Time
}

// insertMergeItem inserts a same_entity item unless the pair has one, open or decided,
// either way round; it returns the new item's id, 0 when the pair had one.
func insertMergeItem(ctx context.Context, tx pgx.Tx, it mergeItem) (int64, error) {
	proposed, err := json.Marshal(Proposal{Merge: &it.Merge})
	if err != nil {
		return 0, fmt.Errorf("encode merge proposal: %w", err)
	}
	rows, err := tx.Query(ctx, `INSERT INTO belief_conflict (scope, kind, cause, origin, action, proposed, detail, episode_id, created_at)
		SELECT $1, 'refused', 'same_entity', $2, 'merge', $3, $4, $5, $6
		WHERE NOT EXISTS (SELECT 1 FROM belief_conflict WHERE scope = $1 AND cause = 'same_entity'
			AND ((proposed->'merge'->>'into' = $7 AND proposed->'merge'->>'other' = $8)
				OR (proposed->'merge'->>'into' = $8 AND proposed->'merge'->>'other' = $7)))
		RETURNING id`, it.Scope, it.Origin, proposed, it.Detail, it.EpisodeID, it.Now, it.Merge.Into, it.Merge.Other)
	if err != nil {
		return 0, fmt.Errorf("propose merging %s into %s: %w", it.Merge.Other, it.Merge.Into, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	return ids[0], nil
}
