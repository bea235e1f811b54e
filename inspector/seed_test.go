package inspector_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/inspector"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/internal/testclock"
	"github.com/credohq/credo/memory"
)

// story is a user's memory written through the revision engine at the times it was
// learned, so that known time differs from valid time as it does in a live system: she
// moved from New York City to Miami, and an inference about her time zone rests on where
// she lives.
type story struct {
	store  *memory.Store
	clock  *testclock.Clock
	http   *httptest.Server
	token  string
	nyc    int64
	miami  int64
	scope  string
	schema *dbtest.Schema
}

// at parses an RFC 3339 time of the story.
func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func newStory(t *testing.T) *story {
	t.Helper()
	schema := dbtest.New(t)
	c := testclock.New(time.Time{})
	st := &story{schema: schema, clock: c, store: memory.NewStore(schema.Pool, &memory.Config{Now: c.Now}), scope: anaScope}
	st.write(t)
	c.Set(at("2026-03-25T09:30:00Z"))
	_, token, err := api.CreateKey(context.Background(), schema.Pool, "support-ops", []string{"tenant:a/"},
		[]api.Right{api.RightRead, api.RightOperate, api.RightPurge})
	require.NoError(t, err)
	st.token = token
	v1, err := api.New(context.Background(), api.Config{Store: st.store, Pool: schema.Pool, Addr: "127.0.0.1:0", RateLimit: -1})
	require.NoError(t, err)
	ui, err := inspector.New(inspector.Config{Store: st.store, Gate: v1, Now: c.Now})
	require.NoError(t, err)
	mux := http.NewServeMux()
	ui.Mount(mux)
	st.http = httptest.NewServer(mux)
	t.Cleanup(st.http.Close)
	return st
}

func (st *story) write(t *testing.T) {
	st.clock.Set(at("2025-06-01T18:05:00Z"))
	ep := st.episode(t, "conv-0601", "2025-06-01T18:00:00Z", "Hi! I just moved to New York City for a new job at Acme. I'm a data engineer there.")
	st.nyc = st.apply(t, ep, nil, fact(nyc, "location", "2025-06-01", "I just moved to New York City"),
		fact("User works at Acme as a data engineer", "employer", "2025-06-01", "a new job at Acme. I'm a data engineer"))[0]
	st.clock.Set(at("2025-06-02T08:01:00Z"))
	ep = st.episode(t, "conv-0602", "2025-06-02T08:00:00Z", "Please schedule our weekly sync at 9am my time.")
	tz := fact("User's time zone is US Eastern", "time_zone", "2025-06-02", "9am my time")
	tz.Origin, tz.DependsOn = memory.OriginInferred, []int{0}
	st.apply(t, ep, []int64{st.nyc}, tz)
	st.clock.Set(at("2025-09-12T12:31:00Z"))
	ep = st.episode(t, "conv-0912", "2025-09-12T12:30:00Z", "I've gone vegetarian, so no meat in the recipe ideas please.")
	st.apply(t, ep, nil, fact("User is vegetarian", "diet", "2025-09-12", "I've gone vegetarian"))
	st.clock.Set(at("2025-11-03T07:11:00Z"))
	ep = st.episode(t, "conv-1103", "2025-11-03T07:10:00Z", "My dog Rex needs his walk at 7 every morning.")
	st.apply(t, ep, nil, fact("User has a dog named Rex", "pet", "2025-11-03", "My dog Rex"))
	st.clock.Set(at("2026-03-20T14:02:00Z"))
	ep = st.episode(t, "conv-0320", "2026-03-20T14:00:00Z", "Big news: I moved to Miami last month. The weather is so much better.")
	miami := fact(miami, "location", "2026-02-15", "I moved to Miami last month")
	miami.Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal,
		Rationale: "the user moved"}
	st.miami = st.apply(t, ep, []int64{st.nyc}, miami)[0]
}

func fact(statement, attribute, validFrom, quote string) memory.Fact {
	from, err := time.Parse(time.DateOnly, validFrom)
	if err != nil {
		panic(err)
	}
	return memory.Fact{Statement: statement, Subject: "user", Attribute: attribute, Kind: memory.KindAttribute,
		Confidence: 0.9, Origin: memory.OriginUserStated, ValidFrom: &from, Quote: quote}
}

// episode stores a transcript as extracted already, as the worker leaves it.
func (st *story) episode(t *testing.T, id, at, userSays string) int64 {
	t.Helper()
	msgs, err := json.Marshal([]map[string]string{{"role": "user", "content": userSays}, {"role": "assistant", "content": "Noted."}})
	require.NoError(t, err)
	var ep int64
	err = st.schema.Pool.QueryRow(context.Background(), `INSERT INTO episode
			(scope, external_id, messages, content_hash, occurred_at, received_at, state, attempts, processed_at)
		VALUES ($1, $2, $3, md5($6), $4, $5, 'applied', 1, $5) RETURNING id`,
		st.scope, id, msgs, at, st.clock.Now(), string(msgs)).Scan(&ep)
	require.NoError(t, err)
	return ep
}

func (st *story) apply(t *testing.T, ep int64, candidates []int64, facts ...memory.Fact) []int64 {
	t.Helper()
	res, err := st.store.Apply(context.Background(), &memory.Batch{Scope: st.scope, Origin: memory.RevisionExtraction,
		EpisodeID: &ep, At: st.clock.Now(), Candidates: candidates, Facts: facts})
	require.NoError(t, err)
	var ids []int64
	for _, f := range res.Facts {
		require.NotZero(t, f.BeliefID, "%+v", f)
		ids = append(ids, f.BeliefID)
	}
	return ids
}

// sister adds to the story the user's sister, also called Sarah: a nurse in Austin,
// who later moved to Denver, which the user says naming her by her alias. It returns
// the clock to the story's present.
func (st *story) sister(t *testing.T) (austinID, denverID int64) {
	t.Helper()
	about := func(f memory.Fact, subject string, aliases ...string) memory.Fact {
		f.Subject, f.SubjectAliases = subject, aliases
		return f
	}
	st.clock.Set(at("2025-08-10T19:21:00Z"))
	ep := st.episode(t, "conv-0810", "2025-08-10T19:20:00Z", "My sister Sarah lives in Austin, she's a nurse at the children's hospital there.")
	ids := st.apply(t, ep, nil,
		about(fact("User's sister lives in Austin", "home_city", "2025-08-01", "My sister Sarah lives in Austin"), "user's sister", "Sarah"),
		about(fact("User's sister is a nurse", "occupation", "2025-08-01", "she's a nurse at the children's hospital"), "user's sister"))
	austinID = ids[0]
	st.clock.Set(at("2026-03-10T16:46:00Z"))
	ep = st.episode(t, "conv-0310", "2026-03-10T16:45:00Z", "Sarah moved to Denver at the start of the month, I'm visiting her in May.")
	moved := about(fact("User's sister lives in Denver", "home_city", "2026-03-01", "Sarah moved to Denver at the start of the month"), "Sarah")
	moved.Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal, Rationale: "she moved"}
	denverID = st.apply(t, ep, []int64{austinID}, moved)[0]
	st.clock.Set(at("2026-03-25T09:30:00Z"))
	return austinID, denverID
}
