package consolidate

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/credohq/credo/internal/riverjobs"
	"github.com/credohq/credo/memory"
)

// IndexArgs is the job that builds or drops a scope's own vector index
// (memory.Store.IndexScope), enqueued by a consolidation pass that finds it due.
type IndexArgs struct {
	Scope string `json:"scope"`
}

// Kind is the River job kind.
func (IndexArgs) Kind() string { return "credo.index_scope" }

// InsertOpts puts the job on the consolidation queue, once per scope while it waits or
// runs.
func (IndexArgs) InsertOpts() river.InsertOpts {
	return riverjobs.OnceOnQueue(Queue)
}

// IndexTimeout bounds one index build: an HNSW build over a large scope takes minutes
// (BENCHMARKS.md), more than JOB_TIMEOUT allows an extraction.
const IndexTimeout = 2 * time.Hour

// IndexWorker is the River worker of IndexArgs.
type IndexWorker struct {
	river.WorkerDefaults[IndexArgs]
	store *memory.Store
	model string
	log   *slog.Logger
}

// NewIndexWorker returns the worker that indexes scopes for model; logger may be nil.
func NewIndexWorker(store *memory.Store, model string, logger *slog.Logger) *IndexWorker {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &IndexWorker{store: store, model: model, log: logger}
}

// Timeout is IndexTimeout, whatever JOB_TIMEOUT says.
func (w *IndexWorker) Timeout(*river.Job[IndexArgs]) time.Duration { return IndexTimeout }

// Work builds or drops the scope's index.
func (w *IndexWorker) Work(ctx context.Context, job *river.Job[IndexArgs]) error {
	if job.Args.Scope == "" {
		return river.JobCancel(errNoScope)
	}
	start := time.Now()
	res, err := w.store.IndexScope(ctx, job.Args.Scope, w.model)
	if err != nil {
		return err
	}
	if len(res.Created)+len(res.Dropped) > 0 {
		w.log.InfoContext(ctx, "scope index", "scope", job.Args.Scope, "created", res.Created, "dropped", res.Dropped,
			"rows", res.Rows, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// indexScope has the scope's own index built or dropped when due: by a job of its own
// when the pass runs in a River job, as a build may outlast the pass's timeout; in
// process otherwise (beliefs consolidate). Until the index exists, reads scan the scope
// exactly.
func (w *Worker) indexScope(ctx context.Context, scope string) error {
	due, err := w.cfg.Store.ScopeIndexDue(ctx, scope, w.cfg.EmbedModel)
	if err != nil || !due {
		return err
	}
	if client, err := river.ClientFromContextSafely[pgx.Tx](ctx); err == nil {
		// Under the scope's lock: a purge of the scope that committed since the count
		// leaves no job naming it.
		return w.cfg.Store.InTx(ctx, func(tx pgx.Tx) error {
			if erased, err := memory.ScopeErasedTx(ctx, tx, scope); err != nil || erased {
				return err
			}
			if _, err := client.InsertTx(ctx, tx, IndexArgs{Scope: scope}, nil); err != nil {
				return fmt.Errorf("enqueue the index of %q: %w", scope, err)
			}
			return nil
		})
	}
	_, err = w.cfg.Store.IndexScope(ctx, scope, w.cfg.EmbedModel)
	return err
}

// DropIndexesArgs is the job that drops the scope indexes left to drop
// (memory.Store.DropErasedIndexes), enqueued by a sweep that finds some.
type DropIndexesArgs struct{}

// Kind is the River job kind.
func (DropIndexesArgs) Kind() string { return "credo.drop_scope_indexes" }

// InsertOpts puts the job on the consolidation queue, once while it waits or runs.
func (DropIndexesArgs) InsertOpts() river.InsertOpts {
	return riverjobs.OnceOnQueue(Queue)
}

// DropIndexesWorker is the River worker of DropIndexesArgs.
type DropIndexesWorker struct {
	river.WorkerDefaults[DropIndexesArgs]
	store *memory.Store
	log   *slog.Logger
}

// NewDropIndexesWorker returns the worker that drops erased scopes' indexes; logger may
// be nil.
func NewDropIndexesWorker(store *memory.Store, logger *slog.Logger) *DropIndexesWorker {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &DropIndexesWorker{store: store, log: logger}
}

// Timeout is IndexTimeout: a drop waits for any index build on the table.
func (w *DropIndexesWorker) Timeout(*river.Job[DropIndexesArgs]) time.Duration { return IndexTimeout }

// Work drops the indexes left to drop; one that a build still holds is left to it.
func (w *DropIndexesWorker) Work(ctx context.Context, _ *river.Job[DropIndexesArgs]) error {
	res, err := w.store.DropErasedIndexes(ctx)
	if res.Dropped > 0 || res.Left > 0 {
		w.log.InfoContext(ctx, "erased scope indexes", "dropped", res.Dropped, "left", res.Left)
	}
	return err
}
