package api

import (
	"time"

	"github.com/credohq/credo/memory"
)

// The JSON the API answers with. Beliefs have the fields of `beliefs list --json`.

// Belief is one belief.
type Belief struct {
	ID              int64      `json:"id" doc:"Belief id."`
	Scope           string     `json:"scope"`
	Subject         string     `json:"subject" doc:"Who or what the belief is about, e.g. user."`
	Entity          string     `json:"entity" required:"false" doc:"The key of the entity it is about in its scope's registry (GET /v1/entities): user for the user, sister for the user's sister, whatever name the subject gave."`
	Attribute       string     `json:"attribute" doc:"The slot it fills, e.g. location."`
	Kind            string     `json:"kind" enum:"attribute,preference,relation,event,plan,other"`
	Statement       string     `json:"statement"`
	Status          string     `json:"status" enum:"active,superseded,retracted,forgotten,held"`
	Confidence      float64    `json:"confidence" minimum:"0" maximum:"1"`
	Origin          string     `json:"origin" enum:"user_stated,inferred,authoritative"`
	ValidFrom       time.Time  `json:"valid_from" doc:"When it became true in the world."`
	ValidUntil      *time.Time `json:"valid_until" doc:"When it stopped being true; null while it holds."`
	RecordedAt      time.Time  `json:"recorded_at" doc:"When memory learned it."`
	RetiredAt       *time.Time `json:"retired_at" doc:"When memory stopped holding it current; null while it does."`
	Supersedes      []int64    `json:"supersedes" doc:"Ids of the beliefs it replaced, or null."`
	SupersededBy    []int64    `json:"superseded_by" doc:"Id of the belief that replaced it, as a list, or null."`
	EpisodeID       *int64     `json:"episode_id" doc:"The transcript it was extracted from; null for operator assertions."`
	Quote           *string    `json:"quote" doc:"The words it was extracted from."`
	ReinforcedCount int        `json:"reinforced_count" doc:"How often it was said again."`
	LastSeenAt      time.Time  `json:"last_seen_at"`
	DependsOn       []int64    `json:"depends_on" doc:"Ids of the beliefs it was concluded from, or null."`
	NeedsReview     bool       `json:"needs_review" doc:"A belief it was concluded from changed: see the review queue."`
	Episodes        []int64    `json:"episodes" doc:"Every transcript that stated or restated it, earliest first; null when none is left."`
	Distance        *float64   `json:"distance,omitempty" doc:"Cosine distance to the query, in ranked answers."`
	Match           *Match     `json:"match,omitempty" doc:"Why it ranked where it did, in an answer ranked for a text: what its vector, words and entity added."`
}

// Match is memory.Match: a ranked belief's score, by part.
type Match struct {
	Vector     float64 `json:"vector" doc:"What its embedding's similarity to the text added."`
	Words      float64 `json:"words" doc:"What the text's words it holds added (codes, numbers, names count most)."`
	Entity     float64 `json:"entity" doc:"What being about an entity the text names added."`
	Fused      float64 `json:"fused" doc:"The sum: the order of the read."`
	VectorRank int     `json:"vector_rank,omitempty" doc:"Its place in the vector ranking; absent when not in it."`
	WordsRank  int     `json:"words_rank,omitempty" doc:"Its place in the words ranking; absent when not in it."`
	EntityRank int     `json:"entity_rank,omitempty" doc:"Its place in the entity ranking; absent when not in it."`
	WordsScore float64 `json:"words_score,omitempty" doc:"The share of the weight of the text's words it holds, 0 to 1."`
}

func matchOf(m *memory.Match) *Match {
	if m == nil {
		return nil
	}
	out := Match(*m)
	return &out
}

func beliefOf(b memory.Belief) Belief {
	return Belief{
		ID: b.ID, Scope: b.Scope, Subject: b.Subject, Entity: b.Entity, Attribute: b.Attribute, Kind: string(b.Kind),
		Statement: b.Statement, Status: string(b.Status), Confidence: b.Confidence, Origin: string(b.Origin),
		ValidFrom: b.ValidFrom, ValidUntil: b.ValidUntil, RecordedAt: b.RecordedAt, RetiredAt: b.RetiredAt,
		Supersedes: b.Supersedes, SupersededBy: b.SupersededBy, EpisodeID: b.EpisodeID, Quote: b.Quote,
		ReinforcedCount: b.ReinforcedCount, LastSeenAt: b.LastSeenAt, DependsOn: b.DependsOn, NeedsReview: b.NeedsReview,
		Episodes: b.Episodes,
		Distance: b.Distance, Match: matchOf(b.Match),
	}
}

func beliefsOf(bs []memory.Belief) []Belief { return mapped(bs, beliefOf) }

// mapped returns of each of ts, never nil: an answer's empty list is [], not null.
func mapped[T, U any](ts []T, of func(T) U) []U {
	out := make([]U, len(ts))
	for i, t := range ts {
		out[i] = of(t)
	}
	return out
}

// Beliefs answers GET /v1/beliefs.
type Beliefs struct {
	Mode        string   `json:"mode" enum:"current,history,as_of,known_at" doc:"The view answered: current beliefs; history (with superseded and retracted ones); what was true at as_of; what memory held at known_at."`
	AutoHistory bool     `json:"auto_history" doc:"History was chosen because the query reads as a question about the past."`
	Ranked      bool     `json:"ranked" doc:"Beliefs are ordered by similarity to the query."`
	Beliefs     []Belief `json:"beliefs" nullable:"false"`
	ScopeKnown  bool     `json:"scope_known" required:"false" doc:"false when memory has never held an episode or a belief of the scope (with inherit, nor of any ancestor): most likely a misspelt scope, read as empty."`
	DidYouMean  string   `json:"did_you_mean,omitempty" doc:"With scope_known false, the scope this key may read that is nearest to the one asked, when one is a few edits away."`
}

// History answers GET /v1/beliefs/{id}/history.
type History struct {
	Beliefs []Belief `json:"beliefs" nullable:"false" doc:"The supersession chain through the belief, oldest first."`
}

// Event is one applied revision.
type Event struct {
	ID           int64      `json:"id"`
	Scope        string     `json:"scope"`
	Action       string     `json:"action" enum:"supersede,retract,reinforce,revert" doc:"revert: an operator undid the event named by reverts."`
	Reason       string     `json:"reason" enum:"correction,temporal,duplicate,restated"`
	Origin       string     `json:"origin" enum:"extraction,consolidation,operator"`
	OldBeliefID  int64      `json:"old_belief_id"`
	NewBeliefID  *int64     `json:"new_belief_id"`
	OldStatement string     `json:"old_statement"`
	NewStatement *string    `json:"new_statement"`
	Excerpt      *string    `json:"excerpt" doc:"The words that caused it; for a revert, the operator's note."`
	Rationale    *string    `json:"rationale"`
	EpisodeID    *int64     `json:"episode_id"`
	CreatedAt    time.Time  `json:"created_at"`
	Reverts      *int64     `json:"reverts" doc:"For a revert, the event it undid; null otherwise."`
	RevertedBy   *int64     `json:"reverted_by" doc:"The revert that undid this event; null until one does."`
	RevertedAt   *time.Time `json:"reverted_at" doc:"When it was reverted; null until then."`
}

func eventOf(e memory.Event) Event {
	return Event{ID: e.ID, Scope: e.Scope, Action: string(e.Action), Reason: string(e.Reason), Origin: string(e.Origin),
		OldBeliefID: e.OldBeliefID, NewBeliefID: e.NewBeliefID, OldStatement: e.OldStatement, NewStatement: e.NewStatement,
		Excerpt: e.Excerpt, Rationale: e.Rationale, EpisodeID: e.EpisodeID, CreatedAt: e.CreatedAt,
		Reverts: e.Reverts, RevertedBy: e.RevertedBy, RevertedAt: e.RevertedAt}
}

// Reverted answers POST /v1/events/{id}/revert.
type Reverted struct {
	Revert       Event   `json:"revert" doc:"The revert's own event: action revert, origin operator, reverts naming the event undone."`
	Event        Event   `json:"event" doc:"The event undone, with reverted_by and reverted_at."`
	Restored     []int64 `json:"restored" nullable:"false" doc:"Beliefs current again."`
	Retracted    []int64 `json:"retracted" nullable:"false" doc:"Beliefs the undone revision wrote, retracted as never true."`
	Unreinforced *int64  `json:"unreinforced" doc:"The belief whose restatement was taken back (count, last seen, episodes), if any."`
}

// Audit answers GET /v1/audit: how precise a scope's revisions were.
type Audit struct {
	Scope       *string          `json:"scope" doc:"The scope audited, or null for a prefix."`
	ScopePrefix *string          `json:"scope_prefix" doc:"The prefix whose scopes were audited, or null for one scope."`
	Since       *time.Time       `json:"since" doc:"Only what was made at or after it; null: everything."`
	Revisions   []AuditRevisions `json:"revisions" nullable:"false" doc:"Applied revisions by origin, action and reason (reverts apart)."`
	Origins     []AuditOrigin    `json:"origins" nullable:"false" doc:"The same per writer, with its precision."`
	Reverts     int              `json:"reverts" doc:"Reverts operators made."`
	Refusals    []AuditRefusals  `json:"refusals" nullable:"false" doc:"Refused revisions by origin and cause, and how they were decided."`
}

// AuditRevisions counts the applied revisions of one origin, action and reason.
type AuditRevisions struct {
	Origin    string `json:"origin" enum:"extraction,consolidation,operator"`
	Action    string `json:"action" enum:"supersede,retract,reinforce"`
	Reason    string `json:"reason" enum:"correction,temporal,duplicate,restated"`
	Applied   int    `json:"applied" doc:"Revisions made, reverted or not."`
	Reverted  int    `json:"reverted" doc:"Undone by an operator's revert."`
	Corrected int    `json:"corrected" doc:"Standing, but what they wrote an operator superseded or retracted since."`
}

// AuditOrigin is one writer's revisions and their precision.
type AuditOrigin struct {
	Origin    string   `json:"origin" enum:"extraction,consolidation,operator"`
	Applied   int      `json:"applied"`
	Reverted  int      `json:"reverted"`
	Corrected int      `json:"corrected"`
	Precision *float64 `json:"precision" minimum:"0" maximum:"1" doc:"1 - reverted / applied; null when nothing was applied."`
}

// AuditRefusals counts one origin's revisions refused for one cause, and their decisions.
type AuditRefusals struct {
	Origin    string `json:"origin" enum:"extraction,consolidation,operator"`
	Cause     string `json:"cause" enum:"entrenchment,stale_target,time_order,invalid_index,event,unrelated,ungrounded,mass_revision,other_entity,same_entity,not_from_user,second_opinion"`
	Refused   int    `json:"refused"`
	Open      int    `json:"open" doc:"Awaiting a decision."`
	Applied   int    `json:"applied" doc:"Carried out by an operator."`
	Dismissed int    `json:"dismissed" doc:"Dismissed by an operator."`
	Closed    int    `json:"closed" doc:"Closed otherwise: the belief left memory."`
}

func auditOf(a *memory.Audit) *Audit {
	out := &Audit{Scope: a.Scope, ScopePrefix: a.ScopePrefix, Since: a.Since, Reverts: a.Reverts,
		Revisions: make([]AuditRevisions, len(a.Revisions)), Origins: make([]AuditOrigin, len(a.Origins)),
		Refusals: make([]AuditRefusals, len(a.Refusals))}
	for i, r := range a.Revisions {
		out.Revisions[i] = AuditRevisions{Origin: string(r.Origin), Action: string(r.Action), Reason: string(r.Reason),
			Applied: r.Applied, Reverted: r.Reverted, Corrected: r.Corrected}
	}
	for i, o := range a.Origins {
		out.Origins[i] = AuditOrigin{Origin: string(o.Origin), Applied: o.Applied, Reverted: o.Reverted, Corrected: o.Corrected,
			Precision: o.Precision}
	}
	for i, f := range a.Refusals {
		out.Refusals[i] = AuditRefusals{Origin: string(f.Origin), Cause: string(f.Cause), Refused: f.Refused, Open: f.Open,
			Applied: f.Applied, Dismissed: f.Dismissed, Closed: f.Closed}
	}
	return out
}

// Events answers GET /v1/events.
type Events struct {
	Events     []Event `json:"events" nullable:"false" doc:"Newest first."`
	ScopeKnown bool    `json:"scope_known" required:"false" doc:"false when memory has never held an episode or a belief of the scope (with inherit, nor of any ancestor): most likely a misspelt scope, read as empty."`
	DidYouMean string  `json:"did_you_mean,omitempty" doc:"With scope_known false, the scope this key may read that is nearest to the one asked, when one is a few edits away."`
}

// Proposal is the belief a refused revision would have written.
type Proposal struct {
	Statement  string         `json:"statement,omitempty"`
	Subject    string         `json:"subject,omitempty"`
	Attribute  string         `json:"attribute,omitempty"`
	Kind       string         `json:"kind,omitempty"`
	Confidence float64        `json:"confidence"`
	Origin     string         `json:"origin,omitempty"`
	ValidFrom  *time.Time     `json:"valid_from,omitempty"`
	Quote      string         `json:"quote,omitempty"`
	At         *time.Time     `json:"at,omitempty" doc:"When the source said it."`
	Merge      *MergeProposal `json:"merge,omitempty" doc:"For cause same_entity: the two entities, by key, that applying the item merges (as POST /v1/entities/merge)."`
	Opinion    string         `json:"opinion,omitempty" doc:"For cause second_opinion: the second opinion's reason, in the model's words."`
}

// ItemBelief is the belief a review item would revise, or the changed basis, as it is now.
type ItemBelief struct {
	ID         int64      `json:"id"`
	Statement  string     `json:"statement"`
	Subject    string     `json:"subject"`
	Entity     string     `json:"entity" doc:"The key of the entity the belief is about (user for the user)."`
	Attribute  string     `json:"attribute"`
	Kind       string     `json:"kind" enum:"attribute,preference,relation,event,plan,other"`
	Origin     string     `json:"origin" enum:"user_stated,inferred,authoritative,imported"`
	Status     string     `json:"status" enum:"active,superseded,retracted,forgotten,held"`
	ValidFrom  time.Time  `json:"valid_from"`
	ValidUntil *time.Time `json:"valid_until"`
}

// MergeProposal names two entities of a scope that may be one.
type MergeProposal struct {
	Into  string `json:"into" doc:"The entity that would stay."`
	Other string `json:"other" doc:"The entity that would be merged into it."`
}

// Conflict is an item of the review queue: a revision the engine refused, or a belief
// whose basis changed.
type Conflict struct {
	ID         int64       `json:"id"`
	Scope      string      `json:"scope"`
	Kind       string      `json:"kind" enum:"refused,basis_changed" doc:"refused: a revision the engine refused (see cause); basis_changed: a belief concluded from one that changed."`
	Cause      *string     `json:"cause" enum:"entrenchment,stale_target,time_order,invalid_index,event,unrelated,ungrounded,mass_revision,other_entity,same_entity,not_from_user,second_opinion" doc:"Why a revision was refused; null for basis_changed."`
	Origin     string      `json:"origin" enum:"extraction,consolidation,operator" doc:"The writer whose revision was refused, or who changed the basis."`
	Action     string      `json:"action" doc:"What applying the item does: the refused action, retract for basis_changed, or merge for same_entity (the entities of proposed.merge)."`
	Reason     *string     `json:"reason"`
	BeliefID   *int64      `json:"belief_id" doc:"The belief the item is about: the dependent of basis_changed; for a refusal, the stored belief that was to replace the target, if any."`
	TargetID   *int64      `json:"target_id" doc:"The belief the refused revision would have changed, or the changed basis (null once erased)."`
	Statement  string      `json:"statement" doc:"What the refusal proposed, or the belief under review."`
	Proposed   *Proposal   `json:"proposed,omitempty" doc:"The belief the revision would have written, if any."`
	Detail     string      `json:"detail"`
	EpisodeID  *int64      `json:"episode_id"`
	Status     string      `json:"status" enum:"open,resolved"`
	CreatedAt  time.Time   `json:"created_at"`
	ResolvedAt *time.Time  `json:"resolved_at"`
	Resolution *string     `json:"resolution" enum:"applied,dismissed,kept,retracted,superseded,forgotten" doc:"How it was closed: by an operator (applied, dismissed), by consolidation (kept), or because the belief left memory."`
	Note       *string     `json:"note" doc:"The operator's note on the decision."`
	Target     *ItemBelief `json:"target,omitempty" doc:"The belief of target_id as it is now: what applying the item would revise (or the changed basis)."`
	Why        string      `json:"why,omitempty" doc:"The cause in words, for a reviewer; detail keeps what was measured."`
}

func conflictOf(c memory.Conflict) Conflict {
	out := Conflict{ID: c.ID, Scope: c.Scope, Kind: string(c.Kind), Cause: (*string)(c.Cause), Origin: string(c.Origin),
		Action: string(c.Action), Reason: (*string)(c.Reason), BeliefID: c.BeliefID, TargetID: c.TargetID, Statement: c.Statement,
		Detail: c.Detail, EpisodeID: c.EpisodeID, Status: c.Status, CreatedAt: c.CreatedAt, ResolvedAt: c.ResolvedAt,
		Resolution: (*string)(c.Resolution), Note: c.Note, Why: c.Why}
	if t := c.Target; t != nil {
		out.Target = &ItemBelief{ID: t.ID, Statement: t.Statement, Subject: t.Subject, Entity: t.Entity, Attribute: t.Attribute,
			Kind: string(t.Kind), Origin: string(t.Origin), Status: string(t.Status), ValidFrom: t.ValidFrom, ValidUntil: t.ValidUntil}
	}
	if pr := c.Proposed; pr != nil {
		out.Proposed = &Proposal{Statement: pr.Statement, Subject: pr.Subject, Attribute: pr.Attribute, Kind: string(pr.Kind),
			Confidence: pr.Confidence, Origin: string(pr.Origin), ValidFrom: pr.ValidFrom, Quote: pr.Quote, At: pr.At, Opinion: pr.Opinion}
		if m := pr.Merge; m != nil {
			out.Proposed.Merge = &MergeProposal{Into: m.Into, Other: m.Other}
		}
	}
	return out
}

// Conflicts answers GET /v1/conflicts.
type Conflicts struct {
	Conflicts  []Conflict `json:"conflicts" nullable:"false" doc:"Review items, oldest first: open ones, or all with all=true."`
	ScopeKnown bool       `json:"scope_known" required:"false" doc:"false when memory has never held an episode or a belief of the scope (with inherit, nor of any ancestor): most likely a misspelt scope, read as empty."`
	DidYouMean string     `json:"did_you_mean,omitempty" doc:"With scope_known false, the scope this key may read that is nearest to the one asked, when one is a few edits away."`
}

// Decided answers POST /v1/conflicts/{id}/resolve.
type Decided struct {
	Conflict Conflict  `json:"conflict" doc:"The item, now resolved."`
	Revision *Revision `json:"revision,omitempty" doc:"The revision applied, for action apply."`
}

// Enqueued answers POST /v1/transcripts.
type Enqueued struct {
	EpisodeIDs []int64        `json:"episode_ids" nullable:"false" doc:"One per record, in input order; a duplicate gets the id of the episode it repeats."`
	Enqueued   int            `json:"enqueued" doc:"Records stored as new episodes, each extracted in its turn by its scope's job."`
	Duplicates int            `json:"duplicates" doc:"Records already stored in their scope (same content)."`
	Redacted   map[string]int `json:"redacted" required:"false" nullable:"false" doc:"Secrets replaced by placeholders before the records were stored, by kind (card, iban, api_key, token, private_key, password, or pattern:NAME of the scope's policy); never the values. Empty when none."`
}

// Revision answers POST /v1/beliefs and POST /v1/beliefs/{id}/correct.
type Revision struct {
	Outcome  string `json:"outcome" enum:"accepted,superseded,backfilled,retracted,reinforced,duplicate,rejected" doc:"What the revision engine did."`
	BeliefID *int64 `json:"belief_id,omitempty" doc:"The belief stored, if any."`
	TargetID *int64 `json:"target_id,omitempty" doc:"The belief revised or reinforced, if any."`
}

func revisionOf(o memory.Outcome) Revision {
	r := Revision{Outcome: string(o.Kind)}
	if o.BeliefID != 0 {
		r.BeliefID = &o.BeliefID
	}
	if o.TargetID != 0 {
		r.TargetID = &o.TargetID
	}
	return r
}

// Forgotten answers POST /v1/forget.
type Forgotten struct {
	Forgotten *[]int64 `json:"forgotten,omitempty" doc:"Soft forget: the ids forgotten now, ascending (beliefs already forgotten are not listed)."`
	Purged    *Purged  `json:"purged,omitempty" doc:"Purge: what was erased."`
	Subtree   *Subtree `json:"subtree,omitempty" doc:"Purge of a scope_prefix: what was erased, scope by scope."`
}

// Subtree is what a purge of every scope under a prefix erased.
type Subtree struct {
	Prefix string           `json:"prefix"`
	Scopes []ScopePurged    `json:"scopes" nullable:"false" doc:"One purge per scope, each with its tombstone; empty when no scope matched."`
	Counts map[string]int64 `json:"counts" doc:"Rows erased per table, over every scope."`
}

// ScopePurged is the purge of one scope of a subtree.
type ScopePurged struct {
	Scope string `json:"scope"`
	Purged
}

// Purged is what a purge erased.
type Purged struct {
	What     string           `json:"what" enum:"beliefs,scope"`
	Counts   map[string]int64 `json:"counts" doc:"Rows erased per table; episode_redacted: transcripts kept for other beliefs, with the purged words replaced."`
	Relinked int              `json:"relinked" doc:"Beliefs relinked past a purged successor."`
}

// EpisodeOf is e as the API and the CLI show it: its state, not its transcript.
func EpisodeOf(e memory.Episode) Episode {
	return Episode{ID: e.ID, Scope: e.Scope, ExternalID: e.ExternalID, State: string(e.State), Attempts: e.Attempts,
		LastError: e.LastError, OccurredAt: e.OccurredAt, ReceivedAt: e.ReceivedAt, ProcessedAt: e.ProcessedAt,
		RedactedAt: e.RedactedAt, Redactions: e.Redactions}
}

// Episode answers GET /v1/episodes/{id}.
type Episode struct {
	ID          int64          `json:"id"`
	Scope       string         `json:"scope"`
	ExternalID  *string        `json:"external_id" doc:"The record's id, if it had one."`
	State       string         `json:"state" enum:"pending,applied,failed"`
	Attempts    int            `json:"attempts" doc:"Extraction attempts so far."`
	LastError   *string        `json:"last_error" doc:"The last attempt's error, if it failed."`
	OccurredAt  time.Time      `json:"occurred_at"`
	ReceivedAt  time.Time      `json:"received_at"`
	ProcessedAt *time.Time     `json:"processed_at"`
	RedactedAt  *time.Time     `json:"redacted_at" doc:"When a purge replaced purged words of its transcript with [redacted]; null if never."`
	Redactions  map[string]int `json:"redactions" required:"false" nullable:"true" doc:"Secrets replaced by placeholders in its transcript, by kind, when it was stored or since by a policy's apply; never the values. null when none."`
}
