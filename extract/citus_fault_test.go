//go:build citus

package extract_test

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/extract"
	"github.com/credohq/credo/internal/dbtest"
	"github.com/credohq/credo/llm/llmtest"
	"github.com/credohq/credo/pipelinetest"
	"github.com/credohq/credo/transcript"
)

// TestCitusNodeFailure: a worker node stops during an import. Transcripts of its scopes
// are refused with a clear error and leave nothing behind; those of the other node's
// scopes are enqueued and extracted; the jobs of the stopped node's scopes fail with an
// error that names the node and are retried, their episodes still pending. Once the node
// is back, every episode is applied, once.
//
// It stops a node of the shared test cluster, so `make test-citus` runs it alone, after
// the other Citus tests.
func TestCitusNodeFailure(t *testing.T) {
	dbtest.RequireCitus(t)
	ctx := context.Background()
	// Retries every 10 ms for as long as the node is down, a few seconds.
	p := pipelinetest.New(t, &pipelinetest.Options{MaxAttempts: 10_000})
	said := map[string]string{"I live in Quito.": "User lives in Quito", "I live in Lisbon.": "User lives in Lisbon",
		"I work at Acme.": "User works at Acme", "I work at Initech.": "User works at Initech"}
	for text, statement := range said {
		p.LLM.OnPrompt(text, llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: statement, Attribute: strings.Fields(statement)[1]})})
	}
	// On the live node, a revision: the write paths of a supersession need no other node.
	p.LLM.OnPrompt("I moved to Porto.", llmtest.Reply{Content: pipelinetest.Answer(pipelinetest.Fact{Statement: "User lives in Porto", Attribute: "lives",
		Resolves: &pipelinetest.Resolves{Index: 0, Action: "supersede", Reason: "temporal"}})})

	// One scope on each worker node, each with what it said before.
	down, up := scopesOnTwoNodes(t, p)
	p.Enqueue(t, pipelinetest.T(down.scope, "c1", "2026-02-01T10:00:00Z", "I live in Quito."),
		pipelinetest.T(up.scope, "c1", "2026-02-01T10:00:00Z", "I live in Lisbon."))
	p.Drain(t)

	// The import goes on while the workers are busy elsewhere: a transcript of the scope
	// whose node is about to stop is enqueued, and waits.
	require.NoError(t, p.Client.Stop(ctx))
	waiting := p.Enqueue(t, pipelinetest.T(down.scope, "c2", "2026-03-01T10:00:00Z", "I work at Acme.")).EpisodeIDs[0]

	citusCluster(t, "stop", down.port)
	t.Cleanup(func() { citusCluster(t, "start", down.port) }) // whatever happens below

	// During the outage, a transcript of the stopped node's scope is refused with an error
	// that names the node, and enqueues nothing; another node's scope goes on.
	jobsBefore := countJobs(t, p)
	err := pgx.BeginFunc(ctx, p.Schema.Pool, func(tx pgx.Tx) error {
		_, err := extract.Enqueue(ctx, tx, p.Client, []transcript.Transcript{pipelinetest.T(down.scope, "c3", "2026-03-02T10:00:00Z", "I work at Initech.")}, time.Now(), nil)
		return err
	})
	require.Error(t, err)
	require.Contains(t, err.Error(), strconv.Itoa(down.port), "the error names the node that does not answer")
	require.Equal(t, jobsBefore, countJobs(t, p), "nothing was enqueued")
	live := p.Enqueue(t, pipelinetest.T(up.scope, "c2", "2026-03-01T10:00:00Z", "I moved to Porto.")).EpisodeIDs[0]

	// The workers start: the live node's scope is extracted; the stopped node's job fails,
	// names the node, and is retried.
	client := p.AddClient(t)
	require.Eventually(t, func() bool { return episodeState(t, p, up.scope, live) == "applied" },
		30*time.Second, 20*time.Millisecond, "the live node's scope is extracted")
	var failed *rivertype.JobRow
	require.Eventually(t, func() bool {
		res, err := client.JobList(ctx, river.NewJobListParams().Kinds(extract.Args{}.Kind()).
			States(rivertype.JobStateAvailable, rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled))
		require.NoError(t, err)
		for _, j := range res.Jobs {
			if len(j.Errors) >= 2 {
				failed = j
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "the stopped node's job fails and is retried")
	require.Contains(t, failed.Errors[len(failed.Errors)-1].Error, strconv.Itoa(down.port), "the job's error names the node")
	require.Equal(t, 3, p.LLM.ChatCount(), "no model call for the stopped node's episode")

	// The node is back, its episode still pending: the same job, retried, applies it once.
	require.NoError(t, client.Stop(ctx))
	citusCluster(t, "start", down.port)
	require.Equal(t, "pending", episodeState(t, p, down.scope, waiting))
	p.AddClient(t)
	p.Drain(t)
	job, err := client.JobGet(ctx, failed.ID)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateCompleted, job.State)
	require.Equal(t, "applied", episodeState(t, p, down.scope, waiting))
	require.Equal(t, 4, p.LLM.ChatCount(), "the waiting episode was extracted once")
	for scope, want := range map[string][]string{down.scope: {"User lives in Quito", "User works at Acme"}, up.scope: {"User lives in Lisbon", "User lives in Porto"}} {
		all, err := p.Store.All(ctx, scope)
		require.NoError(t, err)
		var got []string
		for _, b := range all {
			got = append(got, b.Statement)
		}
		require.ElementsMatch(t, want, got, "scope %s: each episode applied once, nothing lost", scope)
	}
	current, err := p.Store.Current(ctx, up.scope)
	require.NoError(t, err)
	require.Len(t, current, 1)
	require.Equal(t, "User lives in Porto", current[0].Statement, "the live node's scope revised its belief during the outage")
}

// placed is a scope and the port of the worker node holding its shards.
type placed struct {
	scope string
	port  int
}

// scopesOnTwoNodes finds two scopes whose shards lie on two different worker nodes.
func scopesOnTwoNodes(t *testing.T, p *pipelinetest.Pipeline) (placed, placed) {
	t.Helper()
	var found []placed
	for i := 0; len(found) < 2 && i < 100; i++ {
		scope := fmt.Sprintf("user:%d", i)
		var port int
		require.NoError(t, p.Schema.Pool.QueryRow(context.Background(), `SELECT nodeport FROM citus_shards
			WHERE shardid = get_shard_id_for_distribution_column($1::regclass, $2::text)`, p.Schema.Name+".episode", scope).Scan(&port))
		if len(found) == 0 || found[0].port != port {
			found = append(found, placed{scope: scope, port: port})
		}
	}
	require.Len(t, found, 2, "the shards are on two worker nodes")
	return found[0], found[1]
}

// citusCluster runs scripts/citus-cluster verb port: stops or starts a node.
func citusCluster(t *testing.T, verb string, port int) {
	t.Helper()
	out, err := exec.Command("../scripts/citus-cluster", verb, strconv.Itoa(port)).CombinedOutput()
	require.NoError(t, err, "scripts/citus-cluster %s %d: %s", verb, port, strings.TrimSpace(string(out)))
}

// countJobs counts the extraction jobs on the coordinator, where River's queue lives.
func countJobs(t *testing.T, p *pipelinetest.Pipeline) int {
	t.Helper()
	res, err := p.Client.JobList(context.Background(), river.NewJobListParams().Kinds(extract.Args{}.Kind()).First(1000))
	require.NoError(t, err)
	return len(res.Jobs)
}

// episodeState is the state of episode id of scope, read on the scope's shard alone: a
// read by id only would need every node.
func episodeState(t *testing.T, p *pipelinetest.Pipeline, scope string, id int64) string {
	t.Helper()
	var state string
	require.NoError(t, p.Schema.Pool.QueryRow(context.Background(), "SELECT state FROM episode WHERE scope = $1 AND id = $2", scope, id).Scan(&state))
	return state
}
