package transfer

import (
	"fmt"
	"strings"

	"github.com/credohq/credo/transcript"
)

// ScopeMapping imports the exported scope Old, and every scope under it (Old/...), as New
// (New/...): a scope's place in the hierarchy moves with it, and user:4 never takes
// user:42 along.
type ScopeMapping struct {
	Old, New string
}

// ParseScopeMap reads OLD=NEW specs (split at the first "="), as --scope-map and
// scope_map give them.
func ParseScopeMap(specs []string) ([]ScopeMapping, error) {
	out := make([]ScopeMapping, 0, len(specs))
	seen := map[string]bool{}
	for _, spec := range specs {
		old, repl, ok := strings.Cut(spec, "=")
		if !ok {
			return nil, transcript.InputErrorf(ErrInput, "scope map", "%q is not OLD=NEW", spec)
		}
		if err := transcript.CheckScope(fmt.Sprintf("scope map %q: OLD", spec), old); err != nil {
			return nil, err
		}
		if err := transcript.CheckScope(fmt.Sprintf("scope map %q: NEW", spec), repl); err != nil {
			return nil, err
		}
		if seen[old] {
			return nil, transcript.InputErrorf(ErrInput, "scope map", "maps %q twice", old)
		}
		seen[old] = true
		out = append(out, ScopeMapping{Old: old, New: repl})
	}
	return out, nil
}

// mapScope is where scope goes: the longest Old it is or is under gives its new name;
// used says which mapping that was.
func mapScope(m []ScopeMapping, scope string) (string, int) {
	best := -1
	for i, x := range m {
		if (scope == x.Old || strings.HasPrefix(scope, x.Old+"/")) && (best < 0 || len(x.Old) > len(m[best].Old)) {
			best = i
		}
	}
	if best < 0 {
		return scope, -1
	}
	return m[best].New + strings.TrimPrefix(scope, m[best].Old), best
}
