package inspector

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/credohq/credo/api"
	"github.com/credohq/credo/entity"
	"github.com/credohq/credo/transcript"
)

// funcs are the templates' helpers.
func funcs() template.FuncMap {
	return template.FuncMap{
		"scopeURL":  scopeURL,
		"entityURL": entityURL,
		// Most beliefs are the user's: the scope page names the entity of the others only.
		"isUser":    func(key string) bool { return key == entity.User },
		"beliefURL": func(id int64) string { return Prefix + "beliefs/" + strconv.FormatInt(id, 10) },
		"date":      date,
		"when":      when,
		"until":     until,
		"valid":     valid,
		"str":       deref,
		// An episode's last error as a key sees it in the API: the kind of failure, not
		// the model server's address or raw answer.
		"lastError": func(s *string) string { return deref(api.PublicError(s)) },
		"val":       val,
		"deref64": func(n *int64) int64 {
			if n == nil {
				return 0
			}
			return *n
		},
		"derefTime": func(t *time.Time) time.Time {
			if t == nil {
				return time.Time{}
			}
			return *t
		},
		"pct": func(f float64) string { return fmt.Sprintf("%.2f", f) },
		"percent": func(f *float64) string {
			if f == nil {
				return "—"
			}
			return fmt.Sprintf("%.1f%%", *f*100)
		},
		"plural": plural,
	}
}

// scopeURL is the path of scope's page, or of one of its pages (suffix "/review"...).
// The scope is one path segment: its slashes are escaped.
func scopeURL(scope string, suffix ...string) string {
	return Prefix + "scopes/" + url.PathEscape(scope) + strings.Join(suffix, "")
}

// entityURL is the path of the page of scope's entity called name (its key, name or an
// alias), which is one path segment as the scope is.
func entityURL(scope, name string) string {
	return scopeURL(scope, "/entities/", url.PathEscape(name))
}

// date is t as a day when it is midnight UTC, as valid times mostly are; else with
// the minute.
func date(t time.Time) string {
	t = t.UTC()
	if t.Equal(t.Truncate(24 * time.Hour)) {
		return t.Format(time.DateOnly)
	}
	return t.Format("2006-01-02 15:04")
}

// when is a known time, to the minute, in UTC.
func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") + " UTC" }

// until is the end of an interval: the date, or "now" while it is open.
func until(t *time.Time) string {
	if t == nil {
		return "now"
	}
	return date(*t)
}

// valid is a belief's valid time: "from → until", or one instant ("at 10:00") when it
// ends where it starts, as when one transcript says a thing and corrects it at once;
// "10:00 → 10:00" reads as an error.
func valid(from time.Time, to *time.Time) string {
	if to != nil && to.Equal(from) {
		return "at " + date(from)
	}
	return date(from) + " → " + until(to)
}

// val is what a pointer points to, or "" for nil: the optional enums and times of
// review items.
func val(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer {
		return v
	}
	if rv.IsNil() {
		return ""
	}
	return rv.Elem().Interface()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// checkScope refuses a scope no episode could have, by the shared rule (empty, padded,
// too long, invalid UTF-8, a NUL or other control character), and one outside the key's
// prefixes, with the same answer whether it exists or not.
func checkScope(seen interface{ Sees(string) bool }, scope string) error {
	if err := checkInput(transcript.CheckScope("scope", scope)); err != nil {
		return err
	}
	if !seen.Sees(scope) {
		return forbiddenScope()
	}
	return nil
}

// checkInput is the shared rule's verdict (transcript.CheckScope, CheckText) as a 400
// page naming the field: the same rule as the API, MCP and the CLI apply.
func checkInput(err error) error {
	if msg, ok := transcript.InputMessage(err); ok {
		return badRequest("Nothing was read or changed: the " + msg + ".")
	}
	return err
}

// pathID is the id in the path, or not found.
func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, notFound()
	}
	return id, nil
}

// flash is what the action before the redirect did, from fixed wordings only.
func flash(r *http.Request) string {
	q := r.URL.Query()
	n := q.Get("n")
	if _, err := strconv.ParseInt(n, 10, 64); err != nil {
		n = ""
	}
	switch q.Get("done") {
	case "forgotten":
		return "Belief " + n + " was forgotten: it left every read and prompt, and stays stored for audit."
	case "purged":
		return "Belief " + n + " was erased for good, with every copy of its text."
	case "forgotten-all":
		return "Every belief of the scope was forgotten."
	case "purged-scope":
		return "The scope was erased for good."
	case "forgotten-entity":
		return "Every belief about the entity was forgotten: they left every read and prompt, and stay stored for audit."
	case "purged-entity":
		return "The entity was erased for good, with its names, every belief about it and every copy of their text."
	case "applied":
		return "Review item " + n + " was applied."
	case "dismissed":
		return "Review item " + n + " was dismissed: memory stays as it was."
	case "reverted":
		return "Event " + n + " was reverted: memory is back as it was before it, and later extractions learn from it."
	case "retried":
		return "Episode " + n + " is pending again: its scope's extraction job takes it in its turn."
	}
	return ""
}

// done is the page at path with what an action did, after a POST.
func done(path, what string, id int64) string {
	q := url.Values{"done": {what}}
	if id != 0 {
		q.Set("n", strconv.FormatInt(id, 10))
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + q.Encode()
}
