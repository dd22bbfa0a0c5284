package web_test

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
)

// TestBrowserEndUsers pages through the end users SDKs reported, searches
// one, opens their page to read what each flag serves them and why and which
// segments they are in, sees the rule editor suggest the properties seen,
// and sees the notice once the environment keeps the most users it may.
func TestBrowserEndUsers(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env := flagApp(t)
	ctx, owner := t.Context(), a.ownerActor()
	beta := a.makeSegment(env, "Beta testers", "beta")
	_, err := a.st.Segments().SetSegmentTargeting(ctx, owner, env.ID, beta.ID, segments.SegmentTargetingInput{Included: &[]string{"alice"}})
	must(t, err)
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout", IsEnabled: true})
	tg := f.Targeting()
	tg.Rules = []flagstore.FlagRule{{ID: "r1", Name: "Dutch", Variations: []flagstore.RolloutVariation{{ID: f.Variations[0].ID, Rollout: []float64{0, 1}}},
		Conditions: []flagstore.Condition{{ID: "c1", Property: "country", Op: "IsOneOf", Value: `["NL"]`}}}}
	_, err = a.st.Flags().SetFlagTargeting(ctx, owner, env.ID, "checkout", flagstore.TargetingInput{Targeting: &tg})
	must(t, err)
	a.makeFlag(env, flagstore.FlagInput{Name: "Dark mode", Key: "dark-mode"})

	// 30 users, alice last seen most recently.
	t0 := time.Now().Add(-time.Hour)
	endUsers := runner.NewEndUsers(a.st, slog.New(slog.DiscardHandler))
	for i := range 29 {
		endUsers.Saw(env.ID, []eval.EndUser{{KeyID: fmt.Sprintf("user-%02d", i)}}, t0.Add(time.Duration(i)*time.Second))
	}
	name := "Alice"
	endUsers.Saw(env.ID, []eval.EndUser{{KeyID: "alice", Name: &name, CustomizedProperties: []eval.UserProperty{{Name: "country", Value: "NL"}}}}, t0.Add(time.Minute))
	must(t, endUsers.Flush(ctx))

	rows := func() []string {
		t.Helper()
		keys := ch.eval(`[...document.querySelectorAll("[data-testid=end-user-row]")].map(r => r.dataset.key).join(",")`)
		if keys == "" {
			return nil
		}
		return strings.Split(keys, ",")
	}
	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("open the list", chromedp.Navigate(a.srv.URL+"/flags"), chromedp.Click(chromedp.CSS(`[data-testid=nav-end-users]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=end-user-row]`)))
	first := rows()
	if len(first) != 25 || first[0] != "alice" || first[1] != "user-28" {
		t.Fatalf("first page %v", first)
	}
	ch.do("next page", chromedp.Click(chromedp.CSS(`[data-testid=pager-next]`)), chromedp.WaitNotPresent(chromedp.CSS(`[data-key=alice]`)))
	if second := rows(); len(second) != 5 || second[4] != "user-00" {
		t.Fatalf("second page %v", second)
	}
	if n := ch.eval(`String(document.querySelectorAll("[data-testid=pager-next]").length)`); n != "0" {
		t.Fatalf("the last page has a Next link")
	}
	ch.do("previous page", chromedp.Click(chromedp.CSS(`[data-testid=pager-prev]`)), chromedp.WaitVisible(chromedp.CSS(`[data-key=alice]`)))
	if back := rows(); len(back) != 25 || back[0] != "alice" {
		t.Fatalf("back on the first page %v", back)
	}

	// Search by any part of the key or name, in any case: "8" ends three
	// keys, "LIC" is inside Alice.
	search := func(text string) []string {
		t.Helper()
		ch.do("open the list", chromedp.Navigate(a.srv.URL+"/end-users"), chromedp.WaitVisible(chromedp.CSS(`[data-key=alice]`)))
		ch.fill(`[data-testid=end-user-search]`, text)
		ch.do("search "+text, chromedp.Click(chromedp.CSS(`[data-testid=end-user-search-submit]`)))
		ch.waitPath(`^/end-users$`)
		for range 100 {
			// The answer is in once the address carries the search and no
			// request (typing also searches) is on its way.
			if ch.eval(`String(new URLSearchParams(location.search).get("q")) + String(document.querySelector(".htmx-request") === null)`) == text+"true" {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		ch.do("the answer", chromedp.WaitVisible(chromedp.CSS(`#end-user-list`)))
		return rows()
	}
	if found := strings.Join(search("8"), ","); found != "user-28,user-18,user-08" {
		t.Fatalf("search 8 found %v", found)
	}
	if found := search("LIC"); len(found) != 1 || found[0] != "alice" {
		t.Fatalf("search LIC found %v", found)
	}

	// Search by the start of the name, then open the user.
	if found := search("ali"); len(found) != 1 || found[0] != "alice" {
		t.Fatalf("search ali found %v", found)
	}
	ch.do("open alice", chromedp.Click(chromedp.CSS(`[data-testid=end-user-key]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=end-user-heading]`)))
	ch.waitPath(`^/end-users/[0-9a-f-]+$`)
	served := ch.eval(`[...document.querySelectorAll("[data-testid=end-user-flag]")].map(r => r.dataset.key + ":" +
		r.querySelector("[data-testid=end-user-flag-variation]").textContent.trim() + ":" +
		r.querySelector("[data-testid=end-user-flag-reason]").textContent.trim()).join(",")`)
	if want := "checkout:True:Dutch,dark-mode:False:off"; served != want {
		t.Errorf("flags served %q, want %q", served, want)
	}
	if segs := ch.eval(`[...document.querySelectorAll("[data-testid=end-user-segment] a")].map(a => a.textContent.trim()).join(",")`); segs != "Beta testers" {
		t.Errorf("segments %q", segs)
	}
	if props := ch.eval(`[...document.querySelectorAll("[data-testid=end-user-property]")].map(r => r.textContent).join(",")`); props != "countryNL" {
		t.Errorf("properties %q", props)
	}

	// The rule editor suggests the properties seen.
	ch.do("edit targeting", chromedp.Navigate(a.srv.URL+"/flags/checkout?edit=targeting"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=condition-property]`)))
	suggested := ch.eval(`(function(){var i=document.querySelector("[data-testid=condition-property]");
		return [...i.list.options].map(o => o.value).join(",")})()`)
	if suggested != "keyId,name,country" {
		t.Errorf("the attribute field suggests %q", suggested)
	}

	// At the bound, the list says new users are not kept.
	_, err = a.pool.Exec(ctx, `UPDATE end_user_counts SET users = $2 WHERE env_id = $1`, env.ID, core.DefaultMaxEndUsersPerEnv)
	must(t, err)
	ch.do("the bound", chromedp.Navigate(a.srv.URL+"/end-users"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=end-user-bound]`)))
	if notice := ch.eval(`document.querySelector("[data-testid=end-user-bound]").textContent`); !strings.HasPrefix(notice, "This environment keeps the most end users it may ("+strconv.Itoa(core.DefaultMaxEndUsersPerEnv)+")") {
		t.Errorf("notice %q", notice)
	}
}
