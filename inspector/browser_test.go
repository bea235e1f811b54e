package inspector_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// Environment of the browser test.
const (
	// envSkipBrowser=1 skips it where no browser is installed (a laptop); CI installs
	// Debian's chromium, so there it always runs.
	envSkipBrowser = "CREDO_SKIP_BROWSER"
	// envBrowser names the browser binary; by default chromium or chromium-browser.
	envBrowser = "CREDO_BROWSER"
	// envUpdateScreenshots=1 writes the README's screenshots to docs/screenshots.
	envUpdateScreenshots = "CREDO_UPDATE_SCREENSHOTS"
)

// findBrowser is the browser to drive. No browser is a failure, not a skip, unless
// envSkipBrowser says so: a test that skips itself in CI proves nothing.
func findBrowser(t *testing.T) string {
	if os.Getenv(envSkipBrowser) == "1" {
		t.Skipf("%s=1: the real-browser test is skipped", envSkipBrowser)
	}
	names := []string{"chromium", "chromium-browser"}
	if b := os.Getenv(envBrowser); b != "" {
		names = []string{b}
	}
	for _, name := range names {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Fatalf("no browser found (tried %v): install Debian's chromium (apt-get install chromium, as .ci/run does), "+
		"name one with %s, or set %s=1 to skip this test", names, envBrowser, envSkipBrowser)
	return ""
}

// tab is one browser tab driven by a test: each step has its own time limit, and a
// failing step saves a screenshot of the page as it was.
type tab struct {
	t   *testing.T
	ctx context.Context //nolint:containedctx // chromedp's tab is a context: holding it is holding the tab
}

func newTab(t *testing.T) *tab {
	exe := findBrowser(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 800), chromedp.Flag("hide-scrollbars", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first run starts the browser, with no limit of its own: ending its context
	// would close the browser.
	require.NoError(t, chromedp.Do(ctx), "start %s", exe)
	return &tab{t: t, ctx: ctx}
}

// do runs steps within 15 seconds.
func (b *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.fail(what, err)
	}
}

// text is the text of the first element sel matches.
func (b *tab) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.fail("read "+sel, err)
	}
	return s
}

func (b *tab) location() string {
	b.t.Helper()
	loc, err := chromedp.Run(b.ctx, chromedp.Location())
	require.NoError(b.t, err)
	return loc
}

// click clicks sel and waits for the page it leads to.
func (b *tab) click(sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(sel)))); err != nil {
		b.fail("click "+sel, err)
	}
}

// checkf fails the test, with a screenshot, unless ok.
func (b *tab) checkf(ok bool, format string, args ...any) {
	b.t.Helper()
	if !ok {
		b.fail(fmt.Sprintf(format, args...), nil)
	}
}

func (b *tab) fail(what string, err error) {
	b.t.Helper()
	dir := os.Getenv("CREDO_BROWSER_FAILURES")
	if dir == "" {
		dir = filepath.Join("testdata", "failures")
	}
	name := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(b.t.Name())+".png")
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if shot, serr := chromedp.Run(ctx, chromedp.FullScreenshot(100)); serr == nil {
		if os.MkdirAll(dir, 0o755) == nil && os.WriteFile(name, shot, 0o644) == nil {
			b.t.Logf("screenshot of the page: %s", name)
		}
	}
	b.t.Fatalf("%s (at %s): %v", what, b.location(), err)
}

// screenshot writes the page, 1280 pixels wide, to docs/screenshots/name when
// envUpdateScreenshots is set.
func (b *tab) screenshot(name string) {
	b.t.Helper()
	if os.Getenv(envUpdateScreenshots) != "1" {
		return
	}
	shot, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	require.NoError(b.t, err)
	shot, err = shrinkPNG(shot)
	require.NoError(b.t, err)
	path := filepath.Join("..", "docs", "screenshots", name)
	require.NoError(b.t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(b.t, os.WriteFile(path, shot, 0o644))
	b.t.Logf("wrote %s (%d KB)", path, len(shot)/1024)
}

// TestBrowser drives a real browser through the inspector as an operator would: log
// in with a key, open a scope, read a belief's timeline, forget the belief through the
// confirmation, and see it gone.
func TestBrowser(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	st := newStory(t)
	st.sister(t) // the scope's screenshot shows an entity other than the user
	base := st.http.URL

	b.do("open the inspector", chromedp.Navigate(base+"/ui/"), chromedp.WaitVisible(chromedp.ID("key")))
	b.checkf(strings.HasPrefix(b.location(), base+"/ui/login"), "without a key, the login page")
	b.do("type the key", chromedp.SendKeys(chromedp.ID("key"), st.token))
	b.click(`form[action="/ui/login"] button[type="submit"]`)
	b.checkf(b.location() == base+"/ui/", "logged in, the scopes")
	b.checkf(!strings.Contains(b.location(), st.token[:16]), "no key in the URL")
	scopes := b.text("main")
	b.checkf(strings.Contains(scopes, anaScope), "the scope is listed: %q", scopes)

	b.click(`a[href="/ui/scopes/tenant:a%2Fuser:ana"]`)
	current := b.text("table.beliefs")
	b.checkf(strings.Contains(current, miami) && !strings.Contains(current, nyc), "current beliefs: %q", current)
	b.do("open the history", chromedp.Navigate(base+"/ui/scopes/tenant:a%2Fuser:ana?history=1"),
		chromedp.WaitVisible(chromedp.CSS("table.beliefs")))
	history := b.text("table.beliefs")
	b.checkf(strings.Contains(history, nyc) && strings.Contains(history, "superseded"), "history: %q", history)
	b.checkf(strings.Contains(history, "sister / home_city"), "the sister's beliefs name her: %q", history)
	b.screenshot("scope.png")

	b.click(fmt.Sprintf(`a[href="/ui/beliefs/%d"]`, st.miami))
	timeline := b.text("ol.timeline")
	for _, want := range []string{nyc, "2025-06-01 → 2026-02-15", miami, "2026-02-15 → now", "2026-03-20 14:02 UTC"} {
		b.checkf(strings.Contains(timeline, want), "the timeline shows %q: %q", want, timeline)
	}
	b.checkf(strings.Index(timeline, nyc) < strings.Index(timeline, miami), "oldest first")
	b.checkf(b.text("mark") == "I moved to Miami last month", "the quote is marked in the transcript")
	b.screenshot("belief.png")

	b.click(fmt.Sprintf(`a[href="/ui/beliefs/%d/forget"]`, st.miami))
	confirm := b.text("section.confirm")
	b.checkf(strings.Contains(confirm, "Forget this belief?") && strings.Contains(confirm, miami), "confirmation: %q", confirm)
	b.click(`section.confirm button[type="submit"]`)
	b.checkf(b.location() == base+"/ui/scopes/tenant:a%2Fuser:ana?done=forgotten&n="+strconv.FormatInt(st.miami, 10), "back on the scope")
	after := b.text("main")
	b.checkf(strings.Contains(after, "was forgotten") && !strings.Contains(after, miami), "Miami is gone: %q", after)
	b.checkf(strings.Contains(after, "User is vegetarian"), "the rest stays: %q", after)

	// At a phone's width nothing runs off the side of the page: wide tables scroll in
	// their own box.
	for _, path := range []string{fmt.Sprintf("/ui/beliefs/%d", st.nyc), "/ui/scopes/tenant:a%2Fuser:ana?history=1", "/ui/"} {
		b.do("narrow the window", chromedp.EmulateViewport(390, 844), chromedp.Navigate(base+path),
			chromedp.WaitVisible(chromedp.CSS("main")))
		wide, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
		require.NoError(t, err)
		b.checkf(!wide, "%s fits 390 pixels", path)
	}
}

// TestBrowserRevert: an operator reverts a wrong supersede from the belief's page,
// through the confirmation, and sees the old belief current again and the scope's
// precision fall.
func TestBrowserRevert(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	st := newStory(t)
	base := st.http.URL
	evs, err := st.store.Events(context.Background(), st.scope, 0)
	require.NoError(t, err)
	require.Len(t, evs, 1, "the story's one revision: Miami superseded New York City")
	event := evs[0].ID

	b.do("open the inspector", chromedp.Navigate(base+"/ui/login"), chromedp.WaitVisible(chromedp.ID("key")))
	b.do("type the key", chromedp.SendKeys(chromedp.ID("key"), st.token))
	b.click(`form[action="/ui/login"] button[type="submit"]`)
	b.do("open Miami", chromedp.Navigate(fmt.Sprintf("%s/ui/beliefs/%d", base, st.miami)), chromedp.WaitVisible(chromedp.ID("events-h")))

	b.click(fmt.Sprintf(`a[href="/ui/events/%d/revert"]`, event))
	confirm := b.text("section.confirm")
	b.checkf(strings.Contains(confirm, "Revert this revision?") && strings.Contains(confirm, nyc) && strings.Contains(confirm, miami),
		"the confirmation names both beliefs: %q", confirm)
	b.do("say why", chromedp.SendKeys(chromedp.ID("note"), "she was only visiting Miami"))
	b.click(`section.confirm button[type="submit"]`)
	b.checkf(b.location() == fmt.Sprintf("%s/ui/beliefs/%d?done=reverted&n=%d", base, st.nyc, event), "on New York's page")
	main := b.text("main")
	b.checkf(strings.Contains(main, "was reverted"), "the flash says so: %q", main)
	b.checkf(strings.Contains(b.text(".pagehead"), "active"), "New York City is current again")
	events := b.text("section[aria-labelledby=events-h]")
	b.checkf(strings.Contains(events, "reverted by") && strings.Contains(events, "she was only visiting Miami"), "the events show the revert: %q", events)

	b.do("open the scope", chromedp.Navigate(base+"/ui/scopes/tenant:a%2Fuser:ana"), chromedp.WaitVisible(chromedp.ID("audit-h")))
	current := b.text("table.beliefs")
	b.checkf(strings.Contains(current, nyc) && !strings.Contains(current, miami), "current beliefs: %q", current)
	precision := b.text("table.precision")
	b.checkf(strings.Contains(precision, "extraction") && strings.Contains(precision, "0.0%"), "precision: %q", precision)
}

// TestBrowserEntity: an operator finds the user's sister among a scope's entities,
// opens her page, reads how her home city changed, follows a belief to its page and
// back by its subject, lands on her page again from a misspelt name's suggestion, and
// forgets everything about her through the confirmation.
func TestBrowserEntity(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	st := newStory(t)
	_, denverID := st.sister(t)
	base := st.http.URL
	sister := base + "/ui/scopes/tenant:a%2Fuser:ana/entities/sister"

	b.do("open the inspector", chromedp.Navigate(base+"/ui/login"), chromedp.WaitVisible(chromedp.ID("key")))
	b.do("type the key", chromedp.SendKeys(chromedp.ID("key"), st.token))
	b.click(`form[action="/ui/login"] button[type="submit"]`)
	b.click(`a[href="/ui/scopes/tenant:a%2Fuser:ana"]`)
	entities := b.text("table.entities")
	b.checkf(strings.Contains(entities, "sister") && strings.Contains(entities, "person") && strings.Contains(entities, "Sarah"),
		"the sister is listed, a person also called Sarah: %q", entities)
	b.checkf(strings.Index(entities, "user") < strings.Index(entities, "sister"), "the user first: %q", entities)

	b.click(`table.entities a[href="/ui/scopes/tenant:a%2Fuser:ana/entities/sister"]`)
	b.checkf(b.location() == sister, "on the sister's page")
	b.checkf(b.text("h1") == "sister", "her name heads the page")
	names := b.text("dl.entity-facts")
	b.checkf(strings.Contains(names, "person") && strings.Contains(names, "Sarah"), "her kind and alias: %q", names)
	slots := b.text("section[aria-labelledby=slots-h]")
	home := strings.Index(slots, "home_city")
	b.checkf(home >= 0 && home < strings.Index(slots, "occupation"),
		"her slots, in the order memory learned them: %q", slots)
	b.checkf(!strings.Contains(slots, nyc) && !strings.Contains(slots, miami), "nothing of the user's: %q", slots)
	current := b.text("section.slot ul.current")
	b.checkf(strings.Contains(current, "User's sister lives in Denver") && !strings.Contains(current, "Austin"), "Denver is current: %q", current)
	timeline := b.text("section.slot ol.timeline")
	for _, want := range []string{"User's sister lives in Austin", "2025-08-01 → 2026-03-01", "2025-08-10 19:21 UTC → 2026-03-10 16:46 UTC",
		"User's sister lives in Denver", "2026-03-01 → now", "2026-03-10 16:46 UTC → now", "Sarah moved to Denver at the start of the month"} {
		b.checkf(strings.Contains(timeline, want), "the home_city timeline shows %q: %q", want, timeline)
	}
	b.checkf(strings.Index(timeline, "Austin") < strings.Index(timeline, "Denver"), "oldest first: %q", timeline)
	b.screenshot("entity.png")

	b.click(fmt.Sprintf(`section.slot ul.current a[href="/ui/beliefs/%d"]`, denverID))
	b.checkf(strings.Contains(b.text("h1"), "User's sister lives in Denver"), "on Denver's page")
	b.click(`.pagehead a[href="/ui/scopes/tenant:a%2Fuser:ana/entities/sister"]`)
	b.checkf(b.location() == sister, "back on her page by the subject")

	b.do("misspell her name", chromedp.Navigate(base+"/ui/scopes/tenant:a%2Fuser:ana/entities/Sarahh"), chromedp.WaitVisible(chromedp.CSS("main")))
	notFound := b.text("main")
	b.checkf(strings.Contains(notFound, "No such entity") && strings.Contains(notFound, "Did you mean Sarah?"), "not found, Sarah suggested: %q", notFound)
	b.click(`main a[href="/ui/scopes/tenant:a%2Fuser:ana/entities/Sarah"]`)
	b.checkf(b.text("h1") == "sister", "the suggestion leads to her page")

	b.click(`.pagehead a[href="/ui/scopes/tenant:a%2Fuser:ana/entities/sister/forget"]`)
	confirm := b.text("section.confirm")
	b.checkf(strings.Contains(confirm, "Forget everything about sister?") && strings.Contains(confirm, "User's sister lives in Austin") &&
		strings.Contains(confirm, "User's sister is a nurse") && !strings.Contains(confirm, miami), "the confirmation names her beliefs: %q", confirm)
	b.click(`section.confirm button[type="submit"]`)
	b.checkf(b.location() == base+"/ui/scopes/tenant:a%2Fuser:ana?done=forgotten-entity", "back on the scope")
	after := b.text("main")
	b.checkf(strings.Contains(after, "Every belief about the entity was forgotten") && !strings.Contains(after, "User's sister"),
		"her beliefs are gone: %q", after)
	b.checkf(strings.Contains(after, miami), "the user's stay: %q", after)

	b.do("narrow the window", chromedp.EmulateViewport(390, 844), chromedp.Navigate(sister), chromedp.WaitVisible(chromedp.CSS("main")))
	wide, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
	require.NoError(t, err)
	b.checkf(!wide, "the entity page fits 390 pixels")
}
