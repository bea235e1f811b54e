package reliability_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/transcript"
)

// candidateLine is how a prompt shows a candidate belief (DESIGN.md, "LLM contract").
var candidateLine = regexp.MustCompile(`(?m)^\[(\d+)\] (.*)$`)

// candidate is one "[N] statement (attribute, since date)" line of a prompt.
type candidate struct {
	Index int
	Line  string // everything after "[N] "
}

func candidatesOf(prompt string) []candidate {
	var out []candidate
	for _, m := range candidateLine.FindAllStringSubmatch(prompt, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			panic(err)
		}
		out = append(out, candidate{Index: n, Line: m[2]})
	}
	return out
}

// transcriptOf is the transcript section of an extraction prompt: the fakes read what
// the user said there only, never in the examples or candidates.
func transcriptOf(prompt string) string {
	i := strings.LastIndex(prompt, "\n<transcript>\n")
	if i < 0 {
		return ""
	}
	return prompt[i:]
}

// A slot is a kind of statement the "moves" world talks about: said with its date, or
// (location only) restated undated, as holding on the day of the conversation.
type slot struct {
	attribute, prefix string
	said              *regexp.Regexp
}

var slots = []slot{
	{"location", "User lives in ", regexp.MustCompile(`I have lived in ([A-Z][a-z]+(?: [A-Z][a-z]+)*) since (\d{4}-\d{2}-\d{2})`)},
	{"location", "User lives in ", regexp.MustCompile(`I still live in ([A-Z][a-z]+(?: [A-Z][a-z]+)*)()\.`)},
	{"employer", "User works at ", regexp.MustCompile(`I have worked at ([A-Z][a-z]+(?: [A-Z][a-z]+)*) since (\d{4}-\d{2}-\d{2})`)},
}

// movesAnswer is a deterministic fake LLM for the "moves" world: its answer depends only
// on the transcript and the candidates shown. For each "I have lived in CITY since DATE"
// (or "worked at") in the transcript it states where the user lives since DATE, and
// supersedes the candidate of that slot if one is shown.
func movesAnswer(req llmtest.Request) llmtest.Reply {
	if req.SchemaName == "consolidation" {
		return llmtest.Reply{Content: `{"reasoning":"","resolutions":[]}`}
	}
	tr := transcriptOf(req.Prompt)
	cands := candidatesOf(req.Prompt)
	var facts []pipelinetest.Fact
	for _, s := range slots {
		for _, m := range s.said.FindAllStringSubmatch(tr, -1) {
			f := pipelinetest.Fact{Statement: s.prefix + m[1], Attribute: s.attribute, ValidFrom: m[2], Quote: m[0]}
			for _, c := range cands {
				if strings.HasPrefix(c.Line, s.prefix) {
					f.Resolves = &pipelinetest.Resolves{Index: c.Index, Action: "supersede", Reason: "temporal"}
					break
				}
			}
			facts = append(facts, f)
		}
	}
	return llmtest.Reply{Content: pipelinetest.Answer(facts...)}
}

var (
	cities = []string{"Lisbon", "Porto", "Madrid", "Seville", "Paris", "Lyon", "Berlin", "Hamburg", "Vienna", "Prague",
		"Warsaw", "Krakow", "Oslo", "Bergen", "Stockholm", "Helsinki", "Tallinn", "Riga", "Dublin", "Cork", "Rome",
		"Milan", "Naples", "Athens", "Sofia", "Zagreb", "Ljubljana", "Budapest", "Bratislava", "Munich", "Zurich",
		"Geneva", "Brussels", "Antwerp", "Amsterdam", "Rotterdam", "Copenhagen", "Aarhus", "Reykjavik", "Valencia"}
	companies = []string{"Acme", "Globex", "Initech", "Umbrella", "Hooli", "Soylent", "Stark", "Wayne", "Tyrell",
		"Cyberdyne", "Massive Dynamic", "Wonka", "Gringotts", "Monarch", "Vandelay", "Pied Piper", "Aperture", "Oscorp",
		"Nakatomi", "Virtucon"}
)

// movesEpisodes is a world of scopes × perScope episodes: in each, a user says where
// they have lived (or, one in three, worked) since a date. Within a scope every city,
// company and date is distinct, so that the final state of a scope is one chain per
// slot ordered by date, whatever order the episodes are processed in.
func movesEpisodes(seed uint64, scopes, perScope int) []transcript.Transcript {
	rng := rand.New(rand.NewPCG(seed, 1))
	base := time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)
	var out []transcript.Transcript
	for s := range scopes {
		scope := fmt.Sprintf("user:%02d", s)
		cityOrder, companyOrder := rng.Perm(len(cities)), rng.Perm(len(companies))
		dayOrder := rng.Perm(5 * 365)
		for i := range perScope {
			valid := base.AddDate(0, 0, dayOrder[i])
			says := fmt.Sprintf("I have lived in %s since %s.", cities[cityOrder[i]], valid.Format(time.DateOnly))
			if i%3 == 2 {
				says = fmt.Sprintf("I have worked at %s since %s.", companies[companyOrder[i]], valid.Format(time.DateOnly))
			}
			occurred := valid.Add(12*time.Hour + time.Duration(rng.IntN(3600))*time.Second)
			out = append(out, pipelinetest.T(scope, fmt.Sprintf("%s-%02d", scope, i), occurred.Format(time.RFC3339), says))
		}
	}
	return out
}

func scopesOf(ts []transcript.Transcript) []string {
	var out []string
	for _, t := range ts {
		if !slices.Contains(out, t.Scope) {
			out = append(out, t.Scope)
		}
	}
	slices.Sort(out)
	return out
}

// shape is every belief of the scopes with ids replaced by statements, so that states
// reached by different runs in different schemas compare equal.
func shape(tb testing.TB, store *memory.Store, scopes []string) []string {
	tb.Helper()
	var out []string
	for _, scope := range scopes {
		all, err := store.All(context.Background(), scope)
		require.NoError(tb, err)
		byID := map[int64]string{}
		for _, b := range all {
			byID[b.ID] = b.Statement
		}
		for _, b := range all {
			until := "-"
			if b.ValidUntil != nil {
				until = b.ValidUntil.Format(time.RFC3339)
			}
			var sup, by []string
			for _, id := range b.Supersedes {
				sup = append(sup, byID[id])
			}
			for _, id := range b.SupersededBy {
				by = append(by, byID[id])
			}
			slices.Sort(sup)
			out = append(out, fmt.Sprintf("%s|%s|%s|%s..%s|supersedes=%q|superseded_by=%q|reinforced=%d", scope, b.Statement,
				b.Status, b.ValidFrom.Format(time.RFC3339), until, sup, by, b.ReinforcedCount))
		}
	}
	slices.Sort(out)
	return out
}

// poll is count for the conditions of require.Eventually, which run outside the test's
// goroutine: -1 on error instead of failing the test from there.
func poll(pool *pgxpool.Pool, sql string, args ...any) int {
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		return -1
	}
	return n
}

func count(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) int {
	tb.Helper()
	var n int
	require.NoError(tb, pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// wantChains checks the final state of the "moves" world: in each scope and slot,
// exactly one active belief, the latest, and every other one superseded by its
// successor in date order, with its valid time closed where the successor's begins.
func wantChains(tb testing.TB, store *memory.Store, ts []transcript.Transcript) {
	tb.Helper()
	ctx := context.Background()
	for _, scope := range scopesOf(ts) {
		all, err := store.All(ctx, scope)
		require.NoError(tb, err)
		for _, attribute := range []string{"location", "employer"} {
			var chain []memory.Belief
			for _, b := range all {
				if b.Attribute == attribute {
					chain = append(chain, b)
				}
			}
			slices.SortFunc(chain, func(a, b memory.Belief) int { return a.ValidFrom.Compare(b.ValidFrom) })
			for i, b := range chain {
				if i == len(chain)-1 {
					require.Equal(tb, memory.StatusActive, b.Status, "%s: the latest %s is current", scope, attribute)
					require.Nil(tb, b.ValidUntil)
					continue
				}
				require.Equal(tb, memory.StatusSuperseded, b.Status, "%s: %q", scope, b.Statement)
				require.Equal(tb, []int64{chain[i+1].ID}, b.SupersededBy, "%s: %q", scope, b.Statement)
				require.NotNil(tb, b.ValidUntil)
				require.Equal(tb, chain[i+1].ValidFrom, *b.ValidUntil, "%s: %q", scope, b.Statement)
			}
		}
	}
}

// barrier holds its first n callers until all n have arrived (or 20s passed); later
// callers pass at once.
type barrier struct {
	mu      sync.Mutex
	n       int
	arrived int
	open    chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, open: make(chan struct{})} }

func (b *barrier) wait() {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
	case <-time.After(20 * time.Second):
	}
}

func (b *barrier) opened() bool {
	select {
	case <-b.open:
		return true
	default:
		return false
	}
}
