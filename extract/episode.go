package extract

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/credohq/credo/internal/tracing"
	"github.com/credohq/credo/learning"
	"github.com/credohq/credo/llm"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
	"github.com/credohq/credo/redact"
)

// maxPending bounds the unembedded beliefs and events one episode embeds for its scope.
const maxPending = 64

// maxStaleRounds bounds how many times one episode is extracted again because another
// writer (consolidation, an operator) revised the scope while its LLM call ran; past
// it, the episode is retried later.
const maxStaleRounds = 8

// episode is what extraction reads of an episode.
type episode struct {
	ID         int64
	Scope      string
	Messages   []prompts.Message
	OccurredAt time.Time
	// Attempts is how many times the episode was tried before.
	Attempts int
	// Progress is where the next segment starts, when earlier ones were applied.
	Progress memory.Progress
	// TraceParent is the enqueue's span, which the extraction's span continues.
	TraceParent string
	// Redactions counts what redaction replaced in the transcript when it was enqueued.
	Redactions map[string]int
}

// state is what an extraction reads before its first model call.
type state struct {
	ep *episode
	// seen is read before the candidates, so that nothing stored after the prompt was
	// chosen can go unnoticed when the answer is applied.
	seen *memory.Snapshot
	// current is up to K+1 current beliefs: when there are no more than K, they are
	// the candidates.
	current      []memory.Belief
	withExamples bool
	// pending is what earlier extractions stored without vectors, kept when this one
	// embeds its transcript.
	pending []memory.Unembedded
	// instructions are the operator's, of the policy in force in the scope; redactor is
	// what redacts the model's facts there.
	instructions string
	redactor     *redact.Redactor
}

// embedsTranscript says whether the extraction embeds its transcript before the chat:
// to find candidates among more than K beliefs, or examples.
func (st *state) embedsTranscript(k int) bool { return len(st.current) > k || st.withExamples }

// attempt is what one attempt at an episode carries from one prompt to the next.
type attempt struct {
	// shrink scales the room planned for the transcript: it falls each time a prompt
	// did not fit the window after all.
	shrink float64
	refits int
	// segments counts the segments applied.
	segments int
}

// errWindow marks a model window too small for any extraction prompt.
var errWindow = errors.New("the model's window is too small")

// extractEpisode extracts one episode: in one prompt, or, when its transcript does not
// fit the model's window, in segments, each applied on its own. When another writer
// stored a belief the prompt did not show (memory.ErrStale), the prompt is made again
// from what the scope holds now; within a scope job nothing else extracts the scope, so
// this is rare, and each round is counted. A prompt the server refused or cut for its
// length is made again, smaller.
func (w *Worker) extractEpisode(ctx context.Context, st *state, rep *Report) error {
	a := &attempt{shrink: 1}
	stale := 0
	for {
		done, err := w.extractOnce(ctx, st, a, rep)
		var ce *llm.ContextError
		switch {
		case errors.Is(err, memory.ErrStale):
			if stale++; stale == maxStaleRounds {
				return err
			}
			rep.StaleRounds++
			w.log.InfoContext(ctx, "scope revised during extraction, extracting again", "episode", st.ep.ID,
				"scope", st.ep.Scope, "round", stale)
		case errors.As(err, &ce):
			if a.refits++; a.refits > maxRefits {
				return err
			}
			a.shrink *= refitShrink
			rep.Refits = append(rep.Refits, ce.Cause)
			// The prompt's text stays out of the log, as every model answer's does.
			w.log.WarnContext(ctx, "prompt did not fit the model's window, extracting in smaller parts", "episode", st.ep.ID,
				"scope", st.ep.Scope, "cause", ce.Cause, "estimated_tokens", ce.Estimated, "evaluated_tokens", ce.Evaluated,
				"window", ce.Window)
		case err != nil || done:
			return err
		}
		if st, err = w.read(ctx, st.ep.Scope, st.ep); err != nil {
			return err
		}
	}
}

// extractOnce makes one prompt of the episode, the whole transcript or its next
// segment, asks the model and applies the answer. It reports whether the episode is
// done.
func (w *Worker) extractOnce(ctx context.Context, st *state, a *attempt, rep *Report) (_ bool, err error) {
	ctx, traced := tracing.Start(ctx, "extract.prompt")
	defer func() { tracing.End(traced, err) }()
	ep := st.ep
	seg, err := w.plan(ctx, st, a)
	if err != nil {
		return false, err
	}
	now, _ := seg.messages(ep.Messages)
	embedCalls := rep.EmbedCalls
	cands, examples, vec, err := w.context(ctx, st, now, rep)
	if err != nil {
		return false, err
	}
	rep.Candidates, rep.Examples = len(cands), len(examples)
	names, err := w.entityNames(ctx, ep.Scope, cands)
	if err != nil {
		return false, err
	}

	pc := make([]prompts.Candidate, len(cands))
	ids := make([]int64, len(cands))
	for i, c := range cands {
		pc[i] = promptCandidate(c, names)
		ids[i] = c.ID
	}
	pe := make([]prompts.Example, len(examples))
	for i, e := range examples {
		pe[i] = prompts.Example{Old: e.Old, Excerpt: e.Excerpt, New: e.New, Action: e.Action, Reason: e.Reason, Kept: e.Kept,
			Reverted: e.Reverted, Note: e.Note}
	}
	var (
		system, user string
		read         []prompts.Message
	)
	for {
		now, earlier := seg.messages(ep.Messages)
		read = slices.Concat(earlier, now)
		system, user, err = w.prompts.Extraction(prompts.Extraction{
			Scope: ep.Scope, OccurredAt: ep.OccurredAt, Candidates: pc, Entities: promptEntities(cands, names), Examples: pe, Messages: now,
			Part: seg.part(a.segments + 1), Earlier: earlier, Instructions: st.instructions,
		})
		if err != nil {
			return false, err
		}
		// The candidates and examples may take more room than planned: then the segment
		// holds less.
		if w.fits(ctx, system, user) || !seg.trim() {
			break
		}
	}
	rep.PromptChars = len(system) + len(user)

	chatStart := time.Now()
	facts, err := w.chat(ctx, system, user, len(cands), ep.OccurredAt, rep)
	rep.ChatDuration += time.Since(chatStart)
	if err != nil {
		return false, err
	}
	// The model's words are redacted as the transcript was, before anything of them is
	// embedded or stored.
	redacted := redactFacts(st.redactor, facts)

	// One embedding call a prompt: when none was made before the chat, the new
	// statements are embedded now.
	if rep.EmbedCalls == embedCalls {
		if err := w.embed(ctx, facts, cands, rep); err != nil {
			return false, err
		}
	}
	// What the model read, for the containment guards: a directive on a belief it does
	// not speak of waits for an operator.
	batch := &memory.Batch{
		Scope: ep.Scope, Origin: memory.RevisionExtraction, EpisodeID: &ep.ID, At: ep.OccurredAt,
		Candidates: ids, Facts: facts, EmbedModel: w.cfg.EmbedModel, Seen: st.seen,
		Source: &memory.Source{Text: prompts.Transcript(read), Vector: vec, Messages: sourceMessages(read)},
	}
	for _, f := range facts {
		if v := cmp.Or(len(f.Embedding), len(f.EventEmbedding)); v > 0 {
			if err := w.cfg.Store.EnsureEmbeddingModel(ctx, w.cfg.EmbedModel, v); err != nil {
				return false, err
			}
			break
		}
	}
	// Before the batch's transaction: none waits on a model.
	if err := w.secondOpinion(ctx, batch, rep); err != nil {
		return false, err
	}
	if seg.whole {
		if err := w.apply(ctx, ep, batch, nil, rep); err != nil {
			return false, err
		}
		rep.Redacted = addCounts(rep.Redacted, redacted)
		return true, nil
	}
	span := seg.span(ep.Messages)
	if err := w.apply(ctx, ep, batch, &span, rep); err != nil {
		return false, err
	}
	rep.Redacted = addCounts(rep.Redacted, redacted)
	a.segments++
	rep.Segments++
	ep.Progress = span.Next
	return span.Last, nil
}

// plan chooses what of the transcript the next prompt holds: all of it when it fits
// the window beside the instructions, the candidates and the answer, else the next
// segment that does.
func (w *Worker) plan(ctx context.Context, st *state, a *attempt) (_ *segment, err error) {
	ctx, span := tracing.Start(ctx, "extract.plan")
	defer func() { tracing.End(span, err) }()
	ep := st.ep
	window, err := w.cfg.Sizer.ChatWindow(ctx)
	if err != nil {
		return nil, err
	}
	tok := w.cfg.Sizer.ChatTokens()
	// What every prompt holds besides the transcript: the instructions, the candidates
	// (those of now stand for those the segment will find), room for the examples.
	pc := make([]prompts.Candidate, min(len(st.current), w.cfg.MaxCandidates))
	for i := range pc {
		pc[i] = promptCandidate(st.current[i], nil)
	}
	system, user, err := w.prompts.Extraction(prompts.Extraction{Scope: ep.Scope, OccurredAt: ep.OccurredAt, Candidates: pc,
		Instructions: st.instructions})
	if err != nil {
		return nil, err
	}
	examples := 0
	if w.cfg.Examples != nil {
		examples = w.cfg.Examples.Max()
	}
	fixed := len(system) + len(user) + exampleRoom*examples
	free := window.Tokens - w.cfg.Sizer.AnswerTokens()
	if ep.Progress == (memory.Progress{}) && a.shrink == 1 {
		// By bytes first, which no tokenizer's count exceeds: most transcripts fit so.
		size := fixed
		for _, m := range ep.Messages {
			size += len(m.Content) + 32
		}
		if size <= free {
			all := make([]unit, len(ep.Messages))
			for i, m := range ep.Messages {
				all[i] = unit{msg: i, to: len(m.Content)}
			}
			return &segment{units: all, whole: true, total: len(ep.Messages)}, nil
		}
	}
	fixedTokens := tok.Messages([]llm.Message{{Content: system}, {Content: user}}) + exampleRoom*examples/3
	budget := int(float64(free-fixedTokens) * a.shrink)
	return planSegment(ep.Messages, ep.Progress, budget, tok)
}

// exampleRoom is the room kept for each worked example, in bytes: the old belief, what
// was said and the new one, a line each.
const exampleRoom = 600

// fits says whether a prompt fits the model's window with the answer's room.
func (w *Worker) fits(ctx context.Context, system, user string) bool {
	window, err := w.cfg.Sizer.ChatWindow(ctx)
	if err != nil {
		return true // the chat call will say it
	}
	free := window.Tokens - w.cfg.Sizer.AnswerTokens()
	if len(system)+len(user)+64 <= free {
		return true // by bytes, which no tokenizer's count exceeds
	}
	est := w.cfg.Sizer.ChatTokens().Messages([]llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: user}})
	return est <= free
}

// apply applies the batch with the episode's state in one transaction: the episode
// applied, or, for a segment, where the next one starts. An episode no longer pending
// (applied by another job, purged) stores nothing.
func (w *Worker) apply(ctx context.Context, ep *episode, batch *memory.Batch, span *memory.Segment, rep *Report) (err error) {
	ctx, traced := tracing.Start(ctx, "extract.apply", tracing.FactsKey.Int(len(batch.Facts)))
	defer func() { tracing.End(traced, err) }()
	var res *memory.Result
	if span == nil {
		res, err = w.cfg.Store.ApplyEpisode(ctx, batch, ep.Attempts+1)
	} else {
		res, err = w.cfg.Store.ApplySegment(ctx, batch, ep.Attempts+1, *span)
	}
	if err != nil || res == nil {
		return err
	}
	rep.Outcomes = append(rep.Outcomes, res.All()...)
	attrs := []any{"episode", ep.ID, "scope", ep.Scope, "candidates", rep.Candidates, "examples", rep.Examples,
		"facts", len(batch.Facts), "prompt_tokens", rep.Usage.PromptTokens, "completion_tokens", rep.Usage.CompletionTokens}
	// The index of a segment and the count of them apart: "segments=0" read as none.
	switch {
	case span == nil:
		attrs = append(attrs, "segments", 1)
	case span.Last:
		attrs = append(attrs, "segment", rep.Segments+1, "segments", rep.Segments+1)
	default:
		// The count is known at the last; the index counts from 1 in this job (a job
		// that resumes an episode counts from where it resumed).
		attrs = append(attrs, "segment", rep.Segments+1)
	}
	w.log.InfoContext(ctx, "extracted", attrs...)
	return nil
}

// decodeEpisode is p as extraction reads it. An episode it cannot decode comes with
// errEpisode.
func decodeEpisode(p *memory.PendingEpisode) (*episode, error) {
	ep := &episode{ID: p.ID, Scope: p.Scope, OccurredAt: p.OccurredAt, Attempts: p.Attempts, Progress: p.Progress,
		TraceParent: p.TraceParent, Redactions: p.Redactions}
	if err := json.Unmarshal(p.Messages, &ep.Messages); err != nil {
		return ep, fmt.Errorf("%w: decode episode %d: %w", errEpisode, ep.ID, err)
	}
	return ep, nil
}

// errEpisode marks an episode that cannot be extracted however often it is tried.
var errEpisode = errors.New("unreadable episode")

// read makes the extraction's first reads, in one round trip, before any model call:
// the scope's next pending episode, unless ep is given, then what the prompt is chosen
// from. It returns nil when the scope has no pending episode, and the episode alone with
// errEpisode when it cannot be decoded. When the scope has none pending (another job
// took it), the other reads were made for nothing.
func (w *Worker) read(ctx context.Context, scope string, ep *episode) (st *state, err error) {
	ctx, span := tracing.Start(ctx, "extract.read")
	defer func() { tracing.End(span, err) }()
	k := w.cfg.MaxCandidates
	// What earlier extractions stored without vectors is read whether or not this one
	// embeds its transcript, which the other reads decide: a probe of an index, cheaper
	// than a round trip of its own.
	q := memory.WriterReadQuery{Scope: scope, NextEpisode: ep == nil, CurrentLimit: k + 1, Model: w.cfg.EmbedModel,
		UnembeddedLimit: maxPending}
	if w.cfg.Examples != nil {
		q.ExampleScopes = w.cfg.Examples.Scopes(scope)
	}
	r, err := w.cfg.Store.ReadForWriter(ctx, q)
	if err != nil {
		return nil, err
	}
	if ep == nil {
		if r.Episode == nil {
			return &state{}, nil
		}
		if ep, err = decodeEpisode(r.Episode); err != nil {
			return &state{ep: ep}, err
		}
	}
	st = &state{ep: ep, seen: r.Seen, current: r.Current, withExamples: r.ExamplesAvailable}
	if st.redactor, err = r.Policy.Redactor(w.cfg.Redact); err != nil {
		return nil, err
	}
	if r.Policy != nil {
		st.instructions = r.Policy.Instructions
	}
	if st.embedsTranscript(k) {
		st.pending = r.Unembedded
	}
	return st, nil
}

// context chooses what the prompt shows besides the transcript. Candidates: all active
// beliefs when there are no more than K; otherwise those that rank best for the
// transcript (its embedding, its words, the entities it names), plus other beliefs on
// the attributes those fill, so that a slot is seen whole. Examples: the past revisions nearest to the transcript. The transcript is
// embedded only when one of them needs it.
func (w *Worker) context(ctx context.Context, st *state, msgs []prompts.Message, rep *Report) (_ []memory.Belief, _ []learning.Example, _ []float32, err error) {
	ctx, span := tracing.Start(ctx, "extract.context")
	defer func() { tracing.End(span, err) }()
	k := w.cfg.MaxCandidates
	if !st.embedsTranscript(k) {
		return st.current, nil, nil, nil
	}
	// This prompt's one embedding call: its messages, and what earlier episodes stored
	// without vectors. What this one learns waits for the next call likewise.
	texts := []string{prompts.Transcript(msgs)}
	for _, u := range st.pending {
		texts = append(texts, u.Text)
	}
	res, err := w.cfg.Embed.Embed(ctx, texts)
	rep.EmbedCalls++
	if err != nil {
		return nil, nil, nil, fmt.Errorf("embed transcript: %w", err)
	}
	vec := res.Vectors[0]
	if err := w.cfg.Store.EnsureEmbeddingModel(ctx, w.cfg.EmbedModel, len(vec)); err != nil {
		return nil, nil, nil, err
	}

	var (
		cands    []memory.Belief
		examples []learning.Example
	)
	err = w.cfg.Store.WithConn(ctx, func(store *memory.Store) error {
		var err error
		cands, examples, err = w.near(ctx, store, st, texts[0], vec, res.Vectors[1:])
		return err
	})
	return cands, examples, vec, err
}

// near is the rest of context, through store, on one connection: the pending vectors
// stored, then the examples nearest to the transcript's vector vec and the candidates
// that rank best for the transcript, text: by its vector, its words and the entities it
// names (memory.Candidates), so that a belief whose code or name the transcript says is
// shown even where the embedding blurs it.
func (w *Worker) near(ctx context.Context, store *memory.Store, st *state, text string, vec []float32, pending [][]float32) ([]memory.Belief, []learning.Example, error) {
	k := w.cfg.MaxCandidates
	scope := st.ep.Scope
	if _, err := store.SetEmbeddings(ctx, w.cfg.EmbedModel, st.pending, pending); err != nil {
		return nil, nil, err
	}
	var (
		examples []learning.Example
		err      error
	)
	if st.withExamples {
		if examples, err = w.cfg.Examples.On(store).Similar(ctx, scope, w.cfg.EmbedModel, vec); err != nil {
			return nil, nil, err
		}
	}
	if len(st.current) <= k {
		return st.current, examples, nil
	}

	near, err := store.Candidates(ctx, memory.CandidatesQuery{Scope: scope, Text: text, Model: w.cfg.EmbedModel, Vector: vec, K: k})
	if err != nil {
		return nil, nil, err
	}
	// The lowest-ranked third make room for the rest of the slots the best-ranked fill.
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
func (w *Worker) chat(ctx context.Context, system, user string, candidates int, occurredAt time.Time, rep *Report) (_ []memory.Fact, err error) {
	ctx, span := tracing.Start(ctx, "extract.chat", tracing.CandidatesKey.Int(candidates), tracing.PromptKey.Int(len(system)+len(user)))
	defer func() { tracing.End(span, err) }()
	req := llm.SchemaRequest(system, user, prompts.ExtractionSchemaName, prompts.ExtractionSchema())
	parse := func(content string) ([]memory.Fact, error) {
		facts, _, err := Parse(content, candidates, occurredAt)
		return facts, err
	}
	return llm.ChatParsed(ctx, w.cfg.Chat, req, w.cfg.MalformedRetries, parse, func(a llm.Attempt) {
		rep.ChatCalls++
		rep.Usage.PromptTokens += a.Response.Usage.PromptTokens
		rep.Usage.CompletionTokens += a.Response.Usage.CompletionTokens
		if a.Retrying {
			w.log.WarnContext(ctx, "malformed extraction answer, asking again", "error", llm.Kind(a.Err))
			w.log.DebugContext(ctx, "malformed extraction answer", "error", a.Err)
		}
	})
}

// embed computes, in one call, the vectors of every new statement and of every revision
// a fact asks for (its future few-shot example). It runs only when the episode made no
// embedding call before the chat: one call per episode.
func (w *Worker) embed(ctx context.Context, facts []memory.Fact, cands []memory.Belief, rep *Report) (err error) {
	ctx, span := tracing.Start(ctx, "extract.embed")
	defer func() { tracing.End(span, err) }()
	type slot struct {
		fact int
		// what is the vector's: the statement, the revision (its future example), or the
		// quote of a destructive directive (which the containment guards compare with
		// the target).
		what int
	}
	const (
		statement = iota
		event
		quote
	)
	var texts []string
	var slots []slot
	for i, f := range facts {
		if f.Statement != "" && (f.Resolves == nil || f.Resolves.Action != memory.ActionReinforce) {
			texts = append(texts, f.Statement)
			slots = append(slots, slot{i, statement})
		}
		if d := f.Resolves; d != nil && d.Action != memory.ActionReinforce {
			texts = append(texts, memory.EventText(cands[d.Index].Statement, f.Quote, f.Statement))
			slots = append(slots, slot{i, event})
			if f.Quote != "" {
				texts = append(texts, f.Quote)
				slots = append(slots, slot{i, quote})
			}
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
		switch s.what {
		case event:
			facts[s.fact].EventEmbedding = res.Vectors[j]
		case quote:
			facts[s.fact].QuoteEmbedding = res.Vectors[j]
		default:
			facts[s.fact].Embedding = res.Vectors[j]
		}
	}
	return nil
}

// sourceMessages are the messages the model read, for the engine to find who said
// each quote.
func sourceMessages(read []prompts.Message) []memory.SourceMessage {
	out := make([]memory.SourceMessage, len(read))
	for i, m := range read {
		out[i] = memory.SourceMessage{Role: m.Role, Content: m.Content}
	}
	return out
}

// addCounts adds c to into, made when needed, and returns it.
func addCounts(into, c redact.Counts) redact.Counts {
	if len(c) == 0 {
		return into
	}
	if into == nil {
		into = redact.Counts{}
	}
	into.Add(c)
	return into
}
