package extract

import (
	"context"
	"slices"

	"github.com/credohq/credo/entity"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/prompts"
)

// The prompt names whom each candidate is about, and the other names those entities go
// by, so that the model writes a subject the registry resolves to the same entity
// ("Sarah" and "sister" are one) and sees which beliefs are the user's own.

// entityNames reads the registry entries of the candidates' entities but the user's:
// one read, none when every candidate is the user's (most episodes: the model writes
// "user" for the user whatever else the user is called).
func (w *Worker) entityNames(ctx context.Context, scope string, cands []memory.Belief) (map[string]memory.Entity, error) {
	var keys []string
	for _, c := range cands {
		if c.Entity != entity.User {
			keys = append(keys, c.Entity)
		}
	}
	slices.Sort(keys)
	return w.cfg.Store.EntityNames(ctx, scope, slices.Compact(keys))
}

// promptCandidate is c as the prompt shows it, about the entity named in names (by key).
func promptCandidate(c memory.Belief, names map[string]memory.Entity) prompts.Candidate {
	pc := prompts.Candidate{Statement: c.Statement, Attribute: c.Attribute, Event: c.Kind == memory.KindEvent, ValidFrom: c.ValidFrom}
	if c.Entity != "" && c.Entity != entity.User {
		pc.Entity = c.Entity
		if e, ok := names[c.Entity]; ok {
			pc.Entity = e.Name
		}
	}
	return pc
}

// promptEntities are the candidates' entities that go by other names, for the prompt's
// list of names.
func promptEntities(cands []memory.Belief, names map[string]memory.Entity) []prompts.Entity {
	var out []prompts.Entity
	seen := map[string]bool{}
	for _, c := range cands {
		e, ok := names[c.Entity]
		if !ok || seen[e.Key] || len(e.Aliases) == 0 {
			continue
		}
		seen[e.Key] = true
		out = append(out, prompts.Entity{Name: e.Name, Kind: string(e.Kind), Aliases: e.Aliases})
	}
	return out
}
