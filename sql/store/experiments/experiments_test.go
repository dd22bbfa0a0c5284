package experiments_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/experiments"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/storetest"
)

type fixture struct {
	s     *store.Store
	owner *core.Actor
	env   core.Environment
	flag  flagstore.Flag
	// off and on are the flag's two variations; off is the baseline.
	off, on string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	s, owner, _ := storetest.New(t)
	env, _ := storetest.ProdAndDev(t, s, owner)
	f, err := s.Flags().CreateFlag(context.Background(), owner, env.ID, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	storetest.Must(t, err)
	fx := fixture{s: s, owner: owner, env: env, flag: f}
	for _, v := range f.Variations {
		if v.Value == "true" {
			fx.on = v.ID
		} else {
			fx.off = v.ID
		}
	}
	return fx
}

func (fx fixture) metric(t *testing.T, name string, track int) experiments.Metric {
	t.Helper()
	m, err := fx.s.Experiments().CreateMetric(context.Background(), fx.owner, fx.env.ID, experiments.MetricInput{Name: name,
		MaintainerUserID: fx.owner.UserID, EventName: name, EventType: experiments.EventCustom,
		CustomEventTrackOption: track, CustomEventSuccessCriteria: experiments.CriteriaHigher})
	storetest.Must(t, err)
	return m
}

func (fx fixture) started(t *testing.T, m experiments.Metric) (experiments.Experiment, experiments.Iteration) {
	t.Helper()
	ctx := context.Background()
	x, err := fx.s.Experiments().CreateExperiment(ctx, fx.owner, fx.env.ID, experiments.ExperimentInput{FeatureFlagID: fx.flag.ID,
		MetricID: m.ID, BaselineVariationID: fx.off})
	storetest.Must(t, err)
	it, err := fx.s.Experiments().StartExperiment(ctx, fx.owner, fx.env.ID, x.ID)
	storetest.Must(t, err)
	return x, it
}

// users reports n users exposed to variation (keys prefix0…), the first
// converted of them sending the metric's event value times each.
func users(prefix, variation string, n, converted int, value float64, times int) experiments.Events {
	var ev experiments.Events
	at := time.Now().Add(time.Second)
	for i := range n {
		key := fmt.Sprint(prefix, i)
		ev.Exposures = append(ev.Exposures, experiments.Exposure{FlagKey: "checkout", UserKey: key, VariationID: variation, At: at})
		if i < converted {
			for range times {
				ev.Conversions = append(ev.Conversions, experiments.Conversion{EventName: "buy", EventType: experiments.EventCustom,
					UserKey: key, Value: value, At: at})
			}
		}
	}
	return ev
}

func result(t *testing.T, rows []experiments.Result, variation string) experiments.Result {
	t.Helper()
	for _, r := range rows {
		if r.VariationID == variation {
			return r
		}
	}
	t.Fatalf("no result row for %s in %+v", variation, rows)
	return experiments.Result{}
}

// welch is FeatBit's test written out: the relative lift, its delta-method
// variance, Welch–Satterthwaite degrees of freedom, two-sided p and interval.
func welch(nc, mc, vc, nt, mt, vt, alpha float64) (delta, p, lo, hi float64) {
	delta = (mt - mc) / mc
	v := vt/nt/(mc*mc) + vc/nc*mt*mt/(mc*mc*mc*mc)
	a, b := vt/nt, vc/nc
	df := (a + b) * (a + b) / (a*a/(nt-1) + b*b/(nc-1))
	tdist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	p = 2 * (1 - tdist.CDF(math.Abs(delta/math.Sqrt(v))))
	half := tdist.Quantile(1-alpha/2) * math.Sqrt(v)
	return delta, p, delta - half, delta + half
}

func fmt5(v float64) string { return fmt.Sprint(math.Round(v*1e5) / 1e5) }

func TestConversionResultsAreFeatBits(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	x, it := fx.started(t, fx.metric(t, "buy", experiments.TrackConversion))
	ex := fx.s.Experiments()
	// 400 users a side: 40 converted with false, 80 with true (each twice:
	// a user converts once however many events).
	storetest.Must(t, ex.RecordEvents(ctx, fx.env.ID, users("c", fx.off, 400, 40, 1, 2)))
	storetest.Must(t, ex.RecordEvents(ctx, fx.env.ID, users("t", fx.on, 400, 80, 1, 2)))
	// A user seen again with the other variation keeps the first.
	storetest.Must(t, ex.RecordEvents(ctx, fx.env.ID, users("c", fx.on, 1, 0, 0, 0)))

	got, err := ex.RefreshIterationResults(ctx, fx.owner, fx.env.ID, []experiments.IterationParam{{ExperimentID: x.ID, IterationID: it.ID},
		{ExperimentID: uuid.New(), IterationID: it.ID}})
	storetest.Must(t, err)
	if len(got) != 1 || !got[0].IsUpdated || got[0].IsFinish {
		t.Fatalf("iteration results: %+v", got)
	}
	c, tr := result(t, got[0].Results, fx.off), result(t, got[0].Results, fx.on)
	if *c.UniqueUsers != 400 || *c.Conversion != 40 || *c.ConversionRate != "0.1" || !c.IsBaseline || c.Reason != "is baseline" {
		t.Errorf("baseline row: %+v", c)
	}
	delta, p, lo, hi := welch(400, 0.1, 0.1*0.9, 400, 0.2, 0.2*0.8, 0.05)
	if *tr.UniqueUsers != 400 || *tr.Conversion != 80 || *tr.ConversionRate != "0.2" || *tr.EffectSize != fmt5(delta) ||
		*tr.PValue != fmt5(p) || tr.ConfidenceInterval[0] != fmt5(lo) || tr.ConfidenceInterval[1] != fmt5(hi) {
		t.Errorf("treatment row %+v; want lift %s p %s [%s, %s]", tr, fmt5(delta), fmt5(p), fmt5(lo), fmt5(hi))
	}
	if tr.IsInvalid || !tr.IsWinner || tr.Reason != "" {
		t.Errorf("a doubled conversion rate on 400 users a side is a valid winner: %+v", tr)
	}

	a, err := ex.Analyze(ctx, fx.owner, fx.env.ID, x.ID, nil)
	storetest.Must(t, err)
	if a.SRM || a.Variations[0].Users+a.Variations[1].Users != 800 {
		t.Errorf("analysis of 400 against 400: %+v", a)
	}
	for _, v := range a.Variations {
		if !v.IsBaseline && (v.SequentialInterval == nil || v.ChanceToBeatBaseline == nil || *v.ChanceToBeatBaseline < 0.99) {
			t.Errorf("treatment analysis: %+v", v)
		}
	}
	// The first report of the minute kept the sums as they stood then: the
	// baseline's 400 users, none yet for true.
	if len(a.History) == 0 || a.History[0].Variations[0].VariationID != fx.on && a.History[0].Variations[1].VariationID != fx.on {
		t.Fatalf("history: %+v", a.History)
	}
	for _, v := range a.History[0].Variations {
		if want := map[string]int64{fx.off: 400, fx.on: 0}[v.VariationID]; v.Users != want {
			t.Errorf("history's first point: %s has %d users, want %d", v.VariationID, v.Users, want)
		}
	}
}

func TestNumericResultsCountUsersWithEvents(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	x, it := fx.started(t, fx.metric(t, "buy", experiments.TrackNumeric))
	ex := fx.s.Experiments()
	// Control: 50 of 100 exposed users spend 2+2; treatment: 50 spend 3 and
	// 50 spend 5. Users without events are left out, as FeatBit's inner join
	// leaves them.
	storetest.Must(t, ex.RecordEvents(ctx, fx.env.ID, users("c", fx.off, 100, 50, 2, 2)))
	ev := users("t", fx.on, 100, 100, 3, 1)
	for i := 50; i < 100; i++ {
		ev.Conversions[i].Value = 5
	}
	storetest.Must(t, ex.RecordEvents(ctx, fx.env.ID, ev))
	got, err := ex.RefreshIterationResults(ctx, fx.owner, fx.env.ID, []experiments.IterationParam{{ExperimentID: x.ID, IterationID: it.ID}})
	storetest.Must(t, err)
	c, tr := result(t, got[0].Results, fx.off), result(t, got[0].Results, fx.on)
	if *c.TotalEvents != 50 || *c.Average != "4" || c.UniqueUsers != nil {
		t.Errorf("control row: %+v", c)
	}
	// Every control user spent exactly 4: no variance, FeatBit's "control is empty".
	if *tr.TotalEvents != 100 || *tr.Average != "4" || tr.Reason != "control is empty" || !tr.IsInvalid {
		t.Errorf("treatment row: %+v", tr)
	}
}

func TestLifecycle(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	ex := fx.s.Experiments()
	m := fx.metric(t, "buy", experiments.TrackConversion)
	x, it := fx.started(t, m)

	// The same flag and metric again answers the live experiment.
	again, err := ex.CreateExperiment(ctx, fx.owner, fx.env.ID, experiments.ExperimentInput{FeatureFlagID: fx.flag.ID,
		MetricID: m.ID, BaselineVariationID: fx.on})
	storetest.Must(t, err)
	if again.ID != x.ID {
		t.Errorf("second experiment of the same flag and metric: %s, want %s", again.ID, x.ID)
	}
	if err := ex.ArchiveMetric(ctx, fx.owner, fx.env.ID, m.ID); !errors.Is(err, experiments.ErrMetricInUse) {
		t.Errorf("archiving a metric in use: %v", err)
	}
	counts, err := ex.StatusCounts(ctx, fx.owner, fx.env.ID)
	storetest.Must(t, err)
	if len(counts) != 1 || counts[0] != (experiments.StatusCount{Status: "Recording", Count: 1}) {
		t.Errorf("status counts while recording: %+v", counts)
	}
	storetest.Must(t, ex.RecordEvents(ctx, fx.env.ID, users("c", fx.off, 30, 3, 1, 1)))
	storetest.Must(t, ex.StopExperiment(ctx, fx.owner, fx.env.ID, x.ID))
	got, err := ex.GetExperiment(ctx, fx.owner, fx.env.ID, x.ID)
	storetest.Must(t, err)
	if got.Status != "Paused" || len(got.Iterations) != 1 || !got.Iterations[0].IsFinish || got.Iterations[0].EndTime == nil ||
		len(got.Iterations[0].Results) != 2 {
		t.Fatalf("stopped experiment: %+v", got)
	}
	// Events after the stop are dropped.
	storetest.Must(t, ex.RecordEvents(ctx, fx.env.ID, users("late", fx.on, 5, 5, 1, 1)))
	a, err := ex.Analyze(ctx, fx.owner, fx.env.ID, x.ID, &it.ID)
	storetest.Must(t, err)
	if a.Variations[0].Users+a.Variations[1].Users != 30 {
		t.Errorf("users after the stop: %+v", a.Variations)
	}

	refs, err := ex.VariationReferences(ctx, fx.owner, fx.env.ID, fx.flag.ID, fx.off)
	storetest.Must(t, err)
	if len(refs) != 1 {
		t.Errorf("experiments with baseline %s: %d", fx.off, len(refs))
	}
	storetest.Must(t, ex.ArchiveIterations(ctx, fx.owner, fx.env.ID, x.ID))
	got, _ = ex.GetExperiment(ctx, fx.owner, fx.env.ID, x.ID)
	if got.Status != "NotStarted" || len(got.Iterations) != 0 {
		t.Errorf("after archiving its data: %+v", got)
	}
	storetest.Must(t, ex.ArchiveExperiment(ctx, fx.owner, fx.env.ID, x.ID))
	list, err := ex.ListExperiments(ctx, fx.owner, fx.env.ID, experiments.ExperimentFilter{Page: core.Page{Size: -1}})
	storetest.Must(t, err)
	if list.TotalCount != 0 {
		t.Errorf("archived experiment listed: %+v", list)
	}
	storetest.Must(t, ex.ArchiveMetric(ctx, fx.owner, fx.env.ID, m.ID))

	// Every change is in the environment's history.
	h, err := fx.s.Flags().ListAuditLogs(ctx, fx.owner, fx.env.ID, flagstore.AuditFilter{RefType: "Experiment", Page: core.Page{Size: 50}})
	storetest.Must(t, err)
	if h.TotalCount != 5 { // create, start, stop, archive data, archive
		t.Errorf("experiment history: %d entries", h.TotalCount)
	}
	h, err = fx.s.Flags().ListAuditLogs(ctx, fx.owner, fx.env.ID, flagstore.AuditFilter{RefType: "ExperimentMetric", Page: core.Page{Size: 50}})
	storetest.Must(t, err)
	if h.TotalCount != 2 {
		t.Errorf("metric history: %d entries", h.TotalCount)
	}
}

func TestRights(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	ex := fx.s.Experiments()
	m := fx.metric(t, "buy", experiments.TrackConversion)
	x, _ := fx.started(t, m)
	reader := storetest.NewMember(t, fx.s, fx.owner, "reader@example.com", readOnlyPolicy(t, fx))
	if _, err := ex.ListExperiments(ctx, reader, fx.env.ID, experiments.ExperimentFilter{Page: core.Page{Size: 10}}); err != nil {
		t.Errorf("a reader lists experiments: %v", err)
	}
	if err := ex.StopExperiment(ctx, reader, fx.env.ID, x.ID); !errors.Is(err, core.ErrForbidden) {
		t.Errorf("a reader stops an experiment: %v", err)
	}
	if _, err := ex.CreateMetric(ctx, reader, fx.env.ID, experiments.MetricInput{Name: "m", MaintainerUserID: reader.UserID,
		EventType: 1}); !errors.Is(err, core.ErrForbidden) {
		t.Errorf("a reader creates a metric: %v", err)
	}
	dev := storetest.Developer(t, fx.s, fx.owner, "dev@example.com")
	storetest.Must(t, ex.StopExperiment(ctx, dev, fx.env.ID, x.ID))
	_, err := ex.CreateMetric(ctx, fx.owner, fx.env.ID, experiments.MetricInput{})
	var verr *core.ValidationError
	if !errors.As(err, &verr) || fmt.Sprint(verr.Codes) != "[name_is_required maintainerUserId_is_required eventType_is_required]" {
		t.Errorf("empty metric: %v", err)
	}
}

// readOnlyPolicy may open every project and environment and nothing more.
func readOnlyPolicy(t *testing.T, fx fixture) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	p, err := fx.s.IAM().CreatePolicy(ctx, fx.owner, iam.PolicyInput{Name: "Readers", Key: "readers"})
	storetest.Must(t, err)
	_, err = fx.s.IAM().UpdatePolicyStatements(ctx, fx.owner, p.ID, []access.Statement{
		{ID: "p", ResourceType: access.TypeProject, Effect: "allow", Actions: []string{"CanAccessProject"}, Resources: []string{"project/*"}},
		{ID: "e", ResourceType: "env", Effect: "allow", Actions: []string{"CanAccessEnv"}, Resources: []string{"project/*:env/*"}},
	})
	storetest.Must(t, err)
	return p.ID
}

// TestVariationSumsMatchTheUsers: the per-variation sums results read are
// kept by the ingestion statements; after batches sent concurrently, with
// conversions before and after exposures and users seen twice, they equal
// the sums recomputed from the users' rows.
func TestVariationSumsMatchTheUsers(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	_, it := fx.started(t, fx.metric(t, "buy", experiments.TrackNumeric))
	ex := fx.s.Experiments()
	at := time.Now().Add(time.Second)
	batch := func(seed int) experiments.Events {
		var ev experiments.Events
		for i := range 200 {
			idx := (i*7 + seed*13) % 150
			user := fmt.Sprint("u", idx)
			if (i+seed)%3 != 0 {
				ev.Conversions = append(ev.Conversions, experiments.Conversion{EventName: "buy", EventType: experiments.EventCustom,
					UserKey: user, Value: float64(1 + (i+seed)%4), At: at})
			}
			if (i+seed)%2 == 0 {
				// Each user has a variation of their own, and the users
				// below 60 are sometimes reported with the other one too:
				// whichever batch lands first decides theirs, while the
				// others keep both variations in use whatever the order.
				variation := fx.off
				if idx%4 == 0 {
					variation = fx.on
				}
				if idx < 60 && (i*seed)%5 < 2 {
					variation = map[string]string{fx.on: fx.off, fx.off: fx.on}[variation]
				}
				ev.Exposures = append(ev.Exposures, experiments.Exposure{FlagKey: "checkout", UserKey: user, VariationID: variation, At: at})
			}
		}
		return ev
	}
	errs := make(chan error, 8)
	for i := range 8 {
		go func() { errs <- ex.RecordEvents(ctx, fx.env.ID, batch(i)) }()
	}
	for range 8 {
		storetest.Must(t, <-errs)
	}
	pool := storetest.Pool(t, fx.s)
	rows, err := pool.Query(ctx, `
		SELECT coalesce(u.variation_id, t.variation_id), u.users = t.users AND u.converted = t.converted
		       AND abs(u.total - t.total) < 1e-6 AND abs(u.squares - t.total_squares) < 1e-6, u.users
		FROM (SELECT variation_id, count(*) AS users, count(*) FILTER (WHERE events > 0) AS converted,
		             sum(total) AS total, sum(total * total) AS squares
		      FROM experiment_users WHERE iteration_id = $1 AND variation_id IS NOT NULL GROUP BY variation_id) u
		FULL JOIN experiment_variation_totals t ON t.iteration_id = $1 AND t.variation_id = u.variation_id`, it.ID)
	storetest.Must(t, err)
	n := 0
	for rows.Next() {
		var variation string
		var same bool
		var users *int64
		storetest.Must(t, rows.Scan(&variation, &same, &users))
		if !same {
			t.Errorf("variation %s: the kept sums differ from the users' (%v users)", variation, users)
		}
		n++
	}
	storetest.Must(t, rows.Err())
	if n != 2 {
		t.Errorf("%d variations with sums, want 2", n)
	}
}

// TestSampleRatioMismatch: with the default rule splitting 50/50, 400
// users against 300 is a mismatch (chi-square with one degree of freedom,
// p = erfc(√(χ²/2)) < 0.001); once a rule may send users too, the expected
// shares are unknown and no p-value is given.
func TestSampleRatioMismatch(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	pool := storetest.Pool(t, fx.s)
	_, err := pool.Exec(ctx, `UPDATE feature_flags SET fallthrough = $2 WHERE id = $1`, fx.flag.ID,
		fmt.Sprintf(`{"includedInExpt":true,"variations":[{"id":%q,"rollout":[0,0.5],"exptRollout":1},{"id":%q,"rollout":[0.5,1],"exptRollout":1}]}`, fx.off, fx.on))
	storetest.Must(t, err)
	x, _ := fx.started(t, fx.metric(t, "buy", experiments.TrackConversion))
	ex := fx.s.Experiments()
	storetest.Must(t, ex.RecordEvents(ctx, fx.env.ID, users("c", fx.off, 400, 40, 1, 1)))
	storetest.Must(t, ex.RecordEvents(ctx, fx.env.ID, users("t", fx.on, 300, 30, 1, 1)))
	a, err := ex.Analyze(ctx, fx.owner, fx.env.ID, x.ID, nil)
	storetest.Must(t, err)
	chi2 := 2 * 50.0 * 50.0 / 350
	want := math.Erfc(math.Sqrt(chi2 / 2))
	if a.SRMPValue == nil || math.Abs(*a.SRMPValue-want) > 1e-9 || !a.SRM {
		t.Errorf("400 against 300 at 50/50: srm %v p %v, want true and %v", a.SRM, a.SRMPValue, want)
	}
	_, err = pool.Exec(ctx, `UPDATE feature_flags SET rules = '[{"id":"r","name":"Beta","includedInExpt":true,"conditions":[],"variations":[]}]',
		expt_include_all_targets = false WHERE id = $1`, fx.flag.ID)
	storetest.Must(t, err)
	a, err = ex.Analyze(ctx, fx.owner, fx.env.ID, x.ID, nil)
	storetest.Must(t, err)
	if a.SRMPValue != nil || a.SRM {
		t.Errorf("a rule in the experiment too: srm %v p %v, want no check", a.SRM, a.SRMPValue)
	}
}
