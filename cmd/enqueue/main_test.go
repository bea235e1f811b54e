package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/internal/dbtest"
)

// enqueueEnv runs the command in-process against one test schema.
type enqueueEnv struct {
	schema *dbtest.Schema
	dir    string
}

func newEnqueueEnv(t *testing.T) *enqueueEnv {
	t.Helper()
	return &enqueueEnv{schema: dbtest.New(t), dir: t.TempDir()}
}

func (e *enqueueEnv) getenv(name string) string {
	if name == "DATABASE_URL" {
		return e.schema.URL
	}
	return ""
}

// file writes content to a file of the environment's directory and returns its path.
func (e *enqueueEnv) file(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(e.dir, name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

func (e *enqueueEnv) run(t *testing.T, stdin string, args ...string) (stdout string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, e.getenv, strings.NewReader(stdin), &out, &errOut)
	return out.String(), err
}

func (e *enqueueEnv) rows(t *testing.T, table string) int {
	t.Helper()
	var n int
	require.NoError(t, e.schema.Pool.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n))
	return n
}

// record is one valid transcript of the enqueue format.
func record(scope, says string) string {
	return fmt.Sprintf(`{"scope":%q,"id":"c-%s","occurred_at":"2026-03-20T14:00:00Z","messages":[{"role":"user","content":%q},{"role":"assistant","content":"Noted!"}]}`,
		scope, says, says)
}

// TestEnqueueBadInput: every kind of bad input is a clear error naming the file and the
// record or field, and nothing of a batch with an error is enqueued.
func TestEnqueueBadInput(t *testing.T) {
	t.Parallel()
	env := newEnqueueEnv(t)
	good := record("user:1", "I live in Lisbon.")
	future := time.Now().AddDate(5, 0, 0).UTC().Format(time.RFC3339)

	// A 50 MB transcript, written without holding it in memory.
	huge := filepath.Join(env.dir, "huge.json")
	f, err := os.Create(huge)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	_, err = w.WriteString(`{"scope":"user:1","messages":[{"role":"user","content":"`)
	require.NoError(t, err)
	chunk := strings.Repeat("I moved. ", 1<<10)
	for range (50 << 20) / len(chunk) {
		_, err = w.WriteString(chunk)
		require.NoError(t, err)
	}
	_, err = w.WriteString(`"}]}`)
	require.NoError(t, err)
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())

	cases := []struct {
		name  string
		args  func(t *testing.T) []string
		stdin string
		want  []string
	}{
		{"invalid JSON", env.one("bad.json", `{"scope": "user:1", "messages": [`), "",
			[]string{"bad.json", "invalid JSON"}},
		{"missing scope", env.one("noscope.json", `{"messages":[{"role":"user","content":"hi"}]}`), "",
			[]string{"noscope.json: record 1 (line 1): scope: missing"}},
		{"empty messages", env.one("empty.json", `{"scope":"user:1","messages":[]}`), "",
			[]string{"empty.json: record 1 (line 1): messages: is empty"}},
		{"unknown role", env.one("role.json", `{"scope":"user:1","messages":[{"role":"robot","content":"hi"}]}`), "",
			[]string{`role.json: record 1 (line 1): messages[0].role: "robot" is not one of user, assistant, system, tool`}},
		{"invalid UTF-8", env.one("utf8.json", "{\"scope\":\"user:1\",\"messages\":[{\"role\":\"user\",\"content\":\"caf\xe9\"}]}"), "",
			[]string{"utf8.json", "UTF-8"}},
		{"timestamp without zone", env.one("zone.json", `{"scope":"user:1","occurred_at":"2026-03-20T14:00:00","messages":[{"role":"user","content":"hi"}]}`), "",
			[]string{"zone.json: record 1 (line 1): occurred_at:", "has no time zone"}},
		{"message time without zone", env.one("atzone.json", `{"scope":"user:1","messages":[{"role":"user","content":"hi","at":"2026-03-20 14:00"}]}`), "",
			[]string{"atzone.json: record 1 (line 1): messages[0].at:"}},
		{"far in the future", env.one("future.json", `{"scope":"user:1","occurred_at":"`+future+`","messages":[{"role":"user","content":"hi"}]}`), "",
			[]string{"future.json: record 1 (line 1): occurred_at:", "is in the future"}},
		{"50 MB transcript", func(*testing.T) []string { return []string{huge} }, "",
			[]string{"huge.json: record 1 (line 1): record is", "bytes; the limit is 2097152"}},
		{"only the last record bad", env.one("batch.jsonl", strings.Join([]string{good, record("user:2", "a"), record("user:3", "b"),
			record("user:4", "c"), `{"scope":"user:5","messages":[{"role":"user","content":""}]}`}, "\n")), "",
			[]string{"batch.jsonl: record 5 (line 5): messages[0].content: is empty"}},
		{"bad second file", func(t *testing.T) []string {
			return []string{env.file(t, "ok.json", good), env.file(t, "second.json", `[`+good+`,{"scope":" user:1","messages":[{"role":"user","content":"hi"}]}]`)}
		}, "", []string{"second.json: record 2 (line 1): scope: has leading or trailing white space"}},
		{"bad standard input", func(*testing.T) []string { return []string{"-"} }, `{"scope":"user:1","messages":"hi"}`,
			[]string{"<stdin>: record 1 (line 1): messages:"}},
		{"missing file", func(*testing.T) []string { return []string{filepath.Join(env.dir, "nope.json")} }, "",
			[]string{"nope.json", "no such file"}},
	}
	t.Run("cases", func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				stdout, err := env.run(t, tc.stdin, tc.args(t)...)
				require.Error(t, err)
				for _, want := range tc.want {
					require.Contains(t, err.Error(), want)
				}
				require.Contains(t, err.Error(), "nothing enqueued")
				require.Empty(t, stdout)
			})
		}
	})
	require.Zero(t, env.rows(t, "episode"), "nothing enqueued from a batch that had an error")
	require.Zero(t, env.rows(t, "river_job"))
}

// one is a case's arguments: one file holding content.
func (e *enqueueEnv) one(name, content string) func(t *testing.T) []string {
	return func(t *testing.T) []string { return []string{e.file(t, name, content)} }
}

// TestEnqueueGoodInput: a good file is enqueued and counted; the same file again is
// all duplicates.
func TestEnqueueGoodInput(t *testing.T) {
	t.Parallel()
	env := newEnqueueEnv(t)
	path := env.file(t, "good.json", "["+strings.Join([]string{record("user:1", "I live in Lisbon."),
		record("user:1", "I moved to Porto."), record("user:2", "I live in Lisbon.")}, ",\n")+"]")

	stdout, err := env.run(t, "", path)
	require.NoError(t, err)
	require.Equal(t, "enqueued 3, duplicates 0\n", stdout)
	stdout, err = env.run(t, "", path)
	require.NoError(t, err)
	require.Equal(t, "enqueued 0, duplicates 3\n", stdout)
	require.Equal(t, 3, env.rows(t, "episode"))
	require.Equal(t, 2, env.rows(t, "river_job"), "one extraction job per scope")
	require.Equal(t, 2, env.rows(t, "river_job WHERE max_attempts = 10"), "jobs get MAX_ATTEMPTS' default, not River's 25")
}

func TestEnqueueUsesMaxAttempts(t *testing.T) {
	t.Parallel()
	env := newEnqueueEnv(t)
	path := env.file(t, "one.json", record("user:1", "I live in Lisbon."))
	var out, errOut bytes.Buffer
	getenv := func(name string) string {
		if name == "MAX_ATTEMPTS" {
			return "4"
		}
		return env.getenv(name)
	}
	require.NoError(t, run(context.Background(), []string{path}, getenv, strings.NewReader(""), &out, &errOut))
	require.Equal(t, 1, env.rows(t, "river_job WHERE max_attempts = 4"))
}

// Bad input is bad usage (exit 2), as a missing DATABASE_URL is: nothing was done.
func TestEnqueueBadInputIsUsage(t *testing.T) {
	t.Parallel()
	env := newEnqueueEnv(t)
	_, err := env.run(t, "", env.file(t, "bad.json", `{"scope": ""}`))
	require.True(t, config.IsUsage(err), "%v", err)
	var out bytes.Buffer
	err = run(context.Background(), []string{"x.json"}, func(string) string { return "" }, strings.NewReader(""), &out, &out)
	require.True(t, config.IsUsage(err), "%v", err)
	require.ErrorContains(t, err, "DATABASE_URL")
}
