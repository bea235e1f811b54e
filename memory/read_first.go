package memory

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The reads a writer or a question makes first, before a model call, each sent in one
// round trip: their statements are queued in a batch, each read's own (queue...) as
// its method alone sends it.

// sendQueued sends, in one round trip, the reads queue puts on a batch of their own.
func sendQueued(ctx context.Context, db batchSender, queue func(b *pgx.Batch)) error {
	b := &pgx.Batch{}
	queue(b)
	return db.SendBatch(ctx, b).Close()
}

// WriterReadQuery is what a writer of a scope reads before it asks its model, as an
// extraction does.
type WriterReadQuery struct {
	Scope string
	// NextEpisode reads the scope's oldest pending episode too (NextPendingEpisode).
	NextEpisode bool
	// CurrentLimit bounds the current beliefs read (CurrentUpTo; 0: all).
	CurrentLimit int
	// Model is the embedding model the writer embeds with; empty, nothing is read of
	// vectors.
	Model string
	// ExampleScopes are the scopes whose examples embedded with Model are looked for
	// (ExamplesAvailable).
	ExampleScopes []string
	// UnembeddedLimit bounds the scope's rows without a vector of Model read
	// (Unembedded); 0 reads none.
	UnembeddedLimit int
}

// WriterRead is what ReadForWriter read.
type WriterRead struct {
	// Episode is the scope's next pending episode; nil when none is, or it was not asked.
	Episode *PendingEpisode
	// Policy is the policy in force in the scope, nil if none (PolicyFor).
	Policy *Policy
	// Seen is the scope's snapshot, taken before Current was read (Snapshot).
	Seen              *Snapshot
	Current           []Belief
	ExamplesAvailable bool
	Unembedded        []Unembedded
}

// ReadForWriter makes a writer's reads of q.Scope in one round trip: the statements are
// sent together and run in the order of WriterRead's fields, each with a snapshot of its
// own as when sent alone, so the snapshot is taken before the current beliefs are read,
// as Snapshot asks. Each names the scope: on Citus each is router work on its shard.
func (s *Store) ReadForWriter(ctx context.Context, q WriterReadQuery) (*WriterRead, error) {
	r := &WriterRead{Seen: &Snapshot{}}
	policies := map[string]*Policy{}
	b := &pgx.Batch{}
	if q.NextEpisode {
		queueNextPendingEpisode(b, q.Scope, &r.Episode)
	}
	queuePolicies(b, []string{q.Scope}, policies)
	queueSnapshot(b, q.Scope, r.Seen)
	queueCurrentUpTo(b, q.Scope, q.CurrentLimit, &r.Current)
	if q.Model != "" {
		queueExamplesAvailable(b, q.ExampleScopes, q.Model, &r.ExamplesAvailable)
		if q.UnembeddedLimit > 0 {
			queueUnembedded(b, scopeUnembedded(q.Scope, q.Model, q.UnembeddedLimit), &r.Unembedded)
		}
	}
	if err := s.db.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("read %q for a writer: %w", q.Scope, err)
	}
	r.Policy = policies[q.Scope]
	return r, nil
}

// ReadForQuestion is what a question of scope reads before its embedding call, in one
// round trip: the policy in force in the scope (nil if none), whose redaction the
// question passes, and up to limit of the scope's rows without a vector of model
// (Unembedded), embedded in the same call; none when limit is 0.
func (s *Store) ReadForQuestion(ctx context.Context, scope, model string, limit int) (*Policy, []Unembedded, error) {
	var pending []Unembedded
	policies := map[string]*Policy{}
	b := &pgx.Batch{}
	queuePolicies(b, []string{scope}, policies)
	if limit > 0 {
		queueUnembedded(b, scopeUnembedded(scope, model, limit), &pending)
	}
	if err := s.db.SendBatch(ctx, b).Close(); err != nil {
		return nil, nil, fmt.Errorf("read %q for a question: %w", scope, err)
	}
	return policies[scope], pending, nil
}
