// Command bunting is the Bunting feature-flag server.
//
//	bunting [serve]                                   serve the API (the default)
//	bunting migrate                                   apply database migrations and exit
//	bunting token create --email E --name N [--type Personal|Service]
//	                                                  print a new access token for a user
//	bunting bench [-short] [flags]                    benchmark the server against a bare floor
//
// Configuration comes from BUNTING_ environment variables; see the README.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/migrations"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bunting:", err)
		os.Exit(1)
	}
}

const usage = `usage:
  bunting [serve]
  bunting migrate
  bunting token create --email EMAIL --name NAME [--type Personal|Service]
  bunting bench [-short] [-flags 1k,10k,100k,1m] [-clients 32] [-duration 10s] [-h]`

// run is the whole program, with its environment passed in so tests can drive it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	command := "serve"
	if len(args) > 0 {
		command, args = args[0], args[1:]
	}
	switch command {
	case "serve", "migrate", "token", "bench", benchServerCommand:
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	default:
		return fmt.Errorf("unknown command %q\n%s", command, usage)
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))

	switch command {
	case "token":
		return tokenCommand(ctx, cfg, log, args, stdout)
	case "bench":
		return benchCommand(ctx, cfg, args, getenv, stdout)
	case benchServerCommand:
		return benchServer(ctx, cfg, log, args)
	case "migrate":
		pool, stopDB, err := openDatabase(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer stopDB()
		n, err := migrations.Apply(ctx, pool)
		if err != nil {
			return err
		}
		log.Info("migrations applied", "count", n)
		return nil
	}
	return serve(ctx, cfg, log)
}

// openStore opens the database, migrates it, and returns a store keyed by the server secret.
func openStore(ctx context.Context, cfg config, log *slog.Logger) (*store.Store, *pgxpool.Pool, func(), error) {
	pool, stopDB, err := openDatabase(ctx, cfg, log)
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
	secret, err := store.LoadSecretKey(ctx, pool, cfg.SecretKey)
	if err != nil {
		return fail(err)
	}
	keys, err := store.DeriveKeys(secret)
	if err != nil {
		return fail(err)
	}
	return store.New(pool, keys, log, store.Options{PasswordCost: cfg.PasswordCost,
		AllowPrivateNetworks: cfg.SSOAllowPrivateNetworks}), pool, stopDB, nil
}

func serve(ctx context.Context, cfg config, log *slog.Logger) error {
	st, _, stopDB, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stopDB()
	boot, err := st.Bootstrap(ctx, store.Owner{Email: cfg.AdminEmail, Password: cfg.AdminPassword})
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if boot.Created {
		log.Info("created the default workspace and organization and the owner account", "email", cfg.AdminEmail)
	}
	// Changes made on any instance reach this one's SDK connections and caches.
	go st.Changes().Run(ctx)
	if boot.GeneratedPassword != "" {
		// Shown this once: the database keeps only its hash.
		log.Warn("generated the owner's password; sign in and change it", "email", cfg.AdminEmail, "password", boot.GeneratedPassword)
	}

	// Authorize from memory while nothing about access changes.
	go st.WatchAccessChanges(ctx)

	files := raiseFileLimit(log)
	var closeStreams func(context.Context) error
	handler := web.New(web.Config{BaseURL: cfg.BaseURL, TrustProxy: cfg.TrustProxy, CORSOrigins: cfg.CORSOrigins, SDK: sdkOptions(cfg, files, log),
		OnShutdown: func(f func(context.Context) error) { closeStreams = f }}, st, log)
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
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// tokenCommand mints an access token for an existing user and prints it.
func tokenCommand(ctx context.Context, cfg config, log *slog.Logger, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	email := fs.String("email", "", "email of the user the token acts for")
	name := fs.String("name", "", "name of the token")
	typ := fs.String("type", store.TokenPersonal, "Personal or Service")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *email == "" || *name == "" {
		return errors.New("token create needs --email and --name")
	}
	st, _, stopDB, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stopDB()
	t, err := st.MintAccessToken(ctx, *email, *name, *typ)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, t.Token)
	return nil
}
