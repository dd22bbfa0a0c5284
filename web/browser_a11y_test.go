package web_test

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/experiments"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/relayproxies"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// axeScript is axe-core, the accessibility engine (testdata/axe/VERSION).
//
//go:embed testdata/axe/axe.min.js
var axeScript string

// TestBrowserAccessibility opens every page of the admin application in
// headless Chromium and fails on any serious or critical violation axe-core
// finds at desktop width, and on any page that scrolls sideways at desktop
// or phone width. The pages come from the router, so
// a new page without a sample address here fails the test instead of being
// missed. With BUNTING_SCREENSHOTS set, every page is kept as a screenshot
// (shootAt also fails a page that scrolls sideways).
func TestBrowserAccessibility(t *testing.T) {
	t.Parallel()
	ch := headless(t, 240*time.Second)
	a, web, prod := flagApp(t)
	ctx, owner := t.Context(), a.ownerActor()

	// An organization with one of everything, and flags with real content.
	beta := a.makeSegment(prod, "Beta testers", "beta")
	archivedSeg := a.makeSegment(prod, "Old testers", "old")
	shared, err := a.st.Segments().CreateSegment(ctx, owner, prod.ID, segments.SegmentInput{Name: "Everyone in Web", Key: "everyone",
		Type: flagstore.SegmentShared, Scopes: []string{"organization/default-organization:project/web:env/*"}})
	must(t, err)
	_, err = a.st.Segments().ArchiveSegment(ctx, owner, prod.ID, archivedSeg.ID, flagstore.Change{})
	must(t, err)
	a.makeFlag(prod, flagstore.FlagInput{Name: "Checkout", Key: "checkout", Tags: []string{"web"}, IsEnabled: true})
	tg := a.flag(prod, "checkout").Targeting()
	on := a.flag(prod, "checkout").Variations[0].ID
	tg.TargetUsers = []flagstore.TargetUser{{VariationID: on, KeyIDs: []string{"vip-1"}}}
	tg.Rules = []flagstore.FlagRule{{ID: "r1", Name: "Beta", Variations: []flagstore.RolloutVariation{{ID: on, Rollout: []float64{0, 1}}},
		Conditions: []flagstore.Condition{{ID: "c1", Property: targeting.SegmentIn, Value: `["` + beta.ID.String() + `"]`}}}}
	_, err = a.st.Flags().SetFlagTargeting(ctx, owner, prod.ID, "checkout", flagstore.TargetingInput{Targeting: &tg})
	must(t, err)
	dev := web.Environments[1]
	a.makeFlag(dev, flagstore.FlagInput{Name: "Checkout", Key: "checkout"}) // compared with Prod's
	_, err = a.st.Governance().CreateTrigger(ctx, owner, governance.TriggerInput{TargetID: a.flag(prod, "checkout").ID,
		Type: governance.TriggerTypeFlagGeneral, Action: governance.TriggerTurnOff, Description: "Checkout alert"})
	must(t, err)
	a.makeFlag(prod, flagstore.FlagInput{Name: "Old banner", Key: "old-banner"})
	_, err = a.st.Flags().ArchiveFlag(ctx, owner, prod.ID, "old-banner", flagstore.Change{})
	must(t, err)
	member := a.addMember("dev@example.com", core.DeveloperPolicyID)
	group, err := a.st.IAM().CreateGroup(ctx, owner, iam.GroupInput{Name: "Developers"})
	must(t, err)
	policy, err := a.st.IAM().CreatePolicy(ctx, owner, iam.PolicyInput{Name: "Flags", Key: "flags"})
	must(t, err)
	_, err = a.st.IAM().UpdatePolicyStatements(ctx, owner, policy.ID, []access.Statement{{ID: "f", ResourceType: access.TypeFlag,
		Effect: "allow", Actions: []string{"*"}, Resources: []string{"project/*:env/*:flag/*"}}})
	must(t, err)
	token, err := a.st.Tokens().CreateAccessToken(ctx, owner, accesstokens.AccessTokenInput{Name: "CI", Type: core.TokenService,
		Permissions: []access.Statement{{ID: "p", ResourceType: access.TypeProject, Effect: "allow", Actions: []string{"CanAccessProject"}, Resources: []string{"project/*"}}}})
	must(t, err)
	hook, err := a.st.Webhooks().CreateWebhook(ctx, owner, webhooks.WebhookInput{Name: "Chat", URL: "https://hooks.example.com/bunting",
		Scopes: []string{web.ID.String() + "/" + prod.ID.String()}, Events: []string{webhooks.EventFlagToggled}, IsActive: true})
	must(t, err)
	relay, err := a.st.RelayProxies().Create(ctx, owner, relayproxies.Input{Name: "Edge", Scopes: []string{prod.ID.String()},
		Agents: []relayproxies.Agent{{ID: "m1", Name: "Air-gapped", Host: "http://10.0.0.5:6100"}}})
	must(t, err)
	must(t, a.st.RelayProxies().RegisterAgent(ctx, relay.Key, "edge-1", 9))
	must(t, a.st.RelayProxies().ReportStatus(ctx, relay.ID, "edge-1", `{"serves":"web:prod","dataVersion":1700000000000,"syncState":"Stable","lastSyncedAt":"2026-01-01T00:00:00Z","reportedAt":"2026-01-01T00:00:00Z"}`))

	// An experiment on checkout with results, and its metric.
	metric, err := a.st.Experiments().CreateMetric(ctx, owner, prod.ID, experiments.MetricInput{Name: "Checkout", MaintainerUserID: a.owner,
		EventName: "checkout", EventType: experiments.EventCustom, CustomEventTrackOption: experiments.TrackConversion})
	must(t, err)
	expt, err := a.st.Experiments().CreateExperiment(ctx, owner, prod.ID, experiments.ExperimentInput{FeatureFlagID: a.flag(prod, "checkout").ID,
		MetricID: metric.ID, BaselineVariationID: a.flag(prod, "checkout").Variations[1].ID})
	must(t, err)
	_, err = a.st.Experiments().StartExperiment(ctx, owner, prod.ID, expt.ID)
	must(t, err)
	var reported experiments.Events
	for i := range 80 {
		key := fmt.Sprintf("u-%d", i)
		reported.Exposures = append(reported.Exposures, experiments.Exposure{FlagKey: "checkout", UserKey: key, VariationID: a.flag(prod, "checkout").Variations[i%2].ID, At: time.Now()})
		if i%5 == 0 {
			reported.Conversions = append(reported.Conversions, experiments.Conversion{EventName: "checkout", EventType: experiments.EventCustom, UserKey: key, Value: 1, At: time.Now()})
		}
	}
	must(t, a.st.Experiments().RecordEvents(ctx, prod.ID, reported))

	buffer := runner.NewEndUsers(a.st, slog.New(slog.DiscardHandler))
	buffer.Saw(prod.ID, []eval.EndUser{{KeyID: "alice", CustomizedProperties: []eval.UserProperty{{Name: "country", Value: "NL"}}}}, time.Now())
	must(t, buffer.Flush(ctx))
	// Evaluations of both variations, so the chart and the list's trend are drawn.
	tally := runner.NewEvaluations(a.st, slog.New(slog.DiscardHandler))
	checkout := a.flag(prod, "checkout")
	tally.Served([]runner.Served{{Flag: &checkout, Variation: 0}, {Flag: &checkout, Variation: 0}, {Flag: &checkout, Variation: 1}}, time.Now())
	must(t, tally.Flush(ctx))
	endUsers, err := a.st.SDK().ListEndUsers(ctx, owner, prod.ID, sdkdata.EndUserFilter{})
	must(t, err)

	// Prod's changes need approval: the flag pages ask for reviewers, and
	// the member's request waits for the owner's review.
	a.needApproval(prod, a.owner, member)
	dev1, err := a.st.IAM().UserActor(ctx, member, a.wsID.String(), a.orgID.String())
	must(t, err)
	off := false
	request, err := a.st.Governance().CreateFlagChangeRequest(ctx, dev1, prod.ID, "checkout", flagstore.FlagChangeRequestInput{IsEnabled: &off,
		Reason: "Checkout alerts", Reviewers: []uuid.UUID{a.owner}})
	must(t, err)

	// samples are addresses for the router's parameterised pages.
	samples := map[string]string{
		"/change-requests/:id":             "/change-requests/" + request.ID.String(),
		"/reviews/:id":                     "/reviews/" + request.ID.String(),
		"/end-users/:id":                   "/end-users/" + endUsers.Items[0].ID.String(),
		"/projects/:id":                    "/projects/" + web.ID.String(),
		"/projects/:id/delete":             "/projects/" + web.ID.String() + "/delete",
		"/projects/:id/envs/:envId":        "/projects/" + web.ID.String() + "/envs/" + prod.ID.String(),
		"/projects/:id/envs/:envId/delete": "/projects/" + web.ID.String() + "/envs/" + prod.ID.String() + "/delete",
		"/members/:id":                     "/members/" + member.String(),
		"/members/:id/remove":              "/members/" + member.String() + "/remove",
		"/groups/:id":                      "/groups/" + group.ID.String(),
		"/groups/:id/delete":               "/groups/" + group.ID.String() + "/delete",
		"/policies/:id":                    "/policies/" + policy.ID.String(),
		"/policies/:id/clone":              "/policies/" + policy.ID.String() + "/clone",
		"/policies/:id/delete":             "/policies/" + policy.ID.String() + "/delete",
		"/access-tokens/:id":               "/access-tokens/" + token.ID.String(),
		"/webhooks/:id":                    "/webhooks/" + hook.ID.String(),
		"/webhooks/:id/delete":             "/webhooks/" + hook.ID.String() + "/delete",
		"/relay-proxies/:id":               "/relay-proxies/" + relay.ID.String(),
		"/relay-proxies/:id/delete":        "/relay-proxies/" + relay.ID.String() + "/delete",
		"/flags/:key":                      "/flags/checkout",
		"/flags/:key/variations":           "/flags/checkout/variations",
		"/flags/:key/settings":             "/flags/checkout/settings",
		"/flags/:key/archive":              "/flags/checkout/archive",
		"/flags/:key/restore":              "/flags/old-banner/restore",
		"/flags/:key/delete":               "/flags/old-banner/delete",
		"/flags/:key/history":              "/flags/checkout/history",
		"/flags/:key/insights":             "/flags/checkout/insights",
		"/flags/:key/compare":              "/flags/checkout/compare?target=" + dev.ID.String(),
		"/flags/:key/triggers":             "/flags/checkout/triggers",
		"/flags/:key/code":                 "/flags/checkout/code",
		"/segments/:id":                    "/segments/" + beta.ID.String(),
		"/segments/:id/flags":              "/segments/" + beta.ID.String() + "/flags",
		"/segments/:id/settings":           "/segments/" + beta.ID.String() + "/settings",
		"/segments/:id/archive":            "/segments/" + beta.ID.String() + "/archive",
		"/segments/:id/restore":            "/segments/" + archivedSeg.ID.String() + "/restore",
		"/segments/:id/delete":             "/segments/" + archivedSeg.ID.String() + "/delete",
		"/segments/:id/history":            "/segments/" + beta.ID.String() + "/history",
		"/flags/:key/experiments":          "/flags/checkout/experiments",
		"/experiments/:id":                 "/experiments/" + expt.ID.String(),
		"/experiments/:id/archive":         "/experiments/" + expt.ID.String() + "/archive",
		"/experiments/:id/archive-data":    "/experiments/" + expt.ID.String() + "/archive-data",
		"/experiment-metrics/:id":          "/experiment-metrics/" + metric.ID.String(),
		"/experiment-metrics/:id/archive":  "/experiment-metrics/" + metric.ID.String() + "/archive",
	}
	// Not pages: assets, the SSO callback (a redirect), fragments, the home
	// redirect, and the SDK and health endpoints.
	skip := map[string]bool{"/static/:name": true, "/sso/callback": true, "/policies/key-check": true, "/end-users/suggest": true, "/": true, "/get-started/check": true,
		"/streaming": true, "/health/liveness": true, "/health/readiness": true}
	// Extra states of pages worth checking on their own.
	extra := []string{"/flags/compare?target=" + dev.ID.String(), "/flags/checkout/compare?target=" + dev.ID.String() + "&preview=1&onOffState=on&targetingRule=on",
		"/flags/copy?target=" + dev.ID.String() + "&flag=" + a.flag(prod, "checkout").ID.String(), "/flags/checkout?edit=targeting", "/flags/checkout?edit=targeting&part=targets", "/flags/checkout?edit=off", "/flags?archived=1", "/flags?stage=ready", "/flags/checkout/insights?span=hour", "/search?q=checkout",
		"/flags?sort=-lastEvaluatedAt&tag=web&size=10", "/flags?page=99",
		"/policies/" + policy.ID.String() + "?tab=statements&check-action=ToggleFlag&check-resource=project/web:env/prod:flag/*",
		"/get-started?sdk=js", "/audit-log?type=FlagTrigger",
		"/segments/" + shared.ID.String() + "/settings?shared=1", "/experiments/new?flag=checkout"}

	// Each page is named by its route, so screenshots keep their names
	// from run to run.
	type page struct{ name, path string }
	var paths []page
	routes := a.srv.Config.Handler.(*echo.Echo).Routes()
	seen := map[string]bool{}
	for _, r := range routes {
		if r.Method != http.MethodGet || strings.HasPrefix(r.Path, "/api") || skip[r.Path] || seen[r.Path] {
			continue
		}
		seen[r.Path] = true
		path := r.Path
		if strings.Contains(path, ":") {
			if path = samples[r.Path]; path == "" {
				t.Errorf("page %s has no sample address in this test: add one, so it is checked", r.Path)
				continue
			}
		}
		paths = append(paths, page{r.Path, path})
	}
	for _, path := range extra {
		paths = append(paths, page{path[:strings.IndexAny(path, "?")] + " " + path[strings.IndexAny(path, "?")+1:], path})
	}
	for i := range paths {
		paths[i].name = strings.ReplaceAll(paths[i].name, policy.ID.String(), ":id")
		paths[i].name = strings.ReplaceAll(paths[i].name, shared.ID.String(), ":id")
	}

	script, err := json.Marshal(axeScript)
	must(t, err)
	check := func(path string) {
		t.Helper()
		var result string
		_, err := chromedp.Run(ch.ctx, chromedp.Evaluate[string](`(function(){ if (!window.axe) { (0, eval)(`+string(script)+`) }; return "ready" })()`))
		if err == nil {
			result, err = chromedp.Run(ch.ctx, chromedp.Evaluate[string](`axe.run(document, {resultTypes: ["violations"]}).then(r =>
				JSON.stringify(r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v =>
					({id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map(n => n.target.join(" "))}))))`, chromedp.EvalAwaitPromise))
		}
		if err != nil {
			t.Errorf("%s: axe did not run: %v", path, err)
			return
		}
		var violations []struct {
			ID, Impact, Help string
			Targets          []string
		}
		must(t, json.Unmarshal([]byte(result), &violations))
		for _, v := range violations {
			t.Errorf("%s: %s %s (%s) at %s", path, v.Impact, v.ID, v.Help, strings.Join(v.Targets, ", "))
		}
	}
	name := regexp.MustCompile(`[^a-z0-9]+`)

	ch.do("desktop", viewport(1440), chromedp.Navigate(a.srv.URL+"/login"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-form]`)))
	check("/login")
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	for _, width := range []int64{1440, 390} {
		for _, pg := range paths {
			shot := strings.Trim(name.ReplaceAllString(strings.ToLower(pg.name), "-"), "-")
			ch.shootAt(a.srv.URL, pg.path, "page-"+shot, width, "body")
			if width == 1440 { // axe once a page; the phone width is checked for sideways scrolling
				ch.do("viewport", viewport(width))
				check(fmt.Sprintf("%s at %d px", pg.path, width))
			}
		}
	}

	// States the pages above do not reach, as a new user met them: Dev
	// requires comments, so its list's toggles open a pop-up; the owner,
	// working there, opens Prod's change request and approves it; a
	// webhook no delivery can reach, and its failed test; and, at phone
	// width, the guide's snippets and the comparison.
	_, err = a.st.Projects().UpdateEnvironment(ctx, owner, web.ID, dev.ID, core.EnvironmentInput{Name: dev.Name, Settings: &core.EnvSettings{RequireChangeComment: true}})
	must(t, err)
	_, err = a.st.IAM().SetUserContext(ctx, owner, core.UserContext{OrganizationID: a.orgID, ProjectID: web.ID, EnvID: dev.ID})
	must(t, err)
	unreachable, err := a.st.Webhooks().CreateWebhook(ctx, owner, webhooks.WebhookInput{Name: "Internal", URL: "http://10.0.0.1/bunting",
		Scopes: []string{web.ID.String() + "/" + prod.ID.String()}, Events: []string{webhooks.EventFlagToggled}, IsActive: true})
	must(t, err)
	toggle := `[data-testid=flag-row][data-key=checkout] [data-testid=flag-toggle]`
	states := []struct {
		name, path, click, wait string
		width                   int64
	}{
		{name: "the flag list, comments required", path: "/flags", wait: toggle},
		{name: "a row's toggle pop-up open", path: "/flags", click: toggle, wait: `[data-testid=flag-row][data-key=checkout] [data-testid=comment]`},
		{name: "a flag page, comments required", path: "/flags/checkout", wait: `[data-testid=flag-toggle-form]`},
		{name: "a flag's editor, comments required", path: "/flags/checkout?edit=targeting", wait: `[data-testid=rule-add]`},
		{name: "a change request of another environment", path: "/change-requests/" + request.ID.String(), wait: `[data-testid=cr-elsewhere]`},
		{name: "a webhook no delivery can reach", path: "/webhooks/" + unreachable.ID.String(), wait: `[data-testid=webhook-undeliverable]`},
		{name: "its failed test", path: "/webhooks/" + unreachable.ID.String(), click: `[data-testid=webhook-test]`, wait: `[data-testid=flash-error]`},
		{name: "the guide's snippets at 390 px", path: "/get-started?sdk=js", wait: `[data-testid=snippet-code]`, width: 390},
		{name: "the comparison at 390 px", path: "/flags/compare?target=" + prod.ID.String(), wait: `[data-testid=compare-part]`, width: 390},
	}
	for _, st := range states {
		width := cmp.Or(st.width, 1440)
		ch.do(st.name, viewport(width), chromedp.Navigate(a.srv.URL+st.path), chromedp.WaitVisible(chromedp.CSS(cmp.Or(st.click, st.wait))))
		if st.click != "" {
			ch.do(st.name, chromedp.Click(chromedp.CSS(st.click)), chromedp.WaitVisible(chromedp.CSS(st.wait)))
		}
		check(st.name)
	}
	_, err = a.st.Governance().ApproveFlagChangeRequest(ctx, owner, prod.ID, request.ID, governance.ReviewInput{Comment: "Fine"})
	must(t, err)
	ch.do("an approved request", viewport(1440), chromedp.Navigate(a.srv.URL+"/change-requests/"+request.ID.String()),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=cr-decided]`)))
	check("a change request its reviewer approved")
}
