package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/entity"
	"github.com/credohq/credo/transcript"
)

// exported reads every record of e, by type.
func exported(t *testing.T, e *Export) map[RecordType][]any {
	t.Helper()
	out := map[RecordType][]any{}
	require.NoError(t, e.Records(context.Background(), func(rec any) error {
		b, err := json.Marshal(rec)
		require.NoError(t, err)
		var typed struct {
			Type RecordType `json:"type"`
		}
		require.NoError(t, json.Unmarshal(b, &typed))
		out[typed.Type] = append(out[typed.Type], rec)
		return nil
	}))
	return out
}

// TestExportIsOneSnapshot: what a writer commits after the export began is not in it,
// however long the export takes to be read.
func TestExportIsOneSnapshot(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustApply(t, s, extraction("u", "2026-01-01", nil, fact("User lives in Oslo", "location", "")))
	e, err := s.OpenExport(ctx, ExportQuery{Scope: "u"})
	require.NoError(t, err)
	defer e.Close(ctx)
	mustApply(t, s, extraction("u", "2026-02-01", nil, fact("User plays the cello", "hobby", "")))
	mustApply(t, s, extraction("v", "2026-02-01", nil, fact("User plays the cello", "hobby", "")))
	recs := exported(t, e)
	require.Len(t, recs[RecordBelief], 1)
	require.Equal(t, "User lives in Oslo", recs[RecordBelief][0].(ExportedBelief).Statement)
	require.Equal(t, []string{"u"}, e.Header.Scopes)
	end := recs[RecordEnd][0].(*ExportEnd)
	require.Equal(t, map[RecordType]int{RecordScope: 1, RecordEntity: 1, RecordBelief: 1}, end.Records)

	_, err = s.OpenExport(ctx, ExportQuery{Scope: "nobody"})
	require.ErrorIs(t, err, ErrNotFound)
	_, err = s.OpenExport(ctx, ExportQuery{Scope: "u", ScopePrefix: "u"})
	require.ErrorIs(t, err, ErrSelection)
	_, err = s.OpenExport(ctx, ExportQuery{ScopePrefix: "a\x00"})
	require.ErrorIs(t, err, transcript.ErrInput)
}

// TestExportSince: with Since, an export holds what changed at or after it.
func TestExportSince(t *testing.T) {
	t.Parallel()
	s, b := setup(t)
	ctx := context.Background()
	oslo := mustApply(t, s, extraction("u", "2026-01-01", nil, fact("User lives in Oslo", "location", ""))).Facts[0].BeliefID
	mustApply(t, s, extraction("u", "2026-01-01", nil, fact("User plays the cello", "hobby", "")))
	since := b.clock.Now()
	b.clock.Advance(24 * time.Hour)
	mustApply(t, s, extraction("u", "2026-03-01", []int64{oslo}, resolves(fact("User lives in Bergen", "location", ""), 0, ActionSupersede, ReasonTemporal)))
	e, err := s.OpenExport(ctx, ExportQuery{Scope: "u", Since: new(since.Add(time.Microsecond))})
	require.NoError(t, err)
	defer e.Close(ctx)
	recs := exported(t, e)
	var got []string
	for _, r := range recs[RecordBelief] {
		got = append(got, r.(ExportedBelief).Statement)
	}
	require.ElementsMatch(t, []string{"User lives in Oslo", "User lives in Bergen"}, got, "the retired and the new, not the unchanged")
	require.Len(t, recs[RecordEvent], 1)
	require.NotNil(t, e.Header.Since)
}

// TestCheckImport refuses what the engine would never have written, naming the line.
func TestCheckImport(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	at := day("2026-01-01")
	belief := func(id int64, line int, status Status, next *int64) ExportedBelief {
		b := ExportedBelief{ID: id, Line: line, Subject: "user", Attribute: "a", Kind: KindAttribute, Statement: "s", Status: status,
			Confidence: 0.9, Origin: OriginUserStated, ValidFrom: at, RecordedAt: at, LastSeenAt: at, UpdatedAt: at, SupersededBy: next}
		if status != StatusActive {
			b.RetiredAt = &at
		}
		return b
	}
	event := func(id int64, line int, reverts *int64) ExportedEvent {
		e := ExportedEvent{Line: line, Event: Event{ID: id, Action: ActionRetract, Reason: ReasonCorrection, Origin: RevisionExtraction,
			OldBeliefID: 1, OldStatement: "s", CreatedAt: at}}
		if reverts != nil {
			e.Action, e.Reverts = ActionRevert, reverts
		}
		return e
	}
	item := func(cols string) ExportedItem {
		it := ExportedItem{ID: 1, Line: 9, Scope: "u"}
		require.NoError(t, json.Unmarshal([]byte(cols), &it.Columns))
		return it
	}
	ent := func(key string, line int, kind entity.Kind, aliases ...string) ExportedEntity {
		return ExportedEntity{Key: key, Name: key, Kind: kind, Aliases: aliases, CreatedAt: at, Line: line}
	}
	user := ent(entity.User, 3, entity.KindUser)
	named := func(b ExportedBelief, key string) ExportedBelief {
		b.Entity = key
		return b
	}
	okItem := `{"scope":"u","id":1,"kind":"refused","cause":"entrenchment","origin":"extraction","action":"supersede","detail":"d","status":"open","created_at":"2026-01-01T00:00:00Z","target_belief_id":1}`
	for name, tc := range map[string]struct {
		sc   ScopeImport
		want string
	}{
		"a loop": {ScopeImport{Beliefs: []ExportedBelief{belief(1, 2, StatusSuperseded, new(int64(2))), belief(2, 3, StatusSuperseded, new(int64(1)))}},
			"line 2: belief 1: its superseded_by links come back to belief 1"},
		"twice":           {ScopeImport{Beliefs: []ExportedBelief{belief(1, 2, StatusActive, nil), belief(1, 3, StatusActive, nil)}}, "line 3: belief 1 is on line 2 already"},
		"retired, no end": {ScopeImport{Beliefs: []ExportedBelief{func() ExportedBelief { b := belief(1, 4, StatusRetracted, nil); b.RetiredAt = nil; return b }()}}, "line 4: belief 1 is retracted: it has a retired_at"},
		"a later revert":  {ScopeImport{Beliefs: []ExportedBelief{belief(1, 2, StatusActive, nil)}, Events: []ExportedEvent{event(1, 5, new(int64(2))), event(2, 6, nil)}}, "line 5: event 1 reverts event 2, which is not an earlier event"},
		"an unknown column": {ScopeImport{Beliefs: []ExportedBelief{belief(1, 2, StatusActive, nil)},
			Items: []ExportedItem{item(`{"scope":"u","id":1,"mood":"sad"}`)}}, `line 9: review item 1: "mood" is not a column of the review queue`},
		"an item's vector": {ScopeImport{Beliefs: []ExportedBelief{belief(1, 2, StatusActive, nil)},
			Items: []ExportedItem{item(`{"scope":"u","id":1,"embedding":"[1,2]"}`)}}, `"embedding" is not a column`},
		"an item's lost target": {ScopeImport{Items: []ExportedItem{item(okItem)}}, "line 9: target_belief_id names belief 1, which the import does not hold"},
		"a NUL": {ScopeImport{Beliefs: []ExportedBelief{func() ExportedBelief { b := belief(1, 2, StatusActive, nil); b.Statement = "a\x00b"; return b }()}},
			"line 2: belief 1: statement contains a NUL character"},
		// Sizes PostgreSQL would refuse once writing: the engine's limits, and an indexed
		// value an index row of 2704 bytes would not hold.
		"a long statement": {ScopeImport{Scope: "u", Beliefs: []ExportedBelief{func() ExportedBelief {
			b := belief(1, 2, StatusActive, nil)
			b.Statement = strings.Repeat("x", 3<<20)
			return b
		}()}}, "line 2: belief 1: statement is 3145728 characters; the limit is 2000"},
		"a wide statement": {ScopeImport{Scope: "u", Beliefs: []ExportedBelief{func() ExportedBelief {
			b := belief(1, 2, StatusActive, nil)
			b.Statement = strings.Repeat("😀", 1000)
			return b
		}()}}, "line 2: belief 1: statement is 4000 bytes; PostgreSQL indexes it with the scope in at most 2704 bytes, so at most 2671 here"},
		"a long attribute": {ScopeImport{Scope: "u", Beliefs: []ExportedBelief{func() ExportedBelief {
			b := belief(1, 2, StatusActive, nil)
			b.Attribute = strings.Repeat("x", 201)
			return b
		}()}}, "line 2: belief 1: attribute is 201 characters; the limit is 200"},
		"a long content hash": {ScopeImport{Scope: "u", Episodes: []ExportedEpisode{{ID: 1, Line: 2, State: EpisodeApplied, Messages: json.RawMessage(`[]`),
			ContentHash: strings.Repeat("f", 300), OccurredAt: at, ReceivedAt: at}}}, "line 2: episode 1: content_hash is 300 characters; the limit is 200"},
		"a prior's episode": {ScopeImport{Beliefs: []ExportedBelief{belief(1, 2, StatusActive, nil)},
			Events: []ExportedEvent{func() ExportedEvent { e := event(1, 3, nil); e.Prior = json.RawMessage(`{"episode_id":7}`); return e }()}},
			"line 3: prior.episode_id names episode 7"},
		"an entity's kind": {ScopeImport{Entities: []ExportedEntity{user, ent("sister", 4, "robot")}},
			`line 4: entity "sister": kind "robot" is not one of [user person organisation place thing other]`},
		"the user's kind": {ScopeImport{Entities: []ExportedEntity{ent(entity.User, 3, entity.KindPerson)}},
			`line 3: entity "user": the user's kind is "user", not "person"`},
		"another user":    {ScopeImport{Entities: []ExportedEntity{ent("sister", 3, entity.KindUser)}}, `line 3: entity "sister": kind "user" is the user's alone`},
		"an entity twice": {ScopeImport{Entities: []ExportedEntity{user, ent(entity.User, 4, entity.KindUser)}}, `line 4: entity "user" is on line 3 already`},
		"a name of two": {ScopeImport{Entities: []ExportedEntity{ent("sister", 3, entity.KindPerson, "Sally"), ent("sally", 4, entity.KindOther)}},
			`line 3: entity "sister": alias "Sally" is a name of entity "sally" (line 4)`},
		"an alias of the user": {ScopeImport{Entities: []ExportedEntity{ent("sister", 3, entity.KindPerson, "me")}}, `line 3: entity "sister": alias "me" names the user`},
		"an empty name": {ScopeImport{Entities: []ExportedEntity{func() ExportedEntity { e := ent("sister", 3, entity.KindPerson); e.Name = " "; return e }()}},
			`line 3: entity "sister": name is empty`},
		"an entity's time": {ScopeImport{Entities: []ExportedEntity{func() ExportedEntity { e := user; e.CreatedAt = time.Time{}; return e }()}},
			`line 3: entity "user": created_at is required`},
		"a belief's entity no record defines": {ScopeImport{Entities: []ExportedEntity{user}, Beliefs: []ExportedBelief{named(belief(1, 2, StatusActive, nil), "sister")}},
			`line 2: belief 1 names entity "sister", which no entity record of this scope defines`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tc.sc.Scope = "u"
			err := s.CheckImport(ctx, []*ScopeImport{&tc.sc})
			require.Error(t, err)
			require.ErrorIs(t, err, ErrImport)
			msg, ok := transcript.InputMessage(err)
			require.True(t, ok)
			require.Contains(t, msg, tc.want)
		})
	}
	good := ScopeImport{Scope: "u", Beliefs: []ExportedBelief{belief(1, 2, StatusActive, nil)}, Items: []ExportedItem{item(okItem)}}
	require.NoError(t, s.CheckImport(ctx, []*ScopeImport{&good}))
	// A name said two ways is one name; a belief without an entity is its subject's.
	good.Entities = []ExportedEntity{user, ent("sister", 4, entity.KindPerson, "Sarah", "SARAH", "sister")}
	good.Beliefs = append(good.Beliefs, named(belief(2, 5, StatusActive, nil), "sister"))
	require.NoError(t, s.CheckImport(ctx, []*ScopeImport{&good}))
}

// scopeImport reads the records of e, an export of one scope, into its import as scope
// into, each through its JSON line as a file carries it (unknown fields refused), and
// returns the types in the order they came.
func scopeImport(t *testing.T, e *Export, into string) (*ScopeImport, []RecordType) {
	t.Helper()
	sc := &ScopeImport{Scope: into}
	var order []RecordType
	line := 1
	decode := func(b []byte, v any) {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(v), "%s", b)
	}
	require.NoError(t, e.Records(context.Background(), func(rec any) error {
		line++
		b, err := json.Marshal(rec)
		require.NoError(t, err)
		switch rec.(type) {
		case ExportedScope:
			var r ExportedScope
			decode(b, &r)
			r.Line = line
			sc.State = &r
			order = append(order, RecordScope)
		case ExportedEntity:
			var r ExportedEntity
			decode(b, &r)
			r.Line = line
			sc.Entities = append(sc.Entities, r)
			order = append(order, RecordEntity)
		case ExportedEpisode:
			var r ExportedEpisode
			decode(b, &r)
			r.Line = line
			sc.Episodes = append(sc.Episodes, r)
			order = append(order, RecordEpisode)
		case ExportedBelief:
			var r ExportedBelief
			decode(b, &r)
			r.Line = line
			sc.Beliefs = append(sc.Beliefs, r)
			order = append(order, RecordBelief)
		case ExportedDependency:
			var r ExportedDependency
			decode(b, &r)
			r.Line = line
			sc.Dependencies = append(sc.Dependencies, r)
			order = append(order, RecordDependency)
		case ExportedEvent:
			var r ExportedEvent
			decode(b, &r)
			r.Line = line
			sc.Events = append(sc.Events, r)
			order = append(order, RecordEvent)
		case ExportedItem:
			var r ExportedItem
			require.NoError(t, json.Unmarshal(b, &r))
			r.Line = line
			sc.Items = append(sc.Items, r)
			order = append(order, RecordReviewItem)
		}
		return nil
	}))
	return sc, order
}

// importInto checks sc and imports it.
func importInto(t *testing.T, s *Store, sc *ScopeImport) *ScopeImported {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.CheckImport(ctx, []*ScopeImport{sc}))
	var got *ScopeImported
	require.NoError(t, s.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		got, err = s.ImportTx(ctx, tx, sc, nil)
		return err
	}))
	return got
}

// exportOf is the import of scope's export as into, and the record types' order.
func exportOf(t *testing.T, s *Store, scope, into string) (*ScopeImport, []RecordType) {
	t.Helper()
	ctx := context.Background()
	e, err := s.OpenExport(ctx, ExportQuery{Scope: scope})
	require.NoError(t, err)
	defer e.Close(ctx)
	return scopeImport(t, e, into)
}

// entitiesOf is the scope's registry with the scope left out, to compare two scopes'.
func entitiesOf(t *testing.T, s *Store, scope string) []Entity {
	t.Helper()
	es, err := s.Entities(context.Background(), scope)
	require.NoError(t, err)
	for i := range es {
		es[i].Scope = ""
	}
	return es
}

// beliefEntities maps each belief's statement of scope to its entity's key.
func beliefEntities(t *testing.T, s *Store, scope string) map[string]string {
	t.Helper()
	bs, err := s.All(context.Background(), scope)
	require.NoError(t, err)
	out := map[string]string{}
	for _, b := range bs {
		out[b.Statement] = b.Entity
	}
	return out
}

// TestExportImportEntities: the registry travels: each entity with its name, kind, time
// and aliases (the names a merge moved included, in the order learned), and each belief
// its entity; the import reads as the export, and exports the same again.
func TestExportImportEntities(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t)
	const from, into = "ent:from", "ent:into"
	acme := about(fact("Acme makes rockets", "product", ""), "Acme")
	acme.SubjectKind = entity.KindOrganisation
	mustApply(t, s, extraction(from, "2026-01-01", nil,
		fact("User lives in Oslo", "location", ""),
		about(fact("User's sister works at Acme", "employer", ""), "sister", "Sarah", "sis"),
		about(fact("Sally plays the cello", "instrument", ""), "Sally"),
		about(fact("User's boss is strict", "manner", ""), "my boss", "Sam"),
		acme))
	b.clock.Advance(time.Hour)
	// The sister is Sally too: merged, her name and belief move to the sister; the boss
	// stays apart. Ann, learned last, is her last alias, though first by name.
	mustApply(t, s, extraction(from, "2026-02-01", nil, about(fact("User's sister lives in Austin", "home_city", ""), "my sister", "Sally", "Ann")))
	_, err := s.MergeEntities(ctx, Merge{Scope: from, Into: "sister", Other: "Sally"})
	require.NoError(t, err)
	want := entitiesOf(t, s, from)
	require.Equal(t, []string{"user", "acme", "boss", "sister"}, keysOf(want))
	require.Equal(t, []string{"Sally", "Sarah", "sis", "Ann"}, want[3].Aliases, "by time learned, then by name")

	sc, order := exportOf(t, s, from, into)
	require.Equal(t, []RecordType{RecordScope, RecordEntity, RecordEntity, RecordEntity, RecordEntity}, order[:5],
		"the entities come after the scope, before the beliefs")
	require.NotContains(t, order[5:], RecordEntity)
	require.Equal(t, ExportedEntity{Type: RecordEntity, Scope: from, Key: "sister", Name: "sister", Kind: entity.KindPerson,
		Aliases: []string{"Sally", "Sarah", "sis", "Ann"}, CreatedAt: want[3].CreatedAt, Line: 5}, sc.Entities[2], "by key")
	for _, bel := range sc.Beliefs {
		require.NotEmpty(t, bel.Entity, bel.Statement)
	}

	got := importInto(t, s, sc)
	require.Equal(t, 4, got.Entities)
	require.Equal(t, want, entitiesOf(t, s, into))
	require.Equal(t, beliefEntities(t, s, from), beliefEntities(t, s, into))
	require.Equal(t, "sister", beliefEntities(t, s, into)["Sally plays the cello"])
	for name, key := range map[string]string{"Sarah": "sister", "SALLY": "sister", "my sister": "sister", "Sam": "boss", "me": "user"} {
		view, err := s.EntityByName(ctx, into, name, false)
		require.NoError(t, err, name)
		require.Equal(t, key, view.Key, name)
	}
	// The engine goes on with the imported registry: Sarah is the sister.
	res := mustApply(t, s, extraction(into, "2026-03-01", nil, about(fact("Sarah drives a Volvo", "car", ""), "Sarah")))
	bel, err := s.Get(ctx, res.Facts[0].BeliefID)
	require.NoError(t, err)
	require.Equal(t, "sister", bel.Entity)

	again, _ := exportOf(t, s, into, from)
	for i := range again.Entities {
		again.Entities[i].Scope = from
	}
	require.Equal(t, sc.Entities, again.Entities, "the import exports as it was exported")
}

// TestImportWithoutEntities: an export made before entities (no entity record, no
// belief's entity) imports with each belief's subject resolved as the engine resolves
// it, every belief's entity registered; a leftover entry of the empty scope gives way.
func TestImportWithoutEntities(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t)
	const from, into = "old:from", "old:into"
	mustApply(t, s, extraction(from, "2026-01-01", nil,
		fact("User lives in Oslo", "location", ""),
		about(fact("User's sister works at Acme", "employer", ""), "User's sister", "Sarah")))
	b.clock.Advance(time.Hour)
	mustApply(t, s, extraction(from, "2026-02-01", nil,
		about(fact("User's sister lives in Austin", "home_city", ""), "my sister"),
		about(fact("Acme makes rockets", "product", ""), "the Acme")))
	sc, _ := exportOf(t, s, from, into)
	sc.Entities = nil
	for i := range sc.Beliefs {
		sc.Beliefs[i].Entity = ""
	}
	// mem0's beliefs name their entity without a record: it is registered all the same.
	sc.Beliefs[0].Entity = entity.User
	// A purge of every belief one by one keeps the user's entry: it names nothing.
	for _, q := range []string{`INSERT INTO entity (scope, key, name, kind, created_at) VALUES ($1, 'user', 'user', 'user', now())`,
		`INSERT INTO entity_alias (scope, alias, entity, name, created_at) VALUES ($1, 'user', 'user', 'user', now()), ($1, 'sam', 'user', 'Sam', now())`} {
		_, err := b.schema.Pool.Exec(ctx, q, into)
		require.NoError(t, err)
	}

	got := importInto(t, s, sc)
	require.Equal(t, 3, got.Entities)
	es := entitiesOf(t, s, into)
	require.Equal(t, []string{"user", "acme", "sister"}, keysOf(es))
	for i, want := range []struct {
		name string
		kind entity.Kind
		at   time.Time
	}{{"user", entity.KindUser, day("2026-06-01")}, {"Acme", entity.KindOther, day("2026-06-01").Add(time.Hour)},
		{"sister", entity.KindPerson, day("2026-06-01")}} {
		require.Equal(t, want.name, es[i].Name, es[i].Key)
		require.Equal(t, want.kind, es[i].Kind, es[i].Key)
		require.Equal(t, want.at, es[i].CreatedAt, "%s: as old as its first belief", es[i].Key)
		require.Empty(t, es[i].Aliases, "%s: an old export knows no alias; the leftover's are gone", es[i].Key)
	}
	require.Equal(t, map[string]string{"User lives in Oslo": "user", "User's sister works at Acme": "sister",
		"User's sister lives in Austin": "sister", "Acme makes rockets": "acme"}, beliefEntities(t, s, into))
	_, err := s.EntityByName(ctx, into, "Sam", false)
	require.ErrorIs(t, err, ErrUnknownEntity)
}
