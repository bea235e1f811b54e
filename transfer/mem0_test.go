package transfer

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
)

var now = time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC)

func readFixture(t *testing.T, name, tmpl string) (*plan, error) {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	require.NoError(t, err)
	defer f.Close()
	return readMem0(f, tmpl, now)
}

// TestReadMem0: mem0's get_all answer becomes active beliefs of origin imported, one
// scope per user, holding from when mem0 stored them, last seen when it updated them.
func TestReadMem0(t *testing.T) {
	t.Parallel()
	p, err := readFixture(t, "mem0_get_all.json", DefaultScopeTemplate)
	require.NoError(t, err)
	require.True(t, p.mem0)
	require.Len(t, p.scopes, 2)
	alex, alice := p.scopes[0], p.scopes[1]
	require.Equal(t, "user:alex", alex.Scope)
	require.Equal(t, "user:alice", alice.Scope)
	require.Len(t, alex.Beliefs, 2)
	require.Len(t, alice.Beliefs, 2)

	trip := alex.Beliefs[0]
	require.Equal(t, "Alex is planning a trip to San Francisco from July 1st to July 10th", trip.Statement)
	require.Equal(t, memory.StatusActive, trip.Status)
	require.Equal(t, memory.OriginImported, trip.Origin)
	require.Equal(t, "travel", trip.Attribute)
	require.Equal(t, "user", trip.Subject)
	require.Equal(t, "user", trip.Entity, "the subject resolved: the import registers the user")
	require.Equal(t, time.Date(2024, 7, 1, 12, 0, 0, 0, time.UTC), trip.ValidFrom)
	require.Equal(t, trip.ValidFrom, trip.RecordedAt)
	require.Equal(t, 6, trip.Line, "the line the memory starts on")
	require.Equal(t, "food", alex.Beliefs[1].Attribute, "the first category")

	cricket := alice.Beliefs[0]
	require.Equal(t, time.Date(2024, 7, 26, 17, 29, 36, 630547000, time.UTC), cricket.ValidFrom, "mem0's Pacific time, in UTC")
	require.Equal(t, cricket.ValidFrom, cricket.LastSeenAt, "never updated: last seen when stored")
	allergy := alice.Beliefs[1]
	require.Equal(t, "general", allergy.Attribute, "no category")
	updated := time.Date(2024, 8, 3, 1, 45, 10, 1000, time.UTC)
	require.Equal(t, updated, allergy.LastSeenAt, "updated_at")
	require.Equal(t, updated, allergy.ValidFrom, "mem0 rewrote the text then: it holds from updated_at")
	require.Equal(t, updated, allergy.RecordedAt)
	require.Equal(t, `mem0 metadata {"source":"onboarding"}`, *allergy.Quote, "metadata but the category is kept")
	require.Equal(t, "user", allergy.Subject, "role user: about the user, though an agent was there")
	require.Nil(t, trip.Quote, "metadata with a category alone says nothing more")
	for _, sc := range p.scopes {
		for i, b := range sc.Beliefs {
			require.Equal(t, int64(i+1), b.ID)
			require.Nil(t, b.RetiredAt)
			require.Nil(t, b.EpisodeID)
		}
	}

	// The template may use every id mem0 has; a bare array reads the same.
	_, err = readFixture(t, "mem0_get_all.json", "org/{agent_id}/{run_id}/{user_id}")
	require.Error(t, err, "the first memory has no agent")
	require.Contains(t, err.Error(), `line 6: mem0 memory "f4cbdb08-7062-4f3e-8eb2-9f5c80dfe64c": has no agent_id, which the scope template "org/{agent_id}/{run_id}/{user_id}" needs`)
	p, err = readFixture(t, "mem0_array.json", "tenant:x/user:{user_id}")
	require.NoError(t, err)
	require.Len(t, p.scopes, 1)
	require.Equal(t, "tenant:x/user:joana", p.scopes[0].Scope)
	require.Len(t, p.scopes[0].Beliefs, 2, "duplicates and contradictions are consolidation's to resolve")
}

func TestReadMem0Refuses(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		body, tmpl, want string
	}{
		"a fixed bad scope": {`[]`, "user:42 ", "leading or trailing white space"},
		"relations": {"{\"results\": [{\"memory\": \"x\", \"user_id\": \"u\", \"created_at\": \"2024-01-01T00:00:00Z\"}],\n\"relations\": [{\"source\": \"alice\", \"relationship\": \"sister_of\", \"target\": \"bea\"}]}",
			DefaultScopeTemplate, `line 2: "relations" holds 1 graph relations (mem0's graph memory): credo imports memories, not relations`},
		"relations first": {`{"relations": {"x": 1}, "results": []}`, DefaultScopeTemplate, `"relations" holds graph relations`},
		"a path as an id": {"[\n{\"memory\": \"x\", \"user_id\": \"../../etc\", \"created_at\": \"2024-01-01T00:00:00Z\"}]", DefaultScopeTemplate,
			`line 2: mem0 memory without an id: user_id "../../etc" is not one level of a scope`},
		"a dot id":          {`[{"memory": "x", "app_id": "..", "created_at": "2024-01-01T00:00:00Z"}]`, "app:{app_id}", `app_id ".." is not one level`},
		"a bad expiry":      {`[{"memory": "x", "user_id": "u", "created_at": "2024-01-01T00:00:00Z", "expiration_date": "soon"}]`, DefaultScopeTemplate, `"expiration_date" "soon" is not a time`},
		"another field":     {`[]`, "user:{email}", "names {email}"},
		"cut short":         {`{"results": [`, DefaultScopeTemplate, "line 1: the list of memories does not end"},
		"not JSON":          {`{"results": [{"memory": }]}`, DefaultScopeTemplate, "line 1: is not a mem0 memory"},
		"no results":        {`{"count": 0}`, DefaultScopeTemplate, `the object has no "results"`},
		"empty":             {`{"results": []}`, DefaultScopeTemplate, "holds no memory"},
		"no text":           {"[\n{\"id\": \"m1\", \"user_id\": \"u\", \"created_at\": \"2024-01-01T00:00:00Z\"}]", DefaultScopeTemplate, `line 2: mem0 memory "m1": "memory" is missing`},
		"blank text":        {`[{"id": "m1", "memory": "  ", "user_id": "u", "created_at": "2024-01-01T00:00:00Z"}]`, DefaultScopeTemplate, `"memory" is empty`},
		"no time":           {`[{"id": 7, "memory": "x", "user_id": "u"}]`, DefaultScopeTemplate, `mem0 memory "7": "created_at" is missing`},
		"a bad time":        {`[{"memory": "x", "user_id": "u", "created_at": "yesterday"}]`, DefaultScopeTemplate, `memory without an id: "created_at" "yesterday" is not a time`},
		"no user":           {`[{"memory": "x", "agent_id": "a", "created_at": "2024-01-01T00:00:00Z"}]`, DefaultScopeTemplate, "has no user_id, which the scope template \"user:{user_id}\" needs (mem0's get_all lists memories without the ids it was filtered by: give the scope, e.g. --scope-template 'user:alex')"},
		"a bad scope":       {`[{"memory": "x", "user_id": " u", "created_at": "2024-01-01T00:00:00Z"}]`, "{user_id} ", "leading or trailing white space"},
		"a memory too long": {`[{"memory": "` + strings.Repeat("x", memory.MaxStatementLen+1) + `", "user_id": "u", "created_at": "2024-01-01T00:00:00Z"}]`, DefaultScopeTemplate, "the limit is 2000"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := readMem0(strings.NewReader(tc.body), tc.tmpl, now)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			_, ok := transcript.InputMessage(err)
			require.True(t, ok, "bad input: %v", err)
			require.ErrorIs(t, err, ErrInput)
		})
	}
	// A number is an id as good as a string; times without a zone are UTC.
	p, err := readMem0(strings.NewReader(`[{"memory": "x", "user_id": 42, "created_at": "2024-01-01T10:00:00.5"}]`), DefaultScopeTemplate, now)
	require.NoError(t, err)
	require.Equal(t, "user:42", p.scopes[0].Scope)
	require.Equal(t, time.Date(2024, 1, 1, 10, 0, 0, 500000000, time.UTC), p.scopes[0].Beliefs[0].ValidFrom)
}

// TestReadMem0V3: mem0's documented v3 get_all lists a user's memories without their
// user_id: a fixed scope takes them all.
func TestReadMem0V3(t *testing.T) {
	t.Parallel()
	_, err := readFixture(t, "mem0_v3_get_all.json", DefaultScopeTemplate)
	require.ErrorContains(t, err, "line 6: mem0 memory \"f4cbdb08-7062-4f3e-8eb2-9f5c80dfe64c\": has no user_id")
	p, err := readFixture(t, "mem0_v3_get_all.json", "user:alex")
	require.NoError(t, err)
	require.Len(t, p.scopes, 1)
	require.Equal(t, "user:alex", p.scopes[0].Scope)
	require.Len(t, p.scopes[0].Beliefs, 2)
}

// TestReadMem0Faithful: every id mem0 scopes by fills a template; the agent's memories
// are about the assistant, not the user; an expired memory is history; metadata and an
// expiration to come are kept; an empty "relations" is no graph to lose.
func TestReadMem0Faithful(t *testing.T) {
	t.Parallel()
	p, err := readFixture(t, "mem0_ids.json", "app:{app_id}")
	require.NoError(t, err)
	require.Len(t, p.scopes, 1)
	require.Equal(t, "app:globex", p.scopes[0].Scope)
	bs := p.scopes[0].Beliefs
	require.Len(t, bs, 4)
	spanish, booked, moved, paris := bs[0], bs[1], bs[2], bs[3]

	require.Equal(t, "assistant", spanish.Subject, "an agent's memory, no user: the assistant's")
	require.Equal(t, "assistant", spanish.Entity)
	require.Equal(t, "assistant", booked.Subject, "said by the assistant (role)")
	require.Equal(t, "user", moved.Subject)

	require.Equal(t, "location", moved.Attribute)
	require.Equal(t, time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC), moved.ValidFrom, "updated_at")
	require.Equal(t, memory.StatusActive, moved.Status, "expires in 2027")
	require.Nil(t, moved.ValidUntil)
	require.Equal(t, `mem0 metadata {"priority":2,"source":"chat"}; mem0 expiration_date 2027-01-31`, *moved.Quote)

	require.Equal(t, memory.StatusRetracted, paris.Status, "expired on 2025-02-07, before now")
	end := time.Date(2025, 2, 8, 0, 0, 0, 0, time.UTC)
	require.Equal(t, end, *paris.ValidUntil, "mem0 shows it through its expiration date")
	require.Equal(t, end, *paris.RetiredAt)
	require.Nil(t, paris.Quote)

	// Every id fills a template; the scopes come in the order first met.
	_, err = readFixture(t, "mem0_ids.json", "{app_id}/agent:{agent_id}")
	require.ErrorContains(t, err, `line 21: mem0 memory "m-moved": has no agent_id`)
	p, err = readMem0(strings.NewReader(`[{"memory": "x", "user_id": "u", "agent_id": "a", "app_id": "b", "run_id": "r", "created_at": "2024-01-01T00:00:00Z"}]`),
		"{app_id}/{agent_id}/{run_id}/user:{user_id}", now)
	require.NoError(t, err)
	require.Equal(t, "b/a/r/user:u", p.scopes[0].Scope)
}

func TestScopeMap(t *testing.T) {
	t.Parallel()
	m, err := ParseScopeMap([]string{"acme=globex", "acme/team:x=teams/x", "user:4=user:40"})
	require.NoError(t, err)
	for from, want := range map[string]string{
		"acme": "globex", "acme/user:1": "globex/user:1", "acme/team:x/user:2": "teams/x/user:2", "acme2/u": "acme2/u",
		"user:4": "user:40", "user:42": "user:42",
	} {
		got, _ := mapScope(m, from)
		require.Equal(t, want, got, from)
	}
	for _, bad := range [][]string{{"acme"}, {"=x"}, {"x="}, {"a=b", "a=c"}, {" a=b"}} {
		_, err := ParseScopeMap(bad)
		require.Error(t, err, "%q", bad)
		require.ErrorIs(t, err, transcript.ErrInput)
	}
}
