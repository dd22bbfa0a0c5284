package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// Real data does not break the layout: a flag with a 128-character name and
// key keeps every row's toggle on screen, is cut with an ellipsis and shown
// whole on hover, and no page scrolls sideways at 1440 or 390 px.
func TestBrowserLongNamesKeepTheLayout(t *testing.T) {
	t.Parallel()
	ch := headless(t, 120*time.Second)
	a, _, env := flagApp(t)
	long := strings.Repeat("checkout-experiment-", 7)[:128]
	name := strings.Repeat("New checkout flow ", 8)[:128]
	a.makeFlag(env, flagstore.FlagInput{Name: name, Key: long, Description: strings.Repeat("A long description. ", 20),
		Tags: []string{"team-" + strings.Repeat("x", 50)}, Change: flagstore.Change{Comment: strings.Repeat("why ", 100)}})
	a.makeFlag(env, flagstore.FlagInput{Name: "Short", Key: "short"})
	sg := a.makeSegment(env, strings.Repeat("Beta testers ", 10)[:128], strings.Repeat("beta-", 30)[:128])
	ch.do("desktop", viewport(1440))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	for _, width := range []int64{1440, 390} {
		ch.shootAt(a.srv.URL, "/flags", "long-flags", width, `[data-testid=flag-list]`)
		// Every row's toggle is inside the viewport.
		if got := ch.eval(`String([...document.querySelectorAll("[data-testid=flag-row] [data-testid=flag-toggle-submit]")].every(b => { const r = b.getBoundingClientRect(); return r.right <= document.documentElement.clientWidth && r.left >= 0 }))`); got != "true" {
			t.Errorf("a flag row's toggle is off screen at %d px", width)
		}
		ch.do("viewport", viewport(width)) // shootAt grew it to the page's height
		title := ch.eval(`(document.querySelector("[data-testid=flag-row][data-key='` + long + `'] [title]") || {}).title || ""`)
		if title != name && title != long {
			t.Errorf("the long name is not shown whole on hover at %d px (title %q)", width, title)
		}
		ch.shootAt(a.srv.URL, "/flags/"+long, "long-flag", width, `[data-testid=targeting-summary]`)
		ch.shootAt(a.srv.URL, "/flags/"+long+"/history", "long-flag-history", width, `[data-testid=history]`)
		ch.shootAt(a.srv.URL, "/segments", "long-segments", width, `[data-testid=segment-filter]`)
		ch.shootAt(a.srv.URL, segmentPath(sg), "long-segment", width, `[data-testid=segment-heading]`)
		ch.shootAt(a.srv.URL, "/audit-log", "long-audit-log", width, `[data-testid=history]`)
	}
}
