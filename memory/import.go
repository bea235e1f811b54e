package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/credohq/credo/redact"
)

// ErrNotEmpty is returned for an import into a scope that holds memory: an import never
// mixes with what a scope holds.
var ErrNotEmpty = errors.New("the scope holds memory")

// NotEmptyError names the scopes an import was refused for.
type NotEmptyError struct {
	Scopes []string
}

func (e *NotEmptyError) Error() string {
	what := "scope " + e.Scopes[0] + " already holds memory"
	if len(e.Scopes) > 1 {
		what = fmt.Sprintf("%d scopes already hold memory (%s)", len(e.Scopes), strings.Join(e.Scopes, ", "))
	}
	return what + "; an import goes into scopes that hold nothing: purge them first, or import elsewhere (--scope-map)"
}

// Is makes errors.Is(err, ErrNotEmpty) true.
func (e *NotEmptyError) Is(target error) bool { return target == ErrNotEmpty }

// holdsMemorySQL says whether scope $1 holds any row: each read names it, so that on
// Citus it runs on the scope's shard.
const holdsMemorySQL = `SELECT EXISTS (SELECT 1 FROM belief WHERE scope = $1) OR EXISTS (SELECT 1 FROM episode WHERE scope = $1)
	OR EXISTS (SELECT 1 FROM revision_event WHERE scope = $1) OR EXISTS (SELECT 1 FROM belief_conflict WHERE scope = $1)`

// HoldingMemory is those of scopes that hold a belief, an episode, a revision event or a
// review item, in order: one read per scope, in one round trip.
func (s *Store) HoldingMemory(ctx context.Context, scopes []string) ([]string, error) {
	batch := &pgx.Batch{}
	for _, scope := range scopes {
		batch.Queue(holdsMemorySQL, scope)
	}
	br := s.db.SendBatch(ctx, batch)
	defer br.Close()
	var out []string
	for _, scope := range scopes {
		var holds bool
		if err := br.QueryRow().Scan(&holds); err != nil {
			return nil, fmt.Errorf("look up scope %q: %w", scope, err)
		}
		if holds {
			out = append(out, scope)
		}
	}
	return out, br.Close()
}

// ScopeImported counts what ImportTx stored in one scope.
type ScopeImported struct {
	Scope        string `json:"scope"`
	Episodes     int    `json:"episodes"`
	Beliefs      int    `json:"beliefs"`
	Dependencies int    `json:"dependencies"`
	Events       int    `json:"events"`
	ReviewItems  int    `json:"review_items"`
	// Entities counts the entities registered: the export's, and those its beliefs'
	// subjects made (an export made before entities, mem0's memories).
	Entities int `json:"entities"`
	// PendingEpisodes are episodes still to extract: their scope needs its job.
	PendingEpisodes int `json:"pending_episodes"`
	// Redacted counts the secrets the scope's policy replaced on the way in, by kind
	// (empty when none).
	Redacted map[string]int `json:"redacted"`
	// ToEmbed are the rows stored without the vector they need, with their new ids and
	// the text to embed: the beliefs but forgotten ones, the revisions but restatements
	// and reverts (see Unembedded). SetImportedEmbeddings stores their vectors.
	ToEmbed []Unembedded `json:"-"`
}

// ImportTx stores sc, checked by CheckImport, in tx under the scope's lock, and
// ErrNotEmpty (a *NotEmptyError) when the scope holds memory. Every row gets a new id
// and every reference is rewritten to it; everything else is kept as exported, times
// included. The scope's entity registry is the import's: its entity records, and the
// entities of beliefs that name none (see ScopeImport.registry). No vector is stored: the caller embeds the rows of ToEmbed afterwards
// (SetImportedEmbeddings) and the dismissals (UnembeddedDismissals); until then reads
// find them as any row stored without a vector. A pending episode needs its scope's
// extraction job, which the caller inserts in tx.
//
// What was imported then passes the redaction of the policy in force in the scope
// (Policy.Redactor over base; nil base is redact.Default), in tx, as `beliefs policy
// apply` would redact it: an import is a way in like any other, and an export may come
// from a deployment that redacted less.
//
// Every statement names the scope, so that on Citus the transaction is the scope's
// shard's alone.
func (s *Store) ImportTx(ctx context.Context, tx pgx.Tx, sc *ScopeImport, base *redact.Redactor) (*ScopeImported, error) {
	if base == nil {
		base = redact.Default()
	}
	im := &importer{tx: tx, sc: sc, episodes: map[int64]int64{}, beliefs: map[int64]int64{}, events: map[int64]int64{}}
	if err := im.run(ctx); err != nil {
		return nil, fmt.Errorf("import %s: %w", sc.Scope, err)
	}
	policies, err := policiesFor(ctx, tx, []string{sc.Scope})
	if err != nil {
		return nil, err
	}
	r, err := policies[sc.Scope].Redactor(base)
	if err != nil {
		return nil, fmt.Errorf("policy of %q: %w", sc.Scope, err)
	}
	redacted := &ScopeRedacted{Counts: map[string]int{}}
	if !r.Off() {
		if redacted, err = redactScope(ctx, tx, sc.Scope, r, false); err != nil {
			return nil, fmt.Errorf("import %s: %w", sc.Scope, err)
		}
	}
	return &ScopeImported{Scope: sc.Scope, Episodes: len(sc.Episodes), Beliefs: len(sc.Beliefs), Dependencies: len(sc.Dependencies),
		Events: len(sc.Events), ReviewItems: len(sc.Items), Entities: len(im.reg.entities), PendingEpisodes: sc.Pending(), Redacted: redacted.Counts,
		ToEmbed: im.toEmbed(r)}, nil
}

// toEmbed lists the imported rows that need a vector, beliefs first, as Unembedded
// would, with their texts as r redacted them in the rows.
func (im *importer) toEmbed(r *redact.Redactor) []Unembedded {
	text := func(s string) string {
		out, _ := r.Text(s)
		return out
	}
	var out []Unembedded
	for _, b := range im.sc.Beliefs {
		if b.Status != StatusForgotten {
			out = append(out, Unembedded{ID: im.beliefs[b.ID], Text: text(b.Statement)})
		}
	}
	for _, e := range im.sc.Events {
		if e.Action != ActionReinforce && e.Action != ActionRevert {
			excerpt, newer := text(deref(e.Excerpt)), text(deref(e.NewStatement))
			out = append(out, Unembedded{Event: true, ID: im.events[e.ID], Text: EventText(text(e.OldStatement), excerpt, newer)})
		}
	}
	return out
}

// SetImportedEmbeddings stores vecs[i], of model, as the vector of items[i], rows of
// scope that ImportTx stored without one, in one statement a table. Unlike
// SetEmbeddings it leaves the beliefs' updated_at as imported: the scope's restored
// consolidation watermark still tells which of them its next pass looks at. A row that
// has a vector of model by now is left as it is. Call EnsureEmbeddingModel before.
func (s *Store) SetImportedEmbeddings(ctx context.Context, scope, model string, items []Unembedded, vecs [][]float32) (int, error) {
	if len(items) != len(vecs) {
		return 0, fmt.Errorf("set embeddings: %d items, %d vectors", len(items), len(vecs))
	}
	var beliefs, events []int64
	var beliefVecs, eventVecs []string
	for i, u := range items {
		v := pgvector.NewVector(vecs[i]).String()
		if u.Event {
			events, eventVecs = append(events, u.ID), append(eventVecs, v)
		} else {
			beliefs, beliefVecs = append(beliefs, u.ID), append(beliefVecs, v)
		}
	}
	stored := 0
	for _, t := range []struct {
		table string
		ids   []int64
		vecs  []string
	}{{"belief", beliefs, beliefVecs}, {"revision_event", events, eventVecs}} {
		if len(t.ids) == 0 {
			continue
		}
		tag, err := s.db.Exec(ctx, `UPDATE `+t.table+` r SET embedding = m.v::vector, embed_model = $2
			FROM unnest($3::bigint[], $4::text[]) AS m(id, v)
			WHERE r.scope = $1 AND r.id = m.id AND r.embed_model IS DISTINCT FROM $2`, scope, model, t.ids, t.vecs)
		if err != nil {
			return stored, fmt.Errorf("set embeddings of %q: %w", scope, err)
		}
		stored += int(tag.RowsAffected())
	}
	return stored, nil
}

// importer writes one scope; its maps take each exported id to the new one.
type importer struct {
	tx                        pgx.Tx
	sc                        *ScopeImport
	reg                       *importRegistry
	episodes, beliefs, events map[int64]int64
}

func (im *importer) run(ctx context.Context) error {
	scope := im.sc.Scope
	reg, err := im.sc.registry()
	if err != nil {
		return err
	}
	im.reg = reg
	if err := lockImportTx(ctx, im.tx); err != nil {
		return err
	}
	if err := lockScope(ctx, im.tx, scope); err != nil {
		return err
	}
	var holds bool
	if err := im.tx.QueryRow(ctx, holdsMemorySQL, scope).Scan(&holds); err != nil {
		return fmt.Errorf("look up scope: %w", err)
	}
	if holds {
		return &NotEmptyError{Scopes: []string{scope}}
	}
	for _, step := range []func(context.Context) error{im.writeEntities, im.writeEpisodes, im.writeBeliefs, im.writeLinks, im.writeDependencies,
		im.writeEvents, im.writeItems, im.writeState} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// insertChunk bounds the statements of one round trip.
const insertChunk = 500

// insertAll queues one INSERT ... RETURNING id per row of n through queue, in chunks,
// and gives each row's new id to got, in order.
func (im *importer) insertAll(ctx context.Context, what string, n int, queue func(b *pgx.Batch, i int), got func(i int, id int64)) error {
	for start := 0; start < n; start += insertChunk {
		end := min(start+insertChunk, n)
		b := &pgx.Batch{}
		for i := start; i < end; i++ {
			queue(b, i)
		}
		br := im.tx.SendBatch(ctx, b)
		for i := start; i < end; i++ {
			var id int64
			if err := br.QueryRow().Scan(&id); err != nil {
				_ = br.Close()
				return fmt.Errorf("insert %s %d of %d: %w", what, i+1, n, err)
			}
			got(i, id)
		}
		if err := br.Close(); err != nil {
			return fmt.Errorf("insert %s: %w", what, err)
		}
	}
	return nil
}

// mapped is the new id of ref in m, nil for nil.
func mapped(m map[int64]int64, ref *int64) *int64 {
	if ref == nil {
		return nil
	}
	id := m[*ref]
	return &id
}

// writeEntities stores the registry, in one round trip: each entity, its key as its own
// alias (as the engine stores it), and its other names.
func (im *importer) writeEntities(ctx context.Context) error {
	var (
		keys, names, kinds          []string
		created                     []time.Time
		aliases, owners, aliasNames []string
		aliasCreated                []time.Time
	)
	for _, e := range im.reg.entities {
		keys, names, kinds, created = append(keys, e.key), append(names, e.name), append(kinds, string(e.kind)), append(created, e.createdAt)
		aliases, owners = append(aliases, e.key), append(owners, e.key)
		aliasNames, aliasCreated = append(aliasNames, e.name), append(aliasCreated, e.createdAt)
		for _, a := range e.aliases {
			aliases, owners = append(aliases, a.alias), append(owners, e.key)
			aliasNames, aliasCreated = append(aliasNames, a.name), append(aliasCreated, a.createdAt)
		}
	}
	b := &pgx.Batch{}
	// A scope that holds no memory may still keep the user's entry (a purge of its
	// beliefs one by one keeps it): it names nothing, and the import's registry is the
	// scope's.
	b.Queue("DELETE FROM entity_alias WHERE scope = $1", im.sc.Scope)
	b.Queue("DELETE FROM entity WHERE scope = $1", im.sc.Scope)
	if len(keys) > 0 {
		b.Queue(`INSERT INTO entity (scope, key, name, kind, created_at)
			SELECT $1, u.key, u.name, u.kind, u.created_at FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[])
				AS u(key, name, kind, created_at)`, im.sc.Scope, keys, names, kinds, created)
		b.Queue(`INSERT INTO entity_alias (scope, alias, entity, name, created_at)
			SELECT $1, u.alias, u.entity, u.name, u.created_at FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[])
				AS u(alias, entity, name, created_at)`, im.sc.Scope, aliases, owners, aliasNames, aliasCreated)
	}
	if err := im.tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("insert entities: %w", err)
	}
	return nil
}

func (im *importer) writeEpisodes(ctx context.Context) error {
	eps := im.sc.Episodes
	return im.insertAll(ctx, "episode", len(eps), func(b *pgx.Batch, i int) {
		e := eps[i]
		b.Queue(`INSERT INTO episode (scope, external_id, messages, content_hash, occurred_at, received_at, state, attempts,
				last_error, processed_at, redacted_at, progress_message, progress_offset)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id`,
			im.sc.Scope, e.ExternalID, e.Messages, e.ContentHash, e.OccurredAt, e.ReceivedAt, e.State, e.Attempts,
			e.LastError, e.ProcessedAt, e.RedactedAt, e.ProgressMessage, e.ProgressOffset)
	}, func(i int, id int64) { im.episodes[eps[i].ID] = id })
}

// newIDs takes n fresh ids of table's identity, ascending: rows written with them
// (OVERRIDING SYSTEM VALUE) are as new as rows the sequence numbers itself, and their
// references are known before they are written, so that thousands go in one statement.
func (im *importer) newIDs(ctx context.Context, table string, n int) ([]int64, error) {
	if n == 0 {
		return nil, nil
	}
	rows, err := im.tx.Query(ctx, "SELECT nextval(pg_get_serial_sequence($1, 'id')) AS id FROM generate_series(1, $2) ORDER BY id", table, n)
	if err != nil {
		return nil, fmt.Errorf("number %d rows of %s: %w", n, table, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("number %d rows of %s: %w", n, table, err)
	}
	return ids, nil
}

// bulkChunk bounds the rows of one multi-row insert.
const bulkChunk = 5000

// writeBeliefs stores the beliefs without their links, which may name beliefs of a later
// statement: writeLinks adds them.
func (im *importer) writeBeliefs(ctx context.Context) error {
	bs := im.sc.Beliefs
	ids, err := im.newIDs(ctx, "belief", len(bs))
	if err != nil {
		return err
	}
	for i, b := range bs {
		im.beliefs[b.ID] = ids[i]
	}
	for start := 0; start < len(bs); start += bulkChunk {
		chunk := bs[start:min(start+bulkChunk, len(bs))]
		var c struct {
			id, episode, reinforced                             []int64
			subject, attribute, kind, statement, status, origin []string
			entity                                              []string
			quote                                               []*string
			confidence                                          []float64
			validFrom, recordedAt, lastSeenAt, updatedAt        []time.Time
			validUntil, retiredAt                               []*time.Time
			episodeID                                           []*int64
			needsReview                                         []bool
		}
		for i, b := range chunk {
			c.id = append(c.id, im.beliefs[b.ID])
			c.subject, c.attribute, c.kind = append(c.subject, b.Subject), append(c.attribute, b.Attribute), append(c.kind, string(b.Kind))
			c.statement, c.status, c.origin = append(c.statement, b.Statement), append(c.status, string(b.Status)), append(c.origin, string(b.Origin))
			c.quote, c.confidence, c.reinforced = append(c.quote, b.Quote), append(c.confidence, b.Confidence), append(c.reinforced, int64(b.ReinforcedCount))
			c.validFrom, c.validUntil = append(c.validFrom, b.ValidFrom), append(c.validUntil, b.ValidUntil)
			c.recordedAt, c.retiredAt = append(c.recordedAt, b.RecordedAt), append(c.retiredAt, b.RetiredAt)
			c.lastSeenAt, c.updatedAt = append(c.lastSeenAt, b.LastSeenAt), append(c.updatedAt, b.UpdatedAt)
			c.episodeID, c.needsReview = append(c.episodeID, mapped(im.episodes, b.EpisodeID)), append(c.needsReview, b.NeedsReview)
			c.entity = append(c.entity, im.reg.of[start+i])
		}
		_, err := im.tx.Exec(ctx, `INSERT INTO belief (id, scope, subject, attribute, kind, statement, status, confidence, origin,
				valid_from, valid_until, recorded_at, retired_at, episode_id, quote, reinforced_count, last_seen_at, updated_at, needs_review,
				entity)
			OVERRIDING SYSTEM VALUE
			SELECT u.id, $1, u.subject, u.attribute, u.kind, u.statement, u.status, u.confidence, u.origin,
				u.valid_from, u.valid_until, u.recorded_at, u.retired_at, u.episode_id, u.quote, u.reinforced_count, u.last_seen_at,
				u.updated_at, u.needs_review, u.entity
			FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::float8[], $9::text[],
				$10::timestamptz[], $11::timestamptz[], $12::timestamptz[], $13::timestamptz[], $14::bigint[], $15::text[], $16::bigint[],
				$17::timestamptz[], $18::timestamptz[], $19::bool[], $20::text[])
				AS u(id, subject, attribute, kind, statement, status, confidence, origin, valid_from, valid_until, recorded_at,
					retired_at, episode_id, quote, reinforced_count, last_seen_at, updated_at, needs_review, entity)`,
			im.sc.Scope, c.id, c.subject, c.attribute, c.kind, c.statement, c.status, c.confidence, c.origin,
			c.validFrom, c.validUntil, c.recordedAt, c.retiredAt, c.episodeID, c.quote, c.reinforced, c.lastSeenAt, c.updatedAt, c.needsReview,
			c.entity)
		if err != nil {
			return fmt.Errorf("insert beliefs: %w", err)
		}
	}
	return nil
}

// writeLinks sets each superseded belief's successor, in one statement.
func (im *importer) writeLinks(ctx context.Context) error {
	var from, to []int64
	for _, b := range im.sc.Beliefs {
		if b.SupersededBy != nil {
			from, to = append(from, im.beliefs[b.ID]), append(to, im.beliefs[*b.SupersededBy])
		}
	}
	if len(from) == 0 {
		return nil
	}
	_, err := im.tx.Exec(ctx, `UPDATE belief b SET superseded_by = m.next FROM unnest($2::bigint[], $3::bigint[]) AS m(id, next)
		WHERE b.scope = $1 AND b.id = m.id`, im.sc.Scope, from, to)
	if err != nil {
		return fmt.Errorf("link superseded beliefs: %w", err)
	}
	return nil
}

func (im *importer) writeDependencies(ctx context.Context) error {
	deps := im.sc.Dependencies
	if len(deps) == 0 {
		return nil
	}
	beliefs, bases := make([]int64, len(deps)), make([]int64, len(deps))
	for i, d := range deps {
		beliefs[i], bases[i] = im.beliefs[d.BeliefID], im.beliefs[d.BasisID]
	}
	_, err := im.tx.Exec(ctx, "INSERT INTO belief_dependency (scope, belief_id, basis_id) SELECT $1, unnest($2::bigint[]), unnest($3::bigint[])",
		im.sc.Scope, beliefs, bases)
	if err != nil {
		return fmt.Errorf("insert dependencies: %w", err)
	}
	return nil
}

// writeEvents stores the events, with the reverts between them: every event's new id is
// known before the first is written.
func (im *importer) writeEvents(ctx context.Context) error {
	evs := im.sc.Events
	ids, err := im.newIDs(ctx, "revision_event", len(evs))
	if err != nil {
		return err
	}
	for i, e := range evs {
		im.events[e.ID] = ids[i]
	}
	for chunk := range slices.Chunk(evs, bulkChunk) {
		var c struct {
			id, old                              []int64
			newID, episode, reverts, revertedBy  []*int64
			action, reason, origin, oldStatement []string
			newStatement, excerpt, rationale     []*string
			createdAt                            []time.Time
			revertedAt                           []*time.Time
			prior                                []*eventPrior
		}
		for _, e := range chunk {
			prior, err := im.prior(e.Prior)
			if err != nil {
				return fmt.Errorf("event on line %d: %w", e.Line, err)
			}
			c.id, c.old = append(c.id, im.events[e.ID]), append(c.old, im.beliefs[e.OldBeliefID])
			c.newID, c.episode = append(c.newID, mapped(im.beliefs, e.NewBeliefID)), append(c.episode, mapped(im.episodes, e.EpisodeID))
			c.reverts, c.revertedBy = append(c.reverts, mapped(im.events, e.Reverts)), append(c.revertedBy, mapped(im.events, e.RevertedBy))
			c.action, c.reason, c.origin = append(c.action, string(e.Action)), append(c.reason, string(e.Reason)), append(c.origin, string(e.Origin))
			c.oldStatement, c.newStatement = append(c.oldStatement, e.OldStatement), append(c.newStatement, e.NewStatement)
			c.excerpt, c.rationale = append(c.excerpt, e.Excerpt), append(c.rationale, e.Rationale)
			c.createdAt, c.revertedAt, c.prior = append(c.createdAt, e.CreatedAt), append(c.revertedAt, e.RevertedAt), append(c.prior, prior)
		}
		_, err := im.tx.Exec(ctx, `INSERT INTO revision_event (id, scope, action, reason, origin, old_belief_id, new_belief_id,
				old_statement, new_statement, excerpt, rationale, episode_id, created_at, reverts, reverted_by, reverted_at, prior)
			OVERRIDING SYSTEM VALUE
			SELECT u.id, $1, u.action, u.reason, u.origin, u.old_belief_id, u.new_belief_id, u.old_statement, u.new_statement,
				u.excerpt, u.rationale, u.episode_id, u.created_at, u.reverts, u.reverted_by, u.reverted_at, u.prior
			FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::text[], $9::text[],
				$10::text[], $11::text[], $12::bigint[], $13::timestamptz[], $14::bigint[], $15::bigint[], $16::timestamptz[], $17::jsonb[])
				AS u(id, action, reason, origin, old_belief_id, new_belief_id, old_statement, new_statement, excerpt, rationale,
					episode_id, created_at, reverts, reverted_by, reverted_at, prior)`,
			im.sc.Scope, c.id, c.action, c.reason, c.origin, c.old, c.newID, c.oldStatement, c.newStatement,
			c.excerpt, c.rationale, c.episode, c.createdAt, c.reverts, c.revertedBy, c.revertedAt, c.prior)
		if err != nil {
			return fmt.Errorf("insert revision events: %w", err)
		}
	}
	return nil
}

// prior is an event's prior with its episode's new id.
func (im *importer) prior(raw json.RawMessage) (*eventPrior, error) {
	p, err := decodePrior(raw)
	if err != nil || p == nil {
		return nil, err
	}
	p.EpisodeID = mapped(im.episodes, p.EpisodeID)
	return p, nil
}

// writeItems stores the review items column by column, as exported: each column the
// item names is filled from its JSON value by PostgreSQL's own conversion, so a column
// this version has and the export's did not keeps its default.
func (im *importer) writeItems(ctx context.Context) error {
	items := im.sc.Items
	return im.insertAll(ctx, "review item", len(items), func(b *pgx.Batch, i int) {
		cols := maps.Clone(items[i].Columns)
		delete(cols, "id")
		delete(cols, "scope")
		for _, col := range itemIDColumns {
			ref, _ := itemRef(items[i], col) // checked by CheckImport
			m := im.beliefs
			if col == "episode_id" {
				m = im.episodes
			}
			if ref != nil {
				cols[col] = json.RawMessage(strconv.FormatInt(m[*ref], 10))
			}
		}
		names := slices.Sorted(maps.Keys(cols))
		quoted := make([]string, len(names))
		for j, n := range names {
			quoted[j] = pgx.Identifier{n}.Sanitize()
		}
		list := strings.Join(quoted, ", ")
		if list != "" {
			list = ", " + list
		}
		values, _ := json.Marshal(cols)
		b.Queue(`INSERT INTO belief_conflict (scope`+list+`) SELECT $1`+strings.ReplaceAll(list, ", ", ", r.")+`
			FROM jsonb_populate_record(NULL::belief_conflict, $2::jsonb) AS r RETURNING id`, im.sc.Scope, values)
	}, func(int, int64) {})
}

func (im *importer) writeState(ctx context.Context) error {
	st := im.sc.State
	if st == nil || st.ConsolidatedUntil == nil {
		return nil
	}
	_, err := im.tx.Exec(ctx, "INSERT INTO scope_consolidation (scope, watermark, updated_at) VALUES ($1, $2, $2)",
		im.sc.Scope, *st.ConsolidatedUntil)
	if err != nil {
		return fmt.Errorf("restore consolidation state: %w", err)
	}
	return nil
}
