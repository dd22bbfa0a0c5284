package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/web/sdk"
)

// TestEveryEvaluationIsCounted: OFREP evaluations, single and bulk, are
// counted by variation beside the insight events SDKs report, written off
// the request path (nothing is counted until the tally is written), and
// FeatBit's insights route answers exactly the evaluations made.
func TestEveryEvaluationIsCounted(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	s.listen()
	ctx := context.Background()
	owner := s.ownerActor()
	env := s.project("shop")
	checkout, err := s.st.Flags().CreateFlag(ctx, owner, env.ID, flagstore.FlagInput{Name: "Checkout", Key: "checkout", IsEnabled: true})
	must(t, err)
	_, err = s.st.Flags().CreateFlag(ctx, owner, env.ID, flagstore.FlagInput{Name: "Legacy", Key: "legacy"})
	must(t, err)
	var on, off flagstore.Variation // what an enabled and a disabled flag serve
	for _, v := range checkout.Variations {
		if v.ID == checkout.Fallthrough.Variations[0].ID {
			on = v
		}
		if v.ID == checkout.DisabledVariationID {
			off = v
		}
	}

	tally := runner.NewEvaluations(s.st, slog.New(slog.DiscardHandler))
	cfg := server.Config{}
	cfg.BaseURL, _ = url.Parse("http://bunting.test")
	h, _ := server.NewHandler(cfg, s.st, slog.New(slog.DiscardHandler), sdk.Options{Evaluations: tally})
	serverSecret, client := secret(env, core.SecretServer), secret(env, core.SecretClient)
	start := time.Now()
	const singles, bulks = 7, 3
	for i := range singles {
		rec := send(h, "POST", "/ofrep/v1/evaluate/flags/checkout", fmt.Sprintf(`{"context":{"targetingKey":"u%d"}}`, i),
			"Authorization", serverSecret, "Content-Type", "application/json")
		if rec.Code != 200 {
			t.Fatalf("single evaluation: %d %s", rec.Code, rec.Body)
		}
	}
	for i := range bulks {
		rec := send(h, "POST", "/ofrep/v1/evaluate/flags", fmt.Sprintf(`{"context":{"targetingKey":"b%d"}}`, i),
			"Authorization", client, "Content-Type", "application/json")
		if rec.Code != 200 {
			t.Fatalf("bulk evaluation: %d %s", rec.Code, rec.Body)
		}
	}
	// Concurrent evaluations are all counted.
	const workers, each = 8, 10
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				rec := send(h, "POST", "/ofrep/v1/evaluate/flags/legacy", fmt.Sprintf(`{"context":{"targetingKey":"w%d-%d"}}`, w, i),
					"Authorization", serverSecret, "Content-Type", "application/json")
				if rec.Code != 200 {
					t.Errorf("concurrent evaluation: %d %s", rec.Code, rec.Body)
				}
			}
		})
	}
	wg.Wait()
	// Answers that serve nothing count nothing.
	send(h, "POST", "/ofrep/v1/evaluate/flags/nope", `{"context":{"targetingKey":"u"}}`, "Authorization", serverSecret)
	send(h, "POST", "/ofrep/v1/evaluate/flags/checkout", `{"context":{}}`, "Authorization", serverSecret)
	// An SDK reports two evaluations of the off variation.
	report := fmt.Sprintf(`[{"user":{"keyId":"i1"},"variations":[{"featureFlagKey":"checkout","variation":{"id":%q}},{"featureFlagKey":"checkout","variation":{"id":%q}}]}]`, off.ID, off.ID)
	if rec := send(h, "POST", "/api/public/insight/track", report, "Authorization", serverSecret, "Content-Type", "application/json"); rec.Code != 200 {
		t.Fatalf("track: %d %s", rec.Code, rec.Body)
	}

	in, err := s.st.SDK().FlagInsights(ctx, owner, env.ID, "legacy")
	must(t, err)
	if in.LastEvaluatedAt != nil {
		t.Fatalf("OFREP evaluations were written on the request path: %+v", in)
	}
	must(t, tally.Flush(ctx))

	in, err = s.st.SDK().FlagInsights(ctx, owner, env.ID, "checkout")
	must(t, err)
	want := map[string]int64{on.Name: singles + bulks, off.Name: 2}
	if in.Evaluations != singles+bulks+2 || in.LastEvaluatedAt == nil || in.LastEvaluatedAt.Before(start.Add(-time.Second)) {
		t.Fatalf("checkout's insight %+v, want %d evaluations just now", in, singles+bulks+2)
	}
	for _, v := range in.Variations {
		if v.Count != want[v.Variation.Name] {
			t.Errorf("%s counted %d times, want %d", v.Variation.Name, v.Count, want[v.Variation.Name])
		}
	}
	if in, err = s.st.SDK().FlagInsights(ctx, owner, env.ID, "legacy"); err != nil || in.Evaluations != bulks+workers*each {
		t.Errorf("legacy (off, in every bulk answer, and evaluated concurrently): %+v %v, want %d", in, err, bulks+workers*each)
	}

	// FeatBit's insights route, by minute and by day, from the series.
	for _, interval := range []string{"MINUTE", "HOUR", "DAY", "MONTH"} {
		q := url.Values{"featureFlagKey": {"checkout"}, "intervalType": {interval},
			"from": {strconv.FormatInt(start.Add(-time.Hour).UnixMilli(), 10)}, "to": {strconv.FormatInt(time.Now().UnixMilli(), 10)}}
		rec := send(h, "GET", "/api/v1/envs/"+env.ID.String()+"/feature-flags/insights?"+q.Encode(), "", "Authorization", s.owner)
		var body struct {
			Success bool                    `json:"success"`
			Data    []sdkdata.InsightsPoint `json:"data"`
		}
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &body) != nil || !body.Success || len(body.Data) == 0 {
			t.Fatalf("insights by %s: %d %s", interval, rec.Code, rec.Body)
		}
		got := map[string]int64{}
		for _, p := range body.Data {
			if _, err := time.Parse(time.RFC3339, p.Time); err != nil || len(p.Variations) != len(checkout.Variations) {
				t.Errorf("insights by %s: point %+v", interval, p)
			}
			for _, v := range p.Variations {
				got[v.Variation] += v.Count
			}
		}
		for name, n := range want {
			if got[name] != n {
				t.Errorf("insights by %s: %s %d, want %d (%s)", interval, name, got[name], n, strings.TrimSpace(rec.Body.String()))
			}
		}
	}
}

// TestEvaluationRetentionConfig: the series' retentions are read as Go
// durations or days, and refused when too short or out of order.
func TestEvaluationRetentionConfig(t *testing.T) {
	t.Parallel()
	load := func(vars map[string]string) (server.Config, error) {
		return server.LoadConfig(func(name string) string { return vars[name] })
	}
	cfg, err := load(nil)
	if err != nil || cfg.EvaluationSeries != sdkdata.DefaultSeriesRetention {
		t.Fatalf("defaults: %+v %v", cfg.EvaluationSeries, err)
	}
	cfg, err = load(map[string]string{"BUNTING_EVALUATIONS_KEEP_MINUTES": "6h", "BUNTING_EVALUATIONS_KEEP_HOURS": "30d",
		"BUNTING_EVALUATIONS_KEEP_DAYS": "365d"})
	if err != nil || cfg.EvaluationSeries != (sdkdata.SeriesRetention{Minutes: 6 * time.Hour, Hours: 30 * 24 * time.Hour, Days: 365 * 24 * time.Hour}) {
		t.Fatalf("set: %+v %v", cfg.EvaluationSeries, err)
	}
	for _, bad := range []map[string]string{
		{"BUNTING_EVALUATIONS_KEEP_MINUTES": "1h"},
		{"BUNTING_EVALUATIONS_KEEP_HOURS": "forever"},
		{"BUNTING_EVALUATIONS_KEEP_HOURS": "3d", "BUNTING_EVALUATIONS_KEEP_MINUTES": "4d"},
		{"BUNTING_EVALUATIONS_KEEP_DAYS": "30d"},
	} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "BUNTING_EVALUATIONS_KEEP_") {
			t.Errorf("%v: %v, want a refusal naming the variable", bad, err)
		}
	}
}
