package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/seed"
)

// Insight scenarios: SDKs reporting evaluations, as they batch them (a
// report of insightEvents evaluations of random flags), by one known user
// or by users never seen before. Each report's users go to the end-user
// buffer, which writes them in batches while the run goes on; a flood of
// new users must not slow the answers down. The floor reads the report and
// adds its counts with the same statement Bunting runs.
const (
	scenarioInsightKnown = "insight-known-user"
	scenarioInsightNew   = "insight-new-users"
	insightEvents        = 50
)

var insightScenarios = []benchScenario{
	{
		name: scenarioInsightKnown, kind: "insight",
		prepare: prepareInsight,
		request: func(w *benchWorld, target string, c *benchClient) benchRequest {
			return insightRequest(w, target, c, func(int) string { return "known" })
		},
	},
	{
		name: scenarioInsightNew, kind: "insight",
		prepare: prepareInsight,
		request: func(w *benchWorld, target string, c *benchClient) benchRequest {
			return insightRequest(w, target, c, func(j int) string { return fmt.Sprintf("new-%d-%d-%d-%d", c.run, c.id, c.seq, j) })
		},
	},
}

// insightSlack is what a flood of new users may add to the p99 of one known
// user's reports, beyond three times it, on a machine shared with other
// work (the end-user writer's statements take the same cores).
const insightSlack = 200 * time.Millisecond

func prepareInsight(ctx context.Context, w *benchWorld, _ []*benchClient) error {
	return w.loadSecrets(ctx)
}

// insightRequest is a report of insightEvents evaluations of random flags,
// event j by the user key(j).
func insightRequest(w *benchWorld, target string, c *benchClient, key func(j int) string) benchRequest {
	var b strings.Builder
	b.WriteByte('[')
	now := time.Now().UnixMilli()
	for j := range insightEvents {
		if j > 0 {
			b.WriteByte(',')
		}
		variation := []string{"on", "off"}[c.rng.IntN(2)]
		fmt.Fprintf(&b, `{"user":{"keyId":%q,"name":"User %d","customizedProperties":[{"name":"plan","value":"pro"}]},`+
			`"variations":[{"featureFlagKey":%q,"sendToExperiment":false,"timestamp":%d,"variation":{"id":%q,"name":%q,"value":"true"}}]}`,
			key(j), j, seed.FlagKey(1+c.rng.IntN(w.flags)), now, variation, variation)
	}
	b.WriteByte(']')
	body := []byte(b.String())
	if target == targetFloor {
		return benchRequest{method: "POST", path: "/floor/envs/" + w.envID.String() + "/insight", body: body}
	}
	return benchRequest{method: "POST", path: "/api/public/insight/track", body: body, auth: w.serverSecret}
}

// insight adds a report's evaluation counts to its environment's flags, in
// the statement Bunting's store runs (RecordEvaluations), and answers 200
// with no body, as the insight endpoint does.
func (f *floor) insight(c echo.Context) error {
	var report []struct {
		Variations []struct {
			FeatureFlagKey string `json:"featureFlagKey"`
			Variation      struct {
				ID string `json:"id"`
			} `json:"variation"`
		} `json:"variations"`
	}
	if err := json.NewDecoder(c.Request().Body).Decode(&report); err != nil {
		return c.NoContent(http.StatusBadRequest)
	}
	sum := map[[2]string]int64{}
	for _, r := range report {
		for _, v := range r.Variations {
			sum[[2]string{v.FeatureFlagKey, v.Variation.ID}]++
		}
	}
	// In one order, as the store writes them, so concurrent reports never deadlock.
	pairs := slices.SortedFunc(maps.Keys(sum), func(a, b [2]string) int {
		return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1]))
	})
	keys, variations, counts := make([]string, len(pairs)), make([]string, len(pairs)), make([]int64, len(pairs))
	for i, p := range pairs {
		keys[i], variations[i], counts[i] = p[0], p[1], sum[p]
	}
	_, err := f.pool.Exec(c.Request().Context(), `-- name: floor.RecordEvaluations
		INSERT INTO flag_evaluations (flag_id, variation_id, count, first_evaluated_at, last_evaluated_at)
		SELECT f.id, u.variation_id, u.count, now(), now()
		FROM (SELECT unnest($2::text[]) AS key, unnest($3::text[]) AS variation_id, unnest($4::bigint[]) AS count) u
		JOIN feature_flags f ON f.env_id = $1 AND lower(f.key) = lower(u.key) AND f.key = u.key
		WHERE f.variations @> jsonb_build_array(jsonb_build_object('id', u.variation_id))
		ORDER BY f.id, u.variation_id
		ON CONFLICT (flag_id, variation_id) DO UPDATE
		SET count = flag_evaluations.count + excluded.count,
		    last_evaluated_at = greatest(flag_evaluations.last_evaluated_at, excluded.last_evaluated_at)`,
		c.Param("env"), keys, variations, counts)
	if err != nil {
		return floorError(c, err)
	}
	return c.NoContent(http.StatusOK)
}
