package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/migrations"
	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/web/metrics"
	"github.com/bunting-flags/bunting/web/webhook"
)

// OpenStore opens the database, migrates it, and returns a store keyed by the
// server secret, with the pool under it and the function that closes both.
func OpenStore(ctx context.Context, cfg Config, log *slog.Logger) (*store.Store, *pgxpool.Pool, func(), error) {
	pool, stopDB, err := OpenDatabase(ctx, cfg, log)
	if err != nil {
		return nil, nil, nil, err
	}
	fail := func(err error) (*store.Store, *pgxpool.Pool, func(), error) {
		stopDB()
		return nil, nil, nil, err
	}
	if n, err := migrations.Apply(ctx, pool); err != nil {
		return fail(err)
	} else if n > 0 {
		log.Info("migrations applied", "count", n)
	}
	secret, err := core.LoadSecretKey(ctx, pool, cfg.SecretKey)
	if err != nil {
		return fail(err)
	}
	keys, err := core.DeriveKeys(secret)
	if err != nil {
		return fail(err)
	}
	return store.New(pool, keys, log, core.Options{PasswordCost: cfg.PasswordCost,
		AllowPrivateNetworks: cfg.SSOAllowPrivateNetworks, WebhookAllowPrivateNetworks: cfg.WebhookAllowPrivateNetworks,
		MaxEndUsersPerEnv: int64(cfg.MaxEndUsersPerEnv), BaseURL: baseURL(cfg)}), pool, stopDB, nil
}

// Serve bootstraps the database when it is empty and serves Bunting until ctx
// ends, then stops gracefully within cfg.ShutdownGrace.
func Serve(ctx context.Context, cfg Config, log *slog.Logger) error {
	tp, stopTracing, err := StartTracing(ctx, cfg.Tracing, log)
	if err != nil {
		return err
	}
	// Deferred first, so it runs last: the spans of everything that stops
	// below, the last requests and deliveries, are sent before the exit.
	defer func() {
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := stopTracing(flushCtx); err != nil {
			log.Warn("shutdown: sending the last spans", "err", err)
		}
	}()
	tracers := Tracers{cfg.Tracer}
	if tp != nil {
		cfg.TracerProvider = tp
		tracers = append(tracers, newDBTracer(tp))
	}
	if cfg.MetricsAddr != MetricsOff && cfg.Metrics == nil {
		cfg.Metrics = metrics.New()
	}
	if cfg.Metrics != nil {
		tracers = append(tracers, cfg.Metrics.StatementTracer())
	}
	cfg.Tracer = tracers.Tracer()
	st, pool, stopDB, err := OpenStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stopDB()
	cfg.Metrics.WatchPool(pool)
	metricsSrv := metricsServer(cfg)
	if err := listenMetrics(metricsSrv, cfg.metricsOptional, log); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	if metricsSrv != nil {
		defer metricsSrv.Close()
	}
	boot, err := st.IAM().Bootstrap(ctx, iam.Owner{Email: cfg.AdminEmail, Password: cfg.AdminPassword})
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if boot.Created {
		log.Info("created the default workspace and organization and the owner account", "email", cfg.AdminEmail)
	}
	// Changes made on any instance reach this one's SDK connections and
	// caches, and changes to access its actor cache, through one listener.
	go feed.NewListener(st.Projects().Feed(), feed.Options{}).Run(ctx)
	// End users the SDK endpoints see are written in batches every second;
	// the last batch is written below, once no request can add to it.
	endUsers := runner.NewEndUsers(st, log)
	endUsersCtx, stopEndUsers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopEndUsers()
	go endUsers.Run(endUsersCtx)
	// Evaluations OFREP answers are counted in memory and written every
	// second, like the end users; the last count is written below.
	evaluations := runner.NewEvaluations(st, log)
	go evaluations.Run(endUsersCtx)
	// The evaluation series is rolled up to hours and days and pruned
	// every minute, by one instance at a time.
	go runner.NewSeries(st, log, cfg.EvaluationSeries).Run(ctx, runner.SeriesTick)
	// Scheduled changes are applied by one instance each, when due; a
	// change being applied at shutdown finishes or rolls back whole.
	schedulesDone := make(chan struct{})
	schedules := runner.NewSchedules(st, log)
	if cfg.Metrics != nil {
		schedules.Ran = cfg.Metrics.ScheduleRan
	}
	go func() { defer close(schedulesDone); schedules.Run(ctx, runner.ScheduleTick) }()
	if boot.GeneratedPassword != "" {
		// Shown this once: the database keeps only its hash.
		log.Warn("generated the owner's password; sign in and change it", "email", cfg.AdminEmail, "password", boot.GeneratedPassword)
	}

	// Webhook deliveries queued by changes on any instance are sent by one
	// of them; this instance's worker stops with the server, after its
	// requests under way end (each within the outbound timeout).
	webhooks, stopWebhooks := context.WithCancel(context.WithoutCancel(ctx))
	webhooksDone := make(chan struct{})
	go func() {
		webhook.Run(webhooks, st, log, webhook.Options{Metrics: cfg.Metrics, Tracer: tp})
		close(webhooksDone)
	}()
	defer func() { stopWebhooks(); <-webhooksDone }()

	files := RaiseFileLimit(log)
	sdkOptions := SDKOptions(cfg, files, log)
	sdkOptions.EndUsers = endUsers
	sdkOptions.Evaluations = evaluations
	sdkOptions.Tracer = tp
	handler, closeStreams := NewHandler(cfg, st, log, sdkOptions)
	srv := &http.Server{
		Addr:              cfg.Addr,
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Info("serving", "addr", cfg.Addr, "url", cfg.BaseURL.String())

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", cfg.ShutdownGrace)
	<-schedulesDone
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownGrace)
	defer cancel()
	// SDK streams are told to go away (1001) while in-flight requests
	// finish, and both are waited for: the process must not exit before the
	// close frames are out, or SDKs see a dropped connection.
	streams := make(chan error, 1)
	go func() { streams <- closeStreams(shutdownCtx) }()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-streams; err != nil {
		return fmt.Errorf("shutdown: closing SDK streams: %w", err)
	}
	stopEndUsers()
	if err := endUsers.Flush(shutdownCtx); err != nil {
		log.Warn("shutdown: writing the last end users", "err", err)
	}
	if err := evaluations.Flush(shutdownCtx); err != nil {
		log.Warn("shutdown: writing the last evaluation counts", "err", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// baseURL is the public URL the store's messages link to; empty when unset.
func baseURL(cfg Config) string {
	if cfg.BaseURL == nil {
		return ""
	}
	return cfg.BaseURL.String()
}
