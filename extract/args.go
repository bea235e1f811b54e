package extract

import (
	"time"

	"github.com/riverqueue/river"

	"github.com/credohq/credo/internal/riverjobs"
)

// Queue is the River queue of extraction jobs.
const Queue = "extract"

// Args is the extraction job of one scope: it works the scope's pending episodes one at
// a time, oldest first. There is at most one such job per scope that is not finished
// (River's unique jobs), so a scope's episodes are never extracted at once, by any
// number of workers or processes, and each is judged against the memory the earlier
// ones left. Jobs name their scope, never transcript text, so that a purge of the
// episodes leaves no text behind in River's tables.
type Args struct {
	Scope string `json:"scope"`
}

// Kind is the River job kind.
func (Args) Kind() string { return "credo.extract_scope" }

// InsertOpts puts extraction jobs on their queue, one per scope while it is not
// finished: a job waiting for its retry still owns its scope. An episode enqueued after
// the scope's job completed gets a new job (see Enqueue for why none is ever left
// without one).
func (Args) InsertOpts() river.InsertOpts {
	return riverjobs.OnceOnQueue(Queue)
}

// EpisodeArgs is the job of one episode that versions before per-scope sequencing
// inserted. Its worker only hands the episode to its scope's job, so that jobs left
// in the queue by an upgrade are not lost.
type EpisodeArgs struct {
	EpisodeID int64 `json:"episode_id"`
}

// Kind is the River job kind.
func (EpisodeArgs) Kind() string { return "credo.extract" }

// InsertOpts puts the job on the extraction queue.
func (EpisodeArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: Queue} }

// ReconcileArgs is the periodic safety net that gives every scope with pending episodes
// a job (see Reconcile).
type ReconcileArgs struct{}

// Kind is the River job kind.
func (ReconcileArgs) Kind() string { return "credo.extract_reconcile" }

// InsertOpts puts the job on the extraction queue, once while it waits.
func (ReconcileArgs) InsertOpts() river.InsertOpts {
	return riverjobs.OnceOnQueue(Queue)
}

// DefaultReconcileInterval is how often the leader runs Reconcile.
const DefaultReconcileInterval = 5 * time.Minute

// ReconcilePeriodicJob schedules Reconcile every interval and once at start; River runs
// it on the elected leader only.
func ReconcilePeriodicJob(interval time.Duration) *river.PeriodicJob {
	return riverjobs.Periodic(ReconcileArgs{}, interval, DefaultReconcileInterval)
}
