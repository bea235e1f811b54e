package inspector

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/credohq/credo/api"
)

//go:embed templates/*.tmpl
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// frame is what the layout shows around a page.
type frame struct {
	Title string
	// Who is the key the pages act for; Open when there is none (keyless mode).
	Who    string
	Open   bool
	KeyID  int64
	Crumbs []crumb
	// Flash says what the last action did.
	Flash string
	// Page is the page's own data.
	Page any
}

type crumb struct{ Label, URL string }

// parsePages parses each page template with the layout, one template set per page, so
// that every page defines its own "content".
func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("layout").Funcs(funcs()).ParseFS(templateFiles, "templates/layout.tmpl")
	if err != nil {
		return nil, fmt.Errorf("inspector: parse layout: %w", err)
	}
	names, err := fs.Glob(templateFiles, "templates/*.tmpl")
	if err != nil {
		return nil, fmt.Errorf("inspector: list templates: %w", err)
	}
	pages := map[string]*template.Template{}
	for _, name := range names {
		page := strings.TrimSuffix(path.Base(name), ".tmpl")
		if page == "layout" {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(templateFiles, name)
		if err != nil {
			return nil, fmt.Errorf("inspector: parse %s: %w", name, err)
		}
		pages[page] = t
	}
	return pages, nil
}

// show renders page inside the layout, whole or not at all: a failing template sends
// an error page, never half a page.
func (s *Server) show(w http.ResponseWriter, r *http.Request, status int, page string, f frame, data any) {
	t := s.pages[page]
	if t == nil {
		s.internal(w, r, fmt.Errorf("inspector: no template %q", page))
		return
	}
	f.Page = data
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", f); err != nil {
		s.internal(w, r, fmt.Errorf("inspector: render %s: %w", page, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// render shows a page acting for p, with what the last action did.
func (s *Server) render(w http.ResponseWriter, r *http.Request, p *api.Principal, page, title string, crumbs []crumb, data any) error {
	f := frame{Title: title, Crumbs: crumbs, Flash: flash(r)}
	f.who(p)
	s.show(w, r, http.StatusOK, page, f, data)
	return nil
}

func (f *frame) who(p *api.Principal) {
	if p == nil {
		return
	}
	f.Who, f.Open, f.KeyID = p.Name, p.KeyID == 0, p.KeyID
}

// static serves the embedded stylesheet and icon.
func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if !strings.HasSuffix(name, ".css") && !strings.HasSuffix(name, ".svg") {
		s.fail(w, r, nil, notFound())
		return
	}
	if _, err := fs.Stat(staticFiles, "static/"+name); err != nil {
		s.fail(w, r, nil, notFound())
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=3600")
	http.ServeFileFS(w, r, staticFiles, "static/"+name) //nolint:gosec // G703: an embedded file system has no path outside it
}
