// Package reembed embeds again what memory holds without a vector of the configured
// embedding model: after EMBED_MODEL changes (a better model, or another server), every
// belief, revision event and dismissed review item keeps its old model's vector until
// this gives it one of the new. Until then reads still find such beliefs, unranked
// (memory.Store.Recall), and a read or an extraction of the scope embeds up to 64 of
// them in the embedding call it makes anyway; this finishes the rest in the background,
// and `beliefs reembed` now.
package reembed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"github.com/credohq/credo/internal/riverjobs"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
)

// Queue is the River queue of re-embedding jobs: its own, with one worker, so that a
// re-embedding never holds a slot of the extraction's LLM-bound jobs.
const Queue = "reembed"

// DefaultInterval is how often the leader enqueues a re-embedding job; one that finds
// nothing to do costs two index probes.
const DefaultInterval = time.Minute

// DefaultBatch is how many texts one embedding call carries.
const DefaultBatch = 128

// Args is the re-embedding job.
type Args struct{}

// Kind is the River job kind.
func (Args) Kind() string { return "credo.reembed" }

// InsertOpts puts the job on its queue, once while it waits or runs.
func (Args) InsertOpts() river.InsertOpts {
	return riverjobs.OnceOnQueue(Queue)
}

// PeriodicJob schedules a re-embedding every interval, and once at start, on the
// elected leader.
func PeriodicJob(interval time.Duration) *river.PeriodicJob {
	return riverjobs.Periodic(Args{}, interval, DefaultInterval)
}

// Config configures a Reembedder.
type Config struct {
	Store *memory.Store
	Embed llm.Embedder
	// Model is the configured embedding model (EMBED_MODEL), the one Embed answers with.
	Model string
	// Batch is how many texts one embedding call carries (DefaultBatch when zero).
	Batch  int
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	c.Batch = cmp.Or(c.Batch, DefaultBatch)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// ErrConfig is returned for an incomplete Config.
var ErrConfig = errors.New("reembed: invalid config")

func (c Config) validate() error {
	switch {
	case c.Store == nil:
		return fmt.Errorf("%w: Store is required", ErrConfig)
	case c.Embed == nil:
		return fmt.Errorf("%w: Embed is required", ErrConfig)
	case c.Model == "":
		return fmt.Errorf("%w: Model is required", ErrConfig)
	case c.Batch < 1 || c.Batch > 2048:
		return fmt.Errorf("%w: Batch %d is outside 1..2048", ErrConfig, c.Batch)
	}
	return nil
}

// Reembedder embeds rows again with the configured model.
type Reembedder struct {
	cfg Config
}

// New returns a Reembedder.
func New(cfg Config) (*Reembedder, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Reembedder{cfg: cfg}, nil
}

// Report is what a run re-embedded.
type Report struct {
	Model string `json:"model"`
	// Rows counts the beliefs, revision events and dismissed review items given a
	// vector of Model.
	Rows int `json:"rows"`
	// Calls is the embedding calls made.
	Calls int `json:"embedding_calls"`
	// More says rows were left when the run stopped at its deadline.
	More bool `json:"more"`
}

// Run embeds again, batch after batch, the rows of scope (every scope when empty)
// without a vector of the model, until none is left or until is near (zero: no
// deadline). Each batch commits on its own, so a run cut short keeps what it did and
// the next goes on from there. A row a writer holds is skipped and embedded by a later
// batch; a batch that made no progress ends the run, with More set.
func (r *Reembedder) Run(ctx context.Context, scope string, until time.Time) (*Report, error) {
	rep := &Report{Model: r.cfg.Model}
	var slowest time.Duration
	for {
		if !until.IsZero() && time.Until(until) < 2*slowest {
			rep.More = true
			return rep, nil
		}
		start := time.Now()
		var (
			items []memory.Unembedded
			err   error
		)
		if scope == "" {
			items, err = r.cfg.Store.Reembeddable(ctx, r.cfg.Model, r.cfg.Batch)
		} else {
			items, err = r.cfg.Store.Unembedded(ctx, scope, r.cfg.Model, r.cfg.Batch)
		}
		if err != nil {
			return rep, err
		}
		if len(items) == 0 {
			return rep, r.dismissals(ctx, scope, rep)
		}
		stored, err := r.batch(ctx, items)
		rep.Calls++
		if err != nil {
			return rep, err
		}
		rep.Rows += stored
		if stored == 0 {
			rep.More = true
			return rep, nil
		}
		slowest = max(slowest, time.Since(start))
	}
}

// dismissalScopesPerRun bounds the scopes whose dismissals one run embeds; the next run
// goes on with the rest.
const dismissalScopesPerRun = 1000

// dismissals embeds the dismissed review items of scope (every scope when empty) without
// a vector of the model, after the beliefs and events: an operator dismisses items one
// by one, so they are few, and each scope's are read and written on its own.
func (r *Reembedder) dismissals(ctx context.Context, scope string, rep *Report) error {
	scopes := []string{scope}
	if scope == "" {
		var err error
		if scopes, err = r.cfg.Store.DismissalScopes(ctx, r.cfg.Model, dismissalScopesPerRun); err != nil {
			return err
		}
	}
	for _, sc := range scopes {
		items, err := r.cfg.Store.UnembeddedDismissals(ctx, sc, r.cfg.Model)
		if err != nil {
			return err
		}
		for chunk := range slices.Chunk(items, r.cfg.Batch) {
			vecs, err := r.embed(ctx, chunk)
			if err != nil {
				return err
			}
			stored, err := r.cfg.Store.SetDismissalEmbeddings(ctx, sc, r.cfg.Model, chunk, vecs)
			rep.Calls++
			rep.Rows += stored
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// batch embeds items in one call and stores their vectors, returning how many it stored.
func (r *Reembedder) batch(ctx context.Context, items []memory.Unembedded) (int, error) {
	vecs, err := r.embed(ctx, items)
	if err != nil {
		return 0, err
	}
	return r.cfg.Store.SetEmbeddings(ctx, r.cfg.Model, items, vecs)
}

// embed embeds the texts of items in one call, and registers the model's dimension.
func (r *Reembedder) embed(ctx context.Context, items []memory.Unembedded) ([][]float32, error) {
	texts := make([]string, len(items))
	for i, u := range items {
		texts[i] = u.Text
	}
	res, err := r.cfg.Embed.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("re-embed %d rows: %w", len(items), err)
	}
	if len(res.Vectors) != len(items) {
		return nil, fmt.Errorf("re-embed %d rows: the model answered %d vectors", len(items), len(res.Vectors))
	}
	if err := r.cfg.Store.EnsureEmbeddingModel(ctx, r.cfg.Model, len(res.Vectors[0])); err != nil {
		return nil, err
	}
	return res.Vectors, nil
}

// Worker is the River worker of Args.
type Worker struct {
	river.WorkerDefaults[Args]
	r *Reembedder
}

// NewWorker returns the re-embedding job's worker.
func NewWorker(cfg Config) (*Worker, error) {
	r, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return &Worker{r: r}, nil
}

// Work re-embeds until nothing is left or the job's time is nearly up; the next
// periodic job goes on from there.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	until, _ := ctx.Deadline()
	start := time.Now()
	rep, err := w.r.Run(ctx, "", until)
	log := w.r.cfg.Logger
	if err != nil {
		log.WarnContext(ctx, "re-embedding failed", "model", rep.Model, "rows", rep.Rows,
			"error", llm.LogKind(err, "see the debug log"))
		log.DebugContext(ctx, "re-embedding failed", "error", err)
		return err
	}
	if rep.Rows > 0 || rep.More {
		log.InfoContext(ctx, "re-embedded", "model", rep.Model, "rows", rep.Rows, "more", rep.More,
			"duration", time.Since(start).Round(time.Millisecond))
	}
	return nil
}
