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
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/cmd/internal/server"
)

// benchServerCommand is the hidden command `bunting-bench` runs its server
// with, as a child process so the server's memory is its own: the server as
// `bunting serve` runs it (server.Serve), with a query counter on its pool,
// plus the floor handlers and the counter's statistics on a second address.
const benchServerCommand = "bench-server"

// benchServer runs the server and the floor until ctx ends or standard input
// closes (the benchmark that started it has gone).
func benchServer(ctx context.Context, cfg server.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet(benchServerCommand, flag.ContinueOnError)
	floorAddr := fs.String("floor", "", "address of the floor handlers and statistics")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *floorAddr == "" || cfg.DatabaseURL == "" {
		return errors.New(benchServerCommand + " needs --floor and BUNTING_DATABASE_URL")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()

	counter := newQueryCounter()
	cfg.Tracer = counter
	pool, err := server.Connect(ctx, cfg.DatabaseURL, counter)
	if err != nil {
		return err
	}
	defer pool.Close()
	floor := newFloor(pool)
	floor.e.GET("/_bench/stats", func(c echo.Context) error { return c.JSON(http.StatusOK, counter.snapshot()) })
	registerStreamFloor(floor.e)
	srv := &http.Server{Addr: *floorAddr, Handler: floor.e, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
			log.Error("floor server", "err", err)
			cancel()
		}
	}()
	defer srv.Close()
	return server.Serve(ctx, cfg, log)
}

// queryCounter counts what a pool sends to PostgreSQL: statements (BEGIN and
// COMMIT included, each statement of a batch) and round trips (a batch is
// one), with statements by name: sqlc's query name ("-- name: GetFlag"),
// the floor's ("floor.GetFlag"), or the statement's first words.
type queryCounter struct {
	mu    sync.Mutex
	stats queryStats
}

// queryStats is what queryCounter has counted so far.
type queryStats struct {
	Statements int64            `json:"statements"`
	RoundTrips int64            `json:"roundTrips"`
	ByName     map[string]int64 `json:"byName"`
}

func newQueryCounter() *queryCounter {
	return &queryCounter{stats: queryStats{ByName: map[string]int64{}}}
}

func (q *queryCounter) count(sql string, roundTrips int64) {
	name := server.StatementName(sql)
	q.mu.Lock()
	q.stats.Statements++
	q.stats.RoundTrips += roundTrips
	q.stats.ByName[name]++
	q.mu.Unlock()
}

func (q *queryCounter) snapshot() queryStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.stats
	s.ByName = make(map[string]int64, len(q.stats.ByName))
	for k, v := range q.stats.ByName {
		s.ByName[k] = v
	}
	return s
}

func (q *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	q.count(d.SQL, 1)
	return ctx
}

func (q *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (q *queryCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	q.mu.Lock()
	q.stats.RoundTrips++
	q.mu.Unlock()
	return ctx
}

func (q *queryCounter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	q.count(d.SQL, 0)
}

func (q *queryCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (q *queryCounter) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceCopyFromStartData) context.Context {
	q.count(fmt.Sprintf("COPY %s", d.TableName.Sanitize()), 1)
	return ctx
}

func (q *queryCounter) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}
