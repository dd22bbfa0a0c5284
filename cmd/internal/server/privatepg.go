package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNoPostgres says the machine has no PostgreSQL binaries to run.
var ErrNoPostgres = errors.New("no PostgreSQL is installed (nothing under /usr/lib/postgresql/*/bin)")

// PrivatePostgres is a PostgreSQL server Bunting runs itself, from the
// machine's own binaries, in a directory of its own. It listens only on a
// Unix socket in that directory: no port to collide with, no need for
// /var/run/postgresql, and local "trust" sign-in reaches only the
// directory's owner (initdb makes it 0700) and root.
type PrivatePostgres struct {
	dir  string // the cluster, and its socket
	bin  string // where initdb and postgres are
	log  string // the server's own log, next to dir
	user string // who the server runs as
	cred *syscall.Credential

	proc   *exec.Cmd
	exited chan struct{}
}

// OpenPrivate opens database "bunting" on the private server in
// BUNTING_DATA_DIR/postgres, starting it (and creating it on the first run)
// unless another Bunting on this machine already runs it. It stops at exit
// only a server it started.
func OpenPrivate(ctx context.Context, cfg Config, log *slog.Logger) (*pgxpool.Pool, func(), error) {
	if cfg.DataDir == "" {
		return nil, nil, errors.New("no place for a private PostgreSQL: set HOME or BUNTING_DATA_DIR, or BUNTING_DATABASE_URL")
	}
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, nil, err
	}
	pg := NewPrivatePostgres(filepath.Join(dataDir, "postgres"))
	// A `bunting token create` while `make run` serves finds it running.
	if ensureDatabase(ctx, pg.URL("postgres")) == nil {
		log.Info("using the private PostgreSQL server already running", "dir", pg.dir)
		pool, err := Connect(ctx, pg.URL(localDatabase), cfg.Tracer)
		if err != nil {
			return nil, nil, err
		}
		return pool, pool.Close, nil
	}
	created, err := pg.Prepare()
	if errors.Is(err, ErrNoPostgres) {
		return nil, nil, fmt.Errorf("no PostgreSQL answers at %s, and %w: install it (`sudo apt-get install -y postgresql`, "+
			"which `make run` does by itself as root) and run again, or set BUNTING_DATABASE_URL", LocalServer, ErrNoPostgres)
	}
	if err != nil {
		return nil, nil, err
	}
	if created {
		log.Info("created a private PostgreSQL cluster", "dir", pg.dir, "user", pg.user)
	}
	if err := pg.Start(ctx); err != nil {
		return nil, nil, err
	}
	log.Info("started a private PostgreSQL server, listening only on a Unix socket in its directory; it stops when Bunting does",
		"dir", pg.dir, "user", pg.user, "binaries", pg.bin, "log", pg.log)
	fail := func(err error) (*pgxpool.Pool, func(), error) {
		pg.Stop()
		return nil, nil, err
	}
	if err := ensureDatabase(ctx, pg.URL("postgres")); err != nil {
		return fail(err)
	}
	pool, err := Connect(ctx, pg.URL(localDatabase), cfg.Tracer)
	if err != nil {
		return fail(err)
	}
	return pool, func() {
		pool.Close()
		if err := pg.Stop(); err != nil {
			log.Error("stop the private PostgreSQL server", "err", err)
		}
	}, nil
}

// NewPrivatePostgres is the private server whose cluster is (or will be)
// in dir; Prepare and Start make it run.
func NewPrivatePostgres(dir string) *PrivatePostgres { return &PrivatePostgres{dir: dir} }

// URL is a connection URL for database db over the server's socket.
func (pg *PrivatePostgres) URL(db string) string {
	q := url.Values{"host": {pg.dir}, "sslmode": {"disable"}, "connect_timeout": {"3"}}
	return (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + db, RawQuery: q.Encode()}).String()
}

// Prepare finds the binaries and the user to run them as, and runs initdb
// when the cluster does not exist yet; created says it did.
func (pg *PrivatePostgres) Prepare() (created bool, err error) {
	version, _ := os.ReadFile(filepath.Join(pg.dir, "PG_VERSION"))
	existing := strings.TrimSpace(string(version))
	bin, ok := MachinePostgres(existing)
	switch {
	case !ok && existing != "":
		return false, fmt.Errorf("the private PostgreSQL in %s is version %s, whose binaries are not installed "+
			"(apt-get install postgresql-%s, or move the directory away to start afresh)", pg.dir, existing, existing)
	case !ok:
		return false, ErrNoPostgres
	}
	pg.bin = bin
	pg.log = filepath.Join(filepath.Dir(pg.dir), "postgres.log")
	pg.user = "the current user"
	parentMode := os.FileMode(0o700)
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		u, err := ServerUser()
		if err != nil {
			return false, err
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		pg.user, pg.cred = u.Username, &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
		parentMode = 0o755 // the server's user must reach its directory
	}
	if existing != "" {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(pg.dir), parentMode); err != nil {
		return false, err
	}
	if err := os.Mkdir(pg.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return false, err
	}
	if pg.cred != nil {
		if err := os.Chown(pg.dir, int(pg.cred.Uid), int(pg.cred.Gid)); err != nil {
			return false, err
		}
	}
	// Sign-in over the socket only; C collation behaves the same on every machine.
	cmd := pg.command("initdb", "-D", pg.dir, "-U", "postgres", "--auth-local=trust", "--auth-host=reject",
		"--encoding=UTF8", "--no-locale")
	if out, err := cmd.CombinedOutput(); err != nil {
		return false, fmt.Errorf("initdb in %s as %s: %v\n%s", pg.dir, pg.user, err, out)
	}
	return true, nil
}

// command runs one of the server's binaries as the server's user.
func (pg *PrivatePostgres) command(tool string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(pg.bin, tool), args...)
	cmd.Dir = filepath.Dir(pg.dir) // a working directory the server's user can read
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: pg.cred}
	return cmd
}

// Start runs the server as a child and waits until it accepts connections.
func (pg *PrivatePostgres) Start(ctx context.Context) error {
	pg.clearStalePid()
	logFile, err := os.OpenFile(pg.log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := pg.command("postgres", "-D", pg.dir, "-k", pg.dir, "-c", "listen_addresses=")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group keeps a terminal's Ctrl-C from stopping it
	// before Bunting has drained; if Bunting dies, it shuts down (SIGINT is
	// PostgreSQL's fast shutdown).
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGINT
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start PostgreSQL: %w", err)
	}
	pg.proc, pg.exited = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(pg.exited) }()

	// Recovery after a crash can take a while; a failure shows at once.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		conn, err := pgx.Connect(ctx, pg.URL("postgres"))
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case <-pg.exited:
			pg.proc = nil
			return fmt.Errorf("the private PostgreSQL server in %s stopped at start; the end of %s:\n%s", pg.dir, pg.log, tail(pg.log))
		case <-ctx.Done():
			pg.Stop()
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			pg.Stop()
			return fmt.Errorf("the private PostgreSQL server in %s did not accept connections within 2 minutes: %w", pg.dir, err)
		}
	}
}

// Stop shuts the server down (fast: open transactions roll back) and waits for it.
func (pg *PrivatePostgres) Stop() error {
	if pg.proc == nil {
		return nil
	}
	defer func() { pg.proc = nil }()
	pg.proc.Process.Signal(syscall.SIGINT)
	select {
	case <-pg.exited:
		return nil
	case <-time.After(time.Minute):
		pg.proc.Process.Kill()
		<-pg.exited
		return errors.New("PostgreSQL did not shut down within a minute; killed it")
	}
}

// clearStalePid removes a postmaster.pid whose server is gone. PostgreSQL
// removes its own stale file only while no process has that id; after a
// reboot or a container restart an unrelated process often does, and the
// server would refuse to start. A live server of this cluster has its
// working directory there, and is left alone.
func (pg *PrivatePostgres) clearStalePid() {
	pidFile := filepath.Join(pg.dir, "postmaster.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if pid > 0 {
		cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		dir, _ := filepath.EvalSymlinks(pg.dir)
		if err == nil && cwd == dir {
			return
		}
	}
	os.Remove(pidFile)
}

// ServerUser is who runs the private server when Bunting runs as root: the
// postgres user that Debian's and Ubuntu's packages create, or else a
// system user bunting, created for it.
func ServerUser() (*user.User, error) {
	for _, name := range []string{"postgres", "bunting"} {
		if u, err := user.Lookup(name); err == nil {
			return u, nil
		}
	}
	out, err := exec.Command("useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
		"--shell", "/usr/sbin/nologin", "bunting").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL refuses to run as root, and creating a user bunting to run it failed: %v\n%s", err, out)
	}
	return user.Lookup("bunting")
}

// MachinePostgres finds the binaries of PostgreSQL major version want, or
// of the newest when want is "", where Debian and Ubuntu install them.
func MachinePostgres(want string) (string, bool) {
	found, newest := "", -1
	paths, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	for _, p := range paths {
		bin := filepath.Dir(p)
		version := filepath.Base(filepath.Dir(bin))
		n, err := strconv.Atoi(version)
		if err != nil || (want != "" && version != want) {
			continue
		}
		if _, err := os.Stat(filepath.Join(bin, "initdb")); err == nil && n > newest {
			found, newest = bin, n
		}
	}
	return found, found != ""
}

// tail is the end of a log file, for an error message.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
