package sdk_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store/experiments"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/web/metrics"
	"github.com/bunting-flags/bunting/web/sdk"
)

// experiment starts an experiment of the flag on a new metric of the event
// (tracked as numeric when numeric), with the flag's "false" variation as
// the baseline.
func (e *env) experiment(f flagstore.Flag, event string, numeric bool) experiments.Experiment {
	e.in.t.Helper()
	ctx := context.Background()
	ex := e.in.store.Experiments()
	track := experiments.TrackConversion
	if numeric {
		track = experiments.TrackNumeric
	}
	m, err := ex.CreateMetric(ctx, e.owner, e.id, experiments.MetricInput{Name: event, MaintainerUserID: e.owner.UserID,
		EventName: event, EventType: experiments.EventCustom, CustomEventTrackOption: track})
	must(e.in.t, err)
	x, err := ex.CreateExperiment(ctx, e.owner, e.id, experiments.ExperimentInput{FeatureFlagID: f.ID, MetricID: m.ID,
		BaselineVariationID: variationID(f, "false")})
	must(e.in.t, err)
	_, err = ex.StartExperiment(ctx, e.owner, e.id, x.ID)
	must(e.in.t, err)
	return x
}

// analysis reads the experiment's users and totals per variation value.
func (e *env) analysis(x experiments.Experiment) map[string]experiments.VariationAnalysis {
	e.in.t.Helper()
	a, err := e.in.store.Experiments().Analyze(context.Background(), e.owner, e.id, x.ID, nil)
	must(e.in.t, err)
	out := map[string]experiments.VariationAnalysis{}
	for _, v := range a.Variations {
		out[v.Value] = v
	}
	return out
}

// exptReport is an SDK's event report: for each user an evaluation of flag
// (sent to experiments or not) and, for the converted ones, a track() of
// event with value (none: the SDK's default of 1).
func exptReport(flag, variation string, sendToExperiment bool, users []string, event string, value string) string {
	var items []string
	for _, u := range users {
		items = append(items, fmt.Sprintf(`{"user":{"keyId":%q,"name":%q},"variations":[{"featureFlagKey":%q,"sendToExperiment":%t,"timestamp":1,"variation":{"id":%q,"value":"x"}}]}`,
			u, u, flag, sendToExperiment, variation))
		if event != "" {
			num := ""
			if value != "" {
				num = `"numericValue":` + value + `,`
			}
			items = append(items, fmt.Sprintf(`{"user":{"keyId":%q},"metrics":[{"route":"index/metric","type":"CustomEvent",%s"eventName":%q,"appType":"javascript","timestamp":1}]}`,
				u, num, event))
		}
	}
	return "[" + strings.Join(items, ",") + "]"
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint(prefix, i)
	}
	return out
}

// TestTrackFeedsExperiments: what SDKs report reaches the experiment: an
// evaluation with sendToExperiment is an exposure, one without is not, a
// track() is a conversion of its user (with its value, or 1), and events
// of another metric or flag count for nothing.
func TestTrackFeedsExperiments(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	fx := seed(prod)
	f := fx.flags["ft-bool"]
	on, off := variationID(f, "true"), variationID(f, "false")
	x := prod.experiment(f, "purchase", true)

	post := func(body string) {
		res, b := in.request("POST", "/api/public/insight/track", body, "Authorization", prod.client)
		if res.StatusCode != 200 || len(b) != 0 {
			t.Fatalf("track: %d %q", res.StatusCode, b)
		}
	}
	post(exptReport("ft-bool", off, true, names("c", 10), "purchase", "2.5"))
	post(exptReport("ft-bool", on, true, names("t", 20), "purchase", ""))
	post(exptReport("ft-bool", on, false, names("hidden", 5), "purchase", "9"))
	post(exptReport("ft-bool", on, true, names("t", 5), "other-event", "100"))
	post(exptReport("other-flag", on, true, names("x", 5), "purchase", "100"))

	got := prod.analysis(x)
	if c := got["false"]; c.Users != 10 || c.Conversions != 10 || c.Total != 25 {
		t.Errorf("false: %d users, %d converted, total %v; want 10, 10, 25", c.Users, c.Conversions, c.Total)
	}
	if tr := got["true"]; tr.Users != 20 || tr.Conversions != 20 || tr.Total != 20 {
		t.Errorf("true: %d users, %d converted, total %v; want 20, 20, 20", tr.Users, tr.Conversions, tr.Total)
	}
}

// TestExperimentEventsLimitedPerSecret: past its allowance a secret's
// experiment events are dropped (the report answered 200 all the same) and
// counted; another secret's are kept.
func TestExperimentEventsLimitedPerSecret(t *testing.T) {
	t.Parallel()
	dbURL, _ := dbtest.NewDatabase(t)
	m := metrics.New()
	limits := sdk.DefaultLimits
	limits.ExperimentEventsPerSecret = 10 // bursts of 20
	in := newInstanceWith(t, dbURL, sdk.Options{Limits: limits, Metrics: m}, slog.New(slog.DiscardHandler))
	prod, _ := in.project("web")
	fx := seed(prod)
	f := fx.flags["ft-bool"]
	x := prod.experiment(f, "purchase", false)
	res, _ := in.request("POST", "/api/public/insight/track", exptReport("ft-bool", variationID(f, "true"), true, names("u", 50), "", ""),
		"Authorization", prod.client)
	if res.StatusCode != 200 {
		t.Fatalf("track past the limit: %d", res.StatusCode)
	}
	in.request("POST", "/api/public/insight/track", exptReport("ft-bool", variationID(f, "false"), true, names("s", 3), "", ""),
		"Authorization", prod.server)
	got := prod.analysis(x)
	// The burst is 20; a few more may have been refilled while the report was read.
	if n := got["true"].Users; n < 20 || n > 25 {
		t.Errorf("%d exposures kept of 50 past a burst of 20", n)
	}
	if n := got["false"].Users; n != 3 {
		t.Errorf("another secret's 3 exposures: %d kept", n)
	}
	families, err := m.Registry().Gather()
	must(t, err)
	dropped := 0.0
	for _, f := range families {
		for _, c := range f.GetMetric() {
			if l := c.GetLabel(); f.GetName() == "bunting_sdk_writes_dropped_total" && len(l) == 1 && l[0].GetValue() == "experiment_events" {
				dropped = c.GetCounter().GetValue()
			}
		}
	}
	if int(dropped)+int(got["true"].Users) != 50 {
		t.Errorf("%v experiment events counted as dropped, %d kept, of 50", dropped, got["true"].Users)
	}
}
