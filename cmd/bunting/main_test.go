package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/web/httpx"
)

func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

func TestConfigReportsEveryProblemAtOnce(t *testing.T) {
	_, err := server.LoadConfig(env(map[string]string{
		"BUNTING_ADDR":                       "8080",
		"BUNTING_BASE_URL":                   "localhost",
		"BUNTING_SECRET_KEY":                 "short",
		"BUNTING_ADMIN_EMAIL":                "not-an-email",
		"BUNTING_ADMIN_PASSWORD":             "1234",
		"BUNTING_SHUTDOWN_GRACE":             "soon",
		"BUNTING_LOG_LEVEL":                  "loud",
		"BUNTING_SSO_ALLOW_PRIVATE_NETWORKS": "sometimes",
		"BUNTING_CORS_ORIGINS":               "*",
		"BUNTING_SDK_CONNECTIONS":            "-1",
		"BUNTING_SDK_RATE_PER_SECRET":        "fast",
		"BUNTING_MAX_END_USERS_PER_ENV":      "0",
		"BUNTING_BODY_BUDGET":                "1MiB",
		"BUNTING_BODY_MIN_RATE":              "10",
	}))
	if err == nil {
		t.Fatal("invalid configuration accepted")
	}
	for _, name := range []string{"ADDR", "BASE_URL", "SECRET_KEY", "ADMIN_EMAIL", "ADMIN_PASSWORD", "SHUTDOWN_GRACE", "LOG_LEVEL",
		"SSO_ALLOW_PRIVATE_NETWORKS", "CORS_ORIGINS", "SDK_CONNECTIONS", "SDK_RATE_PER_SECRET", "MAX_END_USERS_PER_ENV", "BODY_BUDGET", "BODY_MIN_RATE"} {
		if !strings.Contains(err.Error(), "BUNTING_"+name) {
			t.Errorf("error does not mention BUNTING_%s:\n%v", name, err)
		}
	}
}

// TestConfigWebhookPrivateNetworks: webhooks have their own private-network
// setting, off by default and untouched by single sign-on's.
func TestConfigWebhookPrivateNetworks(t *testing.T) {
	for _, c := range []struct {
		vars     map[string]string
		sso, hks bool
	}{
		{nil, false, false},
		{map[string]string{"BUNTING_SSO_ALLOW_PRIVATE_NETWORKS": "true"}, true, false},
		{map[string]string{"BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true"}, false, true},
	} {
		cfg, err := server.LoadConfig(env(c.vars))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.SSOAllowPrivateNetworks != c.sso || cfg.WebhookAllowPrivateNetworks != c.hks {
			t.Errorf("%v: single sign-on %v, webhooks %v; want %v, %v", c.vars, cfg.SSOAllowPrivateNetworks,
				cfg.WebhookAllowPrivateNetworks, c.sso, c.hks)
		}
	}
	_, err := server.LoadConfig(env(map[string]string{"BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS": "sometimes"}))
	if err == nil || !strings.Contains(err.Error(), "BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS") {
		t.Errorf("an invalid value: %v", err)
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := server.LoadConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != ":8080" || cfg.BaseURL.String() != "http://localhost:8080" || cfg.AdminEmail != "admin@example.com" || cfg.ShutdownGrace != 15*time.Second ||
		cfg.SSOAllowPrivateNetworks || cfg.MaxEndUsersPerEnv != core.DefaultMaxEndUsersPerEnv || cfg.BodyBudget != httpx.DefaultBodyBudget {
		t.Fatalf("defaults = %+v", cfg)
	}
}

// TestConfigBodyBudget reads the body budget as bytes or in binary units,
// and refuses one too small to decode a body of the largest size.
func TestConfigBodyBudget(t *testing.T) {
	for value, want := range map[string]int64{"128MiB": 128 << 20, "1GiB": 1 << 30, "20000KiB": 20000 << 10, "33554432": 32 << 20, " 64MiB ": 64 << 20} {
		cfg, err := server.LoadConfig(env(map[string]string{"BUNTING_BODY_BUDGET": value}))
		if err != nil || cfg.BodyBudget != want {
			t.Errorf("BUNTING_BODY_BUDGET=%q: got %d, %v; want %d", value, cfg.BodyBudget, err, want)
		}
	}
	for _, bad := range []string{"8MiB", "64MB", "-1", "lots", "0", "MiB", "9999999999GiB"} {
		if _, err := server.LoadConfig(env(map[string]string{"BUNTING_BODY_BUDGET": bad})); err == nil || !strings.Contains(err.Error(), "BUNTING_BODY_BUDGET") {
			t.Errorf("BUNTING_BODY_BUDGET=%q: got %v, want it refused", bad, err)
		}
	}
}

// TestConfigBodyMinRate: the rate bodies must arrive at is a size a second,
// 16 KiB by default, from 1 KiB to 1 MiB.
func TestConfigBodyMinRate(t *testing.T) {
	for value, want := range map[string]int64{"": 16 << 10, "64KiB": 64 << 10, "1KiB": 1 << 10, "1MiB": 1 << 20, "4096": 4096} {
		vars := map[string]string{}
		if value != "" {
			vars["BUNTING_BODY_MIN_RATE"] = value
		}
		cfg, err := server.LoadConfig(env(vars))
		if err != nil || cfg.BodyRate.Min != want {
			t.Errorf("BUNTING_BODY_MIN_RATE=%q: got %d, %v; want %d", value, cfg.BodyRate.Min, err, want)
		}
	}
	for _, bad := range []string{"512", "2MiB", "-1", "fast", "16KB"} {
		if _, err := server.LoadConfig(env(map[string]string{"BUNTING_BODY_MIN_RATE": bad})); err == nil || !strings.Contains(err.Error(), "BUNTING_BODY_MIN_RATE") {
			t.Errorf("BUNTING_BODY_MIN_RATE=%q: got %v, want it refused", bad, err)
		}
	}
}

// TestDefaultDataDir: root keeps the private PostgreSQL where the user that
// runs it can reach it; anyone else in their XDG data directory.
func TestDefaultDataDir(t *testing.T) {
	for _, c := range []struct {
		env        map[string]string
		user, root string
	}{
		{map[string]string{"HOME": "/home/ann"}, "/home/ann/.local/share/bunting", "/var/lib/bunting"},
		{map[string]string{"HOME": "/home/ann", "XDG_DATA_HOME": "/data/ann"}, "/data/ann/bunting", "/var/lib/bunting"},
		{map[string]string{"HOME": "/home/ann", "BUNTING_DATA_DIR": "/srv/b"}, "/srv/b", "/srv/b"},
		{nil, "", "/var/lib/bunting"},
	} {
		cfg, err := server.LoadConfig(env(c.env))
		if err != nil {
			t.Fatal(err)
		}
		want := c.user
		if os.Geteuid() == 0 {
			want = c.root
		}
		if cfg.DataDir != want {
			t.Errorf("with %v the data directory is %q, want %q", c.env, cfg.DataDir, want)
		}
	}
}

// TestConfigCORSOrigins accepts only exact origins: a wildcard, a path or a
// bare host would share credentials more widely than meant.
func TestConfigCORSOrigins(t *testing.T) {
	cfg, err := server.LoadConfig(env(map[string]string{"BUNTING_CORS_ORIGINS": " https://app.example.com, http://localhost:4200 ,"}))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"https://app.example.com", "http://localhost:4200"}; !slices.Equal(cfg.CORSOrigins, want) {
		t.Fatalf("origins %q, want %q", cfg.CORSOrigins, want)
	}
	if cfg, _ := server.LoadConfig(env(nil)); cfg.CORSOrigins != nil {
		t.Fatalf("default origins %q, want none", cfg.CORSOrigins)
	}
	for _, bad := range []string{"*", "https://*.example.com", "https://app.example.com/", "https://app.example.com/path", "app.example.com", "ftp://app.example.com", "https://user@app.example.com"} {
		if _, err := server.LoadConfig(env(map[string]string{"BUNTING_CORS_ORIGINS": "https://ok.example.com," + bad})); err == nil || !strings.Contains(err.Error(), "BUNTING_CORS_ORIGINS") {
			t.Errorf("origin %q: got %v, want it refused", bad, err)
		}
	}
}

// TestStreamingCapStaysBelowTheFileLimit: the streaming connections may
// take three quarters of the open-file limit at most, so the API, the
// pages and the database keep descriptors when the cap is reached.
func TestStreamingCapStaysBelowTheFileLimit(t *testing.T) {
	cfg, err := server.LoadConfig(env(map[string]string{"BUNTING_SDK_CONNECTIONS_PER_ADDRESS": "50", "BUNTING_SDK_RATE_PER_SECRET": "300"}))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	for files, want := range map[uint64]int{1024: 768, 8192: 6144, 1 << 20: 10_000, 0: 10_000} {
		opts := server.SDKOptions(cfg, files, log)
		if opts.Connections.Total != want || opts.Connections.PerSecret != 5000 || opts.Connections.PerAddress != 50 {
			t.Errorf("with %d files: %+v, want a total of %d, 5000 per secret, 50 per address", files, opts.Connections, want)
		}
		if opts.Limits.PerSecret != 300 || opts.Limits.SecretBurst != 600 || opts.Limits.PerAddress != 1000 {
			t.Errorf("rates %+v, want 300 a second per secret (bursts of 600), 1000 per address", opts.Limits)
		}
	}
	if got := server.RaiseFileLimit(log); got < 1024 {
		t.Errorf("open-file limit %d after raising it", got)
	}
}

// TestConfigConnectionBudgets: the organization's and environment's
// budgets and the client share reach the SDK server, with documented
// defaults; every bad value is reported at once.
func TestConfigConnectionBudgets(t *testing.T) {
	cfg, err := server.LoadConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	if c := server.SDKOptions(cfg, 0, log).Connections; c.PerOrg != 5000 || c.PerEnv != 5000 || c.ClientShare != 80 {
		t.Errorf("defaults %+v, want 5000 per organization and per environment, clients 80%%", c)
	}
	cfg, err = server.LoadConfig(env(map[string]string{"BUNTING_SDK_CONNECTIONS_PER_ORG": "300",
		"BUNTING_SDK_CONNECTIONS_PER_ENV": "200", "BUNTING_SDK_CLIENT_SHARE": "60"}))
	if err != nil {
		t.Fatal(err)
	}
	if c := server.SDKOptions(cfg, 0, log).Connections; c.PerOrg != 300 || c.PerEnv != 200 || c.ClientShare != 60 {
		t.Errorf("configured %+v, want 300 per organization, 200 per environment, clients 60%%", c)
	}
	for _, share := range []string{"0", "100", "half", "-5"} {
		_, err := server.LoadConfig(env(map[string]string{"BUNTING_SDK_CONNECTIONS_PER_ORG": "0",
			"BUNTING_SDK_CONNECTIONS_PER_ENV": "many", "BUNTING_SDK_CLIENT_SHARE": share}))
		for _, name := range []string{"SDK_CONNECTIONS_PER_ORG", "SDK_CONNECTIONS_PER_ENV", "SDK_CLIENT_SHARE"} {
			if err == nil || !strings.Contains(err.Error(), "BUNTING_"+name+":") {
				t.Errorf("client share %q: error %v does not mention BUNTING_%s", share, err, name)
			}
		}
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
	base, vars, _ := serveStoppable(t, extra)
	return base, vars
}

// serveStoppable is serveForTest with the function that stops the server
// gracefully and waits for it (the test's cleanup calls it too).
func serveStoppable(t *testing.T, extra map[string]string) (string, func(string) string, func()) {
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
	var once sync.Once
	stop := func() {
		once.Do(func() {
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
	}
	t.Cleanup(stop)

	base := "http://" + addr
	deadline := time.Now().Add(120 * time.Second)
	for {
		resp, err := http.Get(base + "/health/readiness")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, vars, stop
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

// TestReadmeCurlSession runs the curl session of api/README.md as written,
// against a server started the way `make run` starts one (only the port
// differs).
func TestReadmeCurlSession(t *testing.T) {
	base, _ := serveForTest(t, map[string]string{"BUNTING_ADMIN_EMAIL": "admin@example.com", "BUNTING_ADMIN_PASSWORD": "bunting-admin"})
	readme, err := os.ReadFile("../../api/README.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "# Sign in as the owner"
	start := bytes.Index(readme, []byte(marker))
	if start < 0 {
		t.Fatal("api/README.md has no curl session")
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

// TestMain lets this test binary be Bunting itself: TestFirstRun starts it
// as `serve` inside its network namespace.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestShutdownWritesTheLastEndUsers: end users the SDK endpoints saw just
// before a graceful stop are written by it, not lost with the buffer.
func TestShutdownWritesTheLastEndUsers(t *testing.T) {
	base, vars, stop := serveStoppable(t, map[string]string{"BUNTING_ADMIN_EMAIL": "root@example.com", "BUNTING_ADMIN_PASSWORD": "root-password"})
	var out bytes.Buffer
	if err := run(context.Background(), []string{"token", "create", "--email", "root@example.com", "--name", "script"}, vars, &out); err != nil {
		t.Fatalf("token create: %v", err)
	}
	post := func(path, auth, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Authorization", auth)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("/api/v1/projects", strings.TrimSpace(out.String()), `{"name":"Shop","key":"shop"}`)
	var project struct {
		Data core.Project `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&project)
	resp.Body.Close()
	env := project.Data.Environments[0]
	var client string
	for _, s := range env.Secrets {
		if s.Type == core.SecretClient {
			client = s.Value
		}
	}
	resp = post("/api/public/sdk/client/latest-all?timestamp=0", client, `{"keyId":"last-one","name":"Last"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("client data-sync: %d", resp.StatusCode)
	}
	stop()
	pool, err := server.Connect(context.Background(), vars("BUNTING_DATABASE_URL"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var name string
	if err := pool.QueryRow(context.Background(), `SELECT name FROM end_users WHERE env_id = $1 AND key_id = 'last-one'`, env.ID).Scan(&name); err != nil || name != "Last" {
		t.Fatalf("the last end user after the stop: %q, %v", name, err)
	}
}
