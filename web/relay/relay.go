package relay

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/jsonbody"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/web/httpx"
	"github.com/bunting-flags/bunting/web/metrics"
	"github.com/bunting-flags/bunting/web/sdk"
)

// Config is what a relay needs.
type Config struct {
	// Upstream is Bunting's base URL (or FeatBit's evaluation server's).
	Upstream *url.URL
	// Key is the relay proxy's key (rp-…).
	Key string
	// AgentID names this relay to the upstream; the host name when empty.
	AgentID string
	// Snapshot, when set, is a file the relay keeps its data in, so a
	// restarted relay serves before the upstream answers.
	Snapshot string
	// SDK are the SDK endpoints' options (limits, connection caps,
	// metrics).
	SDK sdk.Options
}

// Relay is a running relay's parts.
type Relay struct {
	cfg      Config
	log      *slog.Logger
	Memory   *Memory
	Upstream *Upstream
	Forward  *Forwarder
	SDK      *sdk.Server
	metrics  *metrics.Metrics
	save     chan struct{}
}

// New returns a relay; a snapshot file, when set and present, is loaded
// so SDKs are served at once.
func New(cfg Config, log *slog.Logger) (*Relay, error) {
	if cfg.AgentID == "" {
		host, _ := os.Hostname()
		cfg.AgentID = "bunting-relay-" + host
	}
	r := &Relay{cfg: cfg, log: log, Memory: NewMemory(), Forward: NewForwarder(cfg.Upstream, log),
		metrics: cfg.SDK.Metrics, save: make(chan struct{}, 1)}
	r.Upstream = NewUpstream(cfg.Upstream, cfg.Key, cfg.AgentID, r.Memory, log)
	if cfg.Snapshot != "" {
		if err := snapshotDir(cfg.Snapshot); err != nil {
			return nil, err
		}
		if err := r.load(); err != nil {
			return nil, err
		}
		r.Memory.saved = func() {
			select {
			case r.save <- struct{}{}:
			default:
			}
		}
	}
	opts := cfg.SDK
	opts.ForwardInsight = r.Forward.Take
	r.SDK = sdk.NewFrom(r.Memory, log, opts)
	if r.metrics != nil {
		r.registerMetrics()
	}
	return r, nil
}

// load reads the snapshot file, when there is one.
func (r *Relay) load() error {
	b, err := os.ReadFile(r.cfg.Snapshot)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	ds, err := decodeDataSet(b)
	if err != nil || ds.EventType != eventFull {
		// A damaged file must not keep the relay down: the upstream has
		// the data.
		r.log.Warn("relay: the snapshot file is unreadable; waiting for the upstream", "file", r.cfg.Snapshot, "err", err)
		return nil
	}
	r.Memory.Apply(ds)
	r.log.Info("relay: serving from the snapshot file until the upstream answers", "file", r.cfg.Snapshot, "serves", r.Memory.Serves())
	return nil
}

// Run syncs with the upstream, forwards events and keeps the snapshot file
// until ctx ends.
func (r *Relay) Run(ctx context.Context) {
	done := make(chan struct{}, 2)
	go func() { r.Upstream.Run(ctx); done <- struct{}{} }()
	go func() { r.Forward.Run(ctx); done <- struct{}{} }()
	if r.cfg.Snapshot != "" {
		r.keepSnapshot(ctx)
	}
	<-done
	<-done
}

// keepSnapshot writes the snapshot file after changes, at most once a
// second, and once more at the end.
func (r *Relay) keepSnapshot(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			r.writeSnapshot()
			return
		case <-r.save:
		}
		r.writeSnapshot()
		select {
		case <-ctx.Done():
			r.writeSnapshot()
			return
		case <-time.After(time.Second):
		}
	}
}

// writeSnapshot replaces the file whole (a new file renamed over it), so a
// crash leaves the old one or the new one, never half of one.
func (r *Relay) writeSnapshot() {
	if !r.Memory.Loaded() {
		return
	}
	b, err := json.Marshal(r.Memory.Backup())
	if err == nil {
		tmp := r.cfg.Snapshot + ".tmp"
		if err = os.WriteFile(tmp, b, 0o600); err == nil {
			err = os.Rename(tmp, r.cfg.Snapshot)
		}
	}
	if err != nil {
		r.log.Warn("relay: writing the snapshot file", "file", r.cfg.Snapshot, "err", err)
	}
}

// Register adds the relay's routes to e: the SDK endpoints, health, and
// the agent's admin endpoints behind the key.
func (r *Relay) Register(e *echo.Echo) {
	r.SDK.Register(e)
	e.GET("/health/liveness", func(c echo.Context) error { return c.String(http.StatusOK, "Healthy") })
	e.GET("/health/readiness", r.readiness)
	admin := e.Group("/api/public/proxy", r.keyed)
	admin.GET("/status", func(c echo.Context) error { return c.JSON(http.StatusOK, r.Upstream.Status()) })
	admin.GET("/backup", func(c echo.Context) error { return c.JSON(http.StatusOK, r.Memory.Backup()) })
	admin.POST("/bootstrap", r.bootstrap)
}

// readiness is FeatBit's agent's: unavailable until data is held, then
// Healthy while synced and Degraded (still 200: it serves) while the
// upstream is away.
func (r *Relay) readiness(c echo.Context) error {
	if !r.Memory.Loaded() {
		return c.String(http.StatusServiceUnavailable, "Unhealthy")
	}
	if state, _ := r.Upstream.State(); state == StateStable {
		return c.String(http.StatusOK, "Healthy")
	}
	return c.String(http.StatusOK, "Degraded")
}

// keyed lets through requests with the relay proxy's key in Authorization
// (bare, as FeatBit sends it, or after Bearer); 401 otherwise.
func (r *Relay) keyed(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		got := strings.TrimSpace(strings.TrimPrefix(c.Request().Header.Get("Authorization"), "Bearer "))
		if subtle.ConstantTimeCompare([]byte(got), []byte(r.cfg.Key)) != 1 {
			return echo.ErrUnauthorized
		}
		return next(c)
	}
}

// maxBootstrap bounds a bootstrap data set: every environment's flags and
// segments.
const maxBootstrap = 64 << 20

// bootstrap takes a whole data set (FeatBit's manual sync pushes one) in
// place of what is held, and answers what is served now.
func (r *Relay) bootstrap(c echo.Context) error {
	body, err := httpx.ReadBody(c, maxBootstrap)
	if err != nil {
		return err
	}
	var ds DataSet
	if jsonbody.Decode(body, &ds) != nil || ds.EventType != eventFull {
		return core.Invalid("body_is_invalid")
	}
	r.Memory.Apply(ds)
	all, _ := r.Memory.Versions()
	return c.JSON(http.StatusOK, map[string]any{"serves": r.Memory.Serves(), "dataVersion": all})
}

// snapshotDir makes sure the snapshot file's folder exists.
func snapshotDir(file string) error { return os.MkdirAll(filepath.Dir(file), 0o700) }
