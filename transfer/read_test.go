package transfer

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/entity"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
)

// exportLines is an export of scope u with an entity, a belief about it, and the end.
var exportLines = []string{
	`{"format":"credo-export","version":1,"exported_at":"2026-03-20T14:00:00Z","scopes":["u"],"scope_prefix":null,"since":null,"embedding_model":null}`,
	`{"type":"scope","scope":"u","consolidated_until":null}`,
	`{"type":"entity","scope":"u","key":"sister","name":"sister","kind":"person","aliases":["Sarah","sis"],"created_at":"2026-01-01T00:00:00Z"}`,
	`{"type":"belief","scope":"u","id":1,"subject":"my sister","entity":"sister","attribute":"employer","kind":"attribute",` +
		`"statement":"User's sister works at Acme","status":"active","confidence":0.9,"origin":"user_stated","valid_from":"2026-01-01T00:00:00Z",` +
		`"valid_until":null,"recorded_at":"2026-01-01T00:00:00Z","retired_at":null,"superseded_by":null,"episode_id":null,"quote":null,` +
		`"reinforced_count":0,"last_seen_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","needs_review":false}`,
	`{"type":"end","records":{"scope":1,"entity":1,"belief":1}}`,
}

// TestReadExportEntities: an entity record is read with its line, a belief with its
// entity; an export made before entities (neither) reads as before.
func TestReadExportEntities(t *testing.T) {
	t.Parallel()
	p, err := readExport(strings.NewReader(strings.Join(exportLines, "\n")))
	require.NoError(t, err)
	require.Len(t, p.scopes, 1)
	sc := p.scopes[0]
	require.Equal(t, []memory.ExportedEntity{{Type: memory.RecordEntity, Scope: "u", Key: "sister", Name: "sister", Kind: entity.KindPerson,
		Aliases: []string{"Sarah", "sis"}, CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Line: 3}}, sc.Entities)
	require.Equal(t, "sister", sc.Beliefs[0].Entity)

	old := []string{exportLines[0], exportLines[1], strings.Replace(exportLines[3], `"entity":"sister",`, "", 1),
		`{"type":"end","records":{"scope":1,"belief":1}}`}
	p, err = readExport(strings.NewReader(strings.Join(old, "\n")))
	require.NoError(t, err)
	require.Empty(t, p.scopes[0].Entities)
	require.Empty(t, p.scopes[0].Beliefs[0].Entity, "the import resolves the subject")

	for name, tc := range map[string]struct {
		line           int
		from, to, want string
	}{
		"an unknown scope": {2, `"scope":"u"`, `"scope":"v"`, `line 3: scope "v" is not one of the header's scopes`},
		"an unknown field": {2, `"aliases"`, `"mood":"sad","aliases"`, `line 3: is not an entity record: json: unknown field "mood"`},
		"aliases of text":  {2, `["Sarah","sis"]`, `[1]`, `line 3: is not an entity record`},
		"a count":          {4, `"entity":1`, `"entity":2`, "the end record counts 2 entity records, the file holds 1"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			lines := append([]string(nil), exportLines...)
			require.Contains(t, lines[tc.line], tc.from)
			lines[tc.line] = strings.Replace(lines[tc.line], tc.from, tc.to, 1)
			_, err := readExport(strings.NewReader(strings.Join(lines, "\n")))
			require.Error(t, err)
			require.ErrorIs(t, err, transcript.ErrInput)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
