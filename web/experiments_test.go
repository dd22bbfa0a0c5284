package web_test

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/net/html"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/experiments"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// experimentOn makes a metric "Checkout" counting the custom event
// "checkout" and an experiment on the flag against it, through the pages,
// and returns the experiment's page.
func experimentOn(t *testing.T, b *browser, flagKey string) string {
	t.Helper()
	b.get("/experiment-metrics").status(http.StatusOK).must("metric-create")
	p := b.post("/experiment-metrics", url.Values{"name": {"Checkout"}, "eventName": {"checkout"}, "eventType": {"1"},
		"customEventTrackOption": {"1"}, "customEventSuccessCriteria": {"1"}}).status(http.StatusOK)
	if got := p.text("metric-heading"); got != "Checkout" {
		t.Fatalf("after creating the metric: got heading %q, want Checkout", got)
	}
	metricID := strings.TrimPrefix(p.url.Path, "/experiment-metrics/")
	form := b.get("/flags/" + flagKey + "/experiments").status(http.StatusOK)
	form.must("experiment-create-form")
	p = b.post("/flags/"+flagKey+"/experiments", url.Values{"metricId": {metricID},
		"baselineVariationId": {selected(form.must("experiment-create-form"), "baselineVariationId")},
		"alpha":               {"0.05"}}).status(http.StatusOK)
	if !strings.HasPrefix(p.url.Path, "/experiments/") {
		t.Fatalf("creating the experiment ends at %s, want its page", p.url.Path)
	}
	return p.url.Path
}

// selected is the value of the option chosen in the form's select name.
func selected(form *html.Node, name string) string {
	for n := range form.Descendants() {
		if n.Type == html.ElementNode && n.Data == "option" && hasAttr(n, "selected") && n.Parent != nil && attr(n.Parent, "name") == name {
			return attr(n, "value")
		}
	}
	return ""
}

// record feeds a variation's exposed users, and the first converted of
// them a checkout each, as SDKs report them.
func record(t *testing.T, a *app, envID uuid.UUID, flagKey, variationID, prefix string, users, converted int) {
	t.Helper()
	at := time.Now()
	var ev experiments.Events
	for i := range users {
		key := fmt.Sprintf("%s-%d", prefix, i)
		ev.Exposures = append(ev.Exposures, experiments.Exposure{FlagKey: flagKey, UserKey: key, VariationID: variationID, At: at})
		if i < converted {
			ev.Conversions = append(ev.Conversions, experiments.Conversion{EventName: "checkout", EventType: experiments.EventCustom,
				UserKey: key, Value: 1, At: at})
		}
	}
	must(t, a.st.Experiments().RecordEvents(t.Context(), envID, ev))
}

// sequentialInterval is the always-valid interval on the relative lift of
// a conversion rate, computed here from the method's formulas (the normal
// mixture confidence sequence tuned for 5,000 users, GrowthBook's
// default), not from sql/stats.
func sequentialInterval(nc, cc, nt, ct int, alpha float64) (lift, lo, hi float64) {
	pc, pt := float64(cc)/float64(nc), float64(ct)/float64(nt)
	vc := pc * (1 - pc) * float64(nc) / float64(nc-1)
	vt := pt * (1 - pt) * float64(nt) / float64(nt-1)
	lift = (pt - pc) / pc
	se := math.Sqrt(vt/(float64(nt)*pc*pc) + vc*pt*pt/(float64(nc)*math.Pow(pc, 4)))
	n := float64(nc + nt)
	l := -2 * math.Log(alpha)
	rho := math.Sqrt((l + math.Log(l+1)) / 5000)
	r := n * rho * rho
	radius := math.Sqrt(2 * (r + 1) * math.Log(math.Sqrt(r+1)/alpha) / (n * rho * n * rho))
	half := se * math.Sqrt(n) * radius
	return lift, lift - half, lift + half
}

// TestExperimentFromMetricToVerdict: a person makes a metric and an
// experiment on a flag through the pages, starts it, and once SDKs have
// reported 2,000 users a variation, reads the results: the counts per
// variation, FeatBit's winner, and the verdict in words with the
// always-valid interval, as computed here from the formulas.
func TestExperimentFromMetricToVerdict(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	f := a.makeFlag(env, flagstore.FlagInput{Name: "New checkout", Key: "new-checkout", IsEnabled: true})
	b := a.signedIn(ownerEmail, ownerPassword)
	href := experimentOn(t, b, "new-checkout")

	p := b.get(href).status(http.StatusOK)
	if got := p.text("experiment-state"); got != "Not started" {
		t.Fatalf("a new experiment is %q, want Not started", got)
	}
	p.must("experiment-not-started")
	list := b.get("/experiments").status(http.StatusOK)
	if got := list.text("count-NotStarted"); !strings.HasPrefix(got, "1") {
		t.Errorf("the Not started count reads %q, want 1", got)
	}

	// Start, as htmx posts it: the page's main part comes back recording.
	p = b.htmx(href+"/start", nil).status(http.StatusOK)
	if got := p.text("experiment-state"); got != "Recording" {
		t.Fatalf("after Start the experiment is %q, want Recording", got)
	}
	if !p.has("experiment-stop") || p.has("experiment-start") {
		t.Error("a recording experiment offers no Stop, or still Start")
	}
	if got := p.text("experiment-results-empty"); !strings.Contains(got, "No user counted yet") {
		t.Errorf("before any event the results say %q", got)
	}

	trueID, falseID := f.Variations[0].ID, f.Variations[1].ID
	if f.Variations[0].Name != "True" {
		trueID, falseID = falseID, trueID
	}
	record(t, a, env.ID, "new-checkout", falseID, "f", 2000, 200)
	record(t, a, env.ID, "new-checkout", trueID, "t", 2000, 300)

	p = b.get(href).status(http.StatusOK)
	if p.has("experiment-srm") {
		t.Errorf("an even split is flagged as a sample ratio mismatch: %s", p.text("experiment-srm"))
	}
	for _, want := range []struct{ variation, users, conversions, rate, featbit string }{
		{"False", "2000", "200", "10%", "Baseline"},
		{"True", "2000", "300", "15%", "Winner"},
	} {
		row := p.row("result-row", "data-variation", want.variation)
		got := []string{text(find(row, "result-users")), text(find(row, "result-conversions")), text(find(row, "result-rate")),
			text(find(row, "result-featbit"))}
		if strings.Join(got, " ") != strings.Join([]string{want.users, want.conversions, want.rate, want.featbit}, " ") {
			t.Errorf("%s row: got %v, want %v", want.variation, got, want)
		}
	}
	lift, lo, hi := sequentialInterval(2000, 200, 2000, 300, 0.05)
	want := fmt.Sprintf("True converts %.0f%% better than False (+%.0f%% to +%.0f%%), over 99.9%% chance to beat it.", lift*100, lo*100, hi*100)
	if got := p.text("experiment-verdict"); got != want {
		t.Errorf("got verdict %q, want %q", got, want)
	}
	if got := text(find(p.row("result-row", "data-variation", "True"), "result-sequential")); got != fmt.Sprintf("+%.0f%% to +%.0f%%", lo*100, hi*100) {
		t.Errorf("got the always-valid interval %q", got)
	}
	chart := p.must("interval-chart")
	if attr(chart, "data-variation") != "True" || find(chart, "interval-band") == nil || len(findAll(chart, "interval-point")) == 0 {
		t.Error("the interval chart of True is missing its band or its points")
	}

	// The flag's tab lists it with its verdict; the list counts it recording.
	tab := b.get("/flags/new-checkout/experiments").status(http.StatusOK)
	if got := tab.text("experiment-row-verdict"); got != want {
		t.Errorf("the flag's tab says %q, want %q", got, want)
	}
	if got := b.get("/experiments").text("count-Recording"); !strings.HasPrefix(got, "1") {
		t.Errorf("the Recording count reads %q, want 1", got)
	}

	// Stop without script: back on the page, paused, results kept.
	b.get(href)
	p = b.post(href+"/stop", nil).status(http.StatusOK).at(href)
	if got := p.text("experiment-state"); got != "Paused" {
		t.Errorf("after Stop the experiment is %q, want Paused", got)
	}
	if !p.has("experiment-verdict") {
		t.Error("a stopped experiment no longer shows its results")
	}
}

// TestExperimentSampleRatioMismatch: when the users split 2,000 to 1,600
// under a flag that serves both halves alike, the page warns that its
// results cannot be trusted.
func TestExperimentSampleRatioMismatch(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Banner", Key: "banner", IsEnabled: true})
	// The default rule serves half and half: the split users should show.
	tg := f.Targeting()
	tg.Fallthrough.Variations = []flagstore.RolloutVariation{{ID: f.Variations[0].ID, Rollout: targeting.RolloutRange(0, 5000), ExptRollout: 1},
		{ID: f.Variations[1].ID, Rollout: targeting.RolloutRange(5000, 5000), ExptRollout: 1}}
	_, err := a.st.Flags().SetFlagTargeting(t.Context(), a.ownerActor(), env.ID, "banner", flagstore.TargetingInput{Targeting: &tg})
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)
	href := experimentOn(t, b, "banner")
	b.get(href)
	b.post(href+"/start", nil).status(http.StatusOK)
	record(t, a, env.ID, "banner", f.Variations[0].ID, "a", 2000, 200)
	record(t, a, env.ID, "banner", f.Variations[1].ID, "b", 1600, 160)
	got := b.get(href).status(http.StatusOK).text("experiment-srm")
	if !strings.Contains(got, "Sample ratio mismatch") || !strings.Contains(got, "2000") || !strings.Contains(got, "1600") {
		t.Errorf("got warning %q, want the mismatch named with both counts", got)
	}
}

// TestExperimentFormsSayWhatIsWrong: bad input is named at its field, and
// a metric an experiment measures is not archived, with the reason.
func TestExperimentFormsSayWhatIsWrong(t *testing.T) {
	t.Parallel()
	a, _, _ := flagApp(t)
	a.makeFlag(a.project("web").Environments[0], flagstore.FlagInput{Name: "Banner", Key: "banner"})
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/experiment-metrics")
	p := b.post("/experiment-metrics", url.Values{"name": {" "}, "eventName": {"checkout"}, "eventType": {"1"}}).status(http.StatusBadRequest)
	if p.text("error-name") == "" {
		t.Error("a metric without a name shows no message at its field")
	}

	href := experimentOn(t, b, "banner")
	form := b.get("/flags/banner/experiments")
	metricID, baseline := selected(form.must("experiment-create-form"), "metricId"), selected(form.must("experiment-create-form"), "baselineVariationId")
	for _, tc := range []struct{ metric, baseline, alpha, field string }{
		{metricID, baseline, "2", "alpha"},
		{metricID, "nope", "0.05", "baselineVariationId"},
		{uuid.NewString(), baseline, "0.05", "metricId"},
	} {
		p = b.post("/flags/banner/experiments", url.Values{"metricId": {tc.metric}, "baselineVariationId": {tc.baseline},
			"alpha": {tc.alpha}}).status(http.StatusBadRequest)
		if p.text("error-"+tc.field) == "" {
			t.Errorf("no message at %s", tc.field)
		}
	}

	metricHref := b.get(href).must("experiment-main")
	var metric string
	for n := range metricHref.Descendants() {
		if n.Data == "a" && strings.HasPrefix(attr(n, "href"), "/experiment-metrics/") {
			metric = attr(n, "href")
		}
	}
	b.get(metric + "/archive").status(http.StatusOK)
	p = b.post(metric+"/archive", nil).status(http.StatusUnprocessableEntity)
	if !strings.Contains(p.body, "An experiment measures this metric") {
		t.Errorf("archiving a metric in use does not say why:\n%s", p.body)
	}
}

// TestExperimentPagesOfAReader: someone who may read the environment but
// not change its flags' targeting reads experiments and metrics without
// a button to change them, and is refused if they post anyway.
func TestExperimentPagesOfAReader(t *testing.T) {
	t.Parallel()
	a, pr, env := flagApp(t)
	a.makeFlag(env, flagstore.FlagInput{Name: "Banner", Key: "banner"})
	owner := a.signedIn(ownerEmail, ownerPassword)
	href := experimentOn(t, owner, "banner")

	a.readerOf(pr)
	b := a.signedIn("reader@example.com", memberPassword)
	p := b.get("/experiments").status(http.StatusOK)
	if p.has("experiment-new") {
		t.Error("a reader is offered New experiment")
	}
	p = b.get(href).status(http.StatusOK)
	if p.has("experiment-start") || p.has("experiment-archive") {
		t.Error("a reader is offered Start or Remove")
	}
	if b.get("/experiment-metrics").has("metric-create") {
		t.Error("a reader is offered New metric")
	}
	b.post(href+"/start", nil).status(http.StatusForbidden)
	b.get("/experiment-metrics")
	b.post("/experiment-metrics", url.Values{"name": {"x"}, "eventName": {"x"}, "eventType": {"1"}}).status(http.StatusForbidden)
}

// readerOf adds reader@example.com with a policy that reads the project's
// environments and changes nothing.
func (a *app) readerOf(pr core.Project) uuid.UUID {
	a.t.Helper()
	ctx, owner := a.t.Context(), a.ownerActor()
	pol, err := a.st.IAM().CreatePolicy(ctx, owner, iam.PolicyInput{Name: "Reader", Key: "reader"})
	must(a.t, err)
	_, err = a.st.IAM().UpdatePolicyStatements(ctx, owner, pol.ID, []access.Statement{
		{ID: "p", ResourceType: access.TypeProject, Effect: "allow", Actions: []string{string(access.CanAccessProject)}, Resources: []string{"project/" + pr.Key}},
		{ID: "e", ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: []string{"project/" + pr.Key + ":env/*"}},
	})
	must(a.t, err)
	return a.addMember("reader@example.com", pol.ID)
}

// TestExperimentListsSearchInPlace: the Experiments and Metrics searches
// answer htmx with their list alone, found by the flag's or the metric's
// name.
func TestExperimentListsSearchInPlace(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	a.makeFlag(env, flagstore.FlagInput{Name: "Banner", Key: "banner"})
	b := a.signedIn(ownerEmail, ownerPassword)
	experimentOn(t, b, "banner")
	for _, tc := range []struct{ path, list, row, none string }{
		{"/experiments?q=bann", "experiment-list", "experiment-row", "/experiments?q=nothing"},
		{"/experiment-metrics?q=check", "metric-list", "metric-row", "/experiment-metrics?q=nothing"},
	} {
		get := func(path string) *page {
			req, err := http.NewRequest(http.MethodGet, a.srv.URL+path, nil)
			must(t, err)
			req.Header.Set("HX-Request", "true")
			return b.do(req).status(http.StatusOK)
		}
		p := get(tc.path)
		if p.has("sidebar") || len(p.findAll(tc.row)) != 1 {
			t.Errorf("%s: got %d rows (whole page: %v), want the list alone with one", tc.path, len(p.findAll(tc.row)), p.has("sidebar"))
		}
		if p = get(tc.none); len(p.findAll(tc.row)) != 0 || !p.has(tc.list) {
			t.Errorf("%s: got rows or no list", tc.none)
		}
	}
}
