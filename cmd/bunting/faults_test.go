package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/web/sdk"
)

// startOwnPostgres starts a private PostgreSQL, the one Bunting runs when
// no server answers, that the test stops and restarts itself.
func startOwnPostgres(t *testing.T) *server.PrivatePostgres {
	t.Helper()
	// Under the shared temporary directory: as root the server runs as
	// another user, who must reach it.
	dir, err := os.MkdirTemp("", "bunting-pg-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	pg := server.NewPrivatePostgres(filepath.Join(dir, "postgres"))
	if _, err := pg.Prepare(); errors.Is(err, server.ErrNoPostgres) {
		skipUnlessCI(t, err.Error())
	} else if err != nil {
		t.Fatal(err)
	}
	if err := pg.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Stop() })
	return pg
}

// skipUnlessCI skips a test that cannot run here, but fails it under
// CI=true, where everything must run.
func skipUnlessCI(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
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
	conn, err := pgx.Connect(context.Background(), pg.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(context.Background(), `CREATE DATABASE bunting`)
	conn.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	base, _ := serveForTest(t, map[string]string{"BUNTING_DATABASE_URL": pg.URL("bunting"),
		"BUNTING_ADMIN_EMAIL": "root@example.com", "BUNTING_ADMIN_PASSWORD": "root-password"})
	auth := signIn(t, base, "root@example.com", "root-password")
	// A client that would give up long before a hanging server answered.
	client := &http.Client{Timeout: 15 * time.Second}
	if status, _ := get(t, client, base, "/api/v1/projects", auth); status != http.StatusOK {
		t.Fatalf("before the outage: %d", status)
	}

	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
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

	if err := pg.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
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
// request completes, new connections are refused, and run returns nil,
// which it does only when everything ended within the grace period (past
// it, the stop is an error).
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

	// An SDK streams; at the stop it is told to go away (1001), so it
	// reconnects at once instead of seeing a dropped connection (1006).
	stream := openStream(t, base, auth)
	closed := make(chan int, 1)
	go func() {
		for {
			if _, _, err := stream.ReadMessage(); err != nil {
				code := -1
				if ce, ok := errors.AsType[*websocket.CloseError](err); ok {
					code = ce.Code
				}
				closed <- code
				return
			}
		}
	}()

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
	select {
	case code := <-closed:
		if code != websocket.CloseGoingAway {
			t.Errorf("the SDK stream closed with %d, want 1001 (going away)", code)
		}
	case <-time.After(5 * time.Second):
		t.Error("the SDK stream was not closed at the stop")
	}
	writer.Write([]byte(`"key":"in-flight"}`))
	writer.Close()
	if status := <-answered; status != http.StatusOK {
		t.Fatalf("the in-flight request answered %d, want 200", status)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("run returned %v, want nil: everything ended within the grace period", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("run did not return, though the grace period has long passed")
	}
}

// openStream creates a project and opens a server SDK's stream to its
// first environment, returning once the first data-sync has arrived.
func openStream(t *testing.T, base, auth string) *websocket.Conn {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/api/v1/projects", strings.NewReader(`{"name":"Streamed","key":"streamed"}`))
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct {
		Data core.Project `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || len(p.Data.Environments) == 0 {
		t.Fatalf("creating a project: %d %v", resp.StatusCode, err)
	}
	var secret string
	for _, s := range p.Data.Environments[0].Secrets {
		if s.Type == core.SecretServer {
			secret = s.Value
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(base, "http") + "/streaming?type=server&token=" + sdk.Token(secret, time.Now(), 10)
	ws, _, err := websocket.DefaultDialer.DialContext(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	deadline, _ := ctx.Deadline()
	ws.SetWriteDeadline(deadline)
	if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"messageType":"data-sync","data":{"timestamp":0}}`)); err != nil {
		t.Fatal(err)
	}
	ws.SetReadDeadline(deadline)
	if _, _, err := ws.ReadMessage(); err != nil {
		t.Fatalf("no data-sync: %v", err)
	}
	ws.SetReadDeadline(time.Time{})
	return ws
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
