package memory

import (
	"time"
)

// Status is where a belief stands in memory.
type Status string

// A belief is active until a revision supersedes or retracts it, or an operator
// forgets it.
const (
	StatusActive     Status = "active"
	StatusSuperseded Status = "superseded"
	StatusRetracted  Status = "retracted"
	StatusForgotten  Status = "forgotten"
	// StatusHeld is the new belief of a supersession the guards hold: it waits with its
	// review item, never current; applying the item makes it active, dismissing it
	// retires it.
	StatusHeld Status = "held"
)

// Origin is where a belief came from; it decides what may revise it (entrenchment).
type Origin string

// A belief is what the user stated, what was inferred, what an operator asserted as
// authoritative, or what was imported from another memory system (mem0), which
// entrenches it no more than an inference: no transcript says it (see entrenched).
const (
	OriginUserStated    Origin = "user_stated"
	OriginInferred      Origin = "inferred"
	OriginAuthoritative Origin = "authoritative"
	OriginImported      Origin = "imported"
)

// Kind is what sort of statement a belief is.
type Kind string

// The kinds of statement, as the extraction schema names them.
const (
	KindAttribute  Kind = "attribute"
	KindPreference Kind = "preference"
	KindRelation   Kind = "relation"
	KindEvent      Kind = "event"
	KindPlan       Kind = "plan"
	KindOther      Kind = "other"
)

// Kinds lists every valid Kind, for validation and schemas.
var Kinds = []Kind{KindAttribute, KindPreference, KindRelation, KindEvent, KindPlan, KindOther}

// Action is what a revision does to its target.
type Action string

// A revision supersedes its target with a new belief, retracts it, or reinforces it.
const (
	ActionSupersede Action = "supersede"
	ActionRetract   Action = "retract"
	ActionReinforce Action = "reinforce"
	// ActionRevert undoes an earlier revision; only an operator reverts (see Store.Revert).
	ActionRevert Action = "revert"
)

// Reason says why a revision happened: the old belief was wrong (correction), the world
// changed (temporal), two beliefs said the same (duplicate), or it was said again
// (restated).
type Reason string

// The reasons, as the Reason type says.
const (
	ReasonCorrection Reason = "correction"
	ReasonTemporal   Reason = "temporal"
	ReasonDuplicate  Reason = "duplicate"
	ReasonRestated   Reason = "restated"
)

// RevisionOrigin is the writer of a revision.
type RevisionOrigin string

// Revisions are written by extraction, by consolidation or by an operator.
const (
	RevisionExtraction    RevisionOrigin = "extraction"
	RevisionConsolidation RevisionOrigin = "consolidation"
	RevisionOperator      RevisionOrigin = "operator"
)

// Belief is one statement about a subject in a scope, with its valid time (when it was
// true in the world) and known time (when memory held it). Its JSON form is the contract
// of `beliefs list --json`.
type Belief struct {
	ID      int64  `json:"id"`
	Scope   string `json:"scope"`
	Subject string `json:"subject"`
	// Entity is the key of the entity the belief is about, in its scope's registry
	// (package entity): "user" for the user.
	Entity          string     `json:"entity"`
	Attribute       string     `json:"attribute"`
	Kind            Kind       `json:"kind"`
	Statement       string     `json:"statement"`
	Status          Status     `json:"status"`
	Confidence      float64    `json:"confidence"`
	Origin          Origin     `json:"origin"`
	ValidFrom       time.Time  `json:"valid_from"`
	ValidUntil      *time.Time `json:"valid_until"`
	RecordedAt      time.Time  `json:"recorded_at"`
	RetiredAt       *time.Time `json:"retired_at"`
	Supersedes      []int64    `json:"supersedes"`
	SupersededBy    []int64    `json:"superseded_by"`
	EpisodeID       *int64     `json:"episode_id"`
	Quote           *string    `json:"quote"`
	ReinforcedCount int        `json:"reinforced_count"`
	LastSeenAt      time.Time  `json:"last_seen_at"`
	// DependsOn are the beliefs this one was concluded from; null when none.
	DependsOn []int64 `json:"depends_on"`
	// NeedsReview is set while a basis of this belief changed and nobody has decided
	// whether it still holds.
	NeedsReview bool `json:"needs_review"`
	// Episodes are every episode that stated or restated this belief, earliest first,
	// whatever order they were processed in; null when none is left. The reads that feed
	// writers (CurrentUpTo, Nearest, ActiveWithAttributes, BeliefsByID, Flagged) leave
	// it out.
	Episodes []int64 `json:"episodes"`
	// Distance is the cosine distance to the query vector of a ranked read.
	Distance *float64 `json:"distance,omitempty"`
	// Match is, in a read by a text, why the belief ranked where it did: its place in the
	// vector, words and entity rankings fused.
	Match *Match `json:"match,omitempty"`
}

// AsDefault is b as an inherited read shows it to a reader who may not read b's scope:
// what it says, on which slot, when it holds and whose default it is; never the
// transcripts and quotes it came from, nor the beliefs it replaced or rests on.
func (b Belief) AsDefault() Belief {
	b.EpisodeID, b.Quote, b.Episodes = nil, nil, nil
	b.Supersedes, b.SupersededBy, b.DependsOn, b.NeedsReview = nil, nil, nil, false
	return b
}

// Event is one applied revision, kept as a labeled example.
type Event struct {
	ID           int64          `json:"id"`
	Scope        string         `json:"scope"`
	Action       Action         `json:"action"`
	Reason       Reason         `json:"reason"`
	Origin       RevisionOrigin `json:"origin"`
	OldBeliefID  int64          `json:"old_belief_id"`
	NewBeliefID  *int64         `json:"new_belief_id"`
	OldStatement string         `json:"old_statement"`
	NewStatement *string        `json:"new_statement"`
	Excerpt      *string        `json:"excerpt"`
	Rationale    *string        `json:"rationale"`
	EpisodeID    *int64         `json:"episode_id"`
	CreatedAt    time.Time      `json:"created_at"`
	// Reverts is the event a revert (action revert) undid; null for other events.
	Reverts *int64 `json:"reverts"`
	// RevertedBy is the revert that undid this event, at RevertedAt; null until then.
	RevertedBy *int64     `json:"reverted_by"`
	RevertedAt *time.Time `json:"reverted_at"`
	// RevertNote is the operator's note on the revert of this event, read only for
	// few-shot examples (NearestEvents); the revert event has it as its excerpt.
	RevertNote *string `json:"-"`
	// Distance is the cosine distance to the query vector of a ranked read.
	Distance *float64 `json:"distance,omitempty"`
}

// Reverted says whether an operator undid the event.
func (e *Event) Reverted() bool { return e.RevertedBy != nil }

// ConflictKind is what a review item asks an operator to look at.
type ConflictKind string

const (
	// ConflictRefused is a revision the engine refused; its Cause says why.
	ConflictRefused ConflictKind = "refused"
	// ConflictBasisChanged is an active belief whose basis, a belief it was concluded
	// from, was superseded, retracted, forgotten or purged.
	ConflictBasisChanged ConflictKind = "basis_changed"
)

// Cause says why the engine refused a revision.
type Cause string

// The causes of a refusal.
const (
	CauseEntrenchment Cause = "entrenchment"  // the target is held more firmly than the revision (see Origin)
	CauseStaleTarget  Cause = "stale_target"  // the target is no longer active, or the batch changed it already
	CauseTimeOrder    Cause = "time_order"    // the revision would end the target before its start
	CauseInvalidIndex Cause = "invalid_index" // the index names no candidate the writer was shown
	CauseEvent        Cause = "event"         // a later event does not replace an earlier one; both happened
	// CauseUnrelated and the two after it are the containment guards' (containment.go):
	// a model's destructive directive the engine does not trust without an operator.
	CauseUnrelated    Cause = "unrelated"     // the new belief is not about the target (a wrong candidate index)
	CauseUngrounded   Cause = "ungrounded"    // the conversation never speaks of the target (an obeyed injection)
	CauseMassRevision Cause = "mass_revision" // the episode's destructive directives are past MAX_REVISIONS_PER_EPISODE
	// CauseOtherEntity: a supersession whose new fact is about another entity than its
	// target; the new fact is its own entity's belief, the target stays current.
	CauseOtherEntity Cause = "other_entity"
	// CauseSameEntity is a proposal that two entities are one (Proposal.Entity names
	// them); only an operator's decision merges them.
	CauseSameEntity Cause = "same_entity"
	// CauseNotFromUser: a destructive directive whose quote is only in text the user did
	// not say as their own (another role's message, a quoted or forwarded block).
	CauseNotFromUser Cause = "not_from_user"
	// CauseSecondOpinion: a destructive directive that speaker, entity and slot did not
	// settle, and that the second opinion did not confirm.
	CauseSecondOpinion Cause = "second_opinion"
)

// Held says whether c is a guard's: a model's directive the engine does not trust
// without an operator (containment.go), not a revision its rules refuse.
func (c Cause) Held() bool {
	switch c {
	case CauseUnrelated, CauseUngrounded, CauseMassRevision, CauseOtherEntity, CauseNotFromUser, CauseSecondOpinion:
		return true
	}
	return false
}

// ItemResolution is the resolution of a closed review item.
type ItemResolution string

// How a review item was closed, and by whom.
const (
	ResolvedApplied    ItemResolution = "applied"    // an operator carried out the revision
	ResolvedDismissed  ItemResolution = "dismissed"  // an operator left memory as it was
	ResolvedKept       ItemResolution = "kept"       // consolidation found the belief still holds
	ResolvedRetracted  ItemResolution = "retracted"  // the belief was retracted, by any writer
	ResolvedSuperseded ItemResolution = "superseded" // the belief was superseded, by any writer
	ResolvedForgotten  ItemResolution = "forgotten"  // the belief was forgotten
)

// Conflict is one item of the review queue: a revision the engine refused, or a belief
// whose basis changed. Its JSON form is the contract of `beliefs conflicts --json`.
type Conflict struct {
	ID     int64          `json:"id"`
	Scope  string         `json:"scope"`
	Kind   ConflictKind   `json:"kind"`
	Cause  *Cause         `json:"cause"`
	Origin RevisionOrigin `json:"origin"`
	Action Action         `json:"action"`
	Reason *Reason        `json:"reason"`
	// BeliefID is the belief the item is about: the dependent of a basis_changed item;
	// for a refusal, the belief that was to replace the target, when one was stored.
	BeliefID *int64 `json:"belief_id"`
	// TargetID is the belief the refused revision would have changed, or the changed
	// basis (null once purged).
	TargetID *int64 `json:"target_id"`
	// Statement is what the item proposes (a refusal) or the belief under review.
	Statement  string          `json:"statement"`
	Proposed   *Proposal       `json:"proposed"`
	Detail     string          `json:"detail"`
	EpisodeID  *int64          `json:"episode_id"`
	Status     string          `json:"status"`
	CreatedAt  time.Time       `json:"created_at"`
	ResolvedAt *time.Time      `json:"resolved_at"`
	Resolution *ItemResolution `json:"resolution"`
	Note       *string         `json:"note"`
	// Target is the belief of TargetID as it is now, read with the item (Conflicts,
	// ConflictIn) so that a reviewer sees what the item would revise; nil when none.
	Target *ItemBelief `json:"target,omitempty"`
	// Why is the item's cause in words (review_why.go), beside Detail's measures.
	Why string `json:"why,omitempty"`
}

// Open says whether the item still awaits a decision.
func (c *Conflict) Open() bool { return c.ResolvedAt == nil }

// Proposal is the belief a refused revision would have written.
type Proposal struct {
	Statement  string     `json:"statement,omitempty"`
	Subject    string     `json:"subject,omitempty"`
	Kind       Kind       `json:"kind,omitempty"`
	Attribute  string     `json:"attribute,omitempty"`
	Confidence float64    `json:"confidence"`
	Origin     Origin     `json:"origin,omitempty"`
	ValidFrom  *time.Time `json:"valid_from,omitempty"`
	Quote      string     `json:"quote,omitempty"`
	// At is when the source said it: the time a revision carried out later dates from.
	At *time.Time `json:"at,omitempty"`
	// Merge is what a same_entity item proposes: Other merged into Into.
	Merge *MergeProposal `json:"merge,omitempty"`
	// Opinion is the second opinion's reason, when it did not confirm the revision.
	Opinion string `json:"opinion,omitempty"`
}

// MergeProposal names two entities of a scope that may be one, by key.
type MergeProposal struct {
	Into  string `json:"into"`
	Other string `json:"other"`
}
