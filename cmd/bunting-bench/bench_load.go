package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"
)

// benchResult is one measured run of a scenario against a target. Its JSON
// shape is stable so runs can be compared.
type benchResult struct {
	Scenario string  `json:"scenario"`
	Kind     string  `json:"kind"`
	Flags    int     `json:"flags"`
	Target   string  `json:"target"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Seconds  float64 `json:"seconds"`
	RPS      float64 `json:"rps"`
	P50Ms    float64 `json:"p50Ms"`
	P95Ms    float64 `json:"p95Ms"`
	P99Ms    float64 `json:"p99Ms"`
	MaxMs    float64 `json:"maxMs"`
	// RatioToFloor is Bunting's throughput divided by the floor's in the
	// same run; null for the floor itself.
	RatioToFloor *float64 `json:"ratioToFloor"`
	// RSSMB is the server process's resident memory after the run.
	RSSMB float64 `json:"rssMB"`
	// StatementsPerRequest counts what the server's pool sent to PostgreSQL
	// (BEGIN and COMMIT included); RoundTripsPerRequest counts a batch once.
	StatementsPerRequest float64 `json:"statementsPerRequest"`
	RoundTripsPerRequest float64 `json:"roundTripsPerRequest"`
	// Statements is StatementsPerRequest by statement name.
	Statements map[string]float64 `json:"statements"`
	// AuditEntriesPerRequest and RevisionsPerRequest count the rows the run
	// added to audit_logs and flag_revisions: a write that records less than
	// one each was not a write.
	// Reads add none; sign-ins add none.
	AuditEntriesPerRequest float64  `json:"auditEntriesPerRequest"`
	RevisionsPerRequest    float64  `json:"revisionsPerRequest"`
	ErrorSamples           []string `json:"errorSamples"`
	// Stream is what the streaming scenarios measure beyond the columns.
	Stream *streamResult `json:"stream,omitempty"`
	// Relay is what relay-fanout measures beyond Stream.
	Relay *relayResult `json:"relay,omitempty"`
	// ServerCPUSeconds is the CPU time the server process (which also runs
	// the floor) used in the window, from /proc.
	ServerCPUSeconds float64 `json:"serverCpuSeconds"`
	// DatabaseCPUSeconds is the CPU time PostgreSQL spent on the
	// benchmark's database in the window, when it runs on this machine.
	DatabaseCPUSeconds float64 `json:"databaseCpuSeconds"`
	// For scenarios that evaluate flags: evaluations per request, per
	// second, and per second of the server's CPU time (per core).
	EvaluationsPerRequest   float64 `json:"evaluationsPerRequest,omitempty"`
	EvaluationsPerSecond    float64 `json:"evaluationsPerSecond,omitempty"`
	EvaluationsPerCPUSecond float64 `json:"evaluationsPerCpuSecond,omitempty"`
}

// maxErrorSamples is how many failures of a run are kept to show.
const maxErrorSamples = 5

// measure runs a scenario against a target: prepare, warm up, then measure
// for the configured duration, reading the server's query counter before
// and after, with every client idle, so the counts are exact.
func (w *benchWorld) measure(ctx context.Context, sc benchScenario, target string) (benchResult, error) {
	if sc.run != nil {
		return sc.run(ctx, w, target)
	}
	index := slices.IndexFunc(benchScenarios, func(s benchScenario) bool { return s.name == sc.name })
	clients := w.newClients(index)
	if sc.prepare != nil {
		if err := sc.prepare(ctx, w, clients); err != nil {
			return benchResult{}, fmt.Errorf("prepare: %w", err)
		}
	}
	if w.o.Warmup > 0 {
		w.load(ctx, sc, target, clients, w.o.Warmup)
		for _, c := range clients {
			c.latencies = c.latencies[:0]
		}
	}
	auditBefore, revisionsBefore, err := w.history(ctx)
	if err != nil {
		return benchResult{}, err
	}
	before, err := w.queryStats(ctx)
	if err != nil {
		return benchResult{}, err
	}
	profiled := func() error { return nil }
	if w.o.ProfileDir != "" && target == targetBunting {
		profiled = w.profileWindow(ctx, w.o.ProfileDir, fmt.Sprintf("%s-%d", sc.name, w.flags), w.o.Duration)
	}
	database := w.pool.Config().ConnConfig.Database
	cpuBefore, dbCPUBefore := procCPUSeconds(w.childPID), databaseCPUSeconds(database)
	elapsed := w.load(ctx, sc, target, clients, w.o.Duration)
	cpu, dbCPU := procCPUSeconds(w.childPID)-cpuBefore, databaseCPUSeconds(database)-dbCPUBefore
	if err := profiled(); err != nil {
		return benchResult{}, fmt.Errorf("profile: %w", err)
	}
	if ctx.Err() != nil {
		return benchResult{}, ctx.Err()
	}
	after, err := w.queryStats(ctx)
	if err != nil {
		return benchResult{}, err
	}
	auditAfter, revisionsAfter, err := w.history(ctx)
	if err != nil {
		return benchResult{}, err
	}
	rss := procStatusKB(w.childPID, "VmRSS")
	if sc.cleanup != nil {
		if err := sc.cleanup(ctx, w); err != nil {
			return benchResult{}, fmt.Errorf("clean up: %w", err)
		}
	}

	r := benchResult{Scenario: sc.name, Kind: sc.kind, Flags: w.flags, Target: target, Seconds: round(elapsed.Seconds(), 3),
		RSSMB: round(float64(rss)/1024, 1), Statements: map[string]float64{}, ErrorSamples: []string{}, ServerCPUSeconds: round(cpu, 2),
		DatabaseCPUSeconds: round(dbCPU, 2)}
	var all []int64
	for _, c := range clients {
		all = append(all, c.latencies...)
		r.Errors += c.errors
		for _, s := range c.samples {
			if len(r.ErrorSamples) < maxErrorSamples {
				r.ErrorSamples = append(r.ErrorSamples, s)
			}
		}
	}
	r.Requests = int64(len(all))
	if r.Requests == 0 {
		return r, nil
	}
	slices.Sort(all)
	ms := func(ns int64) float64 { return round(float64(ns)/1e6, 3) }
	r.RPS = round(float64(r.Requests)/elapsed.Seconds(), 1)
	if sc.evaluations != nil && target == targetBunting {
		n := float64(sc.evaluations(w))
		r.EvaluationsPerRequest, r.EvaluationsPerSecond = n, round(r.RPS*n, 1)
		if cpu > 0 {
			r.EvaluationsPerCPUSecond = round(float64(r.Requests)*n/cpu, 1)
		}
	}
	r.P50Ms, r.P95Ms, r.P99Ms, r.MaxMs = ms(percentile(all, 0.50)), ms(percentile(all, 0.95)), ms(percentile(all, 0.99)), ms(all[len(all)-1])
	per := func(n int64) float64 { return round(float64(n)/float64(r.Requests), 2) }
	r.StatementsPerRequest = per(after.Statements - before.Statements)
	r.RoundTripsPerRequest = per(after.RoundTrips - before.RoundTrips)
	r.AuditEntriesPerRequest = per(auditAfter - auditBefore)
	r.RevisionsPerRequest = per(revisionsAfter - revisionsBefore)
	for name, n := range after.ByName {
		if d := n - before.ByName[name]; d > 0 {
			r.Statements[name] = per(d)
		}
	}
	return r, nil
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []int64, p float64) int64 {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func round(x float64, places int) float64 {
	f := math.Pow(10, float64(places))
	return math.Round(x*f) / f
}

// load runs every client in a loop for d: each sends its next request as
// soon as the previous answer is read. It returns when the last answer has
// arrived, and how long that took.
func (w *benchWorld) load(ctx context.Context, sc benchScenario, target string, clients []*benchClient, d time.Duration) time.Duration {
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			var body bytes.Buffer
			for time.Now().Before(deadline) && ctx.Err() == nil {
				w.once(ctx, sc, target, c, &body)
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// once sends a client's next request and records its latency and outcome.
func (w *benchWorld) once(ctx context.Context, sc benchScenario, target string, c *benchClient, body *bytes.Buffer) {
	r := sc.request(w, target, c)
	c.seq++
	base := w.buntingURL
	if target == targetFloor {
		base = w.floorURL
	}
	req, err := http.NewRequestWithContext(ctx, r.method, base+r.path, bytes.NewReader(r.body))
	if err != nil {
		c.fail(err.Error())
		return
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if target == targetBunting && !r.noAuth {
		req.Header.Set("Authorization", cmp.Or(r.auth, w.auth))
	}
	start := time.Now()
	resp, err := w.http.Do(req)
	if err == nil {
		body.Reset()
		_, err = body.ReadFrom(resp.Body)
		resp.Body.Close()
	}
	c.latencies = append(c.latencies, time.Since(start).Nanoseconds())
	switch {
	case err != nil:
		c.fail(fmt.Sprintf("%s %s: %v", r.method, r.path, err))
	case resp.StatusCode != http.StatusOK:
		text := body.String()
		if len(text) > 300 {
			text = text[:300] + "…"
		}
		c.fail(fmt.Sprintf("%s %s: %d %s", r.method, r.path, resp.StatusCode, text))
	case sc.done != nil:
		if err := sc.done(target, c, body.Bytes()); err != nil {
			c.fail(fmt.Sprintf("%s %s: reading the answer: %v", r.method, r.path, err))
		}
	}
}

func (c *benchClient) fail(msg string) {
	c.errors++
	if len(c.samples) < maxErrorSamples {
		c.samples = append(c.samples, msg)
	}
}

// history counts the audit entries and flag revisions.
func (w *benchWorld) history(ctx context.Context) (audit, revisions int64, err error) {
	err = w.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM audit_logs), (SELECT count(*) FROM flag_revisions)`).Scan(&audit, &revisions)
	return audit, revisions, err
}

// queryStats reads the server's query counter.
func (w *benchWorld) queryStats(ctx context.Context) (queryStats, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", w.floorURL+"/_bench/stats", nil)
	if err != nil {
		return queryStats{}, err
	}
	resp, err := w.http.Do(req)
	if err != nil {
		return queryStats{}, fmt.Errorf("read the query counter: %w", err)
	}
	defer resp.Body.Close()
	var s queryStats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return queryStats{}, fmt.Errorf("read the query counter: %w", err)
	}
	return s, nil
}
