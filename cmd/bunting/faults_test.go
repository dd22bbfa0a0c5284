package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/dbtest"
)

// ownPostgres is a PostgreSQL server the test starts and stops itself.
type ownPostgres struct {
	t         *testing.T
	bin, data string
	port      int
	asUser    []string // runs commands as the postgres user when we are root
}

// startOwnPostgres initialises and starts a private PostgreSQL on a free port.
// PostgreSQL refuses to run as root, so as root it runs as the postgres user.
func startOwnPostgres(t *testing.T) *ownPostgres {
	t.Helper()
	root, _, ok := server.MachinePostgres()
	if !ok {
		if os.Getenv("CI") == "true" {
			t.Fatal("no PostgreSQL binaries under /usr/lib/postgresql to start a private server")
		}
		t.Skip("no PostgreSQL binaries under /usr/lib/postgresql")
	}
	dir, err := os.MkdirTemp("", "bunting-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	pg := &ownPostgres{t: t, bin: filepath.Join(root, "bin"), data: filepath.Join(dir, "data"), port: freePort(t)}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatal("running as root needs a postgres user to run PostgreSQL as:", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		os.Chmod(dir, 0o755)
		os.Chown(dir, uid, gid)
		pg.asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	pg.run("initdb", "-D", pg.data, "-U", "postgres", "--auth=trust", "--no-sync")
	pg.start()
	t.Cleanup(func() { pg.stop() })
	return pg
}

func (pg *ownPostgres) run(tool string, args ...string) {
	pg.t.Helper()
	argv := append(append([]string{}, pg.asUser...), append([]string{filepath.Join(pg.bin, tool)}, args...)...)
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		pg.t.Fatalf("%s: %v\n%s", tool, err, out)
	}
}

func (pg *ownPostgres) start() {
	pg.run("pg_ctl", "-D", pg.data, "-w", "-l", filepath.Join(pg.data, "log"), "-o",
		fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", pg.port, pg.data), "start")
}

func (pg *ownPostgres) stop() {
	argv := append(append([]string{}, pg.asUser...), filepath.Join(pg.bin, "pg_ctl"), "-D", pg.data, "-w", "-m", "fast", "stop")
	exec.Command(argv[0], argv[1:]...).Run() // already stopped is fine
}

func (pg *ownPostgres) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", pg.port, db)
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// signIn signs in over HTTP and returns the Authorization header value.
func signIn(t *testing.T, base, email, password string) string {
	t.Helper()
	resp, err := http.Post(base+"/api/v1/identity/login-by-email", "application/json",
		strings.NewReader(fmt.Sprintf(`{"email":%q,"password":%q}`, email, password)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data struct{ Token string } `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	if body.Data.Token == "" {
		t.Fatalf("sign-in answered %d", resp.StatusCode)
	}
	return "Bearer " + body.Data.Token
}

// get requests a path and returns the status and the first error code.
func get(t *testing.T, client *http.Client, base, path, auth string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", auth)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s did not answer: %v", path, err)
	}
	defer resp.Body.Close()
	var body struct {
		Errors []string `json:"errors"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	code := ""
	if len(body.Errors) > 0 {
		code = body.Errors[0]
	}
	return resp.StatusCode, code
}

// TestDatabaseOutage stops PostgreSQL under a running Bunting: requests
// answer 503 ServiceUnavailable promptly instead of hanging, liveness stays
// up, readiness reports the outage, and service comes back by itself when
// the database does, with no restart.
func TestDatabaseOutage(t *testing.T) {
	pg := startOwnPostgres(t)
	conn, err := pgx.Connect(context.Background(), pg.url("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(context.Background(), `CREATE DATABASE bunting`)
	conn.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	base, _ := serveForTest(t, map[string]string{"BUNTING_DATABASE_URL": pg.url("bunting"),
		"BUNTING_ADMIN_EMAIL": "root@example.com", "BUNTING_ADMIN_PASSWORD": "root-password"})
	auth := signIn(t, base, "root@example.com", "root-password")
	// A client that would give up long before a hanging server answered.
	client := &http.Client{Timeout: 15 * time.Second}
	if status, _ := get(t, client, base, "/api/v1/projects", auth); status != http.StatusOK {
		t.Fatalf("before the outage: %d", status)
	}

	pg.stop()
	for _, path := range []string{"/api/v1/projects", "/api/v1/user/profile"} {
		if status, code := get(t, client, base, path, auth); status != http.StatusServiceUnavailable || code != "ServiceUnavailable" {
			t.Fatalf("during the outage GET %s answered %d %s, want 503 ServiceUnavailable", path, status, code)
		}
	}
	if status, _ := get(t, client, base, "/health/liveness", ""); status != http.StatusOK {
		t.Fatalf("liveness during the outage: %d, want 200", status)
	}
	if status, _ := get(t, client, base, "/health/readiness", ""); status != http.StatusServiceUnavailable {
		t.Fatalf("readiness during the outage: %d, want 503", status)
	}

	pg.start()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, _ := get(t, client, base, "/api/v1/projects", auth)
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("service did not recover after the database came back: %d", status)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if status, _ := get(t, client, base, "/health/readiness", ""); status != http.StatusOK {
		t.Fatalf("readiness after the outage: %d", status)
	}
}

// TestShutdownDrains stops the server (what SIGTERM does, through the
// signal context of main) while a request is still sending its body: that
// request completes, new connections are refused, and run returns within the
// grace period.
func TestShutdownDrains(t *testing.T) {
	dbURL, _ := dbtest.NewDatabase(t)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	vars := env(map[string]string{"BUNTING_ADDR": addr, "BUNTING_DATABASE_URL": dbURL, "BUNTING_LOG_LEVEL": "error",
		"BUNTING_ADMIN_EMAIL": "root@example.com", "BUNTING_ADMIN_PASSWORD": "root-password", "BUNTING_SHUTDOWN_GRACE": "10s",
		"BUNTING_PASSWORD_COST": "4"})
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- run(ctx, []string{"serve"}, vars, &bytes.Buffer{}) }()
	base := "http://" + addr
	waitReady(t, base)
	auth := signIn(t, base, "root@example.com", "root-password")

	// A request whose body arrives slowly is in flight when the stop comes.
	// It expects 100 Continue, which the server sends when the handler starts
	// reading the body: the sign that the request is in its hands.
	body, writer := io.Pipe()
	reading := make(chan struct{})
	trace := &httptrace.ClientTrace{Got100Continue: func() { close(reading) }}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", base+"/api/v1/projects", body)
	req.Header.Set("Authorization", auth)
	req.Header.Set("Expect", "100-continue")
	answered := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- -1
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	select {
	case <-reading:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start reading the request")
	}
	writer.Write([]byte(`{"name":"In flight",`))
	stopped := time.Now()
	stop()
	// The listener closes as the stop begins; the drain lasts until the
	// request's body is complete.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the server still accepts connections while draining")
		}
	}
	writer.Write([]byte(`"key":"in-flight"}`))
	writer.Close()
	if status := <-answered; status != http.StatusOK {
		t.Fatalf("the in-flight request answered %d, want 200", status)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("run returned %v", err)
		}
		if waited := time.Since(stopped); waited > 10*time.Second {
			t.Fatalf("shutdown took %v, more than the 10s grace", waited)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return within the grace period")
	}
}

func waitReady(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(base + "/health/readiness"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("server did not become ready")
}
