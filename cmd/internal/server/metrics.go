package server

import (
	"crypto/subtle"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/web/metrics"
)

// requestObserver is what the request logger tells of every answered
// request: nothing, not even a call, with metrics off.
func requestObserver(m *metrics.Metrics) func(echo.Context, int, time.Duration) {
	if m == nil {
		return nil
	}
	return m.Request
}

// mountMetrics serves /metrics on the main listener, when configured so
// (BUNTING_METRICS_ADDR=main), to those presenting BUNTING_METRICS_TOKEN;
// otherwise the main listener has no /metrics (404). The token is compared
// in constant time.
func mountMetrics(e *echo.Echo, cfg Config) {
	if cfg.Metrics == nil || cfg.MetricsAddr != MetricsMain || cfg.MetricsToken == "" {
		return
	}
	h := echo.WrapHandler(cfg.Metrics.Handler())
	want := []byte("Bearer " + cfg.MetricsToken)
	e.GET("/metrics", func(c echo.Context) error {
		if subtle.ConstantTimeCompare([]byte(c.Request().Header.Get(echo.HeaderAuthorization)), want) != 1 {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="metrics"`)
			return c.String(http.StatusUnauthorized, "unauthorized\n")
		}
		return h(c)
	})
}

// metricsServer serves /metrics alone on its own address; nil when metrics
// are off or served on the main listener.
func metricsServer(cfg Config) *http.Server {
	if cfg.Metrics == nil || cfg.MetricsAddr == MetricsOff || cfg.MetricsAddr == MetricsMain {
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", cfg.Metrics.Handler())
	return &http.Server{Addr: cfg.MetricsAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second}
}

// listenMetrics binds the metrics address and serves it in the background.
// A port taken stops start-up, as the main one does, when the operator
// chose it; the default's is only warned about (a second instance on one
// host, or another exporter on 9464, must not keep Bunting down).
func listenMetrics(srv *http.Server, optional bool, log *slog.Logger) error {
	if srv == nil {
		return nil
	}
	ln, err := net.Listen("tcp", srv.Addr)
	if err != nil && optional {
		log.Warn("metrics are not served: their default address is taken; set BUNTING_METRICS_ADDR", "addr", srv.Addr, "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	log.Info("serving metrics", "addr", ln.Addr().String(), "path", "/metrics")
	go func() {
		if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	return nil
}
