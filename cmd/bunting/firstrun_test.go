package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bunting-flags/bunting/cmd/internal/server"
)

// inNamespace marks the run of TestFirstRun inside its network namespace.
const inNamespace = "BUNTING_TEST_IN_NETNS"

// TestFirstRun proves `make run` on a machine where nothing answers at
// 127.0.0.1:5432 (here, a network namespace of its own, with only loopback):
// Bunting started with nothing but `make run`'s settings creates and starts a
// private PostgreSQL from the machine's binaries, serves, signs the owner in,
// stops that server when it stops, and on a second start uses the same data
// despite a stale postmaster.pid naming a live process that is not
// PostgreSQL. It does so as root (the server runs as the postgres user) and
// as an unprivileged user (with the default data directory under HOME).
func TestFirstRun(t *testing.T) {
	if _, ok := server.MachinePostgres(""); !ok {
		skipUnlessCI(t, server.ErrNoPostgres.Error())
	}
	if os.Getenv(inNamespace) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFirstRun$", "-test.v", "-test.timeout=2m")
		cmd.Env = append(os.Environ(), inNamespace+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			skipUnlessCI(t, "cannot create a network namespace (it takes root): "+err.Error())
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("in a network namespace: %v\n%s", err, out.String())
		}
		t.Log(out.String())
		return
	}

	loopbackUp(t)
	if c, err := net.DialTimeout("tcp", server.LocalServer, time.Second); err == nil {
		c.Close()
		t.Fatalf("%s answers in the new network namespace", server.LocalServer)
	}
	exe := executableForAnyone(t)
	makeRun := []string{"PATH=" + os.Getenv("PATH"), "BUNTING_ADMIN_EMAIL=admin@example.com", "BUNTING_ADMIN_PASSWORD=bunting-admin",
		"BUNTING_PASSWORD_COST=4"} // the lowest cost keeps it quick under the race detector

	t.Run("root", func(t *testing.T) {
		dataDir := filepath.Join(reachableTempDir(t), "data")
		u, err := server.ServerUser()
		if err != nil {
			t.Fatal(err)
		}
		firstRun(t, exe, nil, credential(t, u), append(makeRun, "HOME=/root", "BUNTING_DATA_DIR="+dataDir), filepath.Join(dataDir, "postgres"))
	})
	t.Run("unprivileged", func(t *testing.T) {
		u, err := user.Lookup("nobody")
		if err != nil {
			t.Fatal(err)
		}
		cred := credential(t, u)
		home := reachableTempDir(t)
		os.Chown(home, int(cred.Uid), int(cred.Gid))
		firstRun(t, exe, cred, cred, append(makeRun, "HOME="+home), filepath.Join(home, ".local/share/bunting/postgres"))
	})
}

// firstRun serves twice with env as cred's user (root when nil) and checks
// each run; cluster is where the private server must live, run by
// serverCred's user.
func firstRun(t *testing.T, exe string, cred, serverCred *syscall.Credential, env []string, cluster string) {
	log := serveUntilSignedIn(t, exe, cred, env)
	for _, want := range []string{"no usable PostgreSQL at 127.0.0.1:5432", "created a private PostgreSQL cluster",
		"started a private PostgreSQL server", "dir=" + cluster, "created the default workspace"} {
		if !strings.Contains(log, want) {
			t.Errorf("the first start's log does not say %q:\n%s", want, log)
		}
	}
	if st, err := os.Stat(cluster); err != nil || st.Sys().(*syscall.Stat_t).Uid != serverCred.Uid {
		t.Fatalf("the cluster does not belong to the server's user %d (%v)", serverCred.Uid, err)
	}
	pidFile := filepath.Join(cluster, "postmaster.pid")
	if _, err := os.Stat(pidFile); err == nil {
		t.Fatal("PostgreSQL still runs after Bunting stopped")
	}

	// As after a crash and a reboot: a stale postmaster.pid whose process
	// id now belongs to an unrelated live process of the server's user,
	// which PostgreSQL alone would take for a running server.
	squatter := exec.Command("sleep", "120")
	squatter.SysProcAttr = &syscall.SysProcAttr{Credential: serverCred}
	if err := squatter.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { squatter.Process.Kill(); squatter.Wait() }()
	if err := os.WriteFile(pidFile, fmt.Appendf(nil, "%d\n%s\n", squatter.Process.Pid, cluster), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chown(pidFile, int(serverCred.Uid), int(serverCred.Gid))
	log = serveUntilSignedIn(t, exe, cred, env)
	if strings.Contains(log, "created") {
		t.Errorf("the second start created something anew:\n%s", log)
	}
	if _, err := os.Stat(pidFile); err == nil {
		t.Fatal("PostgreSQL still runs after Bunting stopped")
	}
}

// serveUntilSignedIn runs `bunting serve` on :8080 until it is ready and
// the owner signs in, stops it with SIGTERM, and returns its log.
func serveUntilSignedIn(t *testing.T, exe string, cred *syscall.Credential, env []string) string {
	t.Helper()
	cmd := exec.Command(exe, "serve")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	running := true
	defer func() {
		if running {
			cmd.Process.Kill()
			<-exited
		}
	}()

	base := "http://127.0.0.1:8080"
	for deadline := time.Now().Add(60 * time.Second); ; {
		if resp, err := http.Get(base + "/health/readiness"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			running = false
			t.Fatalf("bunting serve exited (%v) before it was ready:\n%s", err, log.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			running = false
			t.Fatalf("not ready within a minute:\n%s", log.String())
		}
	}
	signIn(t, base, "admin@example.com", "bunting-admin")

	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		running = false
		if err != nil {
			t.Fatalf("bunting serve exited with %v after SIGTERM:\n%s", err, log.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("bunting serve did not stop within 30 s of SIGTERM")
	}
	return log.String()
}

func credential(t *testing.T, u *user.User) *syscall.Credential {
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		t.Fatalf("user %s has ids %s:%s", u.Username, u.Uid, u.Gid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
}

// loopbackUp brings up lo, which a new network namespace has down.
func loopbackUp(t *testing.T) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		t.Fatal(err)
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK | unix.IFF_RUNNING)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		t.Fatal("bring up lo:", err)
	}
}

// reachableTempDir is a fresh directory every user can reach (t.TempDir's
// parents are private to root).
func reachableTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "bunting-firstrun-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// executableForAnyone copies this test binary where any user can run it: go test
// builds it in a directory private to root.
func executableForAnyone(t *testing.T) string {
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	exe := filepath.Join(reachableTempDir(t), "bunting")
	dst, err := os.OpenFile(exe, os.O_WRONLY|os.O_CREATE, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestPrivateServerIsShared: a second Bunting on the machine (`bunting
// token create` while `make run` serves) uses the private server the first
// started, and leaves it running when it ends; the first stops it.
func TestPrivateServerIsShared(t *testing.T) {
	if _, ok := server.MachinePostgres(""); !ok {
		skipUnlessCI(t, server.ErrNoPostgres.Error())
	}
	ctx := context.Background()
	cfg := server.Config{DataDir: reachableTempDir(t)}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	first, stopFirst, err := server.OpenPrivate(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer stopFirst()
	second, stopSecond, err := server.OpenPrivate(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	stopSecond()
	if err := first.Ping(ctx); err != nil {
		t.Fatalf("the server stopped when the Bunting that found it running ended: %v", err)
	}
	if !strings.Contains(logs.String(), "using the private PostgreSQL server already running") {
		t.Errorf("the second start did not say it shares the server:\n%s", logs.String())
	}
	stopFirst()
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "postgres", "postmaster.pid")); err == nil {
		t.Fatal("the server still runs after the Bunting that started it ended")
	}
}
