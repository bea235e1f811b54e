package memory_test

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// notMemorys are the tables the migrations create that memory does not own: api owns
// the keys and the inspector's sessions, changes the change feed, webhook the
// subscriptions and their deliveries (docs/design.md, "Who owns each table").
var notMemorys = []string{"api_key", "inspector_session", "change_head", "change", "webhook", "webhook_delivery"}

// memoryTables are the tables credo's migrations create, less notMemorys.
func memoryTables(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../migrations/migration/credo/*.up.sql")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	create := regexp.MustCompile(`(?i)\bCREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)`)
	var tables []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range create.FindAllStringSubmatch(string(b), -1) {
			if name := strings.ToLower(m[1]); !slices.Contains(notMemorys, name) && !slices.Contains(tables, name) {
				tables = append(tables, name)
			}
		}
	}
	return tables
}

// sqlNaming matches SQL that names one of tables after FROM, JOIN, INTO or UPDATE.
func sqlNaming(tables []string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(?:FROM|JOIN|INTO|UPDATE)\s+(` + strings.Join(tables, "|") + `)\b`)
}

// violations lists the string literals of Go source src that name a table matched by
// re in SQL, as "file:line: table". Comments do not count: only literals reach the
// database.
func violations(name string, src []byte, re *regexp.Regexp) []string {
	fset := token.NewFileSet()
	file := fset.AddFile(name, -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	var out []string
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok != token.STRING {
			continue
		}
		for _, m := range re.FindAllStringSubmatch(lit, -1) {
			out = append(out, fset.Position(pos).String()+": "+m[1])
		}
	}
}

// Every statement on memory's tables is memory's: no other package's production code
// names one in SQL, so that sharding or a change of schema touches one package.
func TestOnlyMemoryNamesItsTables(t *testing.T) {
	t.Parallel()
	tables := memoryTables(t)
	require.Subset(t, tables, []string{"episode", "belief", "revision_event", "belief_conflict", "scope_consolidation",
		"consolidation_judgment", "purge_tombstone"}, "the migrations' tables were read")
	re := sqlNaming(tables)

	// The checker finds a planted statement, in any case and across lines, and leaves
	// comments, other tables and longer names alone.
	planted := []byte("package x\n// read FROM episode in a comment\nconst q = `SELECT 1\n\tfrom  episode WHERE scope = $1`\n" +
		"const k = \"SELECT 1 FROM api_key\"\nconst l = \"UPDATE belief_link SET x = 1\"\nconst m = \"INSERT INTO belief_conflict (id)\"\n")
	require.Equal(t, []string{"planted.go:3:11: episode", "planted.go:7:11: belief_conflict"}, violations("planted.go", planted, re))

	var found []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, "../"))
		if d.IsDir() {
			switch rel {
			case "memory", "migrations", "internal/dbtest", ".git", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found = append(found, violations(rel, src, re)...)
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, found, "SQL on memory's tables outside package memory: move it into memory as a named method")
}
