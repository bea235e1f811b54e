package examples_test

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// The README is the front door and docs/ holds the references: these tests keep the two
// joined. Nothing is fetched: links to other sites are left alone.

// readmeMaxLines is how long the front door may grow.
const readmeMaxLines = 220

// TestDocsLinks: every relative link in the README and docs/ leads to a file of the
// repository, and every #anchor to a heading of its target, by GitHub's rules.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	for _, doc := range markdownFiles(t, root) {
		rel, _ := filepath.Rel(root, doc)
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			links := linksOf(t, doc)
			require.NotEmpty(t, links, "a document links back at least to the README")
			for _, l := range links {
				target, fragment, external := resolve(doc, l)
				if external {
					continue
				}
				inside, err := filepath.Rel(root, target)
				require.NoError(t, err)
				require.False(t, inside == ".." || strings.HasPrefix(inside, ".."+string(filepath.Separator)),
					"%s: link %q leaves the repository", rel, l)
				_, err = os.Stat(target)
				require.NoError(t, err, "%s: link %q: no such file", rel, l)
				if fragment == "" || !strings.HasSuffix(target, ".md") {
					continue
				}
				anchors := anchorsOf(t, target)
				require.True(t, anchors[fragment], "%s: link %q: no such heading in %s (anchors: %v)",
					rel, l, filepath.Base(target), sortedKeys(anchors))
			}
		})
	}
}

// TestREADMEIsShort: the README stays a front door; references go to docs/.
func TestREADMEIsShort(t *testing.T) {
	t.Parallel()
	readme := read(t, filepath.Join(repoRoot(t), "README.md"))
	lines := strings.Count(readme, "\n")
	if !strings.HasSuffix(readme, "\n") {
		lines++
	}
	require.LessOrEqual(t, lines, readmeMaxLines, "README.md has %d lines: move the details to docs/", lines)
}

// TestREADMELinksEveryDoc: no page of docs/ is an orphan.
func TestREADMELinksEveryDoc(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	readme := filepath.Join(root, "README.md")
	linked := map[string]bool{}
	for _, l := range linksOf(t, readme) {
		if target, _, external := resolve(readme, l); !external {
			linked[target] = true
		}
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, docs)
	for _, doc := range docs {
		require.True(t, linked[doc], "README.md links to no docs/%s", filepath.Base(doc))
	}
}

// TestREADMECommands: "Commands at a glance" names every command and every beliefs
// subcommand that cmd/beliefs documents, and none that it does not; docs/configuration.md
// documents each of them too.
func TestREADMECommands(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)

	// cmd/beliefs/main.go's doc comment: "//	beliefs list --scope S ...".
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^//\s+beliefs ([a-z][a-z-]*)`).FindAllStringSubmatch(read(t, filepath.Join(root, "cmd", "beliefs", "main.go")), -1) {
		documented[m[1]] = true
	}
	require.NotEmpty(t, documented, "cmd/beliefs/main.go lists its subcommands in its doc comment")

	glance := section(t, read(t, filepath.Join(root, "README.md")), "Commands at a glance")
	inREADME := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s*beliefs ([a-z][a-z-]*)`).FindAllStringSubmatch(glance, -1) {
		inREADME[m[1]] = true
	}
	for sub := range documented {
		require.True(t, inREADME[sub], "README's commands at a glance lack `beliefs %s`", sub)
	}
	for sub := range inREADME {
		require.True(t, documented[sub], "README names `beliefs %s`, which cmd/beliefs does not document", sub)
	}

	// Every command under cmd/ (cmd/internal composes them), and eval's locomo.
	cmds, err := os.ReadDir(filepath.Join(root, "cmd"))
	require.NoError(t, err)
	for _, c := range cmds {
		if c.IsDir() && c.Name() != "internal" {
			require.Regexp(t, `(?m)^\s*`+regexp.QuoteMeta(c.Name())+`\b`, glance, "README's commands at a glance lack %s", c.Name())
		}
	}
	require.Regexp(t, `(?m)^\s*eval locomo\b`, glance)

	reference := read(t, filepath.Join(root, "docs", "configuration.md"))
	for sub := range documented {
		require.Regexp(t, `(?m)^beliefs `+regexp.QuoteMeta(sub)+`\b`, reference, "docs/configuration.md lacks `beliefs %s`", sub)
	}
}

// TestREADMEPlainForms: every command the README runs in the Compose container
// (`docker compose exec worker CMD [SUB [SUB]]`) it also shows as it runs without Docker
// (`bin/CMD ...`), so that a reader without Docker is never left with the Compose form
// alone.
func TestREADMEPlainForms(t *testing.T) {
	t.Parallel()
	readme := read(t, filepath.Join(repoRoot(t), "README.md"))
	// The command and its subcommands: the lowercase words before the first flag or
	// argument.
	composed := regexp.MustCompile(`docker compose exec worker ([a-z]+(?:[ \t]+[a-z][a-z-]*)*)`).FindAllStringSubmatch(readme, -1)
	require.NotEmpty(t, composed, "the README shows commands in the Compose container")
	for _, m := range composed {
		plain := "bin/" + strings.Join(strings.Fields(m[1]), " ")
		require.Regexp(t, regexp.QuoteMeta(plain)+`\b`, readme, "the README shows %q only in Compose", m[0])
	}
}

// TestREADMEKeyCanWrite: the key the README has a newcomer create serves the agent they
// build next, which sends transcripts: a key without `write` answers it 403.
func TestREADMEKeyCanWrite(t *testing.T) {
	t.Parallel()
	readme := read(t, filepath.Join(repoRoot(t), "README.md"))
	keys := regexp.MustCompile("keys create [^`]*--rights ([a-z,]+)").FindAllStringSubmatch(readme, -1)
	require.NotEmpty(t, keys, "the README has a key created")
	for _, m := range keys {
		require.Contains(t, strings.Split(m[1], ","), "write", "%s", m[0])
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	for heading, want := range map[string]string{
		"The agent's read side: context and answers":   "the-agents-read-side-context-and-answers",
		"Ordering: one extraction per scope at a time": "ordering-one-extraction-per-scope-at-a-time",
		"`enqueue` and `worker`":                       "enqueue-and-worker",
		"HTTP API and MCP":                             "http-api-and-mcp",
		"A — B":                                        "a--b",
		"snake_case and kebab-case":                    "snake_case-and-kebab-case",
		"[Linked](other.md) heading":                   "linked-heading",
	} {
		require.Equal(t, want, slug(heading), heading)
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	return root
}

// markdownFiles is the README and every page of docs/.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	return append([]string{filepath.Join(root, "README.md")}, docs...)
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

var (
	fence      = regexp.MustCompile("^\\s*(```|~~~)")
	inlineCode = regexp.MustCompile("`[^`]*`")
	inlineLink = regexp.MustCompile(`\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refLink    = regexp.MustCompile(`^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$`)
	htmlLink   = regexp.MustCompile(`(?i)<(?:a|img)\b[^>]*\b(?:href|src)\s*=\s*"([^"]+)"`)
	atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlAnchor = regexp.MustCompile(`(?i)<a\b[^>]*\b(?:name|id)\s*=\s*"([^"]+)"`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// prose is the document's lines outside fenced code blocks: a `# comment` in a shell
// block is no heading, and a [x](y) there no link.
func prose(text string) []string {
	var out []string
	in := false
	for line := range strings.SplitSeq(text, "\n") {
		if fence.MatchString(line) {
			in = !in
			continue
		}
		if !in {
			out = append(out, line)
		}
	}
	return out
}

// linksOf is every link target of a Markdown file, as written.
func linksOf(t *testing.T, path string) []string {
	t.Helper()
	var links []string
	for _, line := range prose(read(t, path)) {
		if m := refLink.FindStringSubmatch(line); m != nil {
			links = append(links, m[1])
			continue
		}
		line = inlineCode.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			links = append(links, m[1])
		}
		for _, m := range htmlLink.FindAllStringSubmatch(line, -1) {
			links = append(links, m[1])
		}
	}
	return links
}

// resolve turns a link of the file at from into an absolute path and a fragment;
// external is a link with a scheme (https:, mailto:), which is not followed.
func resolve(from, link string) (target, fragment string, external bool) {
	if scheme.MatchString(link) {
		return "", "", true
	}
	path, fragment, _ := strings.Cut(link, "#")
	if f, err := url.PathUnescape(fragment); err == nil {
		fragment = f
	}
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	if path == "" {
		return from, fragment, false
	}
	return filepath.Clean(filepath.Join(filepath.Dir(from), filepath.FromSlash(path))), fragment, false
}

// anchorsOf is every anchor GitHub makes in a Markdown file: one per heading (a repeated
// heading gets -1, -2, ...) and explicit <a name> or id attributes.
func anchorsOf(t *testing.T, path string) map[string]bool {
	t.Helper()
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range prose(read(t, path)) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		m := atxHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := slug(m[2])
		if n := seen[s]; n > 0 {
			anchors[s+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	return anchors
}

var (
	headingLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	htmlTag     = regexp.MustCompile(`<[^>]+>`)
)

// slug is GitHub's anchor for a heading: its text lowercased, each space a hyphen,
// punctuation dropped except - and _.
func slug(heading string) string {
	heading = headingLink.ReplaceAllString(heading, "$1")
	heading = htmlTag.ReplaceAllString(heading, "")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.M, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// section is the text under a "## title" heading, up to the next heading of that level.
func section(t *testing.T, text, title string) string {
	t.Helper()
	start := strings.Index(text, "\n## "+title+"\n")
	require.GreaterOrEqual(t, start, 0, "no section %q", title)
	rest := text[start+len("\n## "+title+"\n"):]
	if end := strings.Index(rest, "\n## "); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestModelContractDocumented: docs/configuration.md says what the model is asked and
// must answer, for every schema a pipeline call sends, field by field.
func TestModelContractDocumented(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "configuration.md"))
	require.NoError(t, err)
	text := string(doc)
	start := strings.Index(text, "## What the model is asked and must answer")
	require.GreaterOrEqual(t, start, 0, "the section exists")
	end := strings.Index(text[start+3:], "\n## ")
	require.Positive(t, end)
	section := text[start : start+3+end]
	for _, schema := range []string{"extraction", "consolidation", "review", "answer", "verification"} {
		raw, err := os.ReadFile(filepath.Join(root, "prompts", schema+".schema.json"))
		require.NoError(t, err)
		require.Contains(t, section, "schema `"+schema+"`")
		// Every property of the schema, at any depth, is named in the section.
		for _, m := range regexp.MustCompile(`"([a-z_]+)": \{`).FindAllStringSubmatch(string(raw), -1) {
			if m[1] == "properties" || m[1] == "items" {
				continue
			}
			require.Contains(t, section, "`"+m[1]+"`", "%s: field %s", schema, m[1])
		}
	}
}
