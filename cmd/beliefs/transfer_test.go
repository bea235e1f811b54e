package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/memory"
)

// seedHistory fills scope with what an export must carry: supersessions, a retraction,
// a restatement, a reverted revision, a belief concluded from one that changed since (an
// open review item), a refused revision an operator dismissed (an item with a vector),
// an authoritative and a forgotten belief, applied, pending (half extracted) and failed
// episodes, and a consolidation watermark.
func seedHistory(t *testing.T, store *memory.Store, scope string) {
	t.Helper()
	ctx := context.Background()
	model := llmtest.DefaultEmbedModel
	require.NoError(t, store.EnsureEmbeddingModel(ctx, model, llmtest.DefaultDim))
	emb := func(s string) []float32 { return llmtest.Embed(s, llmtest.DefaultDim) }
	day := func(month, d int) time.Time { return time.Date(2026, time.Month(month), d, 10, 0, 0, 0, time.UTC) }

	says := []string{"I live in New York, work at Acme, have a dog named Rex and love jazz.", "My clock says US Eastern.",
		"I moved to Miami.", "I started at Globex. Rex was my neighbour's dog, not mine.", "Miami is great.", "We're on the Free plan now.",
		"A long talk, half of it extracted.", "A talk the model failed on."}
	eps := make([]memory.NewEpisode, len(says))
	for i, s := range says {
		msgs, err := json.Marshal([]memory.EpisodeMessage{{Role: "user", Content: s}, {Role: "assistant", Content: "Noted."}})
		require.NoError(t, err)
		eps[i] = memory.NewEpisode{Scope: scope, ExternalID: fmt.Sprintf("conv-%d", i+1), Messages: msgs,
			ContentHash: fmt.Sprintf("hash-%s-%d", scope, i), OccurredAt: day(1, 10+2*i)}
	}
	var stored []memory.StoredEpisode
	require.NoError(t, store.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		stored, err = memory.InsertEpisodesTx(ctx, tx, eps)
		return err
	}))
	fact := func(statement, attribute string, origin memory.Origin) memory.Fact {
		return memory.Fact{Statement: statement, Attribute: attribute, Confidence: 0.9, Origin: origin, Quote: statement, Embedding: emb(statement)}
	}
	resolves := func(f memory.Fact, index int, action memory.Action, reason memory.Reason) memory.Fact {
		f.Resolves = &memory.Directive{Index: index, Action: action, Reason: reason, Rationale: "the user said so"}
		f.EventEmbedding = emb("Said: " + f.Statement)
		return f
	}
	apply := func(episode int, candidates []int64, facts ...memory.Fact) *memory.Result {
		t.Helper()
		id := stored[episode].ID
		res, err := store.ApplyEpisode(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, EpisodeID: &id,
			At: eps[episode].OccurredAt, Candidates: candidates, Facts: facts, EmbedModel: model}, 1)
		require.NoError(t, err)
		return res
	}

	r := apply(0, nil, fact("User lives in New York City", "location", memory.OriginUserStated), fact("User works at Acme", "employer", memory.OriginUserStated),
		fact("User has a dog named Rex", "pet", memory.OriginUserStated), fact("User loves jazz", "music", memory.OriginUserStated))
	nyc, acme, rex, jazz := r.Facts[0].BeliefID, r.Facts[1].BeliefID, r.Facts[2].BeliefID, r.Facts[3].BeliefID
	tz := fact("User's time zone is US Eastern", "time_zone", memory.OriginInferred)
	tz.DependsOn = []int{0}
	apply(1, []int64{nyc}, tz)
	r = apply(2, []int64{nyc}, resolves(fact("User lives in Miami", "location", memory.OriginUserStated), 0, memory.ActionSupersede, memory.ReasonTemporal))
	require.Equal(t, memory.OutcomeSuperseded, r.Facts[0].Kind)
	miami := r.Facts[0].BeliefID
	r = apply(3, []int64{acme, rex}, resolves(fact("User works at Globex", "employer", memory.OriginUserStated), 0, memory.ActionSupersede, memory.ReasonTemporal),
		resolves(memory.Fact{Confidence: 0.9, Origin: memory.OriginUserStated}, 1, memory.ActionRetract, memory.ReasonCorrection))
	require.Equal(t, memory.OutcomeSuperseded, r.Facts[0].Kind)
	_, err := store.Revert(ctx, memory.RevertParams{EventID: r.Facts[0].EventID, Scope: scope, Note: "they only interviewed there"})
	require.NoError(t, err)
	r = apply(4, []int64{miami}, resolves(fact("User lives in Miami", "location", memory.OriginUserStated), 0, memory.ActionReinforce, memory.ReasonRestated))
	require.Equal(t, memory.OutcomeReinforced, r.Facts[0].Kind)

	pro := fact("Account plan is Pro", "plan", memory.OriginAuthoritative)
	r, err = store.Apply(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionOperator, At: day(1, 5), Facts: []memory.Fact{pro}, EmbedModel: model})
	require.NoError(t, err)
	r = apply(5, []int64{r.Facts[0].BeliefID}, resolves(fact("Account plan is Free", "plan", memory.OriginUserStated), 0, memory.ActionSupersede, memory.ReasonTemporal))
	require.Equal(t, memory.OutcomeConflict, r.Facts[0].Kind)
	item, err := store.ConflictIn(ctx, scope, r.Facts[0].ConflictID)
	require.NoError(t, err)
	text, err := store.ReviewText(ctx, item)
	require.NoError(t, err)
	_, err = store.Decide(ctx, memory.Decision{ID: item.ID, Scope: scope, Verdict: memory.VerdictDismiss, Note: "plans change through billing",
		EmbedModel: model, Embedding: emb(text)})
	require.NoError(t, err)
	_, err = store.Forget(ctx, memory.Selection{Scope: scope, IDs: []int64{jazz}})
	require.NoError(t, err)

	half := stored[6].ID
	_, err = store.ApplySegment(ctx, &memory.Batch{Scope: scope, Origin: memory.RevisionExtraction, EpisodeID: &half, At: eps[6].OccurredAt,
		EmbedModel: model}, 1, memory.Segment{Next: memory.Progress{Message: 1}})
	require.NoError(t, err)
	require.NoError(t, store.RecordEpisodeFailure(ctx, memory.EpisodeFailure{ID: stored[7].ID, Scope: scope, Attempt: 3,
		Err: errors.New("the model server did not answer"), Final: true}))
	require.NoError(t, store.InTx(ctx, func(tx pgx.Tx) error {
		_, err := memory.AdvanceWatermarkTx(ctx, tx, scope, day(1, 25))
		return err
	}))
}

// views are the reads of a scope a round trip must keep, by name, their ids replaced
// by their rank among the scope's ids of their kind (ids aside, everything else equal).
func (c *apiCLI) views(scope string) map[string]string {
	c.t.Helper()
	raw := map[string]string{
		"list":      c.mustRunOK("list", "--scope", scope, "--all", "--json"),
		"current":   c.mustRunOK("list", "--scope", scope, "--json"),
		"events":    c.mustRunOK("events", "--scope", scope, "--json"),
		"episodes":  c.mustRunOK("episodes", "--scope", scope, "--json"),
		"conflicts": c.mustRunOK("conflicts", "--scope", scope, "--all", "--json"),
		"audit":     c.mustRunOK("audit", "--scope", scope, "--json"),
		"context":   c.mustRunOK("context", "--scope", scope, "--json"),
		"ranked":    c.mustRunOK("context", "--scope", scope, "--query", "Where does the user live?", "--json"),
		"past":      c.mustRunOK("context", "--scope", scope, "--query", "Where did the user live before?", "--json"),
	}
	var all []memory.Belief
	require.NoError(c.t, json.Unmarshal([]byte(raw["list"]), &all))
	for _, b := range all {
		if b.Status != memory.StatusForgotten {
			raw[fmt.Sprintf("history of belief %d", b.ID)] = c.mustRunOK("history", "--id", strconv.FormatInt(b.ID, 10), "--json")
		}
	}
	docs := map[string]any{}
	for name, s := range raw {
		var v any
		require.NoError(c.t, json.Unmarshal([]byte(s), &v), name)
		docs[name] = v
	}
	kinds := map[string]string{"list": "belief", "current": "belief", "events": "event", "episodes": "episode", "conflicts": "item"}
	ids := map[string][]float64{}
	for name, kind := range kinds {
		for _, o := range docs[name].([]any) {
			ids[kind] = append(ids[kind], o.(map[string]any)["id"].(float64))
		}
	}
	for kind := range ids {
		slices.Sort(ids[kind])
		ids[kind] = slices.Compact(ids[kind])
	}
	out := map[string]string{}
	for name, v := range docs {
		if name == "audit" { // counts, no ids
			out[name] = raw[name]
			continue
		}
		kind := kinds[name]
		if kind == "" {
			kind = "belief" // history; context's beliefs
		}
		key := name
		if rest, ok := strings.CutPrefix(name, "history of belief "); ok {
			id, _ := strconv.ParseFloat(rest, 64)
			key = "history of " + rankOf(ids, "belief", id)
		}
		b, err := json.MarshalIndent(ranked(v, kind, ids), "", " ")
		require.NoError(c.t, err)
		out[key] = string(b)
	}
	return out
}

// idKinds are the fields that name a row, and what kind of row.
var idKinds = map[string]string{"supersedes": "belief", "superseded_by": "belief", "depends_on": "belief", "old_belief_id": "belief",
	"new_belief_id": "belief", "belief_id": "belief", "target_id": "belief", "episode_id": "episode", "episodes": "episode",
	"reverts": "event", "reverted_by": "event"}

// ranked is v with every id replaced by its kind and rank; kind is what "id" names.
func ranked(v any, kind string, ids map[string][]float64) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = ranked(e, kind, ids)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch {
			case k == "id":
				out[k] = rankOf(ids, kind, e.(float64))
			case idKinds[k] != "":
				out[k] = rankedIDs(e, idKinds[k], ids)
			case k == "beliefs", k == "target": // a review item's target is a belief
				out[k] = ranked(e, "belief", ids)
			default:
				out[k] = ranked(e, kind, ids)
			}
		}
		return out
	}
	return v
}

func rankedIDs(v any, kind string, ids map[string][]float64) any {
	switch x := v.(type) {
	case float64:
		return rankOf(ids, kind, x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = rankOf(ids, kind, e.(float64))
		}
		return out
	}
	return v
}

func rankOf(ids map[string][]float64, kind string, id float64) string {
	i, ok := slices.BinarySearch(ids[kind], id)
	if !ok {
		return fmt.Sprintf("%s ? (%v)", kind, id)
	}
	return fmt.Sprintf("%s #%d", kind, i+1)
}

// TestExportPurgeImport is the round trip: a scope's memory exported, purged and
// imported reads the same in every view (ids aside), answers the same context, costs
// no chat call, and the import is refused once the scope holds memory again.
func TestExportPurgeImport(t *testing.T) {
	t.Parallel()
	c := newAPICLI(t)
	ctx := context.Background()
	store := memory.NewStore(c.schema.Pool, nil)
	const scope = "acme/user:ana"
	seedHistory(t, store, scope)
	before := c.views(scope)
	require.Contains(t, before["ranked"], "User lives in Miami")
	require.Contains(t, before["past"], "User lives in New York City")
	require.Contains(t, before["conflicts"], `"basis_changed"`)

	file := filepath.Join(t.TempDir(), "ana.jsonl")
	// On Citus, the export and the import of a scope are its shard's work alone: a
	// statement that spans shards fails (PostgreSQL takes the setting as any other).
	routed := c.schema.URL + "&citus.multi_task_query_log_level=error"
	c.mustRunOK("export", "--scope", scope, "--output", file, "--database-url", routed)
	requireExportSchema(t, file)
	c.mustRunOK("forget", "--scope", scope, "--all", "--purge", "--yes")
	holding, err := store.HoldingMemory(ctx, []string{scope})
	require.NoError(t, err)
	require.Empty(t, holding, "the purge left nothing")

	c.llm.Reset()
	out := c.mustRunOK("import", file, "--database-url", routed)
	require.Contains(t, out, scope+": 8 beliefs, 5 revision events, 8 episodes, 2 review items, 1 dependency, 1 entity; 1 pending episode to extract")
	require.Zero(t, c.llm.ChatCount(), "an import makes no chat call")
	require.Positive(t, c.llm.EmbedCount())
	require.Contains(t, out, "in "+counted(c.llm.EmbedCount(), "call", "calls"))
	after := c.views(scope)
	require.Equal(t, slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after)))
	for name := range before {
		require.Equal(t, before[name], after[name], name)
	}

	// What reads do not show came back too: the export of the import is the export
	// (every field, times of change and transcripts included), vectors of the model for
	// every belief but the forgotten one and every revision, the dismissal's, the job.
	again := filepath.Join(t.TempDir(), "again.jsonl")
	c.mustRunOK("export", "--scope", scope, "--output", again)
	require.Equal(t, rankedExport(t, file), rankedExport(t, again))
	pending, err := store.ReembedPending(ctx, llmtest.DefaultEmbedModel, scope)
	require.NoError(t, err)
	require.Equal(t, map[string]int{}, pending)
	unembedded, err := store.Unembedded(ctx, scope, llmtest.DefaultEmbedModel, 100)
	require.NoError(t, err)
	require.Empty(t, unembedded)
	dismissals, err := store.UnembeddedDismissals(ctx, scope, llmtest.DefaultEmbedModel)
	require.NoError(t, err)
	require.Empty(t, dismissals)
	watermark, _, err := store.ConsolidationWatermark(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 1, 25, 10, 0, 0, 0, time.UTC), watermark.UTC())
	var jobs int
	require.NoError(t, c.schema.Pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE kind = 'credo.extract_scope' AND args->>'scope' = $1",
		scope).Scan(&jobs))
	require.Equal(t, 1, jobs, "the pending episode has its extraction job")
	next, err := store.NextPendingEpisode(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, memory.Progress{Message: 1}, next.Progress, "it goes on where it stood")

	// A second import is refused: the scope holds memory now; nothing changes.
	_, stderr, code := c.run("import", file)
	require.Equal(t, config.ExitFailed, code, stderr)
	require.Contains(t, stderr, "already holds memory")
	require.Contains(t, stderr, scope)
	require.Equal(t, after, c.views(scope))

	// Elsewhere, under another name, it reads the same again.
	out = c.mustRunOK("import", file, "--scope-map", "acme=globex")
	require.Contains(t, out, "globex/user:ana: 8 beliefs")
	require.Contains(t, out, "(exported as acme/user:ana)")
	moved := c.views("globex/user:ana")
	for name := range before {
		require.Equal(t, strings.ReplaceAll(before[name], "acme/user:ana", "globex/user:ana"), moved[name], name)
	}
}

// rankedExport is the export in file with its ids replaced by their rank among the ids
// of their kind, and the time it was taken left out.
func rankedExport(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var recs []map[string]any
	ids := map[string][]float64{}
	for line := range strings.SplitSeq(strings.TrimSuffix(string(data), "\n"), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		if id, ok := rec["id"].(float64); ok {
			ids[rec["type"].(string)] = append(ids[rec["type"].(string)], id)
		}
		recs = append(recs, rec)
	}
	for k := range ids {
		slices.Sort(ids[k])
	}
	refs := map[string]string{"superseded_by": "belief", "belief_id": "belief", "basis_id": "belief", "target_belief_id": "belief",
		"old_belief_id": "belief", "new_belief_id": "belief", "episode_id": "episode", "reverts": "event", "reverted_by": "event"}
	rank := func(v any, kind string) any {
		if id, ok := v.(float64); ok {
			return rankOf(ids, kind, id)
		}
		return v
	}
	var out []string
	for _, rec := range recs {
		delete(rec, "exported_at")
		for k, v := range rec {
			switch {
			case k == "id":
				rec[k] = rank(v, rec["type"].(string))
			case refs[k] != "":
				rec[k] = rank(v, refs[k])
			case k == "prior" && v != nil:
				prior := v.(map[string]any)
				if ep, ok := prior["episode_id"]; ok {
					prior["episode_id"] = rank(ep, "episode")
				}
			}
		}
		b, err := json.Marshal(rec)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	return out
}

// TestImportRefusesBadFiles: a file that is not a whole, well-formed export is refused
// with its line, and nothing is imported, not even the scopes before the bad line.
func TestImportRefusesBadFiles(t *testing.T) {
	t.Parallel()
	c := newAPICLI(t)
	store := memory.NewStore(c.schema.Pool, nil)
	seedHistory(t, store, "t/a")
	seedHistory(t, store, "t/b")
	file := filepath.Join(t.TempDir(), "ab.jsonl")
	c.mustRunOK("export", "--scope-prefix", "t/", "--output", file)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	// The last belief of scope b: a broken line there comes after every record of a.
	last := 0
	for i, l := range lines {
		if strings.Contains(l, `"type":"belief","scope":"t/b"`) {
			last = i
		}
	}
	require.Positive(t, last)
	dependency := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, `"type":"dependency"`) })
	edit := func(i int, from, to string) []string {
		out := slices.Clone(lines)
		require.Contains(t, out[i], from)
		out[i] = strings.Replace(out[i], from, to, 1)
		return out
	}
	for name, tc := range map[string]struct {
		lines []string
		want  string
	}{
		"not JSON":           {edit(last, `{"type"`, `{"type`), fmt.Sprintf("line %d: is not a JSON object", last+1)},
		"a status":           {edit(last, `"status":"`, `"status":"dreamt`), fmt.Sprintf("line %d: belief", last+1)},
		"an unknown field":   {edit(last, `"type":"belief",`, `"type":"belief","mood":"sad",`), `unknown field "mood"`},
		"a link to nowhere":  {edit(last, `"quote":`, `"episode_id":999999,"quote":`), "episode_id names episode 999999, which the import does not hold"},
		"cut short":          {lines[:len(lines)-1], "no end record: it was cut short"},
		"a record lost":      {slices.Delete(slices.Clone(lines), last, last+1), "the end record counts"},
		"a policy":           {slices.Insert(slices.Clone(lines), 1, `{"type":"policy","scope":"t/a"}`), "line 2: this version of credo keeps no scope policy"},
		"a partial export":   {edit(0, `"since":null`, `"since":"2026-01-01T00:00:00Z"`), "line 1: the export holds what changed since"},
		"a later version":    {edit(0, `"version":1`, `"version":2`), "written by a later credo"},
		"not an export":      {[]string{`{"results": []}`}, "line 1: is not the header of a credo export"},
		"an active, retired": {edit(last, `"retired_at":null`, `"retired_at":"2099-05-01T00:00:00Z"`), "is active: it has neither retired_at"},
		"a scope not listed": {edit(last, `"scope":"t/b"`, `"scope":"t/c"`), `scope "t/c" is not one of the header's scopes`},
		"an empty file":      {[]string{""}, "the file is empty"},
		"a basis not there":  {edit(dependency, `}`, `,"basis_id":999999}`), "basis_id names belief 999999, which the import does not hold"},
		// What PostgreSQL would refuse once the first scope is written: a statement of 3 MB
		// ("index row requires 36048 bytes"), or one of few characters but many bytes.
		"a 3 MB statement": {edit(last, `"statement":"`, `"statement":"`+strings.Repeat("x", 3<<20)),
			fmt.Sprintf("line %d: belief %s: statement is 31457", last+1, beliefID(t, lines[last]))},
		"a statement too wide to index": {edit(last, `"statement":"`, `"statement":"`+strings.Repeat("😀", 1000)),
			fmt.Sprintf("line %d: belief %s: statement is 40", last+1, beliefID(t, lines[last]))},
		"a 1 MB attribute": {edit(last, `"attribute":"`, `"attribute":"`+strings.Repeat("x", 1<<20)), "attribute is 1048"},
		"a 1 MB quote":     {edit(last, `"quote":"`, `"quote":"`+strings.Repeat("x", 1<<20)), "quote is 1048"},
		"a 1 MB subject":   {edit(last, `"subject":"`, `"subject":"`+strings.Repeat("x", 1<<20)), "subject is 1048"},
	} {
		t.Run(name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "bad.jsonl")
			require.NoError(t, os.WriteFile(bad, []byte(strings.Join(tc.lines, "\n")+"\n"), 0o600))
			_, stderr, code := c.run("import", bad, "--scope-map", "t=x")
			require.Equal(t, config.ExitUsage, code, stderr)
			require.Contains(t, stderr, tc.want)
			holding, err := store.HoldingMemory(context.Background(), []string{"x/a", "x/b"})
			require.NoError(t, err)
			require.Empty(t, holding, "nothing was imported")
		})
	}

	// A scope that holds memory refuses the whole import, before any scope is written.
	c.mustRunOK("add", "--scope", "x/b", "--statement", "User is new here", "--attribute", "status")
	_, stderr, code := c.run("import", file, "--scope-map", "t=x")
	require.Equal(t, config.ExitFailed, code, stderr)
	require.Contains(t, stderr, "scope x/b already holds memory")
	holding, err := store.HoldingMemory(context.Background(), []string{"x/a"})
	require.NoError(t, err)
	require.Empty(t, holding, "the empty scope was not imported either")

	for _, args := range [][]string{{"import"}, {"import", file, file}, {"import", file, "--scope-map", "a"}, {"import", file, "--scope-template", "u:{user_id}"},
		{"import", file, "--scope-map", "zz=y"}, {"import", file, "--from", "zep"}, {"import", "/no/such/file"},
		{"export"}, {"export", "--scope", "t/a", "--scope-prefix", "t/"}, {"export", "--scope", "t/a", "--since", "soon"}} {
		_, stderr, code := c.run(args...)
		require.Equal(t, config.ExitUsage, code, "%v: %s", args, stderr)
	}
	_, stderr, code = c.run("export", "--scope", "nobody")
	require.Equal(t, config.ExitNotFound, code, stderr)
}

// beliefID is the id of the belief record line.
func beliefID(t *testing.T, line string) string {
	t.Helper()
	var rec struct {
		ID int64 `json:"id"`
	}
	require.NoError(t, json.Unmarshal([]byte(line), &rec))
	return strconv.FormatInt(rec.ID, 10)
}

// An import of several scopes is all or nothing: when writing one fails (here, a writer
// stored a belief in it after the import found it empty), the scopes written before it
// are not imported either, and the same import runs again once the scope is purged.
func TestImportIsAllOrNothing(t *testing.T) {
	t.Parallel()
	c := newAPICLI(t)
	ctx := context.Background()
	store := memory.NewStore(c.schema.Pool, nil)
	seedHistory(t, store, "t/a")
	seedHistory(t, store, "t/b")
	file := filepath.Join(t.TempDir(), "ab.jsonl")
	c.mustRunOK("export", "--scope-prefix", "t/", "--output", file)

	// A writer of x/b holds its lock: the import writes x/a, then waits for x/b.
	tx, err := c.schema.Pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = store.ApplyTx(ctx, tx, &memory.Batch{Scope: "x/b", Origin: memory.RevisionOperator, At: time.Now(),
		Facts: []memory.Fact{{Statement: "User is new here", Attribute: "status", Confidence: 0.9, Origin: memory.OriginUserStated}}})
	require.NoError(t, err)
	type result struct {
		stderr string
		code   int
	}
	done := make(chan result, 1)
	go func() {
		_, stderr, code := c.run("import", file, "--scope-map", "t=x")
		done <- result{stderr, code}
	}()
	require.Eventually(t, func() bool {
		var waiting bool
		err := c.schema.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock%' AND pid <> pg_backend_pid())`).Scan(&waiting)
		return err == nil && waiting
	}, time.Minute, 10*time.Millisecond, "the import waits for x/b")
	require.NoError(t, tx.Commit(ctx))
	got := <-done
	require.Equal(t, config.ExitFailed, got.code, got.stderr)
	require.Contains(t, got.stderr, "scope x/b already holds memory")
	holding, err := store.HoldingMemory(ctx, []string{"x/a"})
	require.NoError(t, err)
	require.Empty(t, holding, "x/a, written before x/b failed, is not imported either")
	require.Contains(t, got.stderr, "nothing was imported")

	// Nothing to clean up: once x/b is empty again, the same import goes through.
	_, err = store.Purge(ctx, memory.Selection{Scope: "x/b", All: true})
	require.NoError(t, err)
	c.mustRunOK("import", file, "--scope-map", "t=x")
	holding, err = store.HoldingMemory(ctx, []string{"x/a", "x/b"})
	require.NoError(t, err)
	require.Equal(t, []string{"x/a", "x/b"}, holding)
}

// exportSchema is the export's JSON Schema, as docs/api.md publishes it: its header and
// its records.
func exportSchema(t *testing.T) (header, record *jsonschema.Schema) {
	t.Helper()
	f, err := os.Open("../../docs/export.schema.json")
	require.NoError(t, err)
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	require.NoError(t, c.AddResource("export.schema.json", doc))
	header, err = c.Compile("export.schema.json#/$defs/header")
	require.NoError(t, err)
	record, err = c.Compile("export.schema.json#/$defs/record")
	require.NoError(t, err)
	return header, record
}

// requireExportSchema holds every line of the export in file to the schema, and checks
// that it has a record of every type.
func requireExportSchema(t *testing.T, file string) {
	t.Helper()
	header, record := exportSchema(t)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	types := map[string]bool{}
	for i, line := range lines {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		require.NoError(t, err, "line %d", i+1)
		if i == 0 {
			require.NoError(t, header.Validate(v), "line 1: %s", line)
			continue
		}
		require.NoError(t, record.Validate(v), "line %d: %s", i+1, line)
		types[v.(map[string]any)["type"].(string)] = true
	}
	require.Equal(t, map[string]bool{"scope": true, "entity": true, "episode": true, "belief": true, "dependency": true, "event": true,
		"review_item": true, "end": true}, types)
}

// TestExportSchemaRefuses: the schema is no formality: what an import refuses, it
// refuses too.
func TestExportSchemaRefuses(t *testing.T) {
	t.Parallel()
	header, record := exportSchema(t)
	belief := `{"type":"belief","scope":"u","id":1,"subject":"user","attribute":"location","kind":"attribute","statement":"User lives in Miami",
		"status":"active","confidence":0.9,"origin":"user_stated","valid_from":"2026-01-01T00:00:00Z","valid_until":null,
		"recorded_at":"2026-01-01T00:00:00Z","retired_at":null,"superseded_by":null,"episode_id":null,"quote":null,"reinforced_count":0,
		"last_seen_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","needs_review":false}`
	valid := func(s *jsonschema.Schema, doc string) error {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		require.NoError(t, err)
		return s.Validate(v)
	}
	entity := `{"type":"entity","scope":"u","key":"sister","name":"sister","kind":"person","aliases":["Sarah"],"created_at":"2026-01-01T00:00:00Z"}`
	require.NoError(t, valid(record, belief))
	require.NoError(t, valid(record, entity))
	require.NoError(t, valid(record, strings.Replace(belief, `"subject":"user",`, `"subject":"user","entity":"user",`, 1)))
	for name, doc := range map[string]string{
		"a status":         strings.Replace(belief, `"active"`, `"dreamt"`, 1),
		"an unknown field": strings.Replace(belief, `"needs_review":false`, `"needs_review":false,"mood":"sad"`, 1),
		"a time":           strings.Replace(belief, `"valid_from":"2026-01-01T00:00:00Z"`, `"valid_from":"last spring"`, 1),
		"a vector":         `{"type":"review_item","scope":"u","id":1,"kind":"refused","origin":"extraction","action":"supersede","detail":"d","status":"open","created_at":"2026-01-01T00:00:00Z","embedding":[1,2]}`,
		"a policy":         `{"type":"policy","scope":"u"}`,
		"an entity's kind": strings.Replace(entity, `"person"`, `"robot"`, 1),
		"an empty alias":   strings.Replace(entity, `["Sarah"]`, `[""]`, 1),
	} {
		require.Error(t, valid(record, doc), name)
	}
	require.Error(t, valid(header, `{"format":"credo-export","version":2,"exported_at":"2026-01-01T00:00:00Z","scopes":[],"scope_prefix":null,"since":null,"embedding_model":null}`))
}

// TestImportMem0: mem0's exported memories, one scope per user, become active beliefs
// of origin imported in one command, each scope with a consolidation pass queued.
func TestImportMem0(t *testing.T) {
	t.Parallel()
	c := newAPICLI(t)
	out := c.mustRunOK("import", "--from", "mem0", "--scope-template", "acme/user:{user_id}", "../../transfer/testdata/mem0_get_all.json")
	require.Contains(t, out, "acme/user:alex: 2 beliefs, 0 revision events")
	require.Contains(t, out, "acme/user:alice: 2 beliefs")
	require.Contains(t, out, "2 consolidation passes queued")
	require.Zero(t, c.llm.ChatCount())
	var bs []memory.Belief
	require.NoError(t, json.Unmarshal([]byte(c.mustRunOK("list", "--scope", "acme/user:alex", "--json")), &bs))
	require.Len(t, bs, 2)
	require.Equal(t, memory.OriginImported, bs[0].Origin)
	require.Equal(t, "food", bs[0].Attribute)
	require.Equal(t, time.Date(2024, 7, 1, 12, 0, 0, 0, time.UTC), bs[1].ValidFrom)
	// mem0's memories are about the user, whom the import registers.
	var es []memory.Entity
	require.NoError(t, json.Unmarshal([]byte(c.mustRunOK("entities", "--scope", "acme/user:alex", "--json")), &es))
	require.Len(t, es, 1)
	require.Equal(t, "user", es[0].Key)
	require.Equal(t, 2, es[0].CurrentBeliefs)
}

// A mem0 memory holding a secret is redacted on its way in, and the import says so.
func TestImportMem0Redacts(t *testing.T) {
	t.Parallel()
	c := newAPICLI(t)
	file := filepath.Join(t.TempDir(), "mem0.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"results": [{"id": "m1", "user_id": "sam",
		"memory": "Sam's card is 4111 1111 1111 1111 and Sam lives in Porto",
		"created_at": "2024-07-01T12:00:00Z", "updated_at": "2024-07-01T12:00:00Z"}]}`), 0o600))
	out := c.mustRunOK("import", "--from", "mem0", file)
	require.Contains(t, out, "user:sam: 1 belief")
	require.Contains(t, out, "; redacted 1 (card 1)")
	var bs []memory.Belief
	require.NoError(t, json.Unmarshal([]byte(c.mustRunOK("list", "--scope", "user:sam", "--json")), &bs))
	require.Len(t, bs, 1)
	require.Equal(t, "Sam's card is [redacted card number] and Sam lives in Porto", bs[0].Statement)
	for _, req := range c.llm.Requests() {
		require.NotContains(t, strings.Join(req.Inputs, "\n"), "4111", "what is embedded is redacted")
	}
}

// TestImportMem0Faithful: a fixed scope takes mem0's v3 get_all, whose memories name no
// user; the agent's memories are about the assistant, an entity of their own; an
// expired memory is history, not current.
func TestImportMem0Faithful(t *testing.T) {
	t.Parallel()
	c := newAPICLI(t)
	out := c.mustRunOK("import", "--from", "mem0", "--scope-template", "user:alex", "../../transfer/testdata/mem0_v3_get_all.json")
	require.Contains(t, out, "user:alex: 2 beliefs")

	c.mustRunOK("import", "--from", "mem0", "--scope-template", "app:{app_id}", "../../transfer/testdata/mem0_ids.json")
	var bs []memory.Belief
	require.NoError(t, json.Unmarshal([]byte(c.mustRunOK("list", "--scope", "app:globex", "--json")), &bs))
	require.Len(t, bs, 3, "the expired memory is not current")
	for _, b := range bs {
		require.NotEqual(t, "Is in Paris for the week", b.Statement)
	}
	var es []memory.Entity
	require.NoError(t, json.Unmarshal([]byte(c.mustRunOK("entities", "--scope", "app:globex", "--json")), &es))
	current := map[string]int{}
	for _, e := range es {
		current[e.Key] = e.CurrentBeliefs
	}
	require.Equal(t, map[string]int{"assistant": 2, "user": 1}, current, "the assistant's answers in Spanish, not the user")

	// An id that would make levels of the scope is refused with its line.
	file := filepath.Join(t.TempDir(), "mem0.json")
	require.NoError(t, os.WriteFile(file, []byte("[\n{\"memory\": \"x\", \"user_id\": \"../../etc\", \"created_at\": \"2024-01-01T00:00:00Z\"}]"), 0o600))
	_, stderr, code := c.run("import", "--from", "mem0", file)
	require.NotZero(t, code)
	require.Contains(t, stderr, `line 2: mem0 memory without an id: user_id "../../etc" is not one level of a scope`)
}
