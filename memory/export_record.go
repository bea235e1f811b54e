package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"time"

	"github.com/credohq/credo/entity"
)

// The records of an export (docs/api.md, "Export and import"): one JSON object a line,
// each naming its type and scope. Their JSON form is a contract: the format's version
// changes when a field changes meaning or goes. Ids are the exporting database's; an
// import gives every row a new one and rewrites every reference. No vector is exported:
// an import embeds with its own EMBED_MODEL.

// ExportFormat and ExportVersion are the first line's "format" and "version".
const (
	ExportFormat  = "credo-export"
	ExportVersion = 1
)

// RecordType is what a line of an export holds.
type RecordType string

// The records of an export, in the order each scope's come: the scope, its entities,
// episodes, beliefs, dependencies, revision events and review items. The last line is
// the end. Entities came in version 1 as an added type (and the belief's entity as an
// added field): an export without them is of the same version, and imports as one
// whose beliefs' subjects name their entities.
const (
	RecordScope      RecordType = "scope"
	RecordEntity     RecordType = "entity"
	RecordEpisode    RecordType = "episode"
	RecordBelief     RecordType = "belief"
	RecordDependency RecordType = "dependency"
	RecordEvent      RecordType = "event"
	RecordReviewItem RecordType = "review_item"
	// RecordPolicy is reserved for a scope's organisation policy, once memory keeps one:
	// no version exports it yet, and an import refuses it.
	RecordPolicy RecordType = "policy"
	RecordEnd    RecordType = "end"
)

// ExportHeader is the first line of an export.
type ExportHeader struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// ExportedAt is when the export's snapshot was taken.
	ExportedAt time.Time `json:"exported_at"`
	// Scopes are the scopes exported, in order; every record names one of them.
	Scopes []string `json:"scopes"`
	// ScopePrefix is the prefix exported, or null for one scope.
	ScopePrefix *string `json:"scope_prefix"`
	// Since, when set, limits the export to what changed at or after it: such an export
	// is a part of memory, not a whole one, and is not imported.
	Since *time.Time `json:"since"`
	// EmbeddingModel is the model most of the exported beliefs were embedded with, or
	// null when none was: the vectors themselves stay behind.
	EmbeddingModel *string `json:"embedding_model"`
}

// ExportedScope is a scope's own state: it comes first among the scope's records.
type ExportedScope struct {
	Type  RecordType `json:"type"`
	Scope string     `json:"scope"`
	// ConsolidatedUntil is consolidation's watermark: beliefs changed since are what its
	// next pass looks at. Null when the scope was never consolidated.
	ConsolidatedUntil *time.Time `json:"consolidated_until"`
	Line              int        `json:"-"`
}

// ExportedEntity is an entity of the scope's registry with the names it goes by: it
// comes after the scope record, before the beliefs that name it by Key.
type ExportedEntity struct {
	Type  RecordType  `json:"type"`
	Scope string      `json:"scope"`
	Key   string      `json:"key"`
	Name  string      `json:"name"`
	Kind  entity.Kind `json:"kind"`
	// Aliases are its other names as they were said, in the order learned, without its
	// key (which is always one). An alias's own time is not exported: an import gives
	// them the entity's, a microsecond apart in this order, which is all it is read for.
	Aliases   []string  `json:"aliases"`
	CreatedAt time.Time `json:"created_at"`
	Line      int       `json:"-"`
}

// ExportedEpisode is an episode: its transcript as stored (purged spans redacted), its
// extraction's state and progress.
type ExportedEpisode struct {
	Type            RecordType      `json:"type"`
	Scope           string          `json:"scope"`
	ID              int64           `json:"id"`
	ExternalID      *string         `json:"external_id"`
	Messages        json.RawMessage `json:"messages"`
	ContentHash     string          `json:"content_hash"`
	OccurredAt      time.Time       `json:"occurred_at"`
	ReceivedAt      time.Time       `json:"received_at"`
	State           EpisodeState    `json:"state"`
	Attempts        int             `json:"attempts"`
	LastError       *string         `json:"last_error"`
	ProcessedAt     *time.Time      `json:"processed_at"`
	RedactedAt      *time.Time      `json:"redacted_at"`
	ProgressMessage int             `json:"progress_message"`
	ProgressOffset  int             `json:"progress_offset"`
	Line            int             `json:"-"`
}

// ExportedBelief is a belief with its valid and known times and its provenance; the
// belief it was superseded by is its one link ("supersedes" is the same link read
// backwards), the beliefs it rests on are dependency records. Entity is the key of the
// entity record it is about; an export made before entities has none, and the import
// resolves the subject instead (entity.Key).
type ExportedBelief struct {
	Type            RecordType `json:"type"`
	Scope           string     `json:"scope"`
	ID              int64      `json:"id"`
	Subject         string     `json:"subject"`
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
	SupersededBy    *int64     `json:"superseded_by"`
	EpisodeID       *int64     `json:"episode_id"`
	Quote           *string    `json:"quote"`
	ReinforcedCount int        `json:"reinforced_count"`
	LastSeenAt      time.Time  `json:"last_seen_at"`
	// UpdatedAt is when the engine last changed the belief: consolidation compares it
	// with the scope's watermark.
	UpdatedAt   time.Time `json:"updated_at"`
	NeedsReview bool      `json:"needs_review"`
	Line        int       `json:"-"`
}

// ExportedDependency says that belief BeliefID was concluded from belief BasisID.
type ExportedDependency struct {
	Type     RecordType `json:"type"`
	Scope    string     `json:"scope"`
	BeliefID int64      `json:"belief_id"`
	BasisID  int64      `json:"basis_id"`
	Line     int        `json:"-"`
}

// ExportedEvent is a revision event, with the event it reverts or was reverted by.
// Prior is what the revision changed, for its revert (null for events of versions
// before reverts); its episode_id is an episode of the export.
type ExportedEvent struct {
	Type RecordType `json:"type"`
	Event
	Prior json.RawMessage `json:"prior"`
	Line  int             `json:"-"`
}

// ExportedItem is a review item with every column the review queue keeps but its
// vector, under the column's name: a column a later version adds travels without a
// change of format. The ids it names (id, belief_id, target_belief_id, episode_id) are
// the export's.
type ExportedItem struct {
	Scope string
	ID    int64
	// Columns are the item's columns, scope and id included, as JSON values.
	Columns map[string]json.RawMessage
	Line    int
}

// itemIDColumns are the columns of a review item that name a row of its scope.
var itemIDColumns = []string{"belief_id", "target_belief_id", "episode_id"}

// MarshalJSON writes the item as one object: its type and its columns.
func (it ExportedItem) MarshalJSON() ([]byte, error) {
	cols := make(map[string]json.RawMessage, len(it.Columns)+1)
	maps.Copy(cols, it.Columns)
	cols["type"] = json.RawMessage(`"` + RecordReviewItem + `"`)
	return json.Marshal(cols)
}

// UnmarshalJSON reads an item's columns; scope and id must be there.
func (it *ExportedItem) UnmarshalJSON(b []byte) error {
	var cols map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&cols); err != nil {
		return err
	}
	delete(cols, "type")
	var scope string
	if err := json.Unmarshal(cols["scope"], &scope); err != nil || scope == "" {
		return errors.New("review item: scope is not a non-empty string")
	}
	var id int64
	if err := json.Unmarshal(cols["id"], &id); err != nil || id <= 0 {
		return errors.New("review item: id is not a positive integer")
	}
	it.Scope, it.ID, it.Columns = scope, id, cols
	return nil
}

// ExportEnd is the last line of an export: what it holds, so that an export cut short
// (a connection lost, a disk full) is never taken for a whole one.
type ExportEnd struct {
	Type RecordType `json:"type"`
	// Records counts the records of each type.
	Records map[RecordType]int `json:"records"`
}
