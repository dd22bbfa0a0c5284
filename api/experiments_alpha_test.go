package api_test

import (
	"net/http"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/experiments"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// TestExperimentAlphaAsFeatBitsUISendsIt: FeatBit's UI sends the
// confidence level's alpha as a string ("0.01", its select's value); it is
// read as the number, and what reads as no number is named.
func TestExperimentAlphaAsFeatBitsUISendsIt(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	env := s.createProject("Web", "web").Environments[0]
	base := "/api/v1/envs/" + env.ID.String()
	profile := decode[struct{ ID string }](t, s.do("GET", "/api/v1/user/profile", s.owner, nil).ok(t))
	metric := decode[experiments.Metric](t, s.do("POST", base+"/experiment-metrics", s.owner, map[string]any{"name": "Purchases",
		"eventName": "buy", "eventType": 1, "customEventTrackOption": 1, "maintainerUserId": profile.ID}).ok(t))
	for i, tc := range []struct {
		alpha any
		want  float64
		fails string
	}{
		{alpha: "0.01", want: 0.01},
		{alpha: 0.1, want: 0.1},
		{alpha: nil, want: 0.05},
		{alpha: "five percent", fails: "alpha_is_invalid"},
		{alpha: true, fails: "alpha_is_invalid"},
	} {
		key := "flag-" + string(rune('a'+i))
		s.do("POST", base+"/feature-flags", s.owner, map[string]any{"name": key, "key": key}).ok(t)
		flag := decode[flagstore.Flag](t, s.do("GET", base+"/feature-flags/"+key, s.owner, nil).ok(t))
		body := map[string]any{"featureFlagId": flag.ID, "metricId": metric.ID, "baselineVariationId": flag.Variations[0].ID, "alpha": tc.alpha}
		if tc.fails != "" {
			s.do("POST", base+"/experiments", s.owner, body).fails(t, http.StatusBadRequest, tc.fails)
			continue
		}
		x := decode[experiments.Experiment](t, s.do("POST", base+"/experiments", s.owner, body).ok(t))
		if x.Alpha != tc.want {
			t.Errorf("alpha %v: got %v, want %v", tc.alpha, x.Alpha, tc.want)
		}
	}
}
