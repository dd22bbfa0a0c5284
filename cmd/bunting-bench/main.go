// Command bunting-bench benchmarks the Bunting server against a bare floor:
// it seeds a fresh database, runs the server (server.Serve, as `bunting
// serve` runs it) as a child process, drives it over loopback and writes a
// table and a JSON report. See README.md beside this file.
//
//	bunting-bench [-short] [-flags 1k,10k,100k,1m] [-clients 32] [-duration 10s] [-h]
//
// Configuration comes from BUNTING_ environment variables, as for bunting.
package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/bunting-flags/bunting/cmd/internal/server"
)

func main() { server.Main("bunting-bench", run) }

// run is the whole program, with its environment passed in so tests can drive
// it: the benchmark, or with benchServerCommand first, the server it measures.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == benchRelayCommand {
		return benchRelay(ctx, getenv, args[1:])
	}
	cfg, err := server.LoadConfig(getenv)
	if err != nil {
		return err
	}
	if len(args) > 0 && args[0] == benchServerCommand {
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
		return benchServer(ctx, cfg, log, args[1:])
	}
	return benchCommand(ctx, cfg, args, getenv, stdout)
}
