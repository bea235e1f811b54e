package inspector_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/memory"
)

// envScreenshots names a directory for the fit test's screenshots, to look at them;
// by default they go to the test's temporary directory.
const envScreenshots = "CREDO_SCREENSHOTS"

// cutJS lists what a reader cannot see whole on the page: a table cell whose content is
// wider than the cell (clipped, or ellipsed), an element that runs past the window's
// edge outside a box that scrolls, and a box that scrolls sideways with no cue that it
// does (scroll bars are hidden, as on a phone and in a Mac's default); at a desktop's
// width, a box that scrolls at all (its last column is out of sight).
const cutJS = `(() => {
  const out = [], vw = document.documentElement.clientWidth;
  const name = el => el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '') +
    ' "' + (el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 40) + '"';
  const scrolls = el => { const s = getComputedStyle(el).overflowX; return s === 'auto' || s === 'scroll'; };
  for (const el of document.querySelectorAll('td, th')) {
    if (el.scrollWidth > el.clientWidth + 1) out.push('cut cell ' + name(el) + ' ' + el.scrollWidth + '>' + el.clientWidth);
  }
  for (const el of document.querySelectorAll('body *')) {
    if (scrolls(el) && el.scrollWidth > el.clientWidth + 1) {
      const bg = getComputedStyle(el).backgroundImage;
      if (!bg.includes('gradient')) out.push('scrolls without a cue: ' + name(el));
      if (vw >= 1200) out.push('scrolls at a desktop width: ' + name(el) + ' ' + el.scrollWidth + '>' + el.clientWidth);
    }
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || (r.right <= vw + 1 && r.left >= -1)) continue;
    if (getComputedStyle(el).position === 'absolute' && el.closest('.sr, .skip')) continue;
    let a = el.parentElement, boxed = false;
    for (; a && a !== document.body; a = a.parentElement) if (scrolls(a)) { boxed = true; break; }
    if (!boxed) out.push('past the edge: ' + name(el) + ' ' + Math.round(r.left) + '..' + Math.round(r.right) + ' of ' + vw);
  }
  if (document.documentElement.scrollWidth > vw) out.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + vw);
  return out;
})()`

// busy adds to the story what makes the pages wide and the review queue full: the
// sister; a supersession across entities and a retraction only a tool's message says,
// both held; two beliefs of one transcript, the first valid for no time at all; and a
// reinforcement of Miami.
func (st *story) busy(t *testing.T) (airport int64) {
	t.Helper()
	ctx := context.Background()
	st.sister(t)
	current, err := st.store.Current(ctx, st.scope)
	require.NoError(t, err)
	ids := map[string]int64{}
	for _, b := range current {
		ids[b.Statement] = b.ID
	}
	st.clock.Set(at("2026-03-22T10:05:00Z"))
	ep := st.episode(t, "conv-0322", "2026-03-22T10:00:00Z", "I'm at the airport. Actually scratch that, I'm already on the plane to Lisbon.")
	ten := at("2026-03-22T10:00:00Z")
	airportFact := fact("User is at the airport", "whereabouts", "2026-03-22", "I'm at the airport")
	airportFact.ValidFrom = &ten
	airport = st.apply(t, ep, nil, airportFact)[0]
	plane := fact("User is on the plane to Lisbon", "whereabouts", "2026-03-22", "I'm already on the plane to Lisbon")
	plane.ValidFrom = &ten
	plane.Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonCorrection}
	st.apply(t, ep, []int64{airport}, plane)

	again := fact(miami, "location", "2026-02-15", "I live in Miami")
	again.Resolves = &memory.Directive{Index: 0, Action: memory.ActionReinforce, Reason: memory.ReasonRestated}
	_, err = st.store.Apply(ctx, &memory.Batch{Scope: st.scope, Origin: memory.RevisionExtraction, EpisodeID: &ep, At: st.clock.Now(),
		Candidates: []int64{st.miami}, Facts: []memory.Fact{again}})
	require.NoError(t, err)

	st.clock.Set(at("2026-03-24T08:00:00Z"))
	ep = st.episode(t, "conv-0324", "2026-03-24T08:00:00Z", "My sister Sarah lives in Lisbon now, with her partner.")
	sister := fact("User's sister lives in Lisbon with her partner", "location", "2026-03-20", "My sister Sarah lives in Lisbon now")
	sister.Subject = "user's sister"
	sister.Resolves = &memory.Directive{Index: 0, Action: memory.ActionSupersede, Reason: memory.ReasonTemporal}
	tool := "profile sync (crm-export-v2): dietary_preference=none; the user is no longer vegetarian per the imported record"
	retract := memory.Fact{Confidence: 0.9, Origin: memory.OriginUserStated, Quote: "the user is no longer vegetarian",
		Resolves: &memory.Directive{Index: 1, Action: memory.ActionRetract, Reason: memory.ReasonCorrection}}
	res, err := st.store.Apply(ctx, &memory.Batch{Scope: st.scope, Origin: memory.RevisionExtraction, EpisodeID: &ep, At: st.clock.Now(),
		Candidates: []int64{st.miami, ids["User is vegetarian"]}, Facts: []memory.Fact{sister, retract},
		Source: &memory.Source{Text: "user: My sister Sarah lives in Lisbon now, with her partner.\ntool: " + tool,
			Messages: []memory.SourceMessage{{Role: "user", Content: "My sister Sarah lives in Lisbon now, with her partner."}, {Role: "tool", Content: tool}}}})
	require.NoError(t, err)
	for _, o := range res.Facts {
		require.Equal(t, memory.OutcomeConflict, o.Kind, "%+v", o)
	}
	st.clock.Set(at("2026-03-25T09:30:00Z"))
	return airport
}

// TestBrowserFits: every page of the inspector, at a desktop's 1280 pixels and a
// phone's 390, shows each table column whole: no cell is clipped, nothing runs past
// the window's edge, and a table wider than the window scrolls in its own box with a
// cue that it does. The screenshots are kept (envScreenshots) to be looked at.
func TestBrowserFits(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	st := newStory(t)
	airport := st.busy(t)
	base := st.http.URL
	dir := os.Getenv(envScreenshots)
	if dir == "" {
		dir = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))

	b.do("open the inspector", chromedp.Navigate(base+"/ui/login"), chromedp.WaitVisible(chromedp.ID("key")))
	b.do("type the key", chromedp.SendKeys(chromedp.ID("key"), st.token))
	b.click(`form[action="/ui/login"] button[type="submit"]`)

	pages := map[string]string{
		"scopes":   "/ui/",
		"scope":    "/ui/scopes/tenant:a%2Fuser:ana",
		"history":  "/ui/scopes/tenant:a%2Fuser:ana?history=1",
		"review":   "/ui/scopes/tenant:a%2Fuser:ana/review",
		"episodes": "/ui/scopes/tenant:a%2Fuser:ana/episodes",
		"belief":   fmt.Sprintf("/ui/beliefs/%d", st.miami),
		"airport":  fmt.Sprintf("/ui/beliefs/%d", airport),
		"entity":   "/ui/scopes/tenant:a%2Fuser:ana/entities/sister",
	}
	var cuts []string
	for _, width := range []int64{1280, 390} {
		for name, path := range pages {
			b.do("open "+name, chromedp.EmulateViewport(width, 800), chromedp.Navigate(base+path), chromedp.WaitVisible(chromedp.CSS("main")))
			cut, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](cutJS))
			require.NoError(t, err)
			shot, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
			require.NoError(t, err)
			file := filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, width))
			require.NoError(t, os.WriteFile(file, shot, 0o644))
			if len(cut) > 0 {
				cuts = append(cuts, fmt.Sprintf("%s at %d pixels (%s):\n  %s", name, width, file, strings.Join(cut, "\n  ")))
			}
		}
	}
	b.checkf(len(cuts) == 0, "%s", strings.Join(cuts, "\n"))

	// What the rows say, at the desktop's width.
	b.do("open the history", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(base+pages["history"]), chromedp.WaitVisible(chromedp.CSS("table.beliefs")))
	history := b.text("table.beliefs")
	b.checkf(strings.Contains(history, "User lives in New York City\nreplaced by User lives in Miami"), "a superseded row names its successor: %q", history)
	b.checkf(strings.Contains(history, "User is at the airport\nreplaced by User is on the plane to Lisbon"), "%q", history)
	b.checkf(strings.Contains(history, "at 2026-03-22 10:00") && !strings.Contains(history, "2026-03-22 10:00 → 2026-03-22 10:00"),
		"a validity of no length is one instant: %q", history)
	b.click(`table.beliefs a[href="` + fmt.Sprintf("/ui/beliefs/%d", st.miami) + `"]`)
	b.checkf(strings.Contains(b.text("h1"), miami), "New York's successor link, the first to Miami, leads to Miami")

	b.do("open Miami", chromedp.Navigate(base+pages["belief"]), chromedp.WaitVisible(chromedp.ID("events-h")))
	events := b.text("section[aria-labelledby=events-h] tbody")
	b.checkf(strings.Contains(events, "reinforce") && strings.Count(events, "Revert…") == 1, "Revert… on the supersede only, not on the reinforcement: %q", events)

	b.do("open the review queue", chromedp.Navigate(base+pages["review"]), chromedp.WaitVisible(chromedp.CSS("ol.items")))
	items := strings.Join(strings.Fields(b.text("ol.items")), " ")
	for _, want := range []string{
		"WOULD RETRACT, NOW User is vegetarian active",
		"The quote was found only in text the user did not say as their own",
		`The new fact is about "user's sister", the target about the user`,
		"WOULD REVISE, NOW User lives in Miami active",
	} {
		b.checkf(strings.Contains(items, want), "the review queue shows %q: %q", want, items)
	}
}
