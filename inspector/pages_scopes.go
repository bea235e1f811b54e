package inspector

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/memory"
)

// maxScopes bounds the scopes listed on one page; a prefix narrows the list.
const maxScopes = 500

type scopeRow struct {
	memory.ScopeStatus
	OpenItems int
}

type scopesView struct {
	Prefix    string
	Scopes    []scopeRow
	Truncated bool
}

// scopesPage lists the scopes the key may see, with their counts.
func (s *Server) scopesPage(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	prefix := r.URL.Query().Get("prefix")
	rows, err := s.visibleScopes(r.Context(), p, prefix)
	if err != nil {
		return err
	}
	v := scopesView{Prefix: prefix, Scopes: rows}
	if len(rows) > maxScopes {
		v.Scopes, v.Truncated = rows[:maxScopes], true
	}
	return s.render(w, r, p, "scopes", "Scopes", nil, v)
}

// visibleScopes reads the scopes starting with filter, under each of the key's
// prefixes only: what the key may not see is never read.
func (s *Server) visibleScopes(ctx context.Context, p *api.Principal, filter string) ([]scopeRow, error) {
	byScope := map[string]*scopeRow{}
	for _, prefix := range readPrefixes(p.Scopes, filter) {
		statuses, err := s.store.Scopes(ctx, prefix)
		if err != nil {
			return nil, err
		}
		items, err := s.store.OpenItems(ctx, prefix)
		if err != nil {
			return nil, err
		}
		for _, st := range statuses {
			if p.Sees(st.Scope) {
				byScope[st.Scope] = &scopeRow{ScopeStatus: st, OpenItems: items[st.Scope]}
			}
		}
	}
	rows := make([]scopeRow, 0, len(byScope))
	for _, row := range byScope {
		rows = append(rows, *row)
	}
	slices.SortFunc(rows, func(a, b scopeRow) int { return strings.Compare(a.Scope, b.Scope) })
	return rows, nil
}

// readPrefixes is the prefixes to read so as to list the scopes starting with filter
// that a key with scopes may see: for each of its prefixes, the longer of the two
// when one extends the other, none when they part.
func readPrefixes(scopes []string, filter string) []string {
	var out []string
	for _, kp := range scopes {
		switch {
		case kp == api.AllScopes || strings.HasPrefix(filter, kp):
			out = append(out, filter)
		case strings.HasPrefix(kp, filter):
			out = append(out, kp)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
