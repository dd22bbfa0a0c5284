package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// LocalServer is where a PostgreSQL is looked for when no URL is configured.
const (
	LocalServer   = "127.0.0.1:5432"
	localURL      = "postgres://postgres@" + LocalServer + "/%s?sslmode=disable&connect_timeout=3"
	localDatabase = "bunting"
)

// OpenDatabase returns a pool for BUNTING_DATABASE_URL; without one, for
// database "bunting" on the local server (created when missing); with no
// usable server there, on a private server started from the machine's
// PostgreSQL binaries (privatepg.go). The returned stop function shuts down
// what OpenDatabase started.
func OpenDatabase(ctx context.Context, cfg Config, log *slog.Logger) (*pgxpool.Pool, func(), error) {
	if cfg.DatabaseURL != "" {
		pool, err := Connect(ctx, cfg.DatabaseURL, cfg.Tracer)
		return pool, func() { pool.Close() }, err
	}
	pool, err := openLocal(ctx, cfg.Tracer)
	if err == nil {
		log.Info("using the local PostgreSQL server", "database", localDatabase, "addr", LocalServer)
		return pool, pool.Close, nil
	}
	log.Info("no usable PostgreSQL at "+LocalServer+"; using a private server", "reason", err)
	return OpenPrivate(ctx, cfg, log)
}

func Connect(ctx context.Context, url string, tracer pgx.QueryTracer) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	core.ConfigurePool(cfg)
	if tracer != nil {
		cfg.ConnConfig.Tracer = tracer
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to the database: %w", err)
	}
	return pool, nil
}

// openLocal connects to the local server and creates the database if missing.
func openLocal(ctx context.Context, tracer pgx.QueryTracer) (*pgxpool.Pool, error) {
	if err := ensureDatabase(ctx, fmt.Sprintf(localURL, "postgres")); err != nil {
		return nil, err
	}
	return Connect(ctx, fmt.Sprintf(localURL, localDatabase), tracer)
}

// ensureDatabase creates database "bunting" on the server adminURL names
// unless it exists.
func ensureDatabase(ctx context.Context, adminURL string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, localDatabase).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if _, err := conn.Exec(ctx, `CREATE DATABASE `+localDatabase); err != nil {
			return fmt.Errorf("create database %s: %w", localDatabase, err)
		}
	}
	return nil
}
