package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/api"
	"github.com/bunting-flags/bunting/web/httpx"
	"github.com/bunting-flags/bunting/web/metrics"
	"github.com/bunting-flags/bunting/web/relay"
	"github.com/bunting-flags/bunting/web/sdk"
)

// RelayConnections is a relay's default cap on streaming connections: a
// relay does nothing else, so its SDKs may take what the open-file limit
// allows, less relayFiles.
const RelayConnections = 50_000

// relayFiles are the descriptors a relay keeps from its SDKs: the upstream's
// connection, event reports on their way, the snapshot file, the metrics and
// health requests.
const relayFiles = 1024

// relayGCPercent is a relay's GOGC unless set.
const relayGCPercent = 25

// relayEnv is the environment a relay reads its settings from: the
// server's SDK settings, with a relay's defaults. Its streaming cap is
// RelayConnections, and the caps per secret, organization and environment
// default to the total, since every SDK of a relay is its operator's.
func relayEnv(getenv func(string) string) func(string) string {
	return func(name string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		switch name {
		case "BUNTING_SDK_CONNECTIONS":
			return strconv.Itoa(RelayConnections)
		case "BUNTING_SDK_CONNECTIONS_PER_SECRET", "BUNTING_SDK_CONNECTIONS_PER_ORG", "BUNTING_SDK_CONNECTIONS_PER_ENV":
			if total := strings.TrimSpace(getenv("BUNTING_SDK_CONNECTIONS")); total != "" {
				return total
			}
			return strconv.Itoa(RelayConnections)
		}
		return ""
	}
}

// LoadRelayConfig reads a relay's settings: BUNTING_RELAY_UPSTREAM (the
// upstream Bunting's base URL), BUNTING_RELAY_KEY (its relay proxy's key),
// BUNTING_RELAY_SNAPSHOT (a file to keep the data in, optional),
// BUNTING_RELAY_AGENT_ID (optional), and the server's BUNTING_ADDR, log,
// metrics and SDK settings.
func LoadRelayConfig(getenv func(string) string) (Config, relay.Config, error) {
	cfg, err := LoadConfig(relayEnv(getenv))
	var problems []error
	if err != nil {
		problems = append(problems, err)
	}
	rc := relay.Config{Key: strings.TrimSpace(getenv("BUNTING_RELAY_KEY")), Snapshot: strings.TrimSpace(getenv("BUNTING_RELAY_SNAPSHOT")),
		AgentID: strings.TrimSpace(getenv("BUNTING_RELAY_AGENT_ID"))}
	up := strings.TrimSpace(getenv("BUNTING_RELAY_UPSTREAM"))
	if u, err := url.Parse(up); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		problems = append(problems, fmt.Errorf("BUNTING_RELAY_UPSTREAM: %q is not an absolute http or https URL (the upstream Bunting's)", up))
	} else {
		u.Path = strings.TrimSuffix(u.Path, "/")
		rc.Upstream = u
	}
	if !strings.HasPrefix(rc.Key, "rp-") {
		problems = append(problems, errors.New("BUNTING_RELAY_KEY: must be a relay proxy's key (rp-…)"))
	}
	return cfg, rc, errors.Join(problems...)
}

// ServeRelay runs `bunting relay`: no database; the SDK endpoints over the
// relay's memory, synced from the upstream, on cfg.Addr, until ctx ends.
func ServeRelay(ctx context.Context, cfg Config, rc relay.Config, log *slog.Logger) error {
	// A relay's memory is its connections; what it allocates besides
	// (setting connections up, answering and pushing) is short-lived. Unless
	// GOGC says otherwise, the collector runs when the heap has grown by a
	// quarter rather than doubled, so the process stays near what its
	// connections hold; the collections cost some processor time during
	// connection storms and pushes (bunting-bench's relay-fanout measures
	// both).
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(relayGCPercent)
	}
	if cfg.MetricsAddr != MetricsOff && cfg.Metrics == nil {
		cfg.Metrics = metrics.New()
	}
	metricsSrv := metricsServer(cfg)
	if err := listenMetrics(metricsSrv, cfg.metricsOptional, log); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	if metricsSrv != nil {
		defer metricsSrv.Close()
	}
	rc.SDK = SDKOptions(cfg, 0, log)
	// A relay has no database pool, pages or API to keep descriptors for:
	// its SDKs may take all but relayFiles of the open-file limit.
	if files := RaiseFileLimit(log); files > relayFiles && uint64(rc.SDK.Connections.Total) > files-relayFiles {
		log.Warn("streaming connections capped below the open-file limit", "configured", rc.SDK.Connections.Total, "cap", files-relayFiles)
		rc.SDK.Connections.Total = int(files - relayFiles)
	}
	rc.SDK.Metrics = cfg.Metrics
	r, err := relay.New(rc, log)
	if err != nil {
		return err
	}
	e := httpx.New(log, httpx.Options{TrustProxy: cfg.TrustProxy, BodyBudget: cfg.BodyBudget, BodyRate: cfg.BodyRate,
		Unlogged: sdk.LoggedInSummary, Observe: requestObserver(cfg.Metrics)})
	// Every route of a relay answers in the API's JSON envelope.
	e.HTTPErrorHandler = func(err error, c echo.Context) { api.WriteError(c, log, err) }
	mountMetrics(e, cfg)
	r.Register(e)

	runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRun()
	ran := make(chan struct{})
	go func() { r.Run(runCtx); close(ran) }()
	srv := &http.Server{Addr: cfg.Addr, Handler: e, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Info("relay serving", "addr", cfg.Addr, "upstream", rc.Upstream.String())

	select {
	case err := <-errc:
		stopRun()
		<-ran
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownGrace)
	defer cancel()
	streams := make(chan error, 1)
	go func() { streams <- r.SDK.Shutdown(shutdownCtx) }()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-streams; err != nil {
		return fmt.Errorf("shutdown: closing SDK streams: %w", err)
	}
	// The last events go upstream and the snapshot is written once more.
	stopRun()
	<-ran
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
