// Package consolidate is the consolidation pass: it resolves overlaps between beliefs
// of a scope that no conversation made explicit (the same fact said twice in different
// words, a change nobody called a change). A periodic sweep enqueues one job per scope
// changed since its last pass; the job clusters the changed beliefs with their near
// neighbours by embedding, asks the LLM once per cluster not judged before, and applies
// the answers through memory.Apply with origin consolidation, so entrenchment and time
// order hold here as everywhere.
package consolidate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/credohq/credo/internal/riverjobs"
	"github.com/credohq/credo/internal/stage"
	"github.com/credohq/credo/internal/tracing"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
)

// Queue is the River queue of consolidation jobs and of the sweep that enqueues them.
const Queue = "consolidate"

// Args is the consolidation job of one scope.
type Args struct {
	Scope string `json:"scope"`
}

// Kind is the River job kind.
func (Args) Kind() string { return "credo.consolidate" }

// InsertOpts puts consolidation jobs on their queue, one per scope while it is not
// finished: a running pass blocks a new job for its scope too, as whatever changes
// meanwhile is newer than the running pass's watermark and is found by the next sweep
// (or the pass's own follow-up). A finished pass never blocks the next one.
func (Args) InsertOpts() river.InsertOpts {
	return riverjobs.OnceOnQueue(Queue)
}

// Observer receives what each consolidation job did.
type Observer interface {
	Consolidated(r Report)
}

// Report describes what consolidation did for one scope, over one or more passes.
type Report struct {
	Scope  string `json:"scope"`
	Passes int    `json:"passes"`
	// Seeds are the active beliefs changed since the watermark that the passes
	// started from.
	Seeds int `json:"seeds"`
	// Clusters are the groups of two or more similar beliefs found; Judged of them were
	// skipped, judged before with the same members.
	Clusters int `json:"clusters"`
	Judged   int `json:"already_judged"`
	// ChatCalls counts LLM calls, answers asked again included.
	ChatCalls int `json:"llm_calls"`
	// Malformed counts clusters left as they were because every answer was malformed.
	Malformed int `json:"malformed"`
	Applied   int `json:"applied"`
	Conflicts int `json:"conflicts"`
	// Reviewed counts flagged beliefs (a basis of theirs changed) the model judged.
	Reviewed int `json:"reviewed"`
	// MergesProposed counts the pairs of entities found to be maybe one, opened as
	// same_entity review items for an operator (never merged here).
	MergesProposed   int `json:"merges_proposed"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Resolutions are the verdicts the engine applied or refused.
	Resolutions []Resolved `json:"resolutions"`
	// Watermark is where the scope's watermark stands after the passes.
	Watermark *time.Time `json:"watermark"`
	// More says work was left for a follow-up pass.
	More         bool          `json:"more"`
	Duration     time.Duration `json:"-"`
	ChatDuration time.Duration `json:"-"`
	Err          error         `json:"-"`
}

// Resolved is one LLM verdict as the engine took it.
type Resolved struct {
	// Outcome is superseded, or conflict when the engine refused it.
	Outcome memory.OutcomeKind `json:"outcome"`
	Reason  memory.Reason      `json:"reason"`
	// BeliefID is the belief the verdict retires, ReplacedBy the one that stays.
	BeliefID            int64  `json:"belief_id"`
	Statement           string `json:"statement"`
	ReplacedBy          int64  `json:"replaced_by"`
	ReplacedByStatement string `json:"replaced_by_statement"`
	EventID             int64  `json:"event_id,omitempty"`
	ConflictID          int64  `json:"conflict_id,omitempty"`
	Detail              string `json:"detail,omitempty"`
}

// Worker is the River worker of Args; RunScope runs the same pass in process.
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

var errNoScope = errors.New("consolidate: scope is empty")

// Work runs one pass over the job's scope. Each cluster's verdict commits with the
// judgment of its signature; the watermark and the job's completion commit together at
// the end. A retry after a partial pass starts from the same watermark, finds the
// clusters already judged by their signatures and asks the LLM only about the others.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	start := time.Now()
	rep := Report{Scope: job.Args.Scope}
	_, err := w.pass(ctx, job.Args.Scope, &rep, func(ctx context.Context, tx pgx.Tx, more bool) error {
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
			return fmt.Errorf("complete job %d: %w", job.ID, err)
		}
		if !more {
			// The row of a job whose scope was erased meanwhile goes with it.
			_, err := w.cfg.Store.DropJobOfErasedScope(ctx, tx, job.ID, job.Args.Scope)
			return err
		}
		// Completed above, this job no longer counts for uniqueness: the follow-up
		// can be inserted in the same transaction.
		client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
		if err != nil {
			return fmt.Errorf("enqueue follow-up pass: %w", err)
		}
		if _, err := client.InsertTx(ctx, tx, Args{Scope: job.Args.Scope}, nil); err != nil {
			return fmt.Errorf("enqueue follow-up pass: %w", err)
		}
		return nil
	})
	rep.Err, rep.Duration = err, time.Since(start)
	if w.cfg.Observer != nil {
		w.cfg.Observer.Consolidated(rep)
	}
	if err == nil {
		return nil
	}
	w.log.WarnContext(ctx, "consolidation failed", "scope", job.Args.Scope, "attempt", job.Attempt,
		"error", llm.LogKind(err, "see the debug log"))
	w.log.DebugContext(ctx, "consolidation failed", "scope", job.Args.Scope, "error", err)
	// An invalid batch or scope is a bug that waiting does not fix; anything else (LLM
	// down, timeouts, database) is retried with River's backoff, and the retry skips
	// what this attempt judged.
	if errors.Is(err, errNoScope) || errors.Is(err, memory.ErrInvalid) || errors.Is(err, memory.ErrScope) {
		return river.JobCancel(err)
	}
	return err
}

// RunScope consolidates scope now, in this process, in as many passes as it takes to
// catch up with its changes.
func (w *Worker) RunScope(ctx context.Context, scope string) (Report, error) {
	start := time.Now()
	rep := Report{Scope: scope}
	for {
		progressed, err := w.pass(ctx, scope, &rep, nil)
		if err != nil || !rep.More || !progressed {
			rep.Err, rep.Duration = err, time.Since(start)
			return rep, err
		}
	}
}

// cluster is a group of similar beliefs, in the order the prompt shows them.
type cluster struct {
	members   []memory.Belief
	signature string
	judged    bool
}

// plan is what a pass found to do, before any LLM call.
type plan struct {
	// watermark is the scope's watermark at the start of the pass, if it has one.
	watermark *time.Time
	seeds     int
	clusters  []*cluster
	// next is where the watermark moves once every cluster is judged; zero: it stays.
	next time.Time
	// more says seeds were left for a follow-up pass.
	more bool
}

// pass runs one consolidation pass over scope and reports whether it moved anything
// (a judgment or the watermark). finish, when set, runs in the pass's last transaction
// and learns whether work is left for a follow-up pass.
func (w *Worker) pass(ctx context.Context, scope string, rep *Report, finish func(ctx context.Context, tx pgx.Tx, more bool) error) (_ bool, err error) {
	ctx, span := tracing.Start(ctx, "consolidate.pass")
	tracing.SetScope(span, scope)
	defer func() { tracing.End(span, err) }()
	if scope == "" {
		return false, errNoScope
	}
	rep.Passes++
	before := *rep
	if err := w.embedPending(ctx, scope); err != nil {
		return false, err
	}
	// A scope grown past the exact limit gets an index of its own; one that shrank
	// under half of it loses it.
	if err := w.indexScope(ctx, scope); err != nil {
		return false, err
	}
	// The words most of the scope's beliefs hold, which recall's words ranking leaves
	// out, counted again once the scope grew or shrank by a fifth.
	if res, err := w.cfg.Store.CountCommonWords(ctx, scope); err != nil {
		return false, err
	} else if res.Counted {
		w.log.DebugContext(ctx, "common words counted", "scope", scope, "beliefs", res.Beliefs, "words", res.Words)
	}
	reviewed, moreReview, err := w.review(ctx, scope, rep)
	if err != nil {
		return false, err
	}
	// Names that may be one entity ("mom" and "mother"), by their words alone and
	// without a model call; an operator decides.
	proposed, err := w.cfg.Store.ProposeMerges(ctx, scope)
	if err != nil {
		return reviewed, err
	}
	rep.MergesProposed += len(proposed)
	p, err := w.plan(ctx, scope)
	if err != nil {
		return reviewed, err
	}
	rep.Seeds += p.seeds
	rep.Clusters += len(p.clusters)
	if p.watermark != nil {
		wm := p.watermark.UTC()
		rep.Watermark = &wm
	}

	// The operator's instructions of the scope's policy go into every judgment's prompt.
	instructions := ""
	if len(p.clusters) > 0 {
		policy, err := w.cfg.Store.PolicyFor(ctx, scope)
		if err != nil {
			return reviewed, err
		}
		if policy != nil {
			instructions = policy.Instructions
		}
	}
	calls, judgedNow := 0, 0
	if reviewed {
		judgedNow++ // progress, for RunScope's loop
	}
	more := p.more || moreReview
	for _, c := range p.clusters {
		if c.judged {
			rep.Judged++
			continue
		}
		if calls == w.cfg.MaxCalls {
			// The watermark stays so the follow-up pass finds these seeds again; the
			// clusters judged by now are skipped then by their signatures.
			more, p.next = true, time.Time{}
			break
		}
		calls++
		gone, err := w.judge(ctx, scope, instructions, c, rep)
		if err != nil {
			return judgedNow > 0, err
		}
		if gone {
			// What is left of the cluster is clustered again by a follow-up pass, from
			// the same watermark.
			more, p.next = true, time.Time{}
		}
		judgedNow++
	}
	rep.More = more
	defer func() {
		w.log.InfoContext(ctx, "consolidation pass", "scope", scope, "seeds", p.seeds, "clusters", len(p.clusters),
			"already_judged", rep.Judged-before.Judged, "llm_calls", rep.ChatCalls-before.ChatCalls,
			"applied", rep.Applied-before.Applied, "conflicts", rep.Conflicts-before.Conflicts, "more", more)
	}()

	if p.next.IsZero() && finish == nil {
		return judgedNow > 0, nil
	}
	err = w.cfg.Store.InTx(ctx, func(tx pgx.Tx) error {
		// A purge of the whole scope that committed during the pass leaves it erased:
		// no watermark names it again, and no follow-up job.
		erased, err := memory.ScopeErasedTx(ctx, tx, scope)
		if err != nil {
			return err
		}
		if erased {
			more, rep.More, p.next = false, false, time.Time{}
		}
		if !p.next.IsZero() {
			wm, err := memory.AdvanceWatermarkTx(ctx, tx, scope, p.next)
			if err != nil {
				return err
			}
			rep.Watermark = &wm
		}
		if finish != nil {
			return finish(ctx, tx, more)
		}
		return nil
	})
	if err != nil {
		return judgedNow > 0, err
	}
	return judgedNow > 0 || !p.next.IsZero(), nil
}

// plan finds the pass's clusters: the active beliefs changed since the watermark are
// the seeds; each seed's near neighbours in the scope are found with the model's HNSW
// index, and union-find joins seeds and neighbours into capped clusters. No LLM call.
func (w *Worker) plan(ctx context.Context, scope string) (_ *plan, err error) {
	ctx, span := tracing.Start(ctx, "consolidate.plan")
	defer func() { tracing.End(span, err) }()
	p, seeds, err := w.seeds(ctx, scope)
	if err != nil {
		return nil, err
	}
	if len(seeds) == 0 {
		return p, nil
	}
	groups, err := w.groups(ctx, scope, seeds)
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return p, nil
	}
	if p.clusters, err = w.clusters(ctx, scope, groups); err != nil {
		return nil, err
	}
	if err := w.markJudged(ctx, scope, p.clusters); err != nil {
		return nil, err
	}
	return p, nil
}

// seeds reads the scope's watermark and the active beliefs changed since, and says
// where the watermark moves once the pass is done.
func (w *Worker) seeds(ctx context.Context, scope string) (*plan, []int64, error) {
	store := w.cfg.Store
	watermark, dbNow, err := store.ConsolidationWatermark(ctx, scope)
	if err != nil {
		return nil, nil, err
	}
	var since time.Time
	if watermark != nil {
		since = *watermark
	}
	ch, err := store.ChangedSince(ctx, scope, w.cfg.EmbedModel, since, w.cfg.MaxSeeds)
	if err != nil {
		return nil, nil, err
	}
	p := &plan{watermark: watermark, seeds: len(ch.IDs), next: ch.UpTo, more: ch.More}
	if settled := dbNow.Add(-w.cfg.Settle); p.next.After(settled) {
		// Too recent to be sure nothing older is still being committed: the watermark
		// stops short and the next sweep looks at these again (their clusters are
		// judged by then, so at no LLM cost). No follow-up now: it would find the
		// same recent seeds again at once.
		p.next, p.more = settled, false
	}
	if !p.next.After(since) {
		p.next = time.Time{}
	}
	return p, ch.IDs, nil
}

// groups joins the seeds and their near neighbours into capped groups of belief ids.
func (w *Worker) groups(ctx context.Context, scope string, seeds []int64) ([][]int64, error) {
	edges, err := w.cfg.Store.Neighbors(ctx, memory.NeighborQuery{
		Scope: scope, Model: w.cfg.EmbedModel, Seeds: seeds,
		K: w.cfg.MaxCluster, MaxDistance: 1 - w.cfg.Threshold, SameSubject: true,
	})
	if err != nil {
		return nil, err
	}
	return clusterize(edges, w.cfg.MaxCluster), nil
}

// clusters loads the members of the groups and keeps those still active in the scope,
// in the order the prompt shows them; a group left with fewer than two is dropped.
func (w *Worker) clusters(ctx context.Context, scope string, groups [][]int64) ([]*cluster, error) {
	var ids []int64
	for _, g := range groups {
		ids = append(ids, g...)
	}
	bs, err := w.cfg.Store.BeliefsByID(ctx, scope, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]memory.Belief, len(bs))
	for _, b := range bs {
		// A member revised since the neighbour query is no longer a candidate.
		if b.Status == memory.StatusActive && b.Scope == scope {
			byID[b.ID] = b
		}
	}
	var out []*cluster
	for _, g := range groups {
		c := &cluster{}
		for _, id := range g {
			if b, ok := byID[id]; ok {
				c.members = append(c.members, b)
			}
		}
		if len(c.members) < 2 {
			continue
		}
		// Oldest first, so that the prompt reads as the beliefs' history.
		slices.SortFunc(c.members, func(a, b memory.Belief) int {
			return cmp.Or(a.ValidFrom.Compare(b.ValidFrom), cmp.Compare(a.ID, b.ID))
		})
		c.signature = signature(c.members)
		out = append(out, c)
	}
	return out, nil
}

// markJudged marks the clusters judged before with the same members.
func (w *Worker) markJudged(ctx context.Context, scope string, clusters []*cluster) error {
	if len(clusters) == 0 {
		return nil
	}
	sigs := make([]string, len(clusters))
	for i, c := range clusters {
		sigs[i] = c.signature
	}
	judged, err := w.cfg.Store.JudgedSignatures(ctx, scope, sigs)
	if err != nil {
		return err
	}
	for _, c := range clusters {
		c.judged = judged[c.signature]
	}
	return nil
}

// judge asks the LLM about one cluster, with the operator's instructions of the scope,
// and applies its verdict with the cluster's judgment, in one transaction. No database connection is held during the LLM call.
// It reports gone when a member was purged meanwhile: then nothing was written.
func (w *Worker) judge(ctx context.Context, scope, instructions string, c *cluster, rep *Report) (gone bool, err error) {
	ctx, span := tracing.Start(ctx, "consolidate.judge", tracing.CandidatesKey.Int(len(c.members)))
	defer func() { tracing.End(span, err) }()
	cands := make([]prompts.ConsolidationCandidate, len(c.members))
	ids := make([]int64, len(c.members))
	for i, m := range c.members {
		cands[i] = prompts.ConsolidationCandidate{Statement: m.Statement, Attribute: m.Attribute, Origin: string(m.Origin),
			Event: m.Kind == memory.KindEvent, ValidFrom: m.ValidFrom}
		ids[i] = m.ID
	}
	system, user, err := w.prompts.Consolidation(prompts.Consolidation{Scope: scope, Candidates: cands, Instructions: instructions})
	if err != nil {
		return false, err
	}
	chatStart := time.Now()
	res, err := w.chat(ctx, system, user, len(cands), rep)
	rep.ChatDuration += time.Since(chatStart)
	if llm.IsMalformed(err) {
		// At temperature 0 the same cluster draws the same answer: it is recorded as
		// judged and left as it is, and asked about again once its members change.
		w.log.WarnContext(ctx, "malformed consolidation answers; cluster left as it is", "scope", scope, "beliefs", ids, "error", llm.Kind(err))
		w.log.DebugContext(ctx, "malformed consolidation answers", "scope", scope, "error", err)
		rep.Malformed++
		res = nil
	} else if err != nil {
		return false, err
	}

	var batch *memory.Batch
	if len(res) > 0 {
		batch = &memory.Batch{Scope: scope, Origin: memory.RevisionConsolidation, Candidates: ids, Resolutions: res}
		if err := w.secondOpinion(ctx, batch, rep); err != nil {
			return false, err
		}
	}
	var (
		out   *memory.Result
		claim memory.Claim
	)
	err = w.cfg.Store.InTx(ctx, func(tx pgx.Tx) error {
		// The judgment is claimed first, under the scope's lock: when two passes judged
		// the same cluster at once (a CLI run beside a job), the second applies nothing;
		// when a member was purged during the call, nothing is written.
		var err error
		if claim, err = memory.ClaimJudgmentTx(ctx, tx, memory.JudgmentClaim{Scope: scope, Signature: c.signature, Members: ids}); err != nil {
			return err
		}
		if claim != memory.Claimed || batch == nil {
			return nil
		}
		out, err = w.cfg.Store.ApplyTx(ctx, tx, batch)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("apply consolidation of %v: %w", ids, err)
	}
	if claim == memory.MembersGone {
		w.log.InfoContext(ctx, "consolidation cluster purged during the model's call; nothing written", "scope", scope, "beliefs", ids)
		return true, nil
	}
	if out == nil {
		return false, nil
	}
	for i, o := range out.Resolutions {
		r := res[i]
		rv := Resolved{Outcome: o.Kind, Reason: r.Reason, BeliefID: ids[r.Index], Statement: c.members[r.Index].Statement,
			ReplacedBy: ids[*r.ReplacedBy], ReplacedByStatement: c.members[*r.ReplacedBy].Statement,
			EventID: o.EventID, ConflictID: o.ConflictID, Detail: o.Detail}
		if o.Kind == memory.OutcomeConflict {
			rep.Conflicts++
		} else {
			rep.Applied++
		}
		rep.Resolutions = append(rep.Resolutions, rv)
	}
	return false, nil
}

// chat asks the LLM about one cluster; a malformed answer is asked again at most
// MalformedRetries times.
func (w *Worker) chat(ctx context.Context, system, user string, n int, rep *Report) ([]memory.Resolution, error) {
	req := llm.SchemaRequest(system, user, prompts.ConsolidationSchemaName, prompts.ConsolidationSchema())
	parse := func(content string) ([]memory.Resolution, error) {
		res, _, err := Parse(content, n)
		return res, err
	}
	return llm.ChatParsed(ctx, w.cfg.Chat, req, w.cfg.MalformedRetries, parse, w.observeAttempt(ctx, rep))
}

// observeAttempt counts each LLM call of a pass and its tokens in rep.
func (w *Worker) observeAttempt(ctx context.Context, rep *Report) func(llm.Attempt) {
	return func(a llm.Attempt) {
		rep.ChatCalls++
		rep.PromptTokens += a.Response.Usage.PromptTokens
		rep.CompletionTokens += a.Response.Usage.CompletionTokens
		if a.Retrying {
			w.log.WarnContext(ctx, "malformed consolidation answer, asking again", "error", llm.Kind(a.Err))
			w.log.DebugContext(ctx, "malformed consolidation answer", "error", a.Err)
		}
	}
}

// maxPending bounds what one pass embeds, in one call.
const maxPending = 512

// embedPending gives vectors to the scope's beliefs and revision events stored without
// one, in one embedding call.
func (w *Worker) embedPending(ctx context.Context, scope string) (err error) {
	ctx, span := tracing.Start(ctx, "consolidate.embed")
	defer func() { tracing.End(span, err) }()
	if w.cfg.Embed == nil {
		return nil
	}
	pending, err := w.cfg.Store.Unembedded(ctx, scope, w.cfg.EmbedModel, maxPending)
	if err != nil || len(pending) == 0 {
		return err
	}
	texts := make([]string, len(pending))
	for i, u := range pending {
		texts[i] = u.Text
	}
	res, err := w.cfg.Embed.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("embed unembedded beliefs of %q: %w", scope, err)
	}
	if err := w.cfg.Store.EnsureEmbeddingModel(ctx, w.cfg.EmbedModel, len(res.Vectors[0])); err != nil {
		return err
	}
	_, err = w.cfg.Store.SetEmbeddings(ctx, w.cfg.EmbedModel, pending, res.Vectors)
	return err
}
