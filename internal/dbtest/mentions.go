package dbtest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// textTypes are the column types that can hold a user's words: text of any kind, JSON,
// and arrays of either. A timestamp, a number or a vector read as text can contain any
// digits by chance (a created_at of 12:44:17 "contains" 4417), so they are not scanned.
var textTypes = []string{"text", "varchar", "bpchar", "json", "jsonb", "_text", "_varchar", "_bpchar", "_json", "_jsonb"}

// Mentions counts, per table of the schema, the rows in which any column that can hold
// text contains text, ignoring case: what an erasure test scans to prove nothing is left.
func (s *Schema) Mentions(tb testing.TB, text string) map[string]int {
	tb.Helper()
	ctx := context.Background()
	// Every base table is listed, even one without a text column, so the check below sees
	// the tables an erasure must cover.
	rows, err := s.Pool.Query(ctx, `SELECT t.table_name::text,
			coalesce(array_agg(c.column_name::text ORDER BY c.ordinal_position) FILTER (WHERE c.column_name IS NOT NULL), '{}')
		FROM information_schema.tables t
		LEFT JOIN information_schema.columns c ON c.table_schema = t.table_schema AND c.table_name = t.table_name
			AND c.udt_name::text = ANY($2)
		WHERE t.table_schema = $1 AND t.table_type = 'BASE TABLE' GROUP BY 1 ORDER BY 1`, s.Name, textTypes)
	require.NoError(tb, err)
	type table struct {
		Name    string
		Columns []string
	}
	tables, err := pgx.CollectRows(rows, pgx.RowToStructByPos[table])
	require.NoError(tb, err)
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.Name
	}
	require.Subset(tb, names, []string{"belief", "revision_event", "belief_conflict", "episode", "river_job", "purge_tombstone"})

	found := map[string]int{}
	for _, t := range tables {
		if len(t.Columns) == 0 {
			continue
		}
		var conds []string
		for _, c := range t.Columns {
			// strpos, not LIKE: the text may hold % _ or \. In the text form of jsonb, a
			// quote or a backslash is escaped, so the escaped text is searched as well.
			col := "lower(" + pgx.Identifier{c}.Sanitize() + "::text)"
			conds = append(conds, "strpos("+col+", lower($1)) > 0", "strpos("+col+", lower($2)) > 0")
		}
		var n int
		err := s.Pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{t.Name}.Sanitize()+" WHERE "+strings.Join(conds, " OR "),
			text, jsonEscaped(text)).Scan(&n)
		require.NoError(tb, err, t.Name)
		if n > 0 {
			found[t.Name] = n
		}
	}
	return found
}

// jsonEscaped is text as it appears inside a string of jsonb's text form, which leaves
// <, > and & as they are.
func jsonEscaped(text string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(text); err != nil {
		return text
	}
	return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(b.String(), "\n"), `"`), `"`)
}
