package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/seed"
)

// Experiment scenarios: SDK reports feeding an experiment that already has
// exptUsers users (ingestion), and reading its results (the analysis). The
// experiment runs on the first seeded flag, measuring a custom event; its
// users are seeded once, with set-based SQL, before the first of them runs.
const (
	scenarioExptIngest  = "experiment-ingest"
	scenarioExptResults = "experiment-results"
	// exptUsers is the experiment's population (-short: a tenth).
	exptUsers = 1_000_000
	// exptReportItems is how many users one report names: each with an
	// exposure and a metric event, so 2× events a report.
	exptReportItems = 50
	exptEvent       = "bench-purchase"
)

var experimentScenarios = []benchScenario{
	{
		name: scenarioExptIngest, kind: "insight",
		prepare: prepareExperiment,
		request: func(w *benchWorld, target string, c *benchClient) benchRequest {
			var b strings.Builder
			b.WriteByte('[')
			for j := range exptReportItems {
				if j > 0 {
					b.WriteByte(',')
				}
				user := fmt.Sprintf("u%d", c.rng.IntN(w.exptUsers()))
				variation := []string{"on", "off"}[c.rng.IntN(2)]
				fmt.Fprintf(&b, `{"user":{"keyId":%q,"name":"","customizedProperties":[]},`+
					`"variations":[{"featureFlagKey":%q,"sendToExperiment":true,"timestamp":0,"variation":{"id":%q,"value":"true"}}],`+
					`"metrics":[{"route":"index/metric","type":"CustomEvent","eventName":%q,"numericValue":%d,"appType":"bench","timestamp":0}]}`,
					user, seed.FlagKey(1), variation, exptEvent, 1+c.rng.IntN(5))
			}
			b.WriteByte(']')
			body := []byte(b.String())
			if target == targetFloor {
				return benchRequest{method: "POST", path: "/floor/envs/" + w.envID.String() + "/experiment-events", body: body}
			}
			return benchRequest{method: "POST", path: "/api/public/insight/track", body: body, auth: w.serverSecret}
		},
	},
	{
		name: scenarioExptResults, kind: "read",
		prepare: prepareExperiment,
		request: func(w *benchWorld, target string, c *benchClient) benchRequest {
			if target == targetFloor {
				return benchRequest{method: "GET", path: "/floor/experiment-iterations/" + benchExpt.iteration.String() + "/totals"}
			}
			return benchRequest{method: "GET", path: "/api/v1/envs/" + w.envID.String() + "/experiments/" + benchExpt.id.String() + "/analysis"}
		},
	},
}

// benchExpt is the experiment both scenarios use, made once.
var benchExpt struct {
	sync.Mutex
	id, iteration uuid.UUID
}

func (w *benchWorld) exptUsers() int {
	if w.o.Short {
		return exptUsers / 10
	}
	return exptUsers
}

// prepareExperiment makes a metric of a custom event and a recording
// experiment of the first flag on it, with exptUsers users already exposed
// (half to each variation; a tenth of them converted, with values 1 to 5).
func prepareExperiment(ctx context.Context, w *benchWorld, _ []*benchClient) error {
	benchExpt.Lock()
	defer benchExpt.Unlock()
	if err := w.loadSecrets(ctx); err != nil || benchExpt.id != uuid.Nil {
		return err
	}
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	var metric, expt, iteration uuid.UUID
	err = tx.QueryRow(ctx, `INSERT INTO experiment_metrics (env_id, name, maintainer_user_id, event_name, event_type, custom_event_track_option)
		VALUES ($1, 'Bench purchases', $2, $3, 1, 2) RETURNING id`, w.envID, w.creator, exptEvent).Scan(&metric)
	if err != nil {
		return err
	}
	err = tx.QueryRow(ctx, `INSERT INTO experiments (env_id, flag_id, metric_id, baseline_variation_id, status)
		SELECT $1, id, $2, 'off', 'Recording' FROM feature_flags WHERE env_id = $1 AND key = $3 RETURNING id`,
		w.envID, metric, seed.FlagKey(1)).Scan(&expt)
	if err != nil {
		return err
	}
	err = tx.QueryRow(ctx, `INSERT INTO experiment_iterations (experiment_id, env_id, start_time, event_name, event_type,
			custom_event_track_option, custom_event_unit, custom_event_success_criteria)
		VALUES ($1, $2, now() - interval '1 hour', $3, 1, 2, '', 1) RETURNING id`, expt, w.envID, exptEvent).Scan(&iteration)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO experiment_users (iteration_id, user_key, variation_id, exposed_at, events, total, total_squares)
		SELECT $1, 'u' || g, CASE WHEN g % 2 = 0 THEN 'on' ELSE 'off' END, now() - interval '30 minutes',
		       CASE WHEN g % 10 = 0 THEN 1 ELSE 0 END, CASE WHEN g % 10 = 0 THEN 1 + g % 5 ELSE 0 END,
		       CASE WHEN g % 10 = 0 THEN (1 + g % 5) ^ 2 ELSE 0 END
		FROM generate_series(0, $2::int - 1) g`, iteration, w.exptUsers())
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO experiment_variation_totals (iteration_id, variation_id, users, converted, total, total_squares)
		SELECT $1, variation_id, count(*), count(*) FILTER (WHERE events > 0), sum(total), sum(total * total)
		FROM experiment_users WHERE iteration_id = $1 GROUP BY variation_id`, iteration)
	if err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	if _, err := w.pool.Exec(ctx, `VACUUM ANALYZE experiment_users`); err != nil {
		return err
	}
	benchExpt.id, benchExpt.iteration = expt, iteration
	return nil
}

// registerExperimentFloor adds the experiment scenarios' floor: a report's
// exposures and metric events recorded with the store's own two statements,
// and an iteration's per-variation totals read with the store's statement
// and answered as JSON (no statistics).
func registerExperimentFloor(f *floor) {
	f.e.POST("/floor/envs/:env/experiment-events", func(c echo.Context) error {
		var report []struct {
			User struct {
				KeyID string `json:"keyId"`
			} `json:"user"`
			Variations []struct {
				FeatureFlagKey string `json:"featureFlagKey"`
				Variation      struct {
					ID string `json:"id"`
				} `json:"variation"`
			} `json:"variations"`
			Metrics []struct {
				EventName    string  `json:"eventName"`
				NumericValue float64 `json:"numericValue"`
			} `json:"metrics"`
		}
		if err := json.NewDecoder(c.Request().Body).Decode(&report); err != nil {
			return c.NoContent(http.StatusBadRequest)
		}
		env, err := uuid.Parse(c.Param("env"))
		if err != nil {
			return c.NoContent(http.StatusBadRequest)
		}
		now := time.Now()
		var ex db.RecordExperimentExposuresParams
		ev := db.RecordExperimentEventsParams{EnvID: env}
		ex.EnvID = env
		for _, r := range report {
			for _, v := range r.Variations {
				ex.FlagKeys, ex.UserKeys = append(ex.FlagKeys, v.FeatureFlagKey), append(ex.UserKeys, r.User.KeyID)
				ex.VariationIds, ex.Ats = append(ex.VariationIds, v.Variation.ID), append(ex.Ats, now)
			}
			for _, m := range r.Metrics {
				ev.EventNames, ev.EventTypes = append(ev.EventNames, m.EventName), append(ev.EventTypes, 1)
				ev.UserKeys, ev.Vals, ev.Ats = append(ev.UserKeys, r.User.KeyID), append(ev.Vals, m.NumericValue), append(ev.Ats, now)
			}
		}
		q := db.New(f.pool)
		ctx := c.Request().Context()
		if _, err := q.RecordExperimentExposures(ctx, ex); err != nil {
			return floorError(c, err)
		}
		if _, err := q.RecordExperimentEvents(ctx, ev); err != nil {
			return floorError(c, err)
		}
		return c.NoContent(http.StatusOK)
	})
	f.e.GET("/floor/experiment-iterations/:id/totals", func(c echo.Context) error {
		id, err := uuid.Parse(c.Param("id"))
		if err != nil {
			return c.NoContent(http.StatusBadRequest)
		}
		rows, err := db.New(f.pool).ExperimentVariationTotals(c.Request().Context(), id)
		if err != nil {
			return floorError(c, err)
		}
		return c.JSON(http.StatusOK, rows)
	})
}
