package api_test

import (
	"fmt"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/experiments"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// metricsPath and experimentsPath are the matrix environment's.
func (m *matrix) metricsPath() string {
	return "/api/v1/envs/" + m.env.ID.String() + "/experiment-metrics"
}
func (m *matrix) exptsPath() string { return "/api/v1/envs/" + m.env.ID.String() + "/experiments" }

func (m *matrix) metricBody() map[string]any {
	return map[string]any{"name": fmt.Sprintf("m%d", m.next()), "eventName": "buy", "eventType": 1,
		"customEventTrackOption": 1, "maintainerUserId": m.memberID.String()}
}

func (m *matrix) newMetric() string {
	return decode[experiments.Metric](m.s.t, m.owner("POST", m.metricsPath(), m.metricBody())).ID.String()
}

// experiment makes a flag, a metric and an experiment of them, returning the
// flag's key and the experiment's id.
func (m *matrix) experiment(start bool) (string, string) {
	key := m.flag(false)
	f := decode[flagstore.Flag](m.s.t, m.owner("GET", m.flags()+"/"+key, nil))
	x := decode[experiments.Experiment](m.s.t, m.owner("POST", m.exptsPath(), map[string]any{"featureFlagId": f.ID,
		"metricId": m.newMetric(), "baselineVariationId": f.Variations[0].ID}))
	if start {
		m.owner("POST", m.exptsPath()+"/"+x.ID.String(), nil)
	}
	return key, x.ID.String()
}

// experimentCases are the experiment and metric routes' cases: reading needs
// CanAccessEnv; changing an experiment UpdateFlagTargetingRules on its flag,
// a metric UpdateFlagTargetingRules on the environment's flag/*.
func (m *matrix) experimentCases(cases map[string]func() call) {
	readEnv := func(path func() string) func() call {
		return func() call { return call{path: path(), grants: []grant{{access.CanAccessEnv, envRN}}} }
	}
	anyFlag := []grant{{access.UpdateFlagTargetingRules, envRN + ":flag/*"}}
	onExperiment := func(start bool, suffix string) func() call {
		return func() call {
			key, id := m.experiment(start)
			return call{path: m.exptsPath() + "/" + id + suffix, grants: []grant{{access.UpdateFlagTargetingRules, envRN + ":flag/" + key}}}
		}
	}
	cases["GET /api/v1/envs/:envId/experiment-metrics"] = readEnv(func() string { return m.metricsPath() + "?metricName=m&eventType=1" })
	cases["POST /api/v1/envs/:envId/experiment-metrics"] = func() call {
		return call{path: m.metricsPath(), body: m.metricBody(), grants: anyFlag}
	}
	cases["PUT /api/v1/envs/:envId/experiment-metrics/:id"] = func() call {
		return call{path: m.metricsPath() + "/" + m.newMetric(), body: m.metricBody(), grants: anyFlag}
	}
	cases["PUT /api/v1/envs/:envId/experiment-metrics/:id/archive"] = func() call {
		return call{path: m.metricsPath() + "/" + m.newMetric() + "/archive", grants: anyFlag}
	}
	cases["GET /api/v1/envs/:envId/experiments"] = readEnv(func() string { return m.exptsPath() + "?pageSize=-1" })
	cases["POST /api/v1/envs/:envId/experiments"] = func() call {
		key := m.flag(false)
		f := decode[flagstore.Flag](m.s.t, m.owner("GET", m.flags()+"/"+key, nil))
		return call{path: m.exptsPath(), body: map[string]any{"featureFlagId": f.ID, "metricId": m.newMetric(),
			"baselineVariationId": f.Variations[0].ID}, grants: []grant{{access.UpdateFlagTargetingRules, envRN + ":flag/" + key}}}
	}
	cases["GET /api/v1/envs/:envId/experiments/variation-experiment-references"] = readEnv(func() string {
		key, _ := m.experiment(false)
		f := decode[flagstore.Flag](m.s.t, m.owner("GET", m.flags()+"/"+key, nil))
		return m.exptsPath() + "/variation-experiment-references?flagId=" + f.ID.String() + "&variationId=" + f.Variations[0].ID
	})
	cases["GET /api/v1/envs/:envId/experiments/status-count"] = readEnv(func() string { return m.exptsPath() + "/status-count" })
	cases["PUT /api/v1/envs/:envId/experiments/iteration-results"] = func() call {
		_, id := m.experiment(true)
		return call{path: m.exptsPath() + "/iteration-results", body: []map[string]any{{"exptId": id, "iterationId": id}},
			grants: []grant{{access.CanAccessEnv, envRN}}}
	}
	cases["POST /api/v1/envs/:envId/experiments/:id"] = onExperiment(false, "")
	cases["PUT /api/v1/envs/:envId/experiments/:id"] = onExperiment(true, "")
	cases["DELETE /api/v1/envs/:envId/experiments/:id/iterations"] = onExperiment(true, "/iterations")
	cases["DELETE /api/v1/envs/:envId/experiments/:id"] = onExperiment(true, "")
	cases["GET /api/v1/envs/:envId/experiments/:id/analysis"] = func() call {
		_, id := m.experiment(true)
		return call{path: m.exptsPath() + "/" + id + "/analysis", grants: []grant{{access.CanAccessEnv, envRN}}}
	}
}
