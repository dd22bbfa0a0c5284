package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// compareApp has Checkout in Prod (on, with a rule for NL) and in Dev (off,
// no rules), and Banner in Prod only.
func compareApp(t *testing.T) (*app, core.Environment, core.Environment) {
	t.Helper()
	a, pr, prod := flagApp(t)
	dev := pr.Environments[1]
	ctx, owner := t.Context(), a.ownerActor()
	f := a.makeFlag(prod, flagstore.FlagInput{Name: "Checkout", Key: "checkout", IsEnabled: true})
	tg := f.Targeting()
	tg.Rules = []flagstore.FlagRule{{ID: "r1", Name: "Dutch", Variations: []flagstore.RolloutVariation{{ID: f.Variations[0].ID, Rollout: []float64{0, 1}}},
		Conditions: []flagstore.Condition{{ID: "c1", Property: "country", Op: "Equal", Value: "NL"}}}}
	_, err := a.st.Flags().SetFlagTargeting(ctx, owner, prod.ID, "checkout", flagstore.TargetingInput{Targeting: &tg})
	must(t, err)
	a.makeFlag(dev, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	a.makeFlag(prod, flagstore.FlagInput{Name: "Banner", Key: "banner"})
	return a, prod, dev
}

// TestComparePagesNeedTheTargetsActions: a member who may read both
// environments but change nothing in Dev sees the comparison, is told in the
// preview and the pre-check that the copy would be refused, and a copy
// posted anyway changes nothing.
func TestComparePagesNeedTheTargetsActions(t *testing.T) {
	t.Parallel()
	a, prod, dev := compareApp(t)
	ctx, owner := t.Context(), a.ownerActor()
	policy, err := a.st.IAM().CreatePolicy(ctx, owner, iam.PolicyInput{Name: "Reader", Key: "reader"})
	must(t, err)
	_, err = a.st.IAM().UpdatePolicyStatements(ctx, owner, policy.ID, []access.Statement{
		{ID: "p", ResourceType: access.TypeProject, Effect: "allow", Actions: []string{"CanAccessProject"}, Resources: []string{"project/*"}},
		{ID: "e", ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{"CanAccessEnv"}, Resources: []string{"project/web:env/*"}},
		{ID: "f", ResourceType: access.TypeFlag, Effect: "allow", Actions: []string{"*"}, Resources: []string{"project/web:env/prod:flag/*"}}})
	must(t, err)
	a.addMember("reader@example.com", policy.ID)
	b := a.signedIn("reader@example.com", memberPassword)

	target := "target=" + dev.ID.String()
	pg := b.get("/flags/compare?" + target).status(http.StatusOK)
	if row := pg.row("compare-row", "data-key", "checkout"); row == nil || !strings.Contains(text(row), "Differs") {
		t.Fatalf("checkout row: %q", pg.text("compare-list"))
	}
	if row := pg.row("compare-row", "data-key", "banner"); row == nil || !strings.Contains(text(row), "Not in Web / Dev") {
		t.Fatalf("banner row: %q", pg.text("compare-list"))
	}
	pg = b.get("/flags/checkout/compare?" + target + "&preview=1&onOffState=on").status(http.StatusOK)
	if !strings.Contains(pg.text("copy-refused"), "You may not make this change") || pg.has("copy-confirm") {
		t.Fatalf("preview for a reader: refused %q, confirm offered %v", pg.text("copy-refused"), pg.has("copy-confirm"))
	}
	b.post("/flags/checkout/copy-settings", url.Values{"target": {dev.ID.String()}, "onOffState": {"on"}}).status(http.StatusForbidden)
	if a.flag(dev, "checkout").IsEnabled {
		t.Fatal("a refused copy turned Dev's flag on")
	}
	banner := a.flag(prod, "banner")
	pg = b.get("/flags/copy?" + target + "&flag=" + banner.ID.String()).status(http.StatusOK)
	if pg.has("copy-confirm") || !strings.Contains(pg.text("copy-checks"), "You may not create this flag in Web / Dev") {
		t.Fatalf("pre-check for a reader: %q", pg.text("copy-checks"))
	}
	b.post("/flags/copy", url.Values{"target": {dev.ID.String()}, "flag": {banner.ID.String()}}).status(http.StatusForbidden)
	if _, err := a.st.Flags().GetFlag(ctx, owner, dev.ID, "banner"); err != core.ErrNotFound {
		t.Fatalf("banner in Dev after a refused copy: %v", err)
	}
	// A copy naming the working environment as its target is refused.
	b.get("/flags/checkout/compare?target=" + prod.ID.String()).status(http.StatusOK)
	b.get("/flags/compare?target=" + uuid.NewString()).status(http.StatusOK)
}

// TestFlagPageLinksToCompareAndCopy: the flag page leads to the side-by-side
// comparison and to copying the flag; with one other environment, that is
// the target, and with more the target is chosen first.
func TestFlagPageLinksToCompareAndCopy(t *testing.T) {
	t.Parallel()
	a, prod, dev := compareApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	pg := b.get("/flags/banner").status(http.StatusOK)
	compare, copyTo := attr(pg.must("compare-link"), "href"), attr(pg.must("copy-link"), "href")
	if compare != "/flags/banner/compare" {
		t.Errorf("compare link %q", compare)
	}
	// Dev is the only other environment: the copy page checks against it
	// without asking.
	pg = b.get(copyTo).status(http.StatusOK)
	if pg.has("target-select") || pg.text("target-name") != "Web / Dev" || !pg.has("copy-checks") {
		t.Fatalf("copy page with one possible target: %q", pg.text("copy-target-form"))
	}
	_, err := a.st.Projects().CreateEnvironment(t.Context(), a.ownerActor(), a.project("web").ID, core.EnvironmentInput{Name: "Staging", Key: "staging"})
	must(t, err)
	pg = b.get(copyTo).status(http.StatusOK)
	if !pg.has("target-select") || pg.has("copy-checks") || pg.has("target-name") {
		t.Fatalf("copy page before a target is chosen among two: %q", pg.text("copy-target-form"))
	}
	if pg = b.get("/flags/compare").status(http.StatusOK); !pg.has("target-select") || pg.has("compare-list") {
		t.Fatalf("comparison before a target is chosen among two: %q", pg.text("compare-target-form"))
	}
	pg = b.get(copyTo + "&target=" + dev.ID.String()).status(http.StatusOK)
	if row := pg.row("copy-check-row", "data-key", "banner"); row == nil || attr(row, "data-ok") != "true" || !pg.has("copy-confirm") {
		t.Fatalf("pre-check: %q", pg.text("copy-checks"))
	}
	b.post("/flags/copy", url.Values{"target": {dev.ID.String()}, "flag": {a.flag(prod, "banner").ID.String()}}).status(http.StatusOK)
	if a.flag(dev, "banner").Name != "Banner" {
		t.Fatal("banner was not copied")
	}
	// Copying again: the key is taken now, so the pre-check offers no copy
	// and a copy posted anyway is refused, naming the key.
	pg = b.get(copyTo + "&target=" + dev.ID.String()).status(http.StatusOK)
	if pg.has("copy-confirm") || !strings.Contains(pg.text("copy-checks"), "Web / Dev already has a flag with the key banner") {
		t.Fatalf("pre-check of a taken key: %q", pg.text("copy-checks"))
	}
	pg = b.post("/flags/copy", url.Values{"target": {dev.ID.String()}, "flag": {a.flag(prod, "banner").ID.String()}}).status(http.StatusBadRequest)
	if !strings.Contains(pg.text("form-error"), "a flag with key banner already exists in Web/Dev") {
		t.Fatalf("refusal: %q", pg.text("form-error"))
	}
}

// TestBrowserCompareAndCopy compares Prod with Dev in Chromium, copies a
// flag Dev lacks after its pre-check, then copies Checkout's settings to Dev
// after reading the preview of Dev's history entry.
func TestBrowserCompareAndCopy(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, dev := compareApp(t)
	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)

	// Dev is the project's only other environment: the comparison opens
	// with it, naming it rather than asking.
	ch.do("open the comparison from the flag list",
		chromedp.Navigate(a.srv.URL+"/flags"),
		chromedp.Click(chromedp.CSS(`[data-testid=compare-link]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=compare-list]`)))
	if got := ch.eval(`document.querySelector("[data-testid=target-name]").textContent + "|" + String(document.querySelector("[data-testid=target-select]"))`); got != "Web / Dev|null" {
		t.Errorf("the target shown: %q, want Web / Dev and no choice", got)
	}

	// "Select all" checks every row and shows a partial choice as mixed.
	state := func() string {
		return ch.eval(`(function(){var all=document.querySelector("[data-testid=compare-pick-all]");` +
			`var n=[...document.querySelectorAll("[data-testid=compare-pick]")].filter(b=>b.checked).length;` +
			`return (all.indeterminate?"mixed":String(all.checked))+" "+n})()`)
	}
	ch.do("select all", chromedp.WaitVisible(chromedp.CSS(`[data-testid=compare-pick-all]`)), chromedp.Click(chromedp.CSS(`[data-testid=compare-pick-all]`)))
	if got := state(); got != "true 2" {
		t.Errorf("after Select all: %q, want true 2", got)
	}
	ch.do("clear one", chromedp.Click(chromedp.CSS(`[data-key=checkout] [data-testid=compare-pick]`)))
	if got := state(); got != "mixed 1" {
		t.Errorf("with one of two chosen: %q, want mixed 1", got)
	}
	ch.do("clear all", chromedp.Click(chromedp.CSS(`[data-testid=compare-pick-all]`)))
	if got := state(); got != "true 2" {
		t.Errorf("a mixed Select all, clicked, selects all: %q", got)
	}
	ch.do("clear all", chromedp.Click(chromedp.CSS(`[data-testid=compare-pick-all]`)))
	if got := state(); got != "false 0" {
		t.Errorf("after clearing all: %q, want false 0", got)
	}
	differs := ch.eval(`[...document.querySelectorAll("[data-key=checkout] [data-differs=true]")].map(e => e.dataset.part).join(",")`)
	if differs != "On/off,Rules" {
		t.Errorf("checkout differs in %q, want On/off,Rules", differs)
	}
	if got := ch.eval(`document.querySelector("[data-key=banner] [data-testid=compare-missing]").textContent`); got != "Not in Web / Dev" {
		t.Errorf("banner: %q", got)
	}

	ch.do("pre-check copying Banner",
		chromedp.Click(chromedp.CSS(`[data-key=banner] [data-testid=compare-pick]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=copy-selected]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=copy-checks]`)))
	if got := ch.eval(`document.querySelector("[data-testid=copy-check-row]").dataset.ok`); got != "true" {
		t.Errorf("banner's pre-check: %s", ch.eval(`document.querySelector("[data-testid=copy-checks]").innerText`))
	}
	ch.do("copy it",
		chromedp.Click(chromedp.CSS(`[data-testid=copy-confirm]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=compare-list]`)))
	if got := ch.eval(`document.querySelector("#flash").innerText`); !strings.Contains(got, "1 flag copied") {
		t.Errorf("flash after copying: %q", got)
	}
	if got := ch.eval(`String(document.querySelector("[data-key=banner] [data-testid=compare-missing]"))`); got != "null" {
		t.Error("banner is still missing in Dev after the copy")
	}
	if b := a.flag(dev, "banner"); b.Name != "Banner" {
		t.Fatalf("Dev's banner: %+v", b)
	}

	ch.do("compare Checkout side by side",
		chromedp.Click(chromedp.CSS(`[data-key=checkout] [data-testid=compare-flag]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=compare-sides]`)))
	if got := ch.eval(`document.querySelector("[data-part=Rules] [data-testid=source-side]").textContent`); !strings.Contains(got, "Dutch: If country is NL, serve True") {
		t.Errorf("Prod's rules in words: %q", got)
	}
	if got := ch.eval(`document.querySelector("[data-part=Rules] [data-testid=target-side]").textContent`); got != "None" {
		t.Errorf("Dev's rules in words: %q", got)
	}

	ch.do("preview copying on/off and rules",
		chromedp.Click(chromedp.CSS(`[data-testid=copy-defaultRule]`)), // leave out what is the same
		chromedp.Click(chromedp.CSS(`[data-testid=copy-offVariation]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=copy-preview]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=copy-preview-result]`)))
	lines := ch.eval(`[...document.querySelectorAll("[data-testid=copy-lines] li")].map(e => e.textContent).join("\n")`)
	if want := "Turned the flag on\nAdded rule Dutch: if country is NL, serve True"; lines != want {
		t.Errorf("preview lines:\n%s\nwant:\n%s", lines, want)
	}
	if got := ch.eval(`document.querySelector("[data-testid=copy-comment]").textContent`); got != `Copy flag settings from "Web/Prod"` {
		t.Errorf("preview comment %q", got)
	}
	if a.flag(dev, "checkout").IsEnabled {
		t.Fatal("the preview changed Dev's flag")
	}
	// The preview page shows the sides too; the flash says the copy's answer has arrived.
	ch.do("confirm",
		chromedp.Click(chromedp.CSS(`[data-testid=copy-confirm]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash-success]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=compare-sides]`)))
	if got := ch.eval(`document.querySelector("#flash").innerText`); !strings.Contains(got, "Settings copied") {
		t.Errorf("flash after copying settings: %q", got)
	}
	if got := ch.eval(`[...document.querySelectorAll("[data-testid=compare-side][data-differs=true]")].map(e => e.dataset.part).join(",")`); got != "" {
		t.Errorf("after the copy these parts still differ: %q", got)
	}
	if f := a.flag(dev, "checkout"); !f.IsEnabled || len(f.Rules) != 1 {
		t.Fatalf("Dev's checkout after the copy: %+v", f)
	}
	var n int
	must(t, a.pool.QueryRow(t.Context(), `SELECT count(*) FROM audit_logs WHERE env_id = $1 AND ref_type = 'FeatureFlag'
		AND operation = 'Update' AND comment = 'Copy flag settings from "Web/Prod"'`, dev.ID).Scan(&n))
	if n != 1 {
		t.Errorf("%d entries of the copy in Dev's history, want 1", n)
	}
}
