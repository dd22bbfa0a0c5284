package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// registerProfiles serves the bench server's runtime profiles on the
// floor's address (loopback, the benchmark's own), as net/http/pprof does:
// `go tool pprof http://FLOOR/debug/pprof/profile?seconds=10` while a
// scenario runs, or bunting-bench -profile DIR, which does it for each.
func registerProfiles(e *echo.Echo) {
	e.GET("/debug/pprof/*", echo.WrapHandler(http.HandlerFunc(pprof.Index)))
	e.GET("/debug/pprof/profile", echo.WrapHandler(http.HandlerFunc(pprof.Profile)))
	e.GET("/debug/pprof/symbol", echo.WrapHandler(http.HandlerFunc(pprof.Symbol)))
}

// profileWindow records the server's CPU profile for a measured window of
// d into dir, named after the scenario; it returns a function that waits
// for the file. Failures are reported then, not fatal to the benchmark.
func (w *benchWorld) profileWindow(ctx context.Context, dir, name string, d time.Duration) func() error {
	done := make(chan error, 1)
	go func() {
		secs := max(1, int(d.Round(time.Second)/time.Second))
		req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", w.floorURL, secs), nil)
		if err != nil {
			done <- err
			return
		}
		resp, err := w.http.Do(req)
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("profile: %d %s", resp.StatusCode, data)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name+".pprof"), data, 0o644)
		}
		done <- err
	}()
	return func() error { return <-done }
}

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times: 100
// on every Linux platform Go runs on.
const clockTicks = 100

// procCPUSeconds is the CPU time (user and system, every thread) a process
// has used; 0 where /proc is missing.
func procCPUSeconds(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces and parentheses;
	// the fields after its last ")" start with the state (field 3), so
	// utime (14) and stime (15) are the 12th and 13th.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(fields) < 13 {
		return 0
	}
	user, _ := strconv.ParseFloat(fields[11], 64)
	system, _ := strconv.ParseFloat(fields[12], 64)
	return (user + system) / clockTicks
}

// databaseCPUSeconds is the CPU time the PostgreSQL backends connected to
// database have used, when PostgreSQL runs on this machine (its processes
// in /proc, titled "postgres: … USER DATABASE ADDRESS state"); 0 where it
// does not. The pools keep their connections through a window, so the
// difference around one is what the database spent on its requests.
func databaseCPUSeconds(database string) float64 {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var total float64
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		title, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !bytes.HasPrefix(title, []byte("postgres: ")) || !bytes.Contains(title, []byte(" "+database+" ")) {
			continue
		}
		total += procCPUSeconds(pid)
	}
	return total
}

// cpuPerRequest is the server's CPU time per answer, in milliseconds: what
// a request costs the process, which a busy machine disturbs far less than
// it disturbs throughput.
func cpuPerRequest(res benchResult) string {
	if res.Requests == 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f", 1000*res.ServerCPUSeconds/float64(res.Requests))
}

// databaseCPUPerRequest is the database's CPU time per answer, in
// milliseconds: on one machine, the other share of what a request costs.
func databaseCPUPerRequest(res benchResult) string {
	if res.Requests == 0 || res.DatabaseCPUSeconds == 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f", 1000*res.DatabaseCPUSeconds/float64(res.Requests))
}
