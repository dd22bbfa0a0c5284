package web_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// TestBrowserFlagSummary opens a typical flag (three variations, two target
// lists, three rules, a rollout) in headless Chromium: its targeting reads
// as sentences with names, not ids; the page fits a 1440×900 screen; Test a
// user says which rule matched and where the user's bucket fell; a
// malformed property line is marked on its field.
func TestBrowserFlagSummary(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env := flagApp(t)
	beta := a.makeSegment(env, "Beta testers", "beta")
	vars := []flagstore.Variation{{ID: "red", Name: "Red", Value: "red"}, {ID: "green", Name: "Green", Value: "green"},
		{ID: "blue", Name: "Blue", Value: "blue"}}
	a.makeFlag(env, flagstore.FlagInput{Name: "Button colour", Key: "button", VariationType: "string", Variations: vars, IsEnabled: true})
	tg := a.flag(env, "button").Targeting()
	tg.TargetUsers = []flagstore.TargetUser{{VariationID: "red", KeyIDs: []string{"vip-1", "vip-2"}},
		{VariationID: "blue", KeyIDs: []string{"qa-1"}}}
	email := "email"
	tg.Rules = []flagstore.FlagRule{
		{ID: "eu", Name: "EU beta pro", Variations: []flagstore.RolloutVariation{{ID: "green", Rollout: []float64{0, 1}}},
			Conditions: []flagstore.Condition{{ID: "c1", Property: "country", Op: "IsOneOf", Value: `["NL","DE"]`},
				{ID: "c2", Property: "plan", Op: "Equal", Value: "pro"},
				{ID: "c3", Property: targeting.SegmentIn, Value: `["` + beta.ID.String() + `"]`}}},
		{ID: "mobile", Name: "Mobile rollout", DispatchKey: &email, Variations: []flagstore.RolloutVariation{
			{ID: "green", Rollout: []float64{0, 0.3}}, {ID: "red", Rollout: []float64{0.3, 1}}},
			Conditions: []flagstore.Condition{{ID: "c4", Property: "platform", Op: "IsOneOf", Value: `["ios","android"]`}}},
		{ID: "old", Name: "Old browsers", Variations: []flagstore.RolloutVariation{{ID: "blue", Rollout: []float64{0, 1}}},
			Conditions: []flagstore.Condition{{ID: "c5", Property: "version", Op: "LessThan", Value: "10"}}},
	}
	tg.Fallthrough = flagstore.Fallthrough{Variations: []flagstore.RolloutVariation{{ID: "red", Rollout: []float64{0, 1}}}}
	_, err := a.st.Flags().SetFlagTargeting(t.Context(), a.ownerActor(), env.ID, "button", flagstore.TargetingInput{Targeting: &tg})
	must(t, err)

	ch.do("desktop", viewport(1440))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("flag page", chromedp.Navigate(a.srv.URL+"/flags/button"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=targeting-summary]`)))
	sentences := func(sel string) []string {
		var out []string
		for _, s := range strings.Split(ch.eval(`[...document.querySelectorAll("`+sel+` [data-testid=summary-sentence]")].map(e => e.textContent).join("\n")`), "\n") {
			if s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	if got, want := sentences("[data-testid=summary-target]"), []string{"Serve Red to vip-1, vip-2", "Serve Blue to qa-1"}; !slices.Equal(got, want) {
		t.Errorf("targets %q, want %q", got, want)
	}
	wantRules := []string{
		"If country is one of NL, DE and plan is pro and user is in segment Beta testers, serve Green",
		"If platform is one of ios, android, serve 30% Green, 70% Red by email",
		"If version is less than 10, serve Blue",
	}
	if got := sentences("[data-testid=summary-rule]"); !slices.Equal(got, wantRules) {
		t.Errorf("rules %q, want %q", got, wantRules)
	}
	if got := sentences("[data-testid=summary-default]"); !slices.Equal(got, []string{"Otherwise serve Red"}) {
		t.Errorf("default %q", got)
	}
	f := a.flag(env, "button")
	if got := sentences("[data-testid=summary-off]"); !slices.Equal(got, []string{"When off, serve " + f.Variation(f.DisabledVariationID).Name}) {
		t.Errorf("off %q", got)
	}
	if n := ch.eval(`String([...document.querySelectorAll("[data-testid=comment]")].filter(e => !e.closest("[data-testid=flag-toggle-form]")).length)`); n != "0" {
		t.Errorf("the summary shows %s comment boxes besides the toggle's; a comment is asked for only where a change is saved", n)
	}
	// The whole page, summary and tester, fits a 1440×900 screen.
	height, _ := strconv.Atoi(ch.eval(`String(document.documentElement.scrollHeight)`))
	t.Logf("flag page height at 1440×900: %d px", height)
	for _, width := range []int64{1440, 390} {
		ch.shootAt(a.srv.URL, "/flags/button", "flag-summary", width, `[data-testid=targeting-summary]`)
	}
	ch.do("desktop again", viewport(1440), chromedp.Navigate(a.srv.URL+"/flags/button"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=targeting-summary]`)))
	if height > 900 {
		t.Errorf("the summary page is %d px tall at 1440×900; it should fit the screen", height)
	}

	// Editing a rule opens the editor at that rule.
	ch.do("edit the rollout", chromedp.Click(chromedp.CSS(`[data-testid=summary-rule]:nth-child(4) [data-testid=summary-edit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#edit-rule-2`)))
	leave := `(() => { const e = new Event("beforeunload", {cancelable: true}); window.dispatchEvent(e); return String(e.defaultPrevented) })()`
	if got := ch.eval(leave); got != "false" {
		t.Errorf("an untouched editor warns before leaving")
	}
	ch.do("rename the rule", chromedp.SendKeys(chromedp.CSS(`#targeting-rule-1-name`), " v2"))
	if got := ch.eval(leave); got != "true" {
		t.Errorf("an editor with unsaved changes does not warn before leaving")
	}
	// Leaving for real asks first (Chromium's "Leave site?" dialog), then goes.
	asked := make(chan string, 1)
	dialogs := chromedp.Events(ch.ctx, cdppage.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			asked <- string(ev.Type)
			_, _ = chromedp.Call(ch.ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: true})
			return
		}
	}()
	ch.do("leave", chromedp.Navigate(a.srv.URL+"/flags/button"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flag-tester]`)))
	select {
	case kind := <-asked:
		if kind != "beforeunload" {
			t.Errorf("leaving asked with a %s dialog", kind)
		}
	default:
		t.Errorf("leaving an editor with unsaved changes did not ask")
	}

	// Test a user who falls into the mobile rollout, and one with a bad line.
	user := "ann@example.com"
	bucket := eval.Bucket(eval.DispatchKey("button", &email, eval.EndUser{KeyID: "ann",
		CustomizedProperties: []eval.UserProperty{{Name: "email", Value: user}}})) * 100
	ch.do("open the tester", chromedp.Click(chromedp.CSS(`[data-testid=tester-open]`)), chromedp.WaitVisible(chromedp.CSS(`#tester-keyId`)))
	ch.fill(`#tester-keyId`, "ann")
	ch.do("properties", chromedp.SetValue(chromedp.CSS(`#tester-properties`), "platform=ios\nemail="+user))
	ch.do("test", chromedp.Click(chromedp.CSS(`[data-testid=tester-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=tester-why]`)))
	why := ch.eval(`[...document.querySelectorAll("[data-testid=tester-why]")].map(e => e.textContent).join("\n")`)
	if !strings.Contains(why, "the first rule that matches is Mobile rollout: "+wantRules[1]) ||
		!strings.Contains(why, fmt.Sprintf("the user's bucket is %.2f%%", bucket)) {
		t.Errorf("explanation %q (bucket %.1f%%)", why, bucket)
	}
	ch.do("properties", chromedp.SetValue(chromedp.CSS(`#tester-properties`), "platform=ios\nnot a property line"))
	ch.do("test a bad line", chromedp.Click(chromedp.CSS(`[data-testid=tester-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=error-properties]`)))
	if got := ch.eval(`document.querySelector("[data-testid=error-properties]").textContent`); got != `Line 2 is not name=value: "not a property line"` {
		t.Errorf("property line problem %q", got)
	}
	if got := ch.eval(`document.querySelector("#tester-properties").getAttribute("aria-invalid")`); got != "true" {
		t.Errorf("the properties field is not marked invalid")
	}
}
