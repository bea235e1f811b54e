package inspector_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/inspector"
	"github.com/credohq/credo/memory"
)

// statements records the SQL a pool runs on memory's tables, in order: the path a
// request took through the database. Keys and sessions are left out: they are the same
// for every request of a login, but touched on a clock.
type statements struct {
	mu  sync.Mutex
	sql []string
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if !strings.Contains(d.SQL, "api_key") && !strings.Contains(d.SQL, "inspector_session") {
		s.mu.Lock()
		s.sql = append(s.sql, d.SQL)
		s.mu.Unlock()
	}
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// take is what was recorded since the last take.
func (s *statements) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.sql
	s.sql = nil
	return out
}

// traced is the harness's pages and API served over a store whose pool records its
// statements.
func traced(t *testing.T, h *harness) (*harness, *statements) {
	t.Helper()
	rec := &statements{}
	cfg, err := pgxpool.ParseConfig(h.p.Schema.URL)
	require.NoError(t, err)
	cfg.ConnConfig.Tracer = rec
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	store := memory.NewStore(pool, nil)
	v1, err := api.New(context.Background(), api.Config{Store: store, Pool: h.p.Pool(), Embed: h.p.Provider, Chat: h.p.Provider,
		Addr: "127.0.0.1:0", RateLimit: -1})
	require.NoError(t, err)
	ui, err := inspector.New(inspector.Config{Store: store, Gate: v1, Embed: h.p.Provider})
	require.NoError(t, err)
	mux := http.NewServeMux()
	v1.Mount(mux)
	ui.Mount(mux)
	th := *h
	th.http = httptest.NewServer(mux)
	t.Cleanup(th.http.Close)
	return &th, rec
}

// Another key's id answers exactly as an unknown id, on every page that takes an id,
// and through the same statements: the one visibility check (an index read of the id's
// scope) decides before any row is read, so neither the answer nor its time tells the
// two apart. The API's TestTenantIsolation checks the same of its endpoints.
func TestOtherKeysIDsTakeTheUnknownPath(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	th, rec := traced(t, h)
	b := th.browser()
	b.login(h.key("tenant:a/", api.RightRead, api.RightOperate, api.RightPurge))
	ctx := context.Background()
	res, err := h.p.Store.Apply(ctx, &memory.Batch{Scope: bobScope, Origin: memory.RevisionExtraction, Candidates: []int64{h.bob.berlin},
		Facts: []memory.Fact{{Statement: "User lives in Hamburg", Attribute: "location", Confidence: 0.9, Origin: memory.OriginUserStated,
			Resolves: &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}}}})
	require.NoError(t, err)
	bobEvent := res.Facts[0].EventID
	before, err := h.p.Store.All(ctx, bobScope)
	require.NoError(t, err)

	const missing = 999_999_999
	for _, c := range []struct {
		method, format string
		id             int64
		form           url.Values
	}{
		{"GET", "/ui/beliefs/%d", h.bob.berlin, nil},
		{"GET", "/ui/beliefs/%d/forget", h.bob.berlin, nil},
		{"POST", "/ui/beliefs/%d/forget", h.bob.berlin, url.Values{"purge": {"1"}}},
		{"GET", "/ui/episodes/%d", h.bob.failed, nil},
		{"POST", "/ui/review/%d", h.bob.item, url.Values{"action": {"apply"}}},
		{"GET", "/ui/events/%d/revert", bobEvent, nil},
		{"POST", "/ui/events/%d/revert", bobEvent, nil},
	} {
		send := func(id int64) (response, []string) {
			path := fmt.Sprintf(c.format, id)
			rec.take()
			var r response
			if c.method == "GET" {
				r = b.get(path)
			} else {
				r = b.post(path, "self", c.form)
			}
			return r, rec.take()
		}
		other, otherSQL := send(c.id)
		unknown, unknownSQL := send(missing)
		require.Equal(t, http.StatusNotFound, other.Status, c.format)
		require.Equal(t, unknown.Status, other.Status, c.format)
		require.Equal(t, unknown.Body, other.Body, "%s: the same page", c.format)
		require.Equal(t, unknownSQL, otherSQL, "%s: the same statements", c.format)
		require.Len(t, otherSQL, 1, "%s: one read of the id's scope, and no row", c.format)
		require.Contains(t, otherSQL[0], "SELECT scope FROM")
	}

	// Nothing of tenant:b changed.
	after, err := h.p.Store.All(ctx, bobScope)
	require.NoError(t, err)
	require.Equal(t, before, after)
}

// A key sees the entities of its scopes only: another tenant's entity page answers as
// a scope outside the key does, whether the scope, the entity or neither exists, before
// any read of memory; and an unknown name in the key's own scope never suggests a name
// of another's.
func TestOtherKeysEntityPages(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sister(bobScope)
	th, rec := traced(t, h)
	b := th.browser()
	b.login(h.key("tenant:a/", api.RightRead, api.RightOperate, api.RightPurge))

	forbidden := b.get(entityPath("tenant:b/nobody", "nobody"))
	require.Equal(t, http.StatusForbidden, forbidden.Status)
	require.Contains(t, forbidden.Body, "This key may not access this scope.")
	for _, path := range []string{entityPath(bobScope, "sister"), entityPath(bobScope, "Sarah"), entityPath(bobScope, "user"),
		entityPath(bobScope, "Sarahh"), entityPath("tenant:b/nobody", "sister"),
		entityPath(bobScope, "Sarah") + "/forget", entityPath(bobScope, "user") + "/forget?purge=1"} {
		rec.take()
		r := b.get(path)
		require.Equal(t, http.StatusForbidden, r.Status, path)
		require.Equal(t, forbidden.Body, r.Body, "%s: the same page", path)
		require.Empty(t, rec.take(), "%s: nothing of memory is read", path)
	}
	// Nor may it forget or erase one.
	for _, name := range []string{"sister", "Sarah", "user", "Sarahh"} {
		for _, form := range []url.Values{nil, {"purge": {"1"}}} {
			path := entityPath(bobScope, name) + "/forget"
			rec.take()
			r := b.post(path, "self", form)
			require.Equal(t, http.StatusForbidden, r.Status, "%s %v", path, form)
			require.Equal(t, forbidden.Body, r.Body, "%s %v: the same page", path, form)
			require.Empty(t, rec.take(), "%s %v: nothing of memory is read or changed", path, form)
		}
	}
	bobs, err := h.p.Store.All(context.Background(), bobScope)
	require.NoError(t, err)
	require.Contains(t, statementsOf(bobs), denver, "tenant:b's sister stays")
	require.Contains(t, statementsOf(bobs), berlin)

	r := b.get(entityPath(anaScope, "Sarahh"))
	require.Equal(t, http.StatusNotFound, r.Status)
	require.NotContains(t, r.Body, "Did you mean", "Sarah is tenant:b's")
	require.NotContains(t, b.page(scopePath(anaScope)), "sister", "tenant:b's entity is not listed")
}
