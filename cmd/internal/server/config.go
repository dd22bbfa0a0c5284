// Package server is the Bunting server as its commands start it: the
// configuration from BUNTING_ variables, the database (configured, local or
// embedded), the store over it, and the HTTP server with its graceful stop.
// cmd/bunting serves with it; cmd/bunting-bench runs the same server, with a
// query counter on its pool, as the process it measures.
package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/sql/store"
)

// Config is everything the process reads from its environment, parsed once.
type Config struct {
	Addr          string
	DatabaseURL   string
	BaseURL       *url.URL
	SecretKey     string
	AdminEmail    string
	AdminPassword string
	DataDir       string
	ShutdownGrace time.Duration
	TrustProxy    bool
	LogLevel      slog.Level
	PasswordCost  int

	// Tracer, when set, sees every statement the server sends to the
	// database; only the benchmark's server sets it, to count queries.
	Tracer pgx.QueryTracer
}

// LoadConfig reads the BUNTING_ variables and reports every problem at once.
func LoadConfig(getenv func(string) string) (Config, error) {
	env := func(name, def string) string {
		if v := strings.TrimSpace(getenv("BUNTING_" + name)); v != "" {
			return v
		}
		return def
	}
	var problems []error
	bad := func(name, format string, args ...any) {
		problems = append(problems, fmt.Errorf("BUNTING_%s: %s", name, fmt.Sprintf(format, args...)))
	}

	cfg := Config{
		Addr:          env("ADDR", ":8080"),
		DatabaseURL:   env("DATABASE_URL", ""),
		SecretKey:     env("SECRET_KEY", ""),
		AdminEmail:    env("ADMIN_EMAIL", "admin@example.com"),
		AdminPassword: getenv("BUNTING_ADMIN_PASSWORD"),
		DataDir:       env("DATA_DIR", "data"),
	}
	_, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		bad("ADDR", "%q is not host:port (for example :8080)", cfg.Addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		bad("ADDR", "port %q is not a number from 0 to 65535", port)
	}
	base := env("BASE_URL", "http://localhost:"+port)
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("BASE_URL", "%q is not an absolute http or https URL", base)
	} else {
		u.Path = strings.TrimSuffix(u.Path, "/")
		cfg.BaseURL = u
	}
	if cfg.DatabaseURL != "" {
		if _, err := url.Parse(cfg.DatabaseURL); err != nil || !strings.HasPrefix(cfg.DatabaseURL, "postgres") {
			bad("DATABASE_URL", "is not a postgres:// URL")
		}
	}
	if cfg.SecretKey != "" && len(cfg.SecretKey) < store.MinSecretKeyLen {
		bad("SECRET_KEY", "must be at least %d characters (it is %d)", store.MinSecretKeyLen, len(cfg.SecretKey))
	}
	if a, err := mail.ParseAddress(cfg.AdminEmail); err != nil || a.Address != cfg.AdminEmail {
		bad("ADMIN_EMAIL", "%q is not an email address", cfg.AdminEmail)
	}
	if p := cfg.AdminPassword; p != "" && (len([]rune(p)) < 8 || len(p) > 72) {
		bad("ADMIN_PASSWORD", "must be 8 to 72 bytes long")
	}
	grace := env("SHUTDOWN_GRACE", "15s")
	if cfg.ShutdownGrace, err = time.ParseDuration(grace); err != nil || cfg.ShutdownGrace <= 0 {
		bad("SHUTDOWN_GRACE", "%q is not a positive duration such as 15s", grace)
	}
	trust := env("TRUST_PROXY", "false")
	if cfg.TrustProxy, err = strconv.ParseBool(trust); err != nil {
		bad("TRUST_PROXY", "%q is not true or false", trust)
	}
	cost := env("PASSWORD_COST", "12")
	if cfg.PasswordCost, err = strconv.Atoi(cost); err != nil || cfg.PasswordCost < 4 || cfg.PasswordCost > 16 {
		bad("PASSWORD_COST", "%q is not a bcrypt cost from 4 to 16", cost)
	}
	level := env("LOG_LEVEL", "info")
	if err := cfg.LogLevel.UnmarshalText([]byte(level)); err != nil {
		bad("LOG_LEVEL", "%q is not debug, info, warn or error", level)
	}
	if len(problems) > 0 {
		return Config{}, fmt.Errorf("invalid configuration:\n%w", errors.Join(problems...))
	}
	return cfg, nil
}
