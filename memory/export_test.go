package memory

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
	require.Equal(t, map[RecordType]int{RecordScope: 1, RecordBelief: 1}, end.Records)

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
		"a prior's episode": {ScopeImport{Beliefs: []ExportedBelief{belief(1, 2, StatusActive, nil)},
			Events: []ExportedEvent{func() ExportedEvent { e := event(1, 3, nil); e.Prior = json.RawMessage(`{"episode_id":7}`); return e }()}},
			"line 3: prior.episode_id names episode 7"},
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
}
