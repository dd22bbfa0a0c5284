package experiments_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store/experiments"
	"github.com/bunting-flags/bunting/sql/store/storetest"
)

// TestAnalysisSeriesGrowsWithTheUsers: the series has a look for each
// step in which users were first exposed, each counting everyone exposed
// by then, and its last look is the analysis Analyze gives.
func TestAnalysisSeriesGrowsWithTheUsers(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	x, it := fx.started(t, fx.metric(t, "buy", experiments.TrackConversion))
	// Two arrivals three minutes apart: 40 users a variation, then 60 more.
	arrive := func(prefix string, at time.Time, n, offConverted, onConverted int) {
		var ev experiments.Events
		for i := range n {
			for _, v := range []struct {
				id, tag   string
				converted int
			}{{fx.off, "off", offConverted}, {fx.on, "on", onConverted}} {
				key := fmt.Sprint(prefix, v.tag, i)
				ev.Exposures = append(ev.Exposures, experiments.Exposure{FlagKey: "checkout", UserKey: key, VariationID: v.id, At: at})
				if i < v.converted {
					ev.Conversions = append(ev.Conversions, experiments.Conversion{EventName: "buy", EventType: experiments.EventCustom,
						UserKey: key, Value: 1, At: at})
				}
			}
		}
		storetest.Must(t, fx.s.Experiments().RecordEvents(ctx, fx.env.ID, ev))
	}
	arrive("a", it.StartTime.Add(time.Second), 40, 4, 10)
	arrive("b", it.StartTime.Add(3*time.Minute), 60, 6, 15)

	looks, err := fx.s.Experiments().AnalysisSeries(ctx, fx.owner, fx.env.ID, x.ID, it.ID, 24)
	storetest.Must(t, err)
	if len(looks) != 2 {
		t.Fatalf("got %d looks, want 2 (one per minute with arrivals)", len(looks))
	}
	for i, want := range []struct{ users, offConv, onConv int64 }{{40, 4, 10}, {100, 10, 25}} {
		for _, v := range looks[i].Variations {
			conv := want.offConv
			if v.VariationID == fx.on {
				conv = want.onConv
			}
			if v.Users != want.users || v.Conversions != conv {
				t.Errorf("look %d, %s: got %d users and %d conversions, want %d and %d", i, v.VariationID, v.Users, v.Conversions, want.users, conv)
			}
		}
	}
	an, err := fx.s.Experiments().Analyze(ctx, fx.owner, fx.env.ID, x.ID, &it.ID)
	storetest.Must(t, err)
	last := looks[len(looks)-1].Variations
	for i, v := range an.Variations {
		got := last[i]
		if (v.Lift == nil) != (got.Lift == nil) || v.Lift != nil && *v.Lift != *got.Lift ||
			(v.SequentialInterval == nil) != (got.SequentialInterval == nil) || v.SequentialInterval != nil && *v.SequentialInterval != *got.SequentialInterval {
			t.Errorf("%s: the last look's lift and interval differ from Analyze's: %+v vs %+v", v.VariationID, got, v)
		}
	}
	if _, err := fx.s.Experiments().AnalysisSeries(ctx, fx.owner, fx.env.ID, x.ID, it.ID, 0); err == nil {
		t.Error("a series of 0 looks is not refused")
	}
}
