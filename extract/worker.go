// Package extract is the extraction job: for each episode of a scope, oldest first, it
// chooses candidate beliefs, renders the prompt, calls the LLM once, validates the
// answer, embeds the new statements in one batch and applies everything through
// memory.Apply.
package extract

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/credohq/credo/internal/riverjobs"
	"github.com/credohq/credo/internal/stage"
	"github.com/credohq/credo/internal/tracing"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
	"github.com/credohq/credo/redact"
)

// Observer receives what each extraction did.
type Observer interface {
	Extracted(r Report)
}

// Report describes one finished or failed attempt at one episode.
type Report struct {
	EpisodeID  int64
	Scope      string
	Candidates int
	Examples   int
	// PromptChars is the size of the last prompt sent.
	PromptChars int
	// ChatCalls counts every chat call, answers asked again and second opinions
	// included; Verifications counts the second opinions' alone.
	ChatCalls     int
	Verifications int
	EmbedCalls    int
	// StaleRounds counts extractions done again because another writer revised the
	// scope during the LLM call (the safety net of memory.ErrStale).
	StaleRounds int
	// Segments counts the segments of a transcript too long for one prompt that were
	// applied; 0 when it fit in one.
	Segments int
	// Refits are the causes (llm.ContextTooLong, ContextRefused, ContextCut) of prompts
	// that did not fit the model's window after all and were made again smaller.
	Refits []string
	Usage  llm.Usage
	// Redacted counts, by kind, the secrets replaced in the model's facts before they
	// were stored.
	Redacted redact.Counts
	// TranscriptRedacted counts, by kind, the secrets replaced in the episode's
	// transcript when it was enqueued: set once, when the episode is done.
	TranscriptRedacted map[string]int
	Outcomes           []memory.Outcome
	Err                error
	Duration           time.Duration
	ChatDuration       time.Duration
}

// Worker is the River worker of Args.
type Worker struct {
	river.WorkerDefaults[Args]
	cfg     Config
	prompts *prompts.Prompts
	log     *slog.Logger
}

// NewWorker checks cfg and returns a worker.
func NewWorker(cfg Config) (*Worker, error) {
	cfg, p, err := stage.Setup(cfg, Config.withDefaults, Config.validate, nil)
	if err != nil {
		return nil, err
	}
	return &Worker{cfg: cfg, prompts: p, log: cfg.Logger}, nil
}

// Timeout is the job's budget: River's JobTimeout is for other jobs, and would cut a
// backlog short.
func (w *Worker) Timeout(*river.Job[Args]) time.Duration {
	if w.cfg.JobBudget > 0 {
		return w.cfg.JobBudget
	}
	return -1
}

// Work extracts the scope's pending episodes one at a time, oldest first, each in its
// own short transaction, so that a crash loses nothing and applies nothing twice. After
// each Batch episodes, if another job waits for a worker, and whenever the budget is
// spent, the job goes to the back of the queue (a snooze, which costs no attempt) so
// that other scopes progress. It completes only when, under the scope's queue lock, no
// pending episode is left.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	start := time.Now()
	for n := 0; ; n++ {
		if ctx.Err() != nil {
			return river.JobSnooze(0) // stopping: the job runs again at once elsewhere
		}
		if n > 0 && !w.withinBudget(start) {
			return w.yield(ctx, job)
		}
		if n > 0 && n%w.cfg.Batch == 0 {
			// A turn is over: give way if another job waits for a worker; alone, go on,
			// as a snoozed job would wait for the next fetch for nothing.
			client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
			if err != nil {
				return fmt.Errorf("look for waiting jobs: %w", err)
			}
			waiting, err := othersWaiting(ctx, client)
			if err != nil {
				return err
			}
			if waiting {
				return w.yield(ctx, job)
			}
		}
		st, err := w.read(ctx, job.Args.Scope, nil)
		if err != nil && !errors.Is(err, errEpisode) {
			return err
		}
		if st.ep == nil {
			done, err := w.finish(ctx, job)
			if done || err != nil {
				return err
			}
			continue
		}
		if err := w.work(ctx, st, err); err != nil {
			return err
		}
	}
}

// withinBudget says whether the job may start another episode: one that could end
// after the job's budget would let River take the job for a crashed one.
func (w *Worker) withinBudget(start time.Time) bool {
	return w.cfg.JobBudget <= 0 || time.Since(start)+w.cfg.EpisodeTimeout <= w.cfg.JobBudget
}

// othersWaiting says whether another job of the extraction queue is ready and waits
// for a worker: available, and due (River fetches no job before its scheduled_at).
func othersWaiting(ctx context.Context, jobs riverjobs.Lister) (bool, error) {
	res, err := jobs.JobList(ctx, river.NewJobListParams().Queues(Queue).States(rivertype.JobStateAvailable).
		OrderBy(river.JobListOrderByScheduledAt, river.SortOrderAsc).First(1))
	if err != nil {
		return false, fmt.Errorf("look for waiting jobs: %w", err)
	}
	return len(res.Jobs) > 0 && !res.Jobs[0].ScheduledAt.After(time.Now()), nil
}

// yield ends the job's turn: a snooze to the back of the queue when its scope has more
// pending episodes, completion otherwise.
func (w *Worker) yield(ctx context.Context, job *river.Job[Args]) error {
	done, err := w.finish(ctx, job)
	if err != nil || done {
		return err
	}
	return river.JobSnooze(0)
}

// finish completes the job if, under the scope's queue lock, no pending episode is
// left; see Enqueue. It reports whether it did. The job of a scope a purge erased
// meanwhile leaves no row.
func (w *Worker) finish(ctx context.Context, job *river.Job[Args]) (bool, error) {
	done := false
	err := w.cfg.Store.InTx(ctx, func(tx pgx.Tx) error {
		if err := lockQueues(ctx, tx, []string{job.Args.Scope}); err != nil {
			return err
		}
		// A statement of its own, after the lock: it sees every episode whose enqueue
		// committed before.
		more, err := memory.HasPendingEpisodesTx(ctx, tx, job.Args.Scope)
		if err != nil {
			return err
		}
		if more {
			return nil
		}
		_, err = river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		if err != nil && !errors.Is(err, rivertype.ErrNotFound) { // not found: deleted, nothing to complete
			return fmt.Errorf("complete job %d: %w", job.ID, err)
		}
		// A scope erased while the job ran keeps no row naming it.
		if _, err := w.cfg.Store.DropJobOfErasedScope(ctx, tx, job.ID, job.Args.Scope); err != nil {
			return err
		}
		done = true
		return nil
	})
	return done, err
}

// work makes one attempt at the episode of st (readErr is set when it could not even
// be read) and records its failure. It returns an error only to end the job: a snooze
// until the episode's next attempt, or River's own retry when the database fails.
func (w *Worker) work(ctx context.Context, st *state, readErr error) error {
	start := time.Now()
	ep := st.ep
	rep := Report{EpisodeID: ep.ID, Scope: ep.Scope}
	ctx, span := tracing.StartFrom(ctx, "extract.episode", ep.TraceParent, tracing.EpisodeKey.Int64(ep.ID), tracing.AttemptKey.Int(ep.Attempts+1))
	tracing.SetScope(span, ep.Scope)
	err := readErr
	defer func() { tracing.End(span, err) }()
	if err == nil {
		epCtx, cancel := ctx, context.CancelFunc(func() {})
		if w.cfg.EpisodeTimeout > 0 {
			epCtx, cancel = context.WithTimeout(ctx, w.cfg.EpisodeTimeout)
		}
		err = w.extractEpisode(epCtx, st, &rep)
		cancel()
		if err == nil {
			rep.TranscriptRedacted = ep.Redactions
		}
	}
	rep.Err, rep.Duration = err, time.Since(start)
	if w.cfg.Observer != nil {
		w.cfg.Observer.Extracted(rep)
	}
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		// The worker is stopping, or the job's budget ran out: not the episode's
		// fault. The job runs again at once, here or on another worker.
		return river.JobSnooze(0)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("the episode took longer than JOB_TIMEOUT (%s): %w", w.cfg.EpisodeTimeout, err)
	}
	switch {
	case llm.IsConfigError(err):
		err = fmt.Errorf("the model server refused the request: check OPENAI_API_KEY, CHAT_MODEL and EMBED_MODEL (`ollama pull` them on Ollama): %w", err)
	case llm.IsContextLength(err):
		err = fmt.Errorf("the transcript could not be fitted to the model's window (MODEL_CONTEXT): %w", err)
	}
	attempt := ep.Attempts + 1
	// Malformed output, a request the model server refuses (a key, a model, a prompt it
	// will not take), a window too small, and invalid revisions do not improve by
	// waiting: the episode fails now. Anything else (LLM down, timeouts, database) is
	// tried again later.
	permanent := llm.IsMalformed(err) || llm.IsRefused(err) || llm.IsContextLength(err) || errors.Is(err, errWindow) ||
		errors.Is(err, memory.ErrInvalid) || errors.Is(err, memory.ErrScope) || errors.Is(err, errEpisode)
	final := permanent || attempt >= w.cfg.MaxAttempts
	// The warning names the kind of failure, never the model's or the user's words (a
	// purge could not reach a log); the whole error is at debug and in last_error.
	w.log.WarnContext(ctx, "extraction failed", "episode", ep.ID, "scope", ep.Scope,
		"attempt", attempt, "final", final, "error", llm.LogKind(err, "see the episode's last_error"))
	w.log.DebugContext(ctx, "extraction failed", "episode", ep.ID, "error", err)
	if rerr := w.recordFailure(ctx, ep.Scope, ep.ID, attempt, err, final); rerr != nil {
		return rerr
	}
	if final {
		return nil
	}
	retryAt := w.cfg.RetryPolicy.NextRetry(&rivertype.JobRow{Attempt: attempt, Errors: make([]rivertype.AttemptError, attempt-1)})
	return river.JobSnooze(max(0, time.Until(retryAt)))
}

func (w *Worker) recordFailure(ctx context.Context, scope string, id int64, attempt int, cause error, final bool) error {
	return w.cfg.Store.RecordEpisodeFailure(ctx, memory.EpisodeFailure{ID: id, Scope: scope, Attempt: attempt, Err: cause, Final: final})
}
