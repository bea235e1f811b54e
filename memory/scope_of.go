package memory

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Things that have an id and a scope.
const (
	OfBelief  = "belief"
	OfEpisode = "episode"
	OfItem    = "belief_conflict"
	OfEvent   = "revision_event"
)

// ScopeOf is the scope of the belief, episode, review item or revision event id (what
// is OfBelief, OfEpisode, OfItem or OfEvent), or ErrNotFound. It reads one index entry
// whether the id is unknown or another tenant's, so that a caller checking access first
// answers both in the same time, before any heavier read.
func (s *Store) ScopeOf(ctx context.Context, what string, id int64) (string, error) {
	switch what {
	case OfBelief, OfEpisode, OfItem, OfEvent:
	default:
		return "", fmt.Errorf("scope of %s %d: not a kind of thing with a scope", what, id)
	}
	var scope string
	err := s.db.QueryRow(ctx, "SELECT scope FROM "+what+" WHERE id = $1", id).Scan(&scope)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("%s %d: %w", Noun(what), id, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("scope of %s %d: %w", Noun(what), id, err)
	}
	return scope, nil
}

// Noun is what a user calls the thing of table what (OfBelief, …), in messages.
func Noun(what string) string {
	switch what {
	case OfItem:
		return "review item"
	case OfEvent:
		return "event"
	}
	return what
}
