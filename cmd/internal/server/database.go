package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	embeddedpostgres "github.com/fergusstrange/embedded-postgres"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/store"
)

// localServer is where a PostgreSQL is looked for when no URL is configured.
const (
	localServer    = "postgres://postgres@127.0.0.1:5432/%s?sslmode=disable&connect_timeout=3"
	localDatabase  = "bunting"
	embeddedPort   = 5433
	embeddedConfig = "postgres://postgres:postgres@127.0.0.1:%d/bunting?sslmode=disable"
)

// OpenDatabase returns a pool for BUNTING_DATABASE_URL; without one, for
// database "bunting" on the local server (created when missing); with nothing
// answering there, for an embedded PostgreSQL under the data directory. The
// returned stop function shuts down what OpenDatabase started.
func OpenDatabase(ctx context.Context, cfg Config, log *slog.Logger) (*pgxpool.Pool, func(), error) {
	if cfg.DatabaseURL != "" {
		pool, err := Connect(ctx, cfg.DatabaseURL, cfg.Tracer)
		return pool, func() { pool.Close() }, err
	}
	if pool, err := openLocal(ctx, cfg.Tracer); err == nil {
		log.Info("using the local PostgreSQL server", "database", localDatabase, "addr", "127.0.0.1:5432")
		return pool, func() { pool.Close() }, nil
	} else {
		log.Info("no local PostgreSQL server answers; starting an embedded one", "reason", err)
	}
	return openEmbedded(ctx, cfg, log)
}

// Connect opens a pool on url, configured as the server's (with tracer,
// when not nil, seeing every statement), and checks that it answers.
func Connect(ctx context.Context, url string, tracer pgx.QueryTracer) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	store.ConfigurePool(cfg)
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
	conn, err := pgx.Connect(ctx, fmt.Sprintf(localServer, "postgres"))
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, localDatabase).Scan(&exists); err != nil {
		return nil, err
	}
	if !exists {
		if _, err := conn.Exec(ctx, `CREATE DATABASE `+localDatabase); err != nil {
			return nil, fmt.Errorf("create database %s: %w", localDatabase, err)
		}
	}
	return Connect(ctx, fmt.Sprintf(localServer, localDatabase), tracer)
}

// openEmbedded starts PostgreSQL with the machine's own binaries when it has
// them, so it works offline; data lives under the data directory.
func openEmbedded(ctx context.Context, cfg Config, log *slog.Logger) (*pgxpool.Pool, func(), error) {
	if os.Geteuid() == 0 {
		return nil, nil, errors.New("no PostgreSQL server answers at 127.0.0.1:5432, and an embedded one " +
			"cannot start because PostgreSQL refuses to run as root: run Bunting as another user, or point it " +
			"at a server with BUNTING_DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/bunting")
	}
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, nil, err
	}
	pgConfig := embeddedpostgres.DefaultConfig().
		Port(embeddedPort).
		Database(localDatabase).
		DataPath(filepath.Join(dataDir, "postgres")).
		RuntimePath(filepath.Join(dataDir, "postgres-runtime")).
		Logger(nil)
	if bin, version, ok := MachinePostgres(); ok {
		pgConfig = pgConfig.BinariesPath(bin).Version(version)
		log.Info("embedded PostgreSQL uses the machine's binaries", "path", bin)
	}
	pg := embeddedpostgres.NewDatabase(pgConfig)
	if err := pg.Start(); err != nil {
		return nil, nil, fmt.Errorf("start embedded PostgreSQL: %w (or set BUNTING_DATABASE_URL)", err)
	}
	pool, err := Connect(ctx, fmt.Sprintf(embeddedConfig, embeddedPort), cfg.Tracer)
	if err != nil {
		pg.Stop()
		return nil, nil, err
	}
	log.Info("embedded PostgreSQL started", "data", filepath.Join(dataDir, "postgres"), "port", embeddedPort)
	return pool, func() {
		pool.Close()
		if err := pg.Stop(); err != nil {
			log.Error("stop embedded PostgreSQL", "err", err)
		}
	}, nil
}

// MachinePostgres finds the newest PostgreSQL installed under /usr/lib/postgresql
// (Debian and Ubuntu's layout) that embedded-postgres knows a version for.
func MachinePostgres() (string, embeddedpostgres.PostgresVersion, bool) {
	versions := map[string]embeddedpostgres.PostgresVersion{
		"14": embeddedpostgres.V14, "15": embeddedpostgres.V15, "16": embeddedpostgres.V16, "17": embeddedpostgres.V17,
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, pgctl := range dirs {
		root := filepath.Dir(filepath.Dir(pgctl))
		if v, ok := versions[strings.TrimPrefix(root, "/usr/lib/postgresql/")]; ok {
			return root, v, true
		}
	}
	return "", "", false
}
