package web_test

import (
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// flagListNames are the names of the list's flags in the order they are
// created: not alphabetical, and some capitalized, so sorting by name is
// its own order. Letters alone sort alike in every collation.
var flagListNames = []string{"Quince", "mango", "Apple", "kiwi", "Checkout redesign for the mobile web", "banana", "Fig", "lemon",
	"Damson", "olive", "Guava", "nectarine", "Elder", "papaya", "Honeydew", "jujube", "Iceberg", "raspberry", "Lime",
	"strawberry", "Tangerine", "ugli", "Vanilla", "watermelon", "Yam", "zucchini"}

// flagListKey is the key of the i-th flag created; one is long, for the cards.
func flagListKey(i int) string {
	if i == 4 {
		return "k04-checkout-redesign-for-mobile-web"
	}
	return fmt.Sprintf("k%02d", i)
}

// TestBrowserFlagList: the flag list is a tool. Each of its four orders,
// both ways, pages and survives paging, a reload of its address and its
// filters; several tags narrow it to flags having all of them; its page
// size is a choice, with first and last pages; rollouts show their shares;
// a page past the end says so and leads to the last; at 390 px each flag is
// a card whose parts neither overlap nor break words; and where comments
// are required, the last row's toggle opens its pop-up fully visible and
// turns the flag on.
func TestBrowserFlagList(t *testing.T) {
	t.Parallel()
	ch := headless(t, 150*time.Second)
	a, pr, env := flagApp(t)
	ctx := t.Context()
	owner := a.ownerActor()
	flags := map[string]flagstore.Flag{}
	var keys []string // in the order created
	for i, name := range flagListNames {
		in := flagstore.FlagInput{Name: name, Key: flagListKey(i), IsEnabled: i == 1 || i == 3}
		if i%2 == 0 {
			in.Tags = append(in.Tags, "web")
		}
		if i%3 == 0 {
			in.Tags = append(in.Tags, "mobile")
		}
		flags[in.Key] = a.makeFlag(env, in)
		keys = append(keys, in.Key)
	}
	// Changes, in this order: a 30/70 default rollout, a rule's 25/75
	// rollout, then three flags turned on.
	var changed []string
	rollout := func(key string, rule bool) {
		f := a.flag(env, key)
		on, off := f.Variations[0].ID, f.Variations[1].ID
		tg := f.Targeting()
		split := []flagstore.RolloutVariation{{ID: on, Rollout: []float64{0, 0.3}}, {ID: off, Rollout: []float64{0.3, 1}}}
		if rule {
			split = []flagstore.RolloutVariation{{ID: on, Rollout: []float64{0, 0.25}}, {ID: off, Rollout: []float64{0.25, 1}}}
			tg.Rules = []flagstore.FlagRule{{ID: "r1", Name: "Beta", Variations: split,
				Conditions: []flagstore.Condition{{ID: "c1", Property: "country", Op: "Equal", Value: "NL"}}}}
		} else {
			tg.Fallthrough.Variations = split
		}
		_, err := a.st.Flags().SetFlagTargeting(ctx, owner, env.ID, key, flagstore.TargetingInput{Targeting: &tg})
		must(t, err)
		changed = append(changed, key)
	}
	rollout("k01", false)
	rollout("k03", true)
	for _, key := range []string{"k05", "k17", "k02"} {
		_, err := a.st.Flags().ToggleFlag(ctx, owner, env.ID, key, true, flagstore.Change{})
		must(t, err)
		changed = append(changed, key)
	}
	// Three flags evaluated, an hour apart; the others never.
	tally := runner.NewEvaluations(a.st, slog.New(slog.DiscardHandler))
	now := time.Now()
	for key, ago := range map[string]time.Duration{"k07": 3 * time.Hour, "k20": 2 * time.Hour, "k11": time.Hour} {
		f := flags[key]
		tally.Served([]runner.Served{{Flag: &f, Variation: 0}}, now.Add(-ago))
	}
	must(t, tally.Flush(ctx))

	// The orders the list should show, computed here.
	byName := slices.Clone(keys)
	nameOf := map[string]string{}
	for i, k := range keys {
		nameOf[k] = strings.ToLower(flagListNames[i])
	}
	slices.SortFunc(byName, func(x, y string) int { return strings.Compare(nameOf[x], nameOf[y]) })
	newest := slices.Clone(keys)
	slices.Reverse(newest)
	var recentlyChanged []string
	for i := len(changed) - 1; i >= 0; i-- {
		recentlyChanged = append(recentlyChanged, changed[i])
	}
	for _, k := range newest {
		if !slices.Contains(changed, k) {
			recentlyChanged = append(recentlyChanged, k)
		}
	}
	reversed := func(s []string) []string { r := slices.Clone(s); slices.Reverse(r); return r }

	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	rowKeys := func() []string {
		got := ch.eval(`[...document.querySelectorAll("[data-testid=flag-row]")].map(r => r.dataset.key).join(" ")`)
		return strings.Fields(got)
	}
	// waitRows polls until the list shows the rows ok accepts.
	waitRows := func(step string, ok func([]string) bool) {
		t.Helper()
		for range 150 {
			if ok(rowKeys()) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%s: the list shows %v", step, rowKeys())
	}
	query := func() url.Values {
		v, err := url.ParseQuery(strings.TrimPrefix(ch.eval(`location.search`), "?"))
		must(t, err)
		return v
	}
	// waitQuery polls until the address has name=value (htmx pushes it
	// once the list is swapped in).
	waitQuery := func(step, name, value string) {
		t.Helper()
		for range 150 {
			if query().Get(name) == value {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%s: the address is %s", step, ch.eval(`location.search`))
	}
	equal := func(want []string) func([]string) bool {
		return func(got []string) bool { return slices.Equal(got, want) }
	}
	// Each order, both ways: its first two pages of ten, its address kept
	// by the pager and by a reload.
	ch.do("the list, ten a page", chromedp.Navigate(a.srv.URL+"/flags?size=10"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-row]`)))
	for _, tc := range []struct {
		sort  string
		pages [2]func([]string) bool
	}{
		{"name", [2]func([]string) bool{equal(byName[:10]), equal(byName[10:20])}},
		{"-name", [2]func([]string) bool{equal(reversed(byName)[:10]), equal(reversed(byName)[10:20])}},
		{"createdAt", [2]func([]string) bool{equal(keys[:10]), equal(keys[10:20])}},
		{"", [2]func([]string) bool{equal(newest[:10]), equal(newest[10:20])}},
		{"-updatedAt", [2]func([]string) bool{equal(recentlyChanged[:10]), equal(recentlyChanged[10:20])}},
		{"updatedAt", [2]func([]string) bool{equal(reversed(recentlyChanged)[:10]), equal(reversed(recentlyChanged)[10:20])}},
		// Never evaluated counts as longest ago: last newest first, first oldest first.
		{"-lastEvaluatedAt", [2]func([]string) bool{
			func(got []string) bool { return len(got) == 10 && slices.Equal(got[:3], []string{"k11", "k20", "k07"}) },
			func(got []string) bool {
				return len(got) == 10 && !slices.ContainsFunc(got, func(k string) bool { return k == "k07" || k == "k11" })
			}}},
		{"lastEvaluatedAt", [2]func([]string) bool{
			func(got []string) bool { return len(got) == 10 && !slices.Contains(got, "k07") },
			func(got []string) bool { return len(got) == 10 && !slices.Contains(got, "k11") }}},
	} {
		ch.choose(`#flag-filter-sort`, tc.sort)
		waitQuery("sort "+tc.sort, "sort", tc.sort)
		waitRows("sort "+tc.sort, tc.pages[0])
		if got := query().Get("sort"); got != tc.sort {
			t.Errorf("sorted by %q, the address says sort=%q", tc.sort, got)
		}
		ch.do("next page by "+tc.sort, chromedp.Click(chromedp.CSS(`[data-testid=pager-next]`)))
		waitQuery("page 2 by "+tc.sort, "page", "2")
		waitRows("page 2 by "+tc.sort, tc.pages[1])
		if q := query(); q.Has("q") || q.Has("status") {
			t.Errorf("sorted by %q, the address keeps empty fields: ?%s", tc.sort, q.Encode())
		}
		if q := query(); q.Get("sort") != tc.sort || q.Get("page") != "2" || q.Get("size") != "10" {
			t.Errorf("page 2 by %q at ?%s", tc.sort, q.Encode())
		}
		ch.do("reload page 2 by "+tc.sort, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-row]`)))
		waitRows("reloaded page 2 by "+tc.sort, tc.pages[1])
		if got := ch.value(`#flag-filter-sort`); got != tc.sort {
			t.Errorf("reloaded, the sort menu says %q, want %q", got, tc.sort)
		}
	}
	ch.do("page 3 oldest evaluation first", chromedp.Click(chromedp.CSS(`[data-testid=pager-next]`)))
	waitQuery("page 3 oldest evaluation first", "page", "3")
	waitRows("page 3 oldest evaluation first", func(got []string) bool {
		return len(got) == 6 && slices.Equal(got[3:], []string{"k07", "k20", "k11"})
	})

	// Several tags: flags having all of them, still by name; the address
	// carries both.
	ch.do("by name", chromedp.Navigate(a.srv.URL+"/flags?sort=name"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-row]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=flag-tag-summary]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-tag-option][value=web]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=flag-tag-option][value=web]`)))
	var web, both []string
	for _, k := range byName {
		i := slices.Index(keys, k)
		if i%2 == 0 {
			web = append(web, k)
		}
		if i%6 == 0 {
			both = append(both, k)
		}
	}
	waitRows("tagged web", equal(web))
	ch.do("and mobile", chromedp.Click(chromedp.CSS(`[data-testid=flag-tag-option][value=mobile]`)))
	waitRows("tagged web and mobile", equal(both))
	if q := query(); !slices.Equal(q["tag"], []string{"mobile", "web"}) && !slices.Equal(q["tag"], []string{"web", "mobile"}) || q.Get("sort") != "name" {
		t.Errorf("filtered by two tags at ?%s", q.Encode())
	}
	if got := ch.eval(`document.querySelector("[data-testid=flag-tag-summary]").textContent.trim()`); got != "web, mobile" && got != "mobile, web" {
		t.Errorf("the tag menu says %q", got)
	}
	if got := ch.eval(`document.querySelector("[data-testid=flag-list-filtered]").textContent`); !strings.Contains(got, "all of: web, mobile") &&
		!strings.Contains(got, "all of: mobile, web") {
		t.Errorf("the list says %q of its tags", got)
	}

	// Page sizes, the last and first pages.
	ch.do("twenty a page", chromedp.Navigate(a.srv.URL+"/flags?sort=name"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-row]`)))
	waitRows("twenty a page", equal(byName[:20]))
	ch.choose(`#flag-filter-size`, "10")
	waitRows("ten a page", equal(byName[:10]))
	if got := ch.eval(`document.querySelector("[data-testid=pager-label]").textContent`); got != "Page 1 of 3 · 26 flags" {
		t.Errorf("pager %q, want Page 1 of 3 · 26 flags", got)
	}
	ch.do("last page", chromedp.Click(chromedp.CSS(`[data-testid=pager-last]`)))
	waitRows("the last page", equal(byName[20:]))
	if got := ch.eval(`document.querySelector("[data-testid=pager-label]").textContent`); got != "Page 3 of 3 · 26 flags" {
		t.Errorf("pager %q on the last page", got)
	}
	ch.do("first page", chromedp.Click(chromedp.CSS(`[data-testid=pager-first]`)))
	waitRows("the first page", equal(byName[:10]))
	ch.choose(`#flag-filter-size`, "50")
	waitRows("fifty a page", equal(byName))
	if got := ch.eval(`String(document.querySelectorAll("[data-testid=pager-next], [data-testid=pager-last]").length)`); got != "0" {
		t.Errorf("one page of all flags offers %s links onward", got)
	}

	// Rollouts show their shares, a rule's with its name.
	serving := func(key string) string {
		return ch.eval(`[...document.querySelectorAll("[data-key=` + key + `] [data-testid=flag-serving]")].map(l => l.textContent.trim().replace(/\s+/g, " ")).join(" | ")`)
	}
	if got := serving("k01"); got != "30% true · 70% false" {
		t.Errorf("the 30/70 rollout serves %q", got)
	}
	if got := serving("k03"); got != "Beta: 25% true · 75% false | Default: true" {
		t.Errorf("the rule's rollout serves %q", got)
	}

	// Past the end: a clear message and the way to the last page.
	ch.do("page 99", chromedp.Navigate(a.srv.URL+"/flags?size=10&page=99"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-list-empty]`)))
	if got := ch.eval(`document.querySelector("[data-testid=flag-list-empty] p").textContent`); got != "There is no page 99: the list has 26 flags, on 3 pages." {
		t.Errorf("past the end: %q", got)
	}
	ch.do("to the last page", chromedp.Click(chromedp.CSS(`[data-testid=flag-list-last-page]`)))
	waitRows("the last page from past the end", equal(newest[20:]))

	// A phone: a card per flag, its parts apart and whole.
	ch.do("phone", viewport(390), chromedp.Navigate(a.srv.URL+"/flags?sort=key&size=10"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-row]`)))
	if problems := ch.eval(cardProblems); problems != "" {
		t.Errorf("the cards at 390 px: %s", problems)
	}
	if overflow := ch.eval(`String(document.documentElement.scrollWidth > document.documentElement.clientWidth)`); overflow != "false" {
		t.Errorf("the list scrolls sideways at 390 px")
	}

	// Comments required: the last row's pop-up opens whole, and turns the
	// flag on.
	a.requireComments(pr, env)
	ch.do("desktop with comments", viewport(1280), chromedp.Navigate(a.srv.URL+"/flags?sort=key"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-row]`)))
	last := rowKeys()[len(rowKeys())-1]
	if last != "k19" {
		t.Fatalf("the last row is %s, want k19", last)
	}
	row := `[data-testid=flag-row][data-key=k19]`
	ch.do("open the last row's toggle", chromedp.Click(chromedp.CSS(row+` [data-testid=flag-toggle]`)),
		chromedp.WaitVisible(chromedp.CSS(row+` [data-testid=comment]`)))
	if problems := ch.eval(popProblems(row)); problems != "" {
		t.Errorf("the last row's pop-up: %s", problems)
	}
	ch.do("turn it on", chromedp.SendKeys(chromedp.CSS(row+` [data-testid=comment]`), "Launch the last one"),
		chromedp.Click(chromedp.CSS(row+` [data-testid=flag-toggle-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(row+` summary.switch-on`)))
	if !a.flag(env, "k19").IsEnabled {
		t.Errorf("k19 is not on")
	}
	// On a phone, the last card's pop-up as well.
	row = `[data-testid=flag-row][data-key=k09]`
	ch.do("phone with comments", viewport(390), chromedp.Navigate(a.srv.URL+"/flags?sort=key&size=10"),
		chromedp.WaitVisible(chromedp.CSS(row)), chromedp.Click(chromedp.CSS(row+` [data-testid=flag-toggle]`)),
		chromedp.WaitVisible(chromedp.CSS(row+` [data-testid=comment]`)))
	if problems := ch.eval(popProblems(row)); problems != "" {
		t.Errorf("the last card's pop-up at 390 px: %s", problems)
	}
}

// cardProblems lists, for each card of the list, parts that overlap or
// leave the card, words broken across lines, and keys cut off.
const cardProblems = `(() => {
	const problems = [];
	const rows = [...document.querySelectorAll("[data-testid=flag-row]")];
	if (rows.length === 0) return "no cards";
	const overlap = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
	for (const row of rows) {
		const key = row.dataset.key, card = row.getBoundingClientRect();
		if (card.width < 300) problems.push(key + ": a card " + Math.round(card.width) + " px wide");
		const parts = ["[data-testid=flag-name]", "[data-testid=flag-key]", "[data-testid=flag-serves]", ".tags-cell .badges",
			"[data-testid=flag-last-change]", "[data-testid=flag-last-evaluated]", "td.actions > *"].map(s => [s, row.querySelector(s)]).filter(p => p[1]);
		const rects = parts.map(p => p[1].getBoundingClientRect());
		for (let i = 0; i < rects.length; i++) {
			if (rects[i].width === 0) problems.push(key + ": " + parts[i][0] + " is not shown");
			if (rects[i].left < card.left - 0.5 || rects[i].right > card.right + 0.5) problems.push(key + ": " + parts[i][0] + " leaves its card");
			for (let j = i + 1; j < rects.length; j++) {
				if (overlap(rects[i], rects[j])) problems.push(key + ": " + parts[i][0] + " overlaps " + parts[j][0]);
			}
		}
		for (const el of row.querySelectorAll("[data-testid=flag-name], [data-testid=flag-key], [data-testid=flag-last-change], [data-testid=flag-serving], [data-testid=tag], [data-testid=flag-last-evaluated]")) {
			const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
			for (let n; (n = walker.nextNode());) {
				for (const m of n.data.matchAll(/[^\s\-·]+/g)) {
					const range = document.createRange();
					range.setStart(n, m.index);
					range.setEnd(n, m.index + m[0].length);
					const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
					if (lines.size > 1) problems.push(key + ": “" + m[0] + "” is broken across lines");
				}
			}
		}
		const k = row.querySelector("[data-testid=flag-key]");
		if (k.scrollWidth > k.clientWidth + 1) problems.push(key + ": the key is cut off");
	}
	return problems.join("; ");
})()`

// popProblems says where a row's open toggle pop-up is outside the window,
// or covered or cut off: each corner and the middle must be the pop-up's.
func popProblems(row string) string {
	return `(() => {
	const body = document.querySelector("` + row + ` .toggle-pop-body");
	const r = body.getBoundingClientRect();
	if (r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) return "outside the window: " + JSON.stringify(r);
	for (const [x, y] of [[r.left + 4, r.top + 4], [r.right - 4, r.top + 4], [r.left + 4, r.bottom - 4], [r.right - 4, r.bottom - 4], [(r.left + r.right) / 2, (r.top + r.bottom) / 2]]) {
		const hit = document.elementFromPoint(x, y);
		if (!body.contains(hit)) return "covered or cut off at " + Math.round(x) + "," + Math.round(y) + " by " + (hit ? hit.outerHTML.slice(0, 80) : "nothing");
	}
	return "";
})()`
}
