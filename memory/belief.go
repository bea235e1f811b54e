// Package memory is credo's belief store and its one revision engine, Apply, through
// which extraction, consolidation and operators all write.
package memory

import (
	"time"
)

// Status is where a belief stands in memory.
type Status string

const (
	StatusActive     Status = "active"
	StatusSuperseded Status = "superseded"
	StatusRetracted  Status = "retracted"
	StatusForgotten  Status = "forgotten"
)

// Origin is where a belief came from; it decides what may revise it (entrenchment).
type Origin string

const (
	OriginUserStated    Origin = "user_stated"
	OriginInferred      Origin = "inferred"
	OriginAuthoritative Origin = "authoritative"
)

// Kind is what sort of statement a belief is.
type Kind string

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

const (
	ActionSupersede Action = "supersede"
	ActionRetract   Action = "retract"
	ActionReinforce Action = "reinforce"
)

// Reason says why a revision happened: the old belief was wrong (correction), the world
// changed (temporal), two beliefs said the same (duplicate), or it was said again
// (restated).
type Reason string

const (
	ReasonCorrection Reason = "correction"
	ReasonTemporal   Reason = "temporal"
	ReasonDuplicate  Reason = "duplicate"
	ReasonRestated   Reason = "restated"
)

// RevisionOrigin is the writer of a revision.
type RevisionOrigin string

const (
	RevisionExtraction    RevisionOrigin = "extraction"
	RevisionConsolidation RevisionOrigin = "consolidation"
	RevisionOperator      RevisionOrigin = "operator"
)

// Belief is one statement about a subject in a scope, with its valid time (when it was
// true in the world) and known time (when memory held it). Its JSON form is the contract
// of `beliefs list --json`.
type Belief struct {
	ID              int64      `json:"id"`
	Scope           string     `json:"scope"`
	Subject         string     `json:"subject"`
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
	// Distance is the cosine distance to the query vector of a ranked read.
	Distance *float64 `json:"distance,omitempty"`
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
}

// ConflictKind says why the engine refused a revision.
type ConflictKind string

const (
	ConflictEntrenchment ConflictKind = "entrenchment"
	ConflictStaleTarget  ConflictKind = "stale_target"
	ConflictTimeOrder    ConflictKind = "time_order"
	ConflictInvalidIndex ConflictKind = "invalid_index"
)

// Conflict is a revision the engine refused, kept for review.
type Conflict struct {
	ID             int64          `json:"id"`
	Scope          string         `json:"scope"`
	Kind           ConflictKind   `json:"kind"`
	Origin         RevisionOrigin `json:"origin"`
	Action         Action         `json:"action"`
	Reason         *Reason        `json:"reason"`
	TargetBeliefID *int64         `json:"target_belief_id"`
	Proposed       *Proposal      `json:"proposed"`
	Detail         string         `json:"detail"`
	EpisodeID      *int64         `json:"episode_id"`
	Status         string         `json:"status"`
	CreatedAt      time.Time      `json:"created_at"`
}

// Proposal is the belief a refused revision would have written.
type Proposal struct {
	Statement  string     `json:"statement,omitempty"`
	Subject    string     `json:"subject,omitempty"`
	Attribute  string     `json:"attribute,omitempty"`
	Confidence float64    `json:"confidence"`
	Origin     Origin     `json:"origin,omitempty"`
	ValidFrom  *time.Time `json:"valid_from,omitempty"`
	Quote      string     `json:"quote,omitempty"`
}
