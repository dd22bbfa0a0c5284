package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
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
