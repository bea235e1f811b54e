package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/memory"
)

// cli runs beliefs in process against one test schema.
type cli struct {
	t      *testing.T
	schema *dbtest.Schema
	store  *memory.Store
	// env holds the environment's other variables.
	env map[string]string
}

func newCLI(t *testing.T) *cli {
	t.Helper()
	schema := dbtest.New(t)
	return &cli{t: t, schema: schema, store: memory.NewStore(schema.Pool, nil)}
}

// run returns stdout, stderr and the exit code of one invocation.
func (c *cli) run(args ...string) (string, string, int) {
	c.t.Helper()
	var stdout, stderr bytes.Buffer
	getenv := func(name string) string {
		if name == "DATABASE_URL" {
			return c.schema.URL
		}
		return c.env[name]
	}
	code := exitCode(run(context.Background(), args, getenv, &stdout, &stderr), &stderr)
	return stdout.String(), stderr.String(), code
}

func (c *cli) mustRun(args ...string) string {
	c.t.Helper()
	stdout, stderr, code := c.run(args...)
	require.Zero(c.t, code, "beliefs %v: %s", args, stderr)
	return stdout
}

func date(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// seedMove stores NYC, from an episode, then Miami superseding it.
func (c *cli) seedMove(scope string) (nycID, miamiID int64) {
	c.t.Helper()
	ctx := context.Background()
	var episode int64
	err := c.schema.Pool.QueryRow(ctx, `INSERT INTO episode (scope, messages, content_hash, occurred_at)
		VALUES ($1, '[{"role": "user", "content": "I live in New York."}]', md5($1), $2) RETURNING id`, scope, date("2026-01-15")).Scan(&episode)
	require.NoError(c.t, err)
	fact := func(statement string) memory.Fact {
		return memory.Fact{Statement: statement, Attribute: "location", Confidence: 0.9, Origin: memory.OriginUserStated, Quote: statement}
	}
	res, err := c.store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, EpisodeID: &episode, At: date("2026-01-15"),
		Facts: []memory.Fact{fact("User lives in New York City")}})
	require.NoError(c.t, err)
	nycID = res.Facts[0].BeliefID
	miami := fact("User lives in Miami")
	miami.ValidFrom = new(date("2026-02-20"))
	miami.Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}
	res, err = c.store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, At: date("2026-03-20"),
		Candidates: []int64{nycID}, Facts: []memory.Fact{miami}})
	require.NoError(c.t, err)
	return nycID, res.Facts[0].BeliefID
}

func TestListJSONMatchesDesign(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	nycID, miamiID := c.seedMove("user:42")

	var all []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("list", "--scope", "user:42", "--all", "--json")), &all))
	require.Len(t, all, 2)
	// DESIGN.md: "at least" these fields, ids as numbers, links null or a list of ids.
	for _, b := range all {
		for _, key := range []string{"id", "scope", "subject", "attribute", "statement", "status", "confidence", "origin",
			"valid_from", "valid_until", "recorded_at", "retired_at", "supersedes", "superseded_by", "episode_id", "quote"} {
			require.Contains(t, b, key)
		}
	}
	nyc, miami := all[0], all[1]
	require.JSONEq(t, strconv.FormatInt(nycID, 10), string(nyc["id"]))
	require.JSONEq(t, `"user:42"`, string(nyc["scope"]))
	require.JSONEq(t, `"user"`, string(nyc["subject"]))
	require.JSONEq(t, `"location"`, string(nyc["attribute"]))
	require.JSONEq(t, `"User lives in New York City"`, string(nyc["statement"]))
	require.JSONEq(t, `"superseded"`, string(nyc["status"]))
	require.JSONEq(t, `0.9`, string(nyc["confidence"]))
	require.JSONEq(t, `"user_stated"`, string(nyc["origin"]))
	require.JSONEq(t, `"2026-01-15T00:00:00Z"`, string(nyc["valid_from"]))
	require.JSONEq(t, `"2026-02-20T00:00:00Z"`, string(nyc["valid_until"]))
	require.JSONEq(t, `null`, string(nyc["supersedes"]))
	require.JSONEq(t, fmt.Sprintf("[%d]", miamiID), string(nyc["superseded_by"]))
	require.JSONEq(t, `"User lives in New York City"`, string(nyc["quote"]))
	var episode int64
	require.NoError(t, json.Unmarshal(nyc["episode_id"], &episode))
	require.Positive(t, episode)
	for _, key := range []string{"recorded_at", "retired_at"} {
		var at time.Time
		require.NoError(t, json.Unmarshal(nyc[key], &at), key)
	}

	require.JSONEq(t, `"active"`, string(miami["status"]))
	require.JSONEq(t, fmt.Sprintf("[%d]", nycID), string(miami["supersedes"]))
	for _, key := range []string{"superseded_by", "valid_until", "retired_at", "episode_id"} {
		require.JSONEq(t, `null`, string(miami[key]), key)
	}

	var current []memory.Belief
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("list", "--scope", "user:42", "--json")), &current))
	require.Len(t, current, 1)
	require.Equal(t, miamiID, current[0].ID)
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("list", "--scope", "user:42", "--as-of", "2026-02-01", "--json")), &current))
	require.Equal(t, nycID, current[0].ID)
	require.Equal(t, "[]\n", c.mustRun("list", "--scope", "user:42", "--as-of", "2020-01-01", "--json"), "an empty list is an empty array")
	stdout, stderr, code := c.run("list", "--scope", "user:nobody", "--json")
	require.Equal(t, config.ExitNotFound, code, "a scope never written is not found")
	require.Equal(t, "beliefs: no scope user:nobody\n", stderr)
	require.Empty(t, stdout)
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	nycID, _ := c.seedMove("user:42")
	id := strconv.FormatInt(nycID, 10)

	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"list", "--scope", "user:42", "--as-of", "last tuesday"}, config.ExitUsage, "not an RFC 3339 time"},
		{[]string{"list", "--scope", "user:42", "--known-at", "2026-13-01"}, config.ExitUsage, "not an RFC 3339 time"},
		{[]string{"list"}, config.ExitUsage, "--scope is required"},
		{[]string{"frobnicate"}, config.ExitUsage, "unknown command"},
		{[]string{"history", "--id", "987654"}, config.ExitNotFound, "not found"},
		{[]string{"history", "--id", "x"}, config.ExitUsage, "not a belief id"},
		{[]string{"forget"}, config.ExitUsage, "exactly one of --id, --match, --entity and --all"},
		{[]string{"forget", "--id", id, "--all"}, config.ExitUsage, "exactly one"},
		{[]string{"forget", "--match", "york"}, config.ExitUsage, "--scope is required"},
		{[]string{"forget", "--match", " ", "--scope", "user:42"}, config.ExitUsage, "--match is blank"},
		{[]string{"forget", "--id", "987654"}, config.ExitNotFound, "not found"},
		{[]string{"forget", "--id", id, "--scope", "user:other"}, config.ExitNotFound, `is in scope "user:42", not "user:other"`},
		{[]string{"forget", "--all", "--scope", "user:nobody"}, config.ExitNotFound, `scope "user:nobody": not found`},
		{[]string{"forget", "--all", "--purge", "--scope", "user:nobody"}, config.ExitNotFound, "not found"},
		{[]string{"list", "--scope", "user:\x00"}, config.ExitUsage, "--scope contains the control character U+0000"},
		{[]string{"events", "--scope", "user:\xff"}, config.ExitUsage, "--scope is not valid UTF-8"},
		{[]string{"forget", "--match", "a\x00b", "--scope", "user:42"}, config.ExitUsage, "--match contains a NUL character"},
	} {
		_, stderr, code := c.run(tc.args...)
		require.Equal(t, tc.code, code, "beliefs %v: %s", tc.args, stderr)
		require.Contains(t, stderr, tc.stderr, tc.args)
	}
	all, err := c.store.All(context.Background(), "user:42")
	require.NoError(t, err)
	require.Equal(t, memory.StatusSuperseded, all[0].Status, "no failed command changed anything")
	require.Equal(t, memory.StatusActive, all[1].Status)
}

func TestForgetCommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	nycID, miamiID := c.seedMove("user:42")
	c.seedMove("user:7")

	require.Equal(t, fmt.Sprintf("forgot 1 belief of scope \"user:42\": %d\n", nycID),
		c.mustRun("forget", "--scope", "user:42", "--match", "new YORK"))
	require.Equal(t, fmt.Sprintf("forgot 1 belief of scope \"user:42\": %d\n", miamiID),
		c.mustRun("forget", "--id", strconv.FormatInt(miamiID, 10)), "the scope is the belief's")
	require.Contains(t, c.mustRun("forget", "--scope", "user:42", "--all"), "forgot 0 beliefs")
	require.Equal(t, "[]\n", c.mustRun("list", "--scope", "user:42", "--json"))
	var all []memory.Belief
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("list", "--scope", "user:42", "--all", "--json")), &all))
	require.Len(t, all, 2)
	for _, b := range all {
		require.Equal(t, memory.StatusForgotten, b.Status)
	}

	out := c.mustRun("forget", "--scope", "user:42", "--all", "--purge", "--yes")
	require.Contains(t, out, `purged scope "user:42" for good`)
	require.Regexp(t, `(?m)^belief\s+2$`, out)
	require.Regexp(t, `(?m)^episode\s+1$`, out)
	require.Regexp(t, `(?m)^revision_event\s+1$`, out)
	_, stderr, code := c.run("list", "--scope", "user:42", "--all", "--json")
	require.Equal(t, config.ExitNotFound, code, "the purged scope is unknown now: %s", stderr)
	require.Equal(t, "beliefs: no scope user:42\n", stderr)
	_, stderr, code = c.run("forget", "--scope", "user:42", "--all")
	require.Equal(t, config.ExitNotFound, code, "the purged scope is unknown now: %s", stderr)

	out = c.mustRun("forget", "--scope", "user:7", "--match", "miami", "--purge")
	require.Contains(t, out, `purged beliefs of scope "user:7"`)
	require.Contains(t, out, "1 belief relinked")
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("list", "--scope", "user:7", "--all", "--json")), &all))
	require.Len(t, all, 1)
	require.Equal(t, "User lives in New York City", all[0].Statement)
}
