package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/entity"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/memory"
)

// about is a fact of the user's own words about subject, known also by aliases.
func about(statement, attribute, subject string, aliases ...string) memory.Fact {
	return memory.Fact{Statement: statement, Subject: subject, SubjectAliases: aliases, Attribute: attribute,
		Kind: memory.KindAttribute, Confidence: 0.9, Origin: memory.OriginUserStated}
}

// seedFamily stores in scope the user's home, the sister (also Sarah) who works at Acme
// and moved from Austin to Denver, and Sally, who plays the cello.
func (c *cli) seedFamily(scope string) (austin, denver int64) {
	c.t.Helper()
	ctx := context.Background()
	res, err := c.store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, At: date("2026-01-01"),
		Facts: []memory.Fact{
			about("User lives in Boston", "home_city", "user"),
			about("User's sister lives in Austin", "home_city", "user's sister", "Sarah"),
			about("User's sister works at Acme", "employer", "Sarah"),
			about("Sally plays the cello", "instrument", "Sally"),
		}})
	require.NoError(c.t, err)
	austin = res.Facts[1].BeliefID
	moved := about("User's sister lives in Denver", "home_city", "Sarah")
	moved.Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}
	res, err = c.store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, At: date("2026-03-01"),
		Candidates: []int64{austin}, Facts: []memory.Fact{moved}})
	require.NoError(c.t, err)
	require.Equal(c.t, memory.OutcomeSuperseded, res.Facts[0].Kind)
	return austin, res.Facts[0].BeliefID
}

// `entities` lists a scope's registry, the user first, as a table or memory.Entity; a
// scope never written is not found, and one scope's entities are not another's.
func TestEntitiesCommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.seedFamily("user:ana")
	_, err := c.store.Apply(context.Background(), &memory.Batch{Scope: "user:bob", Origin: memory.RevisionExtraction,
		At: date("2026-01-01"), Facts: []memory.Fact{about("User lives in Oslo", "home_city", "user")}})
	require.NoError(t, err)

	out := c.mustRun("entities", "--scope", "user:ana")
	require.Regexp(t, `^NAME\s+KIND\s+ALIASES\s+CURRENT\n`, out)
	require.Regexp(t, `\nuser\s+user\s+-\s+1\n`, out)
	require.Regexp(t, `\nSally\s+\w+\s+-\s+1\n`, out)
	require.Regexp(t, `\nsister\s+person\s+Sarah\s+2\n`, out)

	var es []memory.Entity
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("entities", "--scope", "user:ana", "--json")), &es))
	require.Len(t, es, 3)
	require.Equal(t, entity.User, es[0].Key, "the user first")
	byKey := map[string]memory.Entity{}
	for _, e := range es {
		require.Equal(t, "user:ana", e.Scope)
		byKey[e.Key] = e
	}
	require.Equal(t, []string{"Sarah"}, byKey["sister"].Aliases)
	require.Equal(t, 2, byKey["sister"].CurrentBeliefs, "Denver and Acme; Austin is superseded")
	require.Equal(t, entity.KindPerson, byKey["sister"].Kind)
	require.Contains(t, byKey, "sally")

	// Another scope's registry holds its own entities alone.
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("entities", "--scope", "user:bob", "--json")), &es))
	require.Len(t, es, 1)
	require.Equal(t, entity.User, es[0].Key)
	_, stderr, code := c.run("entity", "--scope", "user:bob", "Sarah")
	require.Equal(t, config.ExitNotFound, code, stderr)
	require.NotContains(t, stderr, "did you mean", "no name of another scope is suggested")

	// A scope that holds a transcript and no belief yet has no entity: an empty array.
	_, err = c.schema.Pool.Exec(context.Background(), `INSERT INTO episode (scope, messages, content_hash, occurred_at)
		VALUES ('user:new', '[{"role": "user", "content": "Hi."}]', 'h', '2026-01-01')`)
	require.NoError(t, err)
	require.Equal(t, "[]\n", c.mustRun("entities", "--scope", "user:new", "--json"))

	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"entities", "--scope", "user:anna"}, config.ExitNotFound, "no scope user:anna (did you mean user:ana?)"},
		{[]string{"entities", "--scope", "user:anna", "--json"}, config.ExitNotFound, "no scope user:anna"},
		{[]string{"entities"}, config.ExitUsage, "--scope is required"},
		{[]string{"entities", "--scope", "user:ana", "sister"}, config.ExitUsage, "unexpected arguments: sister"},
	} {
		stdout, stderr, code := c.run(tc.args...)
		require.Equal(t, tc.code, code, "beliefs %v: %s", tc.args, stderr)
		require.Contains(t, stderr, tc.stderr, tc.args)
		require.Empty(t, stdout, tc.args)
	}
}

// `entity` finds an entity by any of its names: its current beliefs by slot, each slot's
// chain with --history, memory.EntityView with --json; an unknown name exits 3 and
// suggests the nearest.
func TestEntityCommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	austin, denver := c.seedFamily("user:ana")

	out := c.mustRun("entity", "--scope", "user:ana", "sarah")
	require.Contains(t, out, "sister (person), also Sarah: 2 current beliefs\n")
	require.Regexp(t, `\nhome_city\s+`+itoa(denver)+`\s+User's sister lives in Denver\s+2026-03-01 \.\.\s*\n`, out)
	require.Contains(t, out, "User's sister works at Acme")
	require.NotContains(t, out, "Austin", "without --history, what no longer holds is left out")

	// Flags after the name read as well as before it.
	out = c.mustRun("entity", "the user's SISTER", "--scope", "user:ana", "--history")
	require.Regexp(t, `\nhome_city\s+`+itoa(austin)+`\s+superseded\s+User's sister lives in Austin\s+2026-01-01 \.\. 2026-03-01\n`+
		`\s+`+itoa(denver)+`\s+active\s+User's sister lives in Denver\s+2026-03-01 \.\.\s*\n`, out, "the chain, oldest first")

	var view memory.EntityView
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("entity", "--scope", "user:ana", "Sarah", "--history", "--json")), &view))
	require.Equal(t, "sister", view.Key)
	require.Equal(t, []string{"Sarah"}, view.Aliases)
	require.Len(t, view.Slots, 2)
	require.Equal(t, "home_city", view.Slots[0].Attribute)
	require.Len(t, view.Slots[0].Current, 1)
	require.Equal(t, denver, view.Slots[0].Current[0].ID)
	require.Len(t, view.Slots[0].History, 2)
	require.Equal(t, austin, view.Slots[0].History[0].ID)
	require.Nil(t, view.Slots[1].History, "a slot with nothing but what is current has no history")

	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("entity", "--scope", "user:ana", "Sally", "--json")), &raw))
	for _, key := range []string{"scope", "key", "name", "kind", "aliases", "current_beliefs", "created_at", "slots"} {
		require.Contains(t, raw, key)
	}
	require.JSONEq(t, `[]`, string(raw["aliases"]))

	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"entity", "--scope", "user:ana", "Sarahh"}, config.ExitNotFound, `no entity of "user:ana" is called "Sarahh" (did you mean "Sarah"?)`},
		{[]string{"entity", "--scope", "user:ana", "Sarahh", "--json"}, config.ExitNotFound, `did you mean "Sarah"?`},
		{[]string{"entity", "--scope", "user:anna", "Sarah"}, config.ExitNotFound, "no scope user:anna (did you mean user:ana?)"},
		{[]string{"entity", "--scope", "user:anna", "user"}, config.ExitNotFound, "no scope user:anna"},
		{[]string{"entity", "--scope", "user:ana"}, config.ExitUsage, "give one NAME"},
		{[]string{"entity", "--scope", "user:ana", "Sarah", "Sally"}, config.ExitUsage, "give one NAME"},
		{[]string{"entity", "--scope", "user:ana", " "}, config.ExitUsage, "NAME is blank"},
		{[]string{"entity", "--scope", "user:ana", "Sa\x01rah"}, config.ExitUsage, "name contains a control character"},
		{[]string{"entity", "Sarah"}, config.ExitUsage, "--scope is required"},
	} {
		stdout, stderr, code := c.run(tc.args...)
		require.Equal(t, tc.code, code, "beliefs %v: %s", tc.args, stderr)
		require.Contains(t, stderr, tc.stderr, tc.args)
		require.Empty(t, stdout, tc.args)
	}
}

// `entities merge`: OTHER's names and beliefs become the entity's, the review item that
// proposed it closes; the same entity twice and the user absorbed are bad input, an
// unknown name is not found.
func TestEntitiesMergeCommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	ctx := context.Background()
	c.seedFamily("user:ana")
	c.seedFamily("user:bob")
	// A later conversation calls the sister Sally, another entity's name: a proposal.
	_, err := c.store.Apply(ctx, &memory.Batch{Scope: "user:ana", Origin: memory.RevisionExtraction, At: date("2026-04-01"),
		Facts: []memory.Fact{about("User's sister has a dog", "pet", "my sister", "Sally")}})
	require.NoError(t, err)
	items, err := c.store.Conflicts(ctx, "user:ana", false)
	require.NoError(t, err)
	require.Len(t, items, 1)
	require.Equal(t, memory.CauseSameEntity, *items[0].Cause)

	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"entities", "merge", "--scope", "user:ana", "--into", "sister", "Sarah"}, config.ExitUsage, "already one entity"},
		{[]string{"entities", "merge", "--scope", "user:ana", "--into", "Sarah", "me"}, config.ExitUsage, "the user is never merged into another entity"},
		{[]string{"entities", "merge", "--scope", "user:ana", "--into", "Sarah", "Salli"}, config.ExitNotFound, `"Salli" (did you mean "Sally"?)`},
		{[]string{"entities", "merge", "--scope", "user:anna", "--into", "Sarah", "Sally"}, config.ExitNotFound, "no scope user:anna"},
		{[]string{"entities", "merge", "--scope", "user:ana", "Sally"}, config.ExitUsage, "--into is required"},
		{[]string{"entities", "merge", "--scope", "user:ana", "--into", "Sarah"}, config.ExitUsage, "give one OTHER"},
		{[]string{"entities", "merge", "--into", "Sarah", "Sally"}, config.ExitUsage, "--scope is required"},
	} {
		stdout, stderr, code := c.run(tc.args...)
		require.Equal(t, tc.code, code, "beliefs %v: %s", tc.args, stderr)
		require.Contains(t, stderr, tc.stderr, tc.args)
		require.Empty(t, stdout, tc.args)
	}

	out := c.mustRun("entities", "merge", "--scope", "user:ana", "--into", "Sarah", "Sally", "--note", "one person")
	require.Equal(t, "merged \"Sally\" into \"sister\": 1 belief moved; \"sister\" now also goes by Sally, Sarah\n"+
		"closed review item "+itoa(items[0].ID)+"\n", out)
	var es []memory.Entity
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("entities", "--scope", "user:ana", "--json")), &es))
	require.Len(t, es, 2, "the user and the sister")
	require.Equal(t, "sister", es[1].Key)
	require.Equal(t, 4, es[1].CurrentBeliefs, "Denver, Acme, the dog and the cello")
	require.Contains(t, c.mustRun("entity", "--scope", "user:ana", "sally"), "Sally plays the cello")
	open, err := c.store.Conflicts(ctx, "user:ana", false)
	require.NoError(t, err)
	require.Empty(t, open)

	// The other scope's Sally is still her own entity, merged there by --json.
	var m memory.Merged
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("entities", "merge", "--scope", "user:bob", "--into", "user", "Sally", "--json")), &m))
	require.EqualValues(t, 1, m.Moved)
	require.Equal(t, entity.User, m.Entity.Key)
	require.Contains(t, m.Entity.Aliases, "Sally")
	require.Empty(t, m.Closed)
}

// `forget --entity` forgets everything about an entity, found by any name; with --purge
// it erases the entity and its names too.
func TestForgetByEntity(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	austin, denver := c.seedFamily("user:ana")

	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"forget", "--entity", "Sarah"}, config.ExitUsage, "--scope is required"},
		{[]string{"forget", "--scope", "user:ana", "--entity", "Sarah", "--match", "Austin"}, config.ExitUsage, "exactly one of --id, --match, --entity and --all"},
		{[]string{"forget", "--scope", "user:ana", "--entity", " "}, config.ExitUsage, "--entity is blank"},
		{[]string{"forget", "--scope", "user:ana", "--entity", "Sa\x01rah"}, config.ExitUsage, "name contains a control character"},
		{[]string{"forget", "--scope", "user:ana", "--entity", "Sarahh"}, config.ExitNotFound, `(did you mean "Sarah"?)`},
		{[]string{"forget", "--scope", "user:ana", "--entity", "Sarahh", "--purge"}, config.ExitNotFound, `(did you mean "Sarah"?)`},
		{[]string{"forget", "--scope", "user:anna", "--entity", "Sarah"}, config.ExitNotFound, `scope "user:anna": not found`},
		{[]string{"forget", "--scope-prefix", "user:", "--entity", "Sarah", "--all", "--purge"}, config.ExitUsage, "without --scope, --id, --match or --entity"},
	} {
		stdout, stderr, code := c.run(tc.args...)
		require.Equal(t, tc.code, code, "beliefs %v: %s", tc.args, stderr)
		require.Contains(t, stderr, tc.stderr, tc.args)
		require.Empty(t, stdout, tc.args)
	}

	out := c.mustRun("forget", "--scope", "user:ana", "--entity", "sarah")
	require.Regexp(t, `^forgot 3 beliefs of scope "user:ana": `, out, "the superseded Austin too")
	require.Contains(t, out, itoa(austin))
	require.Contains(t, out, itoa(denver))
	current, err := c.store.Current(context.Background(), "user:ana")
	require.NoError(t, err)
	require.Len(t, current, 2)
	for _, b := range current {
		require.NotEqual(t, "sister", b.Entity)
	}
	out = c.mustRun("entity", "--scope", "user:ana", "Sarah")
	require.Contains(t, out, "0 current beliefs", "a soft forget keeps the entity")
	require.Contains(t, out, "no beliefs")

	out = c.mustRun("forget", "--scope", "user:ana", "--entity", "Sarah", "--purge")
	require.Contains(t, out, `purged entity "Sarah" of scope "user:ana", its names and beliefs, for good`)
	require.Regexp(t, `(?m)^belief\s+3$`, out)
	require.Regexp(t, `(?m)^entity\s+1$`, out)
	require.Regexp(t, `(?m)^entity_alias\s+2$`, out)
	_, stderr, code := c.run("entity", "--scope", "user:ana", "Sarah")
	require.Equal(t, config.ExitNotFound, code, stderr)
	var es []memory.Entity
	require.NoError(t, json.Unmarshal([]byte(c.mustRun("entities", "--scope", "user:ana", "--json")), &es))
	require.Len(t, es, 2, "the user and Sally stay")
	require.Contains(t, c.mustRun("list", "--scope", "user:ana"), "Sally plays the cello")
}
