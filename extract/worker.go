// Package extract is the extraction job: for one episode it chooses candidate beliefs,
// renders the prompt, calls the LLM once, validates the answer, embeds the new
// statements in one batch and applies everything through memory.Apply, completing the
// River job in the same transaction.
package extract

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/credohq/credo/learning"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
)

// maxPending bounds the unembedded beliefs and events one job embeds for its scope.
const maxPending = 64

// Queue is the River queue of extraction jobs.
const Queue = "extract"

// Defaults of Config.
const (
	DefaultMaxCandidates    = 24
	DefaultMalformedRetries = 2
)

// Args is the extraction job of one episode. Jobs carry ids, never transcript text, so
// that a purge of the episode leaves nothing behind in River's tables.
type Args struct {
	EpisodeID int64 `json:"episode_id"`
}

// Kind is the River job kind.
func (Args) Kind() string { return "credo.extract" }

// InsertOpts puts extraction jobs on their queue.
func (Args) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: Queue} }

// Config configures a Worker.
type Config struct {
	Store *memory.Store
	Chat  llm.Chatter
	Embed llm.Embedder
	// EmbedModel is the name vectors are stored under.
	EmbedModel string
	// MaxCandidates (K) bounds the beliefs shown to the LLM, so that the prompt does not
	// grow with memory.
	MaxCandidates int
	// MalformedRetries is how many times a malformed answer is asked again within one
	// job before the episode fails.
	MalformedRetries int
	Logger           *slog.Logger
	// Examples, when set, retrieves similar past revisions shown as worked examples.
	Examples *learning.Retriever
	// Observer, when set, is told about each extraction (metrics).
	Observer Observer
}

// Observer receives what each extraction did.
type Observer interface {
	Extracted(r Report)
}

// Report describes one finished or failed extraction attempt.
type Report struct {
	EpisodeID    int64
	Scope        string
	Candidates   int
	Examples     int
	PromptChars  int
	ChatCalls    int
	EmbedCalls   int
	Usage        llm.Usage
	Outcomes     []memory.Outcome
	Err          error
	Duration     time.Duration
	ChatDuration time.Duration
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
	if cfg.Store == nil || cfg.Chat == nil || cfg.Embed == nil || cfg.EmbedModel == "" {
		return nil, errors.New("extract: Store, Chat, Embed and EmbedModel are required")
	}
	if cfg.MaxCandidates <= 0 {
		cfg.MaxCandidates = DefaultMaxCandidates
	}
	if cfg.MalformedRetries < 0 {
		cfg.MalformedRetries = 0
	} else if cfg.MalformedRetries == 0 {
		cfg.MalformedRetries = DefaultMalformedRetries
	}
	p, err := prompts.New()
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Worker{cfg: cfg, prompts: p, log: log}, nil
}

// episode is what extraction reads of an episode.
type episode struct {
	ID         int64
	Scope      string
	Messages   []prompts.Message
	OccurredAt time.Time
	State      string
}

// Work processes one episode. Database connections are taken per query and never held
// while the LLM works; the revision and the job's completion commit together.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	start := time.Now()
	rep := Report{EpisodeID: job.Args.EpisodeID}
	err := w.work(ctx, job, &rep)
	rep.Err, rep.Duration = err, time.Since(start)
	if w.cfg.Observer != nil {
		w.cfg.Observer.Extracted(rep)
	}
	if err == nil {
		return nil
	}
	// Malformed output and invalid revisions do not improve by waiting: the episode fails
	// now. Anything else (LLM down, timeouts, database) is retried with River's backoff.
	permanent := llm.IsMalformed(err) || errors.Is(err, memory.ErrInvalid) || errors.Is(err, memory.ErrScope) || errors.Is(err, errNoEpisode)
	final := permanent || job.Attempt >= job.MaxAttempts
	if rerr := w.recordFailure(context.WithoutCancel(ctx), job, err, final); rerr != nil {
		w.log.ErrorContext(ctx, "record episode failure", "episode", job.Args.EpisodeID, "error", rerr)
	}
	w.log.WarnContext(ctx, "extraction failed", "episode", job.Args.EpisodeID, "scope", rep.Scope,
		"attempt", job.Attempt, "final", final, "error", err)
	if permanent {
		return river.JobCancel(err)
	}
	return err
}

var errNoEpisode = errors.New("episode not found")

// maxStaleRounds bounds how many times one job extracts again because another job
// revised the scope while its LLM call ran; past it, River retries the job later.
const maxStaleRounds = 8

// work extracts the episode; when another job of the scope stored a belief this one's
// prompt did not show (memory.ErrStale), it extracts again from what the scope holds
// now, so that concurrent jobs end as if they had run one after the other.
func (w *Worker) work(ctx context.Context, job *river.Job[Args], rep *Report) error {
	for round := 1; ; round++ {
		err := w.extract(ctx, job, rep)
		if !errors.Is(err, memory.ErrStale) || round == maxStaleRounds {
			return err
		}
		w.log.InfoContext(ctx, "scope revised during extraction, extracting again", "episode", job.Args.EpisodeID,
			"scope", rep.Scope, "round", round)
	}
}

func (w *Worker) extract(ctx context.Context, job *river.Job[Args], rep *Report) error {
	st, err := w.read(ctx, job.Args.EpisodeID)
	if err != nil {
		return err
	}
	ep := st.ep
	rep.Scope = ep.Scope
	if ep.State == "applied" {
		// Applied and committed with its job: this is a duplicate job row.
		return nil
	}
	cands, examples, err := w.context(ctx, st, rep)
	if err != nil {
		return err
	}
	rep.Candidates, rep.Examples = len(cands), len(examples)

	pc := make([]prompts.Candidate, len(cands))
	ids := make([]int64, len(cands))
	for i, c := range cands {
		pc[i] = prompts.Candidate{Statement: c.Statement, Attribute: c.Attribute, ValidFrom: c.ValidFrom}
		ids[i] = c.ID
	}
	pe := make([]prompts.Example, len(examples))
	for i, e := range examples {
		pe[i] = prompts.Example{Old: e.Old, Excerpt: e.Excerpt, New: e.New, Action: e.Action, Reason: e.Reason}
	}
	system, user, err := w.prompts.Extraction(prompts.Extraction{
		Scope: ep.Scope, OccurredAt: ep.OccurredAt, Candidates: pc, Examples: pe, Messages: ep.Messages,
	})
	if err != nil {
		return err
	}
	rep.PromptChars = len(system) + len(user)

	chatStart := time.Now()
	facts, err := w.chat(ctx, system, user, len(cands), ep.OccurredAt, rep)
	rep.ChatDuration = time.Since(chatStart)
	if err != nil {
		return err
	}

	if rep.EmbedCalls == 0 {
		if err := w.embed(ctx, facts, cands, rep); err != nil {
			return err
		}
	}
	batch := &memory.Batch{
		Scope: ep.Scope, Origin: memory.RevisionExtraction, EpisodeID: &ep.ID, At: ep.OccurredAt,
		Candidates: ids, Facts: facts, EmbedModel: w.cfg.EmbedModel, Seen: st.seen,
	}
	for _, f := range facts {
		if v := cmp.Or(len(f.Embedding), len(f.EventEmbedding)); v > 0 {
			if err := w.cfg.Store.EnsureEmbeddingModel(ctx, w.cfg.EmbedModel, v); err != nil {
				return err
			}
			break
		}
	}

	return pgx.BeginFunc(ctx, w.cfg.Store.Pool(), func(tx pgx.Tx) error {
		// Marking the episode first locks its row: a second job of the same episode (a
		// rescued one whose first run is still finishing) waits here, then finds it
		// applied and applies nothing.
		tag, err := tx.Exec(ctx, `UPDATE episode SET state = 'applied', processed_at = now(), attempts = $2,
			last_error = NULL WHERE id = $1 AND state <> 'applied'`, ep.ID, job.Attempt)
		if err != nil {
			return fmt.Errorf("mark episode %d applied: %w", ep.ID, err)
		}
		if tag.RowsAffected() == 1 {
			res, err := w.cfg.Store.ApplyTx(ctx, tx, batch)
			if err != nil {
				return err
			}
			rep.Outcomes = res.All()
		}
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
			return fmt.Errorf("complete job %d: %w", job.ID, err)
		}
		w.log.InfoContext(ctx, "extracted", "episode", ep.ID, "scope", ep.Scope, "candidates", len(cands),
			"examples", len(examples), "facts", len(facts), "prompt_tokens", rep.Usage.PromptTokens, "completion_tokens", rep.Usage.CompletionTokens)
		return nil
	})
}

// state is what a job reads before its first model call.
type state struct {
	ep *episode
	// seen is read before the candidates, so that nothing stored after the prompt was
	// chosen can go unnoticed when the answer is applied.
	seen *memory.Snapshot
	// current is up to K+1 current beliefs: when there are no more than K, they are
	// the candidates.
	current      []memory.Belief
	withExamples bool
	// pending is what earlier jobs stored without vectors, read when this job embeds
	// its transcript.
	pending []memory.Unembedded
}

// embedsTranscript says whether the job embeds its transcript before the chat: to find
// candidates among more than K beliefs, or examples.
func (st *state) embedsTranscript(k int) bool { return len(st.current) > k || st.withExamples }

// read makes the job's first reads on one connection, released before any model call.
func (w *Worker) read(ctx context.Context, id int64) (*state, error) {
	conn, err := w.cfg.Store.Pool().Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	store := w.cfg.Store.On(conn)

	st := &state{ep: &episode{ID: id}}
	var raw []byte
	err = conn.QueryRow(ctx, "SELECT scope, messages, occurred_at, state FROM episode WHERE id = $1", id).
		Scan(&st.ep.Scope, &raw, &st.ep.OccurredAt, &st.ep.State)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: %d (purged?)", errNoEpisode, id)
	}
	if err != nil {
		return nil, fmt.Errorf("load episode %d: %w", id, err)
	}
	if err := json.Unmarshal(raw, &st.ep.Messages); err != nil {
		return nil, fmt.Errorf("decode episode %d: %w", id, err)
	}
	st.ep.OccurredAt = st.ep.OccurredAt.UTC()
	if st.ep.State == "applied" {
		return st, nil
	}

	scope, k := st.ep.Scope, w.cfg.MaxCandidates
	if st.seen, err = store.Snapshot(ctx, scope); err != nil {
		return nil, err
	}
	if st.current, err = store.CurrentUpTo(ctx, scope, k+1); err != nil {
		return nil, err
	}
	if w.cfg.Examples != nil {
		if st.withExamples, err = w.cfg.Examples.On(conn).Available(ctx, scope, w.cfg.EmbedModel); err != nil {
			return nil, err
		}
	}
	if st.embedsTranscript(k) {
		if st.pending, err = store.Unembedded(ctx, scope, maxPending); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// context chooses what the prompt shows besides the transcript. Candidates: all active
// beliefs when there are no more than K; otherwise the nearest to the transcript by
// embedding, plus other beliefs on the attributes those fill, so that a slot is seen
// whole. Examples: the past revisions nearest to the transcript. The transcript is
// embedded only when one of them needs it.
func (w *Worker) context(ctx context.Context, st *state, rep *Report) ([]memory.Belief, []learning.Example, error) {
	k := w.cfg.MaxCandidates
	if !st.embedsTranscript(k) {
		return st.current, nil, nil
	}
	// This job's one embedding call: the transcript, and what earlier jobs stored
	// without vectors. What this job learns waits for the next call likewise.
	texts := []string{prompts.Transcript(st.ep.Messages)}
	for _, u := range st.pending {
		texts = append(texts, u.Text)
	}
	res, err := w.cfg.Embed.Embed(ctx, texts)
	rep.EmbedCalls++
	if err != nil {
		return nil, nil, fmt.Errorf("embed transcript: %w", err)
	}
	vec := res.Vectors[0]
	if err := w.cfg.Store.EnsureEmbeddingModel(ctx, w.cfg.EmbedModel, len(vec)); err != nil {
		return nil, nil, err
	}

	conn, err := w.cfg.Store.Pool().Acquire(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	store := w.cfg.Store.On(conn)
	scope := st.ep.Scope
	if err := store.SetEmbeddings(ctx, w.cfg.EmbedModel, st.pending, res.Vectors[1:]); err != nil {
		return nil, nil, err
	}
	var examples []learning.Example
	if st.withExamples {
		if examples, err = w.cfg.Examples.On(conn).Similar(ctx, scope, w.cfg.EmbedModel, vec); err != nil {
			return nil, nil, err
		}
	}
	if len(st.current) <= k {
		return st.current, examples, nil
	}

	near, err := store.Nearest(ctx, scope, w.cfg.EmbedModel, vec, k)
	if err != nil {
		return nil, nil, err
	}
	// The least similar third of the nearest make room for the rest of the slots the
	// most similar fill.
	top := near[:min(len(near), max(1, k*2/3))]
	var attrs []string
	ids := make([]int64, 0, len(near))
	for _, b := range top {
		attrs = append(attrs, b.Attribute)
	}
	for _, b := range near {
		ids = append(ids, b.ID)
	}
	more, err := store.ActiveWithAttributes(ctx, scope, attrs, ids, k-len(top))
	if err != nil {
		return nil, nil, err
	}
	return append(near[:min(len(near), k-len(more))], more...), examples, nil
}

// chat asks the LLM once; a malformed answer is asked again, showing the model its
// error, at most MalformedRetries times.
func (w *Worker) chat(ctx context.Context, system, user string, candidates int, occurredAt time.Time, rep *Report) ([]memory.Fact, error) {
	req := llm.ChatRequest{
		Messages:   []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: user}},
		SchemaName: prompts.ExtractionSchemaName,
		Schema:     prompts.ExtractionSchema(),
	}
	parse := func(content string) ([]memory.Fact, error) {
		facts, _, err := Parse(content, candidates, occurredAt)
		return facts, err
	}
	return llm.ChatParsed(ctx, w.cfg.Chat, req, w.cfg.MalformedRetries, parse, func(a llm.Attempt) {
		rep.ChatCalls++
		rep.Usage.PromptTokens += a.Response.Usage.PromptTokens
		rep.Usage.CompletionTokens += a.Response.Usage.CompletionTokens
		if a.Retrying {
			w.log.WarnContext(ctx, "malformed extraction answer, asking again", "error", a.Err)
		}
	})
}

// embed computes, in one call, the vectors of every new statement and of every revision
// a fact asks for (its future few-shot example). It runs only when the job made no
// embedding call before the chat: one call per job.
func (w *Worker) embed(ctx context.Context, facts []memory.Fact, cands []memory.Belief, rep *Report) error {
	type slot struct {
		fact  int
		event bool
	}
	var texts []string
	var slots []slot
	for i, f := range facts {
		if f.Statement != "" && (f.Resolves == nil || f.Resolves.Action != memory.ActionReinforce) {
			texts = append(texts, f.Statement)
			slots = append(slots, slot{i, false})
		}
		if d := f.Resolves; d != nil && d.Action != memory.ActionReinforce {
			texts = append(texts, memory.EventText(cands[d.Index].Statement, f.Quote, f.Statement))
			slots = append(slots, slot{i, true})
		}
	}
	if len(texts) == 0 {
		return nil
	}
	res, err := w.cfg.Embed.Embed(ctx, texts)
	rep.EmbedCalls++
	if err != nil {
		return fmt.Errorf("embed statements: %w", err)
	}
	for j, s := range slots {
		if s.event {
			facts[s.fact].EventEmbedding = res.Vectors[j]
		} else {
			facts[s.fact].Embedding = res.Vectors[j]
		}
	}
	return nil
}

func (w *Worker) recordFailure(ctx context.Context, job *river.Job[Args], cause error, final bool) error {
	state := "pending"
	if final {
		state = "failed"
	}
	_, err := w.cfg.Store.Pool().Exec(ctx, `UPDATE episode SET attempts = $2, last_error = $3, state = $4
		WHERE id = $1 AND state <> 'applied'`, job.Args.EpisodeID, job.Attempt, cause.Error(), state)
	return err
}
