package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/credohq/credo/entity"
	"github.com/credohq/credo/transcript"
)

// ErrImport is the kind of an import's bad input: a record that is not what an export
// holds, or that names a row the export does not hold.
var ErrImport = errors.New("invalid import")

// ScopeImport is one scope's memory to import: the records an export holds of it.
type ScopeImport struct {
	// Scope is where the memory goes; the records' own Scope (the exporting one) is not
	// read.
	Scope string
	State *ExportedScope
	// Entities are the scope's registry; none in an export made before entities (or
	// from mem0), whose beliefs' subjects make it.
	Entities     []ExportedEntity
	Episodes     []ExportedEpisode
	Beliefs      []ExportedBelief
	Dependencies []ExportedDependency
	Events       []ExportedEvent
	Items        []ExportedItem
}

// Pending counts the scope's pending episodes: they need their extraction job.
func (sc *ScopeImport) Pending() int {
	n := 0
	for _, e := range sc.Episodes {
		if e.State == EpisodePending {
			n++
		}
	}
	return n
}

// lineErrorf is bad input on line, naming it first.
func lineErrorf(line int, format string, args ...any) error {
	return transcript.InputErrorf(ErrImport, fmt.Sprintf("line %d:", line), format, args...)
}

// CheckImport checks every scope's records before anything is imported: the values
// the tables take, the times they keep in order, the statuses and links the engine
// keeps (an active belief is neither retired nor superseded; a chain has no loop), that
// every id a record names is a row of the same scope in the import, and that every
// name of an entity names one entity and every belief's entity is one of the records.
// The first problem is an *transcript.InputError of kind ErrImport naming its line.
func (s *Store) CheckImport(ctx context.Context, scopes []*ScopeImport) error {
	columns, err := s.itemColumns(ctx)
	if err != nil {
		return err
	}
	for _, sc := range scopes {
		if err := transcript.CheckScope("scope", sc.Scope); err != nil {
			return err
		}
		if err := sc.check(columns); err != nil {
			return err
		}
	}
	return nil
}

// itemColumns is the columns of belief_conflict, without those an import never
// writes: the id (new), the vector (computed again).
func (s *Store) itemColumns(ctx context.Context) (map[string]bool, error) {
	rows, err := s.db.Query(ctx, `SELECT attname FROM pg_attribute
		WHERE attrelid = 'belief_conflict'::regclass AND attnum > 0 AND NOT attisdropped`)
	if err != nil {
		return nil, fmt.Errorf("read the review queue's columns: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read the review queue's columns: %w", err)
	}
	out := map[string]bool{}
	for _, n := range names {
		if n != "embedding" && n != "embed_model" {
			out[n] = true
		}
	}
	return out, nil
}

// idSet is the ids of one kind of record of a scope, each with its line.
type idSet map[int64]int

func (m idSet) add(line int, what string, id int64) error {
	if id <= 0 {
		return lineErrorf(line, "%s id %d is not positive", what, id)
	}
	if first, ok := m[id]; ok {
		return lineErrorf(line, "%s %d is on line %d already", what, id, first)
	}
	m[id] = line
	return nil
}

// names checks that ref, a reference of the record on line, is nil or one of m.
func (m idSet) names(line int, field string, ref *int64, what string) error {
	if ref == nil {
		return nil
	}
	if _, ok := m[*ref]; !ok {
		return lineErrorf(line, "%s names %s %d, which the import does not hold in this scope", field, what, *ref)
	}
	return nil
}

func (sc *ScopeImport) check(columns map[string]bool) error {
	episodes, beliefs, events, items := idSet{}, idSet{}, idSet{}, idSet{}
	hashes := map[string]int{}
	for _, e := range sc.Episodes {
		if err := checkEpisode(sc.Scope, e, episodes, hashes); err != nil {
			return err
		}
	}
	for _, b := range sc.Beliefs {
		if err := beliefs.add(b.Line, "belief", b.ID); err != nil {
			return err
		}
	}
	for _, b := range sc.Beliefs {
		if err := checkBelief(sc.Scope, b, beliefs, episodes); err != nil {
			return err
		}
	}
	if err := checkChains(sc.Beliefs); err != nil {
		return err
	}
	if _, err := sc.registry(); err != nil {
		return err
	}
	deps := map[[2]int64]bool{}
	for _, d := range sc.Dependencies {
		if err := beliefs.names(d.Line, "belief_id", &d.BeliefID, "belief"); err != nil {
			return err
		}
		if err := beliefs.names(d.Line, "basis_id", &d.BasisID, "belief"); err != nil {
			return err
		}
		switch {
		case d.BeliefID == d.BasisID:
			return lineErrorf(d.Line, "belief %d depends on itself", d.BeliefID)
		case deps[[2]int64{d.BeliefID, d.BasisID}]:
			return lineErrorf(d.Line, "belief %d depends on belief %d twice", d.BeliefID, d.BasisID)
		}
		deps[[2]int64{d.BeliefID, d.BasisID}] = true
	}
	for _, e := range sc.Events {
		if err := events.add(e.Line, "event", e.ID); err != nil {
			return err
		}
	}
	reverted := map[int64]bool{}
	for _, e := range sc.Events {
		if err := checkEvent(e, events, beliefs, episodes, reverted); err != nil {
			return err
		}
	}
	for _, it := range sc.Items {
		if err := items.add(it.Line, "review item", it.ID); err != nil {
			return err
		}
		if err := checkItem(it, columns, beliefs, episodes); err != nil {
			return err
		}
	}
	return nil
}

func checkEpisode(scope string, e ExportedEpisode, episodes idSet, hashes map[string]int) error {
	if err := episodes.add(e.Line, "episode", e.ID); err != nil {
		return err
	}
	if !e.State.Valid() {
		return lineErrorf(e.Line, "episode %d: state %q is not pending, applied or failed", e.ID, e.State)
	}
	if m := bytes.TrimSpace(e.Messages); len(m) == 0 || m[0] != '[' || !json.Valid(m) || hasNUL(m) {
		return lineErrorf(e.Line, "episode %d: messages is not a JSON array of messages", e.ID)
	}
	if strings.TrimSpace(e.ContentHash) == "" {
		return lineErrorf(e.Line, "episode %d: content_hash is empty", e.ID)
	}
	if first, ok := hashes[e.ContentHash]; ok {
		return lineErrorf(e.Line, "episode %d has the content_hash of the episode on line %d: one transcript is one episode", e.ID, first)
	}
	hashes[e.ContentHash] = e.Line
	if e.Attempts < 0 || e.ProgressMessage < 0 || e.ProgressOffset < 0 {
		return lineErrorf(e.Line, "episode %d: attempts and progress are not negative", e.ID)
	}
	if err := checkTimes(e.Line, "episode", e.ID, map[string]time.Time{"occurred_at": e.OccurredAt, "received_at": e.ReceivedAt}); err != nil {
		return err
	}
	if err := checkStrings(e.Line, "episode", e.ID, map[string]*string{"external_id": e.ExternalID, "last_error": e.LastError}); err != nil {
		return err
	}
	// Unique with the scope: a btree index holds it.
	return checkSized(e.Line, "episode", e.ID, scope, []sized{{"content_hash", e.ContentHash, transcript.MaxIDLen, true}})
}

func checkBelief(scope string, b ExportedBelief, beliefs, episodes idSet) error {
	id := b.ID
	switch {
	case !slices.Contains(Kinds, b.Kind):
		return lineErrorf(b.Line, "belief %d: kind %q is not one of %v", id, b.Kind, Kinds)
	case !slices.Contains([]Status{StatusActive, StatusSuperseded, StatusRetracted, StatusForgotten, StatusHeld}, b.Status):
		return lineErrorf(b.Line, "belief %d: status %q is not active, superseded, retracted or forgotten", id, b.Status)
	case !slices.Contains([]Origin{OriginUserStated, OriginInferred, OriginAuthoritative, OriginImported}, b.Origin):
		return lineErrorf(b.Line, "belief %d: origin %q is not user_stated, inferred, authoritative or imported", id, b.Origin)
	case math.IsNaN(b.Confidence) || b.Confidence < 0 || b.Confidence > 1:
		return lineErrorf(b.Line, "belief %d: confidence %v is not within 0..1", id, b.Confidence)
	case b.ReinforcedCount < 0:
		return lineErrorf(b.Line, "belief %d: reinforced_count is negative", id)
	case strings.TrimSpace(b.Statement) == "" || strings.TrimSpace(b.Subject) == "" || strings.TrimSpace(b.Attribute) == "":
		return lineErrorf(b.Line, "belief %d: statement, subject and attribute are required", id)
	case b.ValidUntil != nil && b.ValidUntil.Before(b.ValidFrom):
		return lineErrorf(b.Line, "belief %d: valid_until is before valid_from", id)
	case b.RetiredAt != nil && b.RetiredAt.Before(b.RecordedAt):
		return lineErrorf(b.Line, "belief %d: retired_at is before recorded_at", id)
	case b.Status == StatusActive && (b.RetiredAt != nil || b.SupersededBy != nil):
		return lineErrorf(b.Line, "belief %d is active: it has neither retired_at nor superseded_by", id)
	case b.Status != StatusActive && b.RetiredAt == nil:
		return lineErrorf(b.Line, "belief %d is %s: it has a retired_at", id, b.Status)
	case b.SupersededBy != nil && *b.SupersededBy == id:
		return lineErrorf(b.Line, "belief %d is superseded by itself", id)
	}
	if err := beliefs.names(b.Line, "superseded_by", b.SupersededBy, "belief"); err != nil {
		return err
	}
	if err := episodes.names(b.Line, "episode_id", b.EpisodeID, "episode"); err != nil {
		return err
	}
	if err := checkTimes(b.Line, "belief", id, map[string]time.Time{"valid_from": b.ValidFrom, "recorded_at": b.RecordedAt,
		"last_seen_at": b.LastSeenAt, "updated_at": b.UpdatedAt}); err != nil {
		return err
	}
	// The engine's limits, as every writer's (Batch); an active belief's statement and
	// attribute are indexed with the scope, whose rows PostgreSQL bounds in bytes.
	active := b.Status == StatusActive
	return checkSized(b.Line, "belief", id, scope, []sized{{"statement", b.Statement, MaxStatementLen, active},
		{"subject", b.Subject, MaxLabelLen, false}, {"attribute", b.Attribute, MaxLabelLen, active}, {"quote", deref(b.Quote), MaxQuoteLen, false}})
}

// indexRowMax is the most bytes a row of a btree index of PostgreSQL holds (version 4,
// 8 kB pages). A longer one is refused when written ("index row size 3000 exceeds btree
// version 4 maximum 2704", or "index row requires 36048 bytes" when even compressed it
// fills more than a page); compression may let a longer value fit, but a check made
// before writing cannot count on it.
const indexRowMax = 2704

// indexRowOverhead is an index row's header and its columns' length words and alignment,
// with room to spare.
const indexRowOverhead = 32

// sized is a text field of a record: its value, its limit in characters, and whether a
// btree index holds it with the scope.
type sized struct {
	name, value string
	maxLen      int
	indexed     bool
}

// checkSized refuses text PostgreSQL cannot store (invalid UTF-8, a NUL character), text
// over its limit, and text an index row with scope would not hold, naming the line.
func checkSized(line int, what string, id int64, scope string, fields []sized) error {
	for _, f := range fields {
		if err := checkText(f.name, f.value, f.maxLen); err != nil {
			msg, _ := transcript.InputMessage(err)
			return lineErrorf(line, "%s %d: %s", what, id, msg)
		}
		if !f.indexed {
			continue
		}
		// lower() may lengthen text (an index keys the statement lowered).
		n, most := max(len(f.value), len(strings.ToLower(f.value))), indexRowMax-indexRowOverhead-len(scope)
		if n > most {
			return lineErrorf(line, "%s %d: %s is %d bytes; PostgreSQL indexes it with the scope in at most %d bytes, so at most %d here",
				what, id, f.name, n, indexRowMax, most)
		}
	}
	return nil
}

// checkChains refuses a loop of superseded_by links: a chain has a head.
func checkChains(beliefs []ExportedBelief) error {
	next := make(map[int64]*int64, len(beliefs))
	for _, b := range beliefs {
		next[b.ID] = b.SupersededBy
	}
	done := map[int64]bool{}
	for _, b := range beliefs {
		seen := map[int64]bool{}
		for id := b.ID; !done[id]; {
			if seen[id] {
				return lineErrorf(b.Line, "belief %d: its superseded_by links come back to belief %d", b.ID, id)
			}
			seen[id] = true
			n := next[id]
			if n == nil {
				break
			}
			id = *n
		}
		for id := range seen {
			done[id] = true
		}
	}
	return nil
}

func checkEvent(e ExportedEvent, events, beliefs, episodes idSet, reverted map[int64]bool) error {
	id := e.ID
	switch {
	case !slices.Contains([]Action{ActionSupersede, ActionRetract, ActionReinforce, ActionRevert}, e.Action):
		return lineErrorf(e.Line, "event %d: action %q is not supersede, retract, reinforce or revert", id, e.Action)
	case !slices.Contains([]Reason{ReasonCorrection, ReasonTemporal, ReasonDuplicate, ReasonRestated}, e.Reason):
		return lineErrorf(e.Line, "event %d: reason %q is not correction, temporal, duplicate or restated", id, e.Reason)
	case !slices.Contains([]RevisionOrigin{RevisionExtraction, RevisionConsolidation, RevisionOperator}, e.Origin):
		return lineErrorf(e.Line, "event %d: origin %q is not extraction, consolidation or operator", id, e.Origin)
	case (e.Action == ActionRevert) != (e.Reverts != nil):
		return lineErrorf(e.Line, "event %d: a revert names the event it reverts, and no other event does", id)
	case (e.RevertedBy == nil) != (e.RevertedAt == nil):
		return lineErrorf(e.Line, "event %d: reverted_by and reverted_at go together", id)
	case e.Reverts != nil && *e.Reverts >= id:
		return lineErrorf(e.Line, "event %d reverts event %d, which is not an earlier event", id, *e.Reverts)
	case e.Reverts != nil && reverted[*e.Reverts]:
		return lineErrorf(e.Line, "event %d reverts event %d, which another event reverts", id, *e.Reverts)
	}
	if e.Reverts != nil {
		reverted[*e.Reverts] = true
	}
	for _, ref := range []struct {
		field string
		id    *int64
		in    idSet
		what  string
	}{{"old_belief_id", &e.OldBeliefID, beliefs, "belief"}, {"new_belief_id", e.NewBeliefID, beliefs, "belief"},
		{"episode_id", e.EpisodeID, episodes, "episode"}, {"reverts", e.Reverts, events, "event"}, {"reverted_by", e.RevertedBy, events, "event"}} {
		if err := ref.in.names(e.Line, ref.field, ref.id, ref.what); err != nil {
			return err
		}
	}
	prior, err := decodePrior(e.Prior)
	if err != nil {
		return lineErrorf(e.Line, "event %d: prior is not a revision's prior state: %v", id, err)
	}
	if prior != nil {
		if err := episodes.names(e.Line, "prior.episode_id", prior.EpisodeID, "episode"); err != nil {
			return err
		}
	}
	if err := checkTimes(e.Line, "event", id, map[string]time.Time{"created_at": e.CreatedAt}); err != nil {
		return err
	}
	return checkStrings(e.Line, "event", id, map[string]*string{"old_statement": &e.OldStatement, "new_statement": e.NewStatement,
		"excerpt": e.Excerpt, "rationale": e.Rationale})
}

// importRegistry is the entity registry an import writes into a scope, and whom each
// belief is about.
type importRegistry struct {
	entities []importEntity
	// index is where each entity's key is in entities; aliases maps every name's key,
	// the entities' own included, to its entity's key.
	index   map[string]int
	aliases map[string]string
	// of is the key of the entity of each of the scope's beliefs, by index.
	of []string
}

// importEntity is an entity to store; line is its record's, 0 for one made of a
// belief's subject.
type importEntity struct {
	key, name string
	kind      entity.Kind
	createdAt time.Time
	aliases   []importAlias
	line      int
}

// importAlias is a name of an entity other than its key, by the key it is found by.
type importAlias struct {
	alias, name string
	createdAt   time.Time
}

// registry is what sc's records say of its entities, checked: the entity records with
// their names, and each belief's entity. A belief without an entity (an export made
// before entities, mem0's memories) is about the entity its subject names, as the
// engine resolves it: by the names of the records, else the new entity of the
// subject's key, named as the first belief said it. So is a belief whose entity no
// record defines in a scope without records; with records, that is refused.
func (sc *ScopeImport) registry() (*importRegistry, error) {
	r := &importRegistry{index: map[string]int{}, aliases: map[string]string{}, of: make([]string, len(sc.Beliefs))}
	// Keys first: a name of one entity that is the key of another is refused whichever
	// record comes first.
	for _, e := range sc.Entities {
		if err := checkEntity(e); err != nil {
			return nil, err
		}
		if i, ok := r.index[e.Key]; ok {
			return nil, lineErrorf(e.Line, "entity %q is on line %d already", e.Key, r.entities[i].line)
		}
		r.index[e.Key], r.aliases[e.Key] = len(r.entities), e.Key
		r.entities = append(r.entities, importEntity{key: e.Key, name: e.Name, kind: e.Kind, createdAt: e.CreatedAt, line: e.Line})
	}
	for _, e := range sc.Entities {
		ent := &r.entities[r.index[e.Key]]
		for i, name := range e.Aliases {
			if why := entityText(name); why != "" {
				return nil, lineErrorf(e.Line, "entity %q: alias %q %s", e.Key, name, why)
			}
			alias := entity.Key(name)
			owner, known := r.aliases[alias]
			switch {
			case known && owner == e.Key:
				continue // one of its names, said another way
			case known:
				return nil, lineErrorf(e.Line, "entity %q: alias %q is a name of entity %q (line %d): a name is one entity's",
					e.Key, name, owner, r.entities[r.index[owner]].line)
			case alias == entity.User:
				return nil, lineErrorf(e.Line, "entity %q: alias %q names the user", e.Key, name)
			case utf8.RuneCountInString(alias) > entity.MaxNameLen:
				return nil, lineErrorf(e.Line, "entity %q: alias %q is longer than %d characters", e.Key, name, entity.MaxNameLen)
			}
			r.aliases[alias] = e.Key
			// The order learned is what an alias's time is read for (Entity.Aliases).
			ent.aliases = append(ent.aliases, importAlias{alias: alias, name: name, createdAt: e.CreatedAt.Add(time.Duration(i+1) * time.Microsecond)})
		}
	}
	for i, b := range sc.Beliefs {
		key := b.Entity
		_, known := r.index[key]
		switch {
		case known:
		case key != "" && len(sc.Entities) > 0:
			return nil, lineErrorf(b.Line, "belief %d names entity %q, which no entity record of this scope defines", b.ID, key)
		case key != "":
			if why := entityText(key); why != "" {
				return nil, lineErrorf(b.Line, "belief %d: entity %q %s", b.ID, key, why)
			}
		default:
			key = clip(entity.Key(b.Subject), entity.MaxNameLen)
			if owner, ok := r.aliases[key]; ok {
				key = owner
			}
			_, known = r.index[key]
		}
		if !known {
			name := clip(entity.Name(b.Subject), entity.MaxNameLen)
			if entity.Key(name) != key {
				name = key // the subject is not its name: the entity is called by its key
			}
			r.index[key], r.aliases[key] = len(r.entities), key
			r.entities = append(r.entities, importEntity{key: key, name: name, kind: entity.KindOf(key), createdAt: b.RecordedAt})
		}
		if ent := &r.entities[r.index[key]]; ent.line == 0 && b.RecordedAt.Before(ent.createdAt) {
			ent.createdAt = b.RecordedAt // an entity made of subjects is as old as its first belief
		}
		r.of[i] = key
	}
	return r, nil
}

// checkEntity checks an entity record's own values.
func checkEntity(e ExportedEntity) error {
	for _, f := range []struct{ field, value string }{{"key", e.Key}, {"name", e.Name}} {
		if why := entityText(f.value); why != "" {
			return lineErrorf(e.Line, "entity %q: %s %s", e.Key, f.field, why)
		}
	}
	switch {
	case e.Key == entity.User && e.Kind != entity.KindUser:
		return lineErrorf(e.Line, "entity %q: the user's kind is %q, not %q", e.Key, entity.KindUser, e.Kind)
	case e.Kind == entity.KindUser && e.Key != entity.User:
		return lineErrorf(e.Line, "entity %q: kind %q is the user's alone", e.Key, e.Kind)
	case e.Kind != entity.KindUser && !entity.ValidKind(e.Kind):
		return lineErrorf(e.Line, "entity %q: kind %q is not one of %v", e.Key, e.Kind, append([]entity.Kind{entity.KindUser}, entity.Kinds...))
	case e.CreatedAt.IsZero():
		return lineErrorf(e.Line, "entity %q: created_at is required", e.Key)
	}
	return nil
}

// entityText is why s cannot be an entity's key or name, "" when it can: the registry
// takes names of 1 to 200 characters. Stricter checks (entity.CheckName) are the
// engine's for new names; an import keeps the names a registry already held.
func entityText(s string) string {
	if strings.TrimSpace(s) == "" {
		return "is empty"
	}
	if err := checkText("", s, entity.MaxNameLen); err != nil {
		msg, _ := transcript.InputMessage(err)
		return strings.TrimSpace(msg)
	}
	return ""
}

// clip is s cut to n characters.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// decodePrior is an event's prior, nil when null.
//
//nolint:nilnil // null is an event of a version before priors, not an error
func decodePrior(raw json.RawMessage) (*eventPrior, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if hasNUL(raw) {
		return nil, errors.New("it holds a NUL character")
	}
	var p eventPrior
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, err
	}
	return &p, nil
}

func checkItem(it ExportedItem, columns map[string]bool, beliefs, episodes idSet) error {
	for _, k := range slices.Sorted(maps.Keys(it.Columns)) {
		if !columns[k] {
			return lineErrorf(it.Line, "review item %d: %q is not a column of the review queue", it.ID, k)
		}
		if hasNUL(it.Columns[k]) {
			return lineErrorf(it.Line, "review item %d: %s holds a NUL character", it.ID, k)
		}
	}
	var kind, status string
	if json.Unmarshal(it.Columns["kind"], &kind) != nil || !slices.Contains([]string{string(ConflictRefused), string(ConflictBasisChanged)}, kind) {
		return lineErrorf(it.Line, "review item %d: kind is not refused or basis_changed", it.ID)
	}
	if json.Unmarshal(it.Columns["status"], &status) != nil || (status != "open" && status != "resolved") {
		return lineErrorf(it.Line, "review item %d: status is not open or resolved", it.ID)
	}
	for _, col := range itemIDColumns {
		ref, err := itemRef(it, col)
		if err != nil {
			return err
		}
		in, what := beliefs, "belief"
		if col == "episode_id" {
			in, what = episodes, "episode"
		}
		if err := in.names(it.Line, col, ref, what); err != nil {
			return err
		}
	}
	return nil
}

// itemRef is the id column col of review item it names, nil when null or absent.
//
//nolint:nilnil // null names no row, which is no error
func itemRef(it ExportedItem, col string) (*int64, error) {
	raw, ok := it.Columns[col]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	var id int64
	if err := json.Unmarshal(raw, &id); err != nil {
		return nil, lineErrorf(it.Line, "review item %d: %s is not an id", it.ID, col)
	}
	return &id, nil
}

// checkTimes refuses a time left out (the zero time): every one of them is required.
func checkTimes(line int, what string, id int64, times map[string]time.Time) error {
	for _, name := range slices.Sorted(maps.Keys(times)) {
		if times[name].IsZero() {
			return lineErrorf(line, "%s %d: %s is required", what, id, name)
		}
	}
	return nil
}

// checkStrings refuses text PostgreSQL cannot store: invalid UTF-8, a NUL character.
func checkStrings(line int, what string, id int64, fields map[string]*string) error {
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		v := fields[name]
		if v == nil {
			continue
		}
		if err := checkText(name, *v, math.MaxInt); err != nil {
			msg, _ := transcript.InputMessage(err)
			return lineErrorf(line, "%s %d: %s", what, id, msg)
		}
	}
	return nil
}

// hasNUL says whether JSON text holds an escaped NUL, which jsonb refuses.
func hasNUL(raw []byte) bool { return bytes.Contains(raw, []byte(`\u0000`)) }
