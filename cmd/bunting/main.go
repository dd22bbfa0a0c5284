// Command bunting is the Bunting feature-flag server.
//
//	bunting [serve]                                   serve the API (the default)
//	bunting migrate                                   apply database migrations and exit
//	bunting token create --email E --name N [--type Personal|Service]
//	                                                  print a new access token for a user
//	bunting export (--env ID | --project ID) [--format yaml|json] [--out FILE]
//	                                                  write flags and segments as a file
//	bunting import --env ID [--dry-run] FILE          apply such a file to an environment
//	bunting coderefs --env ID [--dir DIR]             send where flag keys are used in code
//	bunting relay                                     serve SDKs from an upstream Bunting, with no database
//
// export, import and coderefs call a running Bunting's API (BUNTING_URL, with the
// access token BUNTING_TOKEN) rather than the database.
//
// Configuration comes from BUNTING_ environment variables; see the README.
// The benchmark is its own command, cmd/bunting-bench.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/migrations"
	"github.com/bunting-flags/bunting/sql/store/core"
)

func main() { server.Main("bunting", run) }

const usage = `usage:
  bunting [serve]
  bunting migrate
  bunting token create --email EMAIL --name NAME [--type Personal|Service]
  bunting export (--env ENV_ID | --project PROJECT_ID) [--format yaml|json] [--out FILE]
  bunting import --env ENV_ID [--dry-run] [--comment TEXT] [--reason TEXT] [--reviewers ID,ID] FILE
  bunting coderefs --env ENV_ID [--dir DIR] [--repo NAME] [--branch BRANCH] [--commit SHA] [--dry-run]
  bunting relay     (BUNTING_RELAY_UPSTREAM, BUNTING_RELAY_KEY; see web/relay/README.md)`

// run is the whole program, with its environment passed in so tests can drive it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	command := "serve"
	if len(args) > 0 {
		command, args = args[0], args[1:]
	}
	switch command {
	case "serve", "migrate", "token":
	case "export":
		return exportCommand(ctx, args, getenv, stdout)
	case "import":
		return importCommand(ctx, args, getenv, stdout)
	case "coderefs":
		return codeRefsCommand(ctx, args, getenv, stdout)
	case "relay":
		return relayCommand(ctx, getenv)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	default:
		return fmt.Errorf("unknown command %q\n%s", command, usage)
	}
	cfg, err := server.LoadConfig(getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))

	switch command {
	case "token":
		return tokenCommand(ctx, cfg, log, args, stdout)
	case "migrate":
		pool, stopDB, err := server.OpenDatabase(ctx, cfg, log)
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
	return server.Serve(ctx, cfg, log)
}

// tokenCommand mints an access token for an existing user and prints it.
func tokenCommand(ctx context.Context, cfg server.Config, log *slog.Logger, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	email := fs.String("email", "", "email of the user the token acts for")
	name := fs.String("name", "", "name of the token")
	typ := fs.String("type", core.TokenPersonal, "Personal or Service")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *email == "" || *name == "" {
		return errors.New("token create needs --email and --name")
	}
	st, _, stopDB, err := server.OpenStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stopDB()
	t, err := st.Tokens().MintAccessToken(ctx, *email, *name, *typ)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, t.Token)
	return nil
}

// relayCommand runs `bunting relay`: the SDK endpoints at the edge, synced
// from an upstream Bunting, with no database.
func relayCommand(ctx context.Context, getenv func(string) string) error {
	cfg, rc, err := server.LoadRelayConfig(getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	return server.ServeRelay(ctx, cfg, rc, log)
}
