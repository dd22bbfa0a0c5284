package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/dbtest"
)

func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

func TestConfigReportsEveryProblemAtOnce(t *testing.T) {
	_, err := server.LoadConfig(env(map[string]string{
		"BUNTING_ADDR":           "8080",
		"BUNTING_BASE_URL":       "localhost",
		"BUNTING_SECRET_KEY":     "short",
		"BUNTING_ADMIN_EMAIL":    "not-an-email",
		"BUNTING_ADMIN_PASSWORD": "1234",
		"BUNTING_SHUTDOWN_GRACE": "soon",
		"BUNTING_LOG_LEVEL":      "loud",
	}))
	if err == nil {
		t.Fatal("invalid configuration accepted")
	}
	for _, name := range []string{"ADDR", "BASE_URL", "SECRET_KEY", "ADMIN_EMAIL", "ADMIN_PASSWORD", "SHUTDOWN_GRACE", "LOG_LEVEL"} {
		if !strings.Contains(err.Error(), "BUNTING_"+name) {
			t.Errorf("error does not mention BUNTING_%s:\n%v", name, err)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := server.LoadConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != ":8080" || cfg.BaseURL.String() != "http://localhost:8080" || cfg.AdminEmail != "admin@example.com" || cfg.ShutdownGrace != 15*time.Second {
		t.Fatalf("defaults = %+v", cfg)
	}
}

func TestUnknownCommand(t *testing.T) {
	if err := run(context.Background(), []string{"frobnicate"}, env(nil), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("got %v, want an unknown-command error", err)
	}
}

// serveForTest runs the real process on a fresh database and a free port
// until the test ends, and returns its base URL and environment.
func serveForTest(t *testing.T, extra map[string]string) (string, func(string) string) {
	t.Helper()
	dbURL, _ := dbtest.NewDatabase(t)
	if extra["BUNTING_DATABASE_URL"] != "" {
		dbURL = extra["BUNTING_DATABASE_URL"]
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	// The lowest bcrypt cost keeps start-up quick under the race detector.
	m := map[string]string{"BUNTING_ADDR": addr, "BUNTING_DATABASE_URL": dbURL, "BUNTING_LOG_LEVEL": "error", "BUNTING_PASSWORD_COST": "4"}
	for k, v := range extra {
		m[k] = v
	}
	vars := env(m)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- run(ctx, []string{"serve"}, vars, &bytes.Buffer{}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("serve returned %v after a clean stop", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("serve did not stop")
		}
	})

	base := "http://" + addr
	deadline := time.Now().Add(120 * time.Second)
	for {
		resp, err := http.Get(base + "/health/readiness")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, vars
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not become ready: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeAndMintToken mints a token with the token command and uses it
// against the running server.
func TestServeAndMintToken(t *testing.T) {
	base, vars := serveForTest(t, map[string]string{"BUNTING_ADMIN_EMAIL": "root@example.com", "BUNTING_ADMIN_PASSWORD": "root-password"})

	var out bytes.Buffer
	if err := run(context.Background(), []string{"token", "create", "--email", "root@example.com", "--name", "script"}, vars, &out); err != nil {
		t.Fatalf("token create: %v", err)
	}
	token := strings.TrimSpace(out.String())
	if !strings.HasPrefix(token, "api-") {
		t.Fatalf("token create printed %q, want an api- token", token)
	}
	req, _ := http.NewRequest("POST", base+"/api/v1/projects", strings.NewReader(`{"name":"Scripted","key":"scripted"}`))
	req.Header.Set("Authorization", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Success bool `json:"success"`
		Data    struct {
			Key string `json:"key"`
		} `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if !body.Success || body.Data.Key != "scripted" {
		t.Fatalf("create project with the minted token: %d %+v", resp.StatusCode, body)
	}
	if err := run(context.Background(), []string{"token", "create", "--email", "ghost@example.com", "--name", "x"}, vars, &out); err == nil {
		t.Fatal("token create for an unknown user succeeded")
	}
}

// TestReadmeCurlSession runs the README's curl session as written, against a
// server started the way `make run` starts one (only the port differs).
func TestReadmeCurlSession(t *testing.T) {
	base, _ := serveForTest(t, map[string]string{"BUNTING_ADMIN_EMAIL": "admin@example.com", "BUNTING_ADMIN_PASSWORD": "bunting-admin"})
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "# Sign in as the owner"
	start := bytes.Index(readme, []byte(marker))
	if start < 0 {
		t.Fatal("README has no curl session")
	}
	session := string(readme[start:])
	session = session[:strings.Index(session, "```")]
	script := strings.ReplaceAll(session, "http://localhost:8080", base)
	out, err := exec.Command("bash", "-euo", "pipefail", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("README session failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"success":true`) || !strings.Contains(string(out), `"key":"web-shop"`) {
		t.Fatalf("README session read back %s, want the web-shop project", out)
	}
}
