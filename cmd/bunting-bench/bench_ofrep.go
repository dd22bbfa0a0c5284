package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/seed"
)

// OFREP scenarios: applications evaluating flags, one flag a request
// (a server-side provider) or all of them (a browser provider). The floor
// answers each request with Bunting's own answer to a request of the same
// kind, recorded before the run: the HTTP exchange of the same bytes with
// no evaluation, what any evaluator over this stack pays at least.
var ofrepScenarios = []benchScenario{
	{
		name: "ofrep-single", kind: "evaluate", perSize: true,
		prepare:     prepareOFREP("single", ofrepSingle),
		request:     ofrepSingle,
		evaluations: func(*benchWorld) int { return 1 },
	},
	{
		name: "ofrep-bulk", kind: "evaluate",
		prepare: prepareOFREP("bulk", ofrepBulk),
		request: ofrepBulk,
		// Every seeded flag is evaluated; none is archived.
		evaluations: func(w *benchWorld) int { return w.flags },
	},
}

// ofrepSingle evaluates a random flag with the server secret.
func ofrepSingle(w *benchWorld, target string, c *benchClient) benchRequest {
	body := ofrepContext(c)
	if target == targetFloor {
		return benchRequest{method: "POST", path: "/floor/ofrep/single", body: body}
	}
	key := seed.FlagKey(1 + c.rng.IntN(w.flags))
	return benchRequest{method: "POST", path: "/ofrep/v1/evaluate/flags/" + key, body: body, auth: w.serverSecret}
}

// ofrepBulk evaluates every flag with the client secret, as a browser does.
func ofrepBulk(w *benchWorld, target string, c *benchClient) benchRequest {
	body := ofrepContext(c)
	if target == targetFloor {
		return benchRequest{method: "POST", path: "/floor/ofrep/bulk", body: body}
	}
	return benchRequest{method: "POST", path: "/ofrep/v1/evaluate/flags", body: body, auth: w.clientSecret}
}

// ofrepContext is a random user's evaluation context, with the attributes
// the seeded flags' rules look at.
func ofrepContext(c *benchClient) []byte {
	countries := []string{"NL", "BE", "DE", "US", "FR"}
	plans := []string{"free", "pro", "team"}
	n := c.rng.IntN(1_000_000)
	return jsonBody(map[string]any{"context": map[string]any{"targetingKey": fmt.Sprintf("user-%d", n),
		"country": countries[n%len(countries)], "plan": plans[n%len(plans)], "email": fmt.Sprintf("user-%d@example.org", n)}})
}

// loadSecrets finds the measured environment's server and client secrets,
// once.
func (w *benchWorld) loadSecrets(ctx context.Context) error {
	if w.serverSecret != "" {
		return nil
	}
	rows, err := w.pool.Query(ctx, `SELECT type, value FROM env_secrets WHERE env_id = $1`, w.envID)
	if err != nil {
		return err
	}
	var typ, value string
	_, err = pgx.ForEachRow(rows, []any{&typ, &value}, func() error {
		if typ == "server" {
			w.serverSecret = value
		} else {
			w.clientSecret = value
		}
		return nil
	})
	if err != nil {
		return err
	}
	if w.serverSecret == "" || w.clientSecret == "" {
		return fmt.Errorf("the measured environment has no server or no client secret")
	}
	return nil
}

// prepareOFREP finds the measured environment's secrets and records the
// answer the floor gives for a kind of request.
func prepareOFREP(kind string, request func(w *benchWorld, target string, c *benchClient) benchRequest) func(ctx context.Context, w *benchWorld, clients []*benchClient) error {
	return func(ctx context.Context, w *benchWorld, clients []*benchClient) error {
		if err := w.loadSecrets(ctx); err != nil {
			return err
		}
		r := request(w, targetBunting, clients[0])
		req, err := http.NewRequestWithContext(ctx, r.method, w.buntingURL+r.path, strings.NewReader(string(r.body)))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", r.auth)
		req.Header.Set("Content-Type", "application/json")
		resp, err := w.http.Do(req)
		if err != nil {
			return err
		}
		answer, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s %s: %d %.300s (%v)", r.method, r.path, resp.StatusCode, answer, err)
		}
		var ok bool
		return w.call(ctx, "PUT", w.floorURL+"/_bench/ofrep/"+kind, answer, false, &ok)
	}
}

// registerOFREPFloor adds the floor's OFREP handlers: each reads the
// request and answers the bytes recorded for its kind.
func registerOFREPFloor(e *echo.Echo) {
	var answers sync.Map // kind → []byte
	e.PUT("/_bench/ofrep/:kind", func(c echo.Context) error {
		body, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return err
		}
		answers.Store(c.Param("kind"), body)
		return c.JSON(http.StatusOK, true)
	})
	e.POST("/floor/ofrep/:kind", func(c echo.Context) error {
		if _, err := io.Copy(io.Discard, c.Request().Body); err != nil {
			return err
		}
		answer, ok := answers.Load(c.Param("kind"))
		if !ok {
			return c.NoContent(http.StatusNotFound)
		}
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, answer.([]byte))
	})
}

// writeEvaluations prints the evaluation scenarios' rates: evaluations a
// second, and per second of the server's CPU time (one core), with the
// floor's answers per CPU-second for scale.
func writeEvaluations(out io.Writer, r benchReport) {
	first := true
	for _, res := range r.Results {
		if res.EvaluationsPerRequest == 0 {
			continue
		}
		if first {
			fmt.Fprintln(out, "\nEvaluations (server CPU time from /proc/PID/stat):")
			first = false
		}
		floor := "—"
		for _, f := range r.Results {
			if f.Scenario == res.Scenario && f.Flags == res.Flags && f.Target == targetFloor && f.ServerCPUSeconds > 0 {
				floor = fmt.Sprintf("%.0f", float64(f.Requests)/f.ServerCPUSeconds)
			}
		}
		fmt.Fprintf(out, "  %-13s %9s flags  %10.0f evaluations/s  %10.0f per CPU-second (%d a request; the floor answers %s requests per CPU-second)\n",
			res.Scenario, thousands(res.Flags), res.EvaluationsPerSecond, res.EvaluationsPerCPUSecond, int(res.EvaluationsPerRequest), floor)
	}
}
