package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// benchReport is everything a run measured, written as JSON. Version
// changes when the shape does.
type benchReport struct {
	Version    int          `json:"version"`
	StartedAt  time.Time    `json:"startedAt"`
	FinishedAt time.Time    `json:"finishedAt"`
	Command    string       `json:"command"`
	Machine    benchMachine `json:"machine"`
	Options    benchOptions `json:"options"`
	// Database is the run's own database, dropped when the run ends unless
	// -keep.
	Database string        `json:"database"`
	Seeding  []seedTime    `json:"seeding"`
	Results  []benchResult `json:"results"`
	// PeakRSSMB is the server process's highest resident memory (VmHWM).
	PeakRSSMB float64      `json:"peakRssMB"`
	Checks    []benchCheck `json:"checks"`
	// OTLP is what -otlp's receiver was sent.
	OTLP *otlpStats `json:"otlp,omitempty"`
}

// benchMachine says where the run happened; the load averages tell a busy
// machine's results from a quiet one's.
type benchMachine struct {
	CPUs       int    `json:"cpus"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	Go         string `json:"go"`
	Postgres   string `json:"postgres"`
	LoadBefore string `json:"loadBefore"`
	LoadAfter  string `json:"loadAfter"`
}

// seedTime is how long bringing the environment to a number of flags took.
type seedTime struct {
	Flags   int     `json:"flags"`
	Seconds float64 `json:"seconds"`
}

// benchCheck is one of the targets, met or not.
type benchCheck struct {
	Target   string `json:"target"`
	Scenario string `json:"scenario,omitempty"`
	Flags    int    `json:"flags,omitempty"`
	Value    string `json:"value"`
	OK       bool   `json:"ok"`
}

// Targets of the API scenarios: throughput relative to the floor and p99
// latency.
const (
	readRatio        = 0.7
	readP99Ms        = 10
	writeRatio       = 0.6
	writeP99Ms       = 25
	searchP99Ms      = 50
	membersP99Ms     = 25
	growthP99        = 1.5
	rssLimitMB       = 150
	authTripsAllowed = 0.05 // per request, over the floor's, for cache refreshes
)

// checkTargets holds the results to their targets.
func checkTargets(r benchReport) []benchCheck {
	var checks []benchCheck
	add := func(target string, res *benchResult, value string, ok bool) {
		c := benchCheck{Target: target, Value: value, OK: ok}
		if res != nil {
			c.Scenario, c.Flags = res.Scenario, res.Flags
		}
		checks = append(checks, c)
	}
	find := func(scenario, target string, flags int) *benchResult {
		for i, res := range r.Results {
			if res.Scenario == scenario && res.Target == target && res.Flags == flags {
				return &r.Results[i]
			}
		}
		return nil
	}
	smallest := r.Options.FlagCounts[0]
	var errors int64
	for i := range r.Results {
		res := &r.Results[i]
		errors += res.Errors
		if res.Target != targetBunting {
			continue
		}
		ratio := func(min float64) {
			if res.RatioToFloor != nil {
				add(fmt.Sprintf("throughput ≥ %.1f× the floor", min), res, fmt.Sprintf("%.3f×", *res.RatioToFloor), *res.RatioToFloor >= min)
			}
		}
		p99 := func(limit float64) {
			add(fmt.Sprintf("p99 < %g ms", limit), res, fmt.Sprintf("%.2f ms", res.P99Ms), res.P99Ms < limit)
		}
		switch res.Scenario {
		case "get-flag", "segments-by-ids":
			ratio(readRatio)
			p99(readP99Ms)
		case "search-flags":
			ratio(readRatio)
			if res.Flags == smallest {
				p99(readP99Ms)
			} else {
				p99(searchP99Ms)
			}
		case "policy-members":
			ratio(readRatio)
			p99(membersP99Ms)
		case "create-flag", "flag-description", "flag-targeting", "segment-patch":
			ratio(writeRatio)
			p99(writeP99Ms)
		}
		switch res.Scenario {
		case scenarioHangingWebhook:
			if plain := find("flag-description", targetBunting, res.Flags); plain != nil {
				limit := hangingWebhookFactor*plain.P50Ms + float64(hangingWebhookSlack.Milliseconds())
				add(fmt.Sprintf("a receiver that hangs does not slow changes: median within %d× flag-description's + %v", hangingWebhookFactor, hangingWebhookSlack),
					res, fmt.Sprintf("p50 %.2f ms, without the webhook %.2f ms", res.P50Ms, plain.P50Ms), res.P50Ms <= limit)
			}
		case scenarioInsightNew:
			if known := find(scenarioInsightKnown, targetBunting, res.Flags); known != nil {
				limit := 3*known.P99Ms + float64(insightSlack.Milliseconds())
				add(fmt.Sprintf("a flood of new users answered as one known user is: p99 within 3× its + %v", insightSlack),
					res, fmt.Sprintf("p99 %.2f ms, one known user %.2f ms", res.P99Ms, known.P99Ms), res.P99Ms <= limit)
			}
		case scenarioCompare:
			add(fmt.Sprintf("a page of %d flags compared within %d ms, the slowest included", comparePage, compareMaxMs),
				res, fmt.Sprintf("max %.2f ms, p99 %.2f ms", res.MaxMs, res.P99Ms), res.MaxMs < compareMaxMs)
		}
		if res.Scenario == "get-flag" {
			if floor := find("get-flag", targetFloor, res.Flags); floor != nil {
				add("GET flag costs no round trip beyond the flag's own (authentication and permissions from memory)", res,
					fmt.Sprintf("%.2f round trips/request, floor %.2f", res.RoundTripsPerRequest, floor.RoundTripsPerRequest),
					res.RoundTripsPerRequest <= floor.RoundTripsPerRequest+authTripsAllowed)
			}
		}
	}
	if counts := r.Options.FlagCounts; len(counts) > 1 {
		first, last := find("get-flag", targetBunting, counts[0]), find("get-flag", targetBunting, counts[len(counts)-1])
		if first != nil && last != nil && first.P99Ms > 0 {
			growth := last.P99Ms / first.P99Ms
			add(fmt.Sprintf("GET flag p99 flat from %d to %d flags (within %.1f×)", counts[0], counts[len(counts)-1], growthP99), last,
				fmt.Sprintf("%.2f×", growth), growth <= growthP99)
		}
	}
	checks = append(checks, streamChecks(r)...)
	checks = append(checks, relayChecks(r)...)
	// This memory target is the API's; streaming has its own above.
	if r.PeakRSSMB > 0 && !slices.ContainsFunc(r.Results, func(res benchResult) bool { return res.Stream != nil }) {
		add(fmt.Sprintf("server RSS < %d MB", rssLimitMB), nil, fmt.Sprintf("peak %.1f MB", r.PeakRSSMB), r.PeakRSSMB < rssLimitMB)
	}
	add("zero errors", nil, strconv.FormatInt(errors, 10), errors == 0)
	return checks
}

// writeTable prints the results as a Markdown table, then the targets.
func writeTable(out io.Writer, r benchReport) {
	header := []string{"scenario", "flags", "target", "req/s", "p50 ms", "p95 ms", "p99 ms", "errors", "× floor", "RSS MB", "queries/req", "round trips/req", "CPU ms/req", "DB CPU ms/req"}
	rows := [][]string{header}
	for _, res := range r.Results {
		ratio := "—"
		if res.RatioToFloor != nil {
			ratio = fmt.Sprintf("%.2f", *res.RatioToFloor)
		}
		rows = append(rows, []string{res.Scenario, thousands(res.Flags), res.Target, fmt.Sprintf("%.1f", res.RPS),
			fmt.Sprintf("%.2f", res.P50Ms), fmt.Sprintf("%.2f", res.P95Ms), fmt.Sprintf("%.2f", res.P99Ms),
			strconv.FormatInt(res.Errors, 10), ratio, fmt.Sprintf("%.1f", res.RSSMB),
			fmt.Sprintf("%.2f", res.StatementsPerRequest), fmt.Sprintf("%.2f", res.RoundTripsPerRequest), cpuPerRequest(res),
			databaseCPUPerRequest(res)})
	}
	widths := make([]int, len(header))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, cell := range cells {
			pad := strings.Repeat(" ", widths[i]-len([]rune(cell)))
			if i >= 3 { // numbers align right
				b.WriteString(" " + pad + cell + " |")
			} else {
				b.WriteString(" " + cell + pad + " |")
			}
		}
		fmt.Fprintln(out, b.String())
	}
	line(rows[0])
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = strings.Repeat("-", widths[i])
		if i >= 3 {
			sep[i] = sep[i][1:] + ":"
		}
	}
	line(sep)
	for _, row := range rows[1:] {
		line(row)
	}
	writeEvaluations(out, r)
	fmt.Fprintf(out, "\nserver peak RSS %.1f MB; %d CPUs, load %s before and %s after; PostgreSQL %s\n",
		r.PeakRSSMB, r.Machine.CPUs, r.Machine.LoadBefore, r.Machine.LoadAfter, r.Machine.Postgres)
	fmt.Fprintln(out, "\nTargets:")
	for _, c := range r.Checks {
		mark := "ok  "
		if !c.OK {
			mark = "MISS"
		}
		where := ""
		if c.Scenario != "" {
			where = fmt.Sprintf("%s @ %s flags: ", c.Scenario, thousands(c.Flags))
		}
		fmt.Fprintf(out, "  %s %s%s (%s)\n", mark, where, c.Target, c.Value)
	}
}

// thousands writes 1000000 as 1,000,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
