// Package server is the Bunting server as its commands start it: the
// configuration from BUNTING_ variables, the database (configured, local or
// embedded), the store over it, the HTTP handler that mounts the three
// surfaces (the API, the SDK endpoints, the pages) on one Echo, and the HTTP
// server with its graceful stop.
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
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/web/httpx"
	"github.com/bunting-flags/bunting/web/metrics"
	"github.com/bunting-flags/bunting/web/sdk"
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
	// CORSOrigins are the exact browser origins (scheme://host[:port]) that
	// may call the management API from another site, with credentials.
	CORSOrigins []string
	// SSOAllowPrivateNetworks lets single sign-on reach providers on
	// loopback and private addresses, and over plain http.
	SSOAllowPrivateNetworks bool
	// WebhookAllowPrivateNetworks lets webhooks deliver to loopback and
	// private addresses: a setting of its own, so trusting an identity
	// provider inside the network does not open it to every webhook.
	WebhookAllowPrivateNetworks bool

	// SDK endpoints: streaming connection caps and request rates a second.
	SDKConnections          int
	SDKConnectionsPerSecret int
	SDKConnectionsPerAddr   int
	SDKConnectionsPerOrg    int
	SDKConnectionsPerEnv    int
	// RelayAgentQuota is how many auto agents a workspace's relay proxies
	// may register (BUNTING_RELAY_AGENT_QUOTA).
	RelayAgentQuota  int
	SDKClientShare   int // percent of each connection budget client SDKs may take; server SDKs keep the rest
	SDKRatePerSecret int
	SDKRatePerAddr   int
	// What one secret may write: new end users a minute, reported
	// evaluations a second; past them the rest is dropped.
	SDKEndUsersPerSecret    int
	SDKEvaluationsPerSecret int
	// MaxEndUsersPerEnv bounds the end users kept per environment; past it
	// SDKs' new user keys are dropped.
	MaxEndUsersPerEnv int
	// BodyBudget is the memory request bodies may take at once, read and
	// decoded, in bytes.
	BodyBudget int64
	// BodyRate is how fast a request body must arrive: BodyRate.Min bytes a
	// second on average (BUNTING_BODY_MIN_RATE) after BodyRate.Grace, within
	// BodyRate.Max; httpx.DefaultBodyRate's for each field left 0.
	BodyRate httpx.BodyRate
	// EvaluationSeries is how long the evaluation series keeps its minutes,
	// hours and days.
	EvaluationSeries sdkdata.SeriesRetention

	// MetricsAddr is where /metrics is served: a host:port of its own
	// (loopback by default), MetricsMain for the main listener behind
	// MetricsToken, or MetricsOff.
	MetricsAddr string
	// metricsOptional: MetricsAddr is the default, not the operator's
	// choice, so a port already taken there is warned about, not fatal.
	metricsOptional bool
	// MetricsToken is the bearer token /metrics asks for on the main
	// listener.
	MetricsToken string
	// Metrics is what the handler and the runners report to; Serve makes
	// it unless MetricsAddr is MetricsOff, and nil records nothing.
	Metrics *metrics.Metrics

	// Tracer, when set, sees every statement the server sends to the
	// database; only the benchmark's server sets it, to count queries.
	Tracer pgx.QueryTracer

	// Tracing is the OpenTelemetry tracing the OTEL_ variables ask for.
	Tracing Tracing
	// TracerProvider, when set, traces requests (NewHandler); Serve sets it
	// when Tracing is on.
	TracerProvider trace.TracerProvider
}

// Values of BUNTING_METRICS_ADDR besides a host:port.
const (
	MetricsOff  = "off"
	MetricsMain = "main"
	// DefaultMetricsAddr is loopback: nothing that names tenants' traffic
	// is public unless an operator says so.
	DefaultMetricsAddr = "127.0.0.1:9464"
	minMetricsToken    = 16
)

// defaultDataDir is where a private PostgreSQL lives unless BUNTING_DATA_DIR
// says otherwise: for root, the system's state directory, which the
// unprivileged user that runs the server can reach; for anyone else, their
// XDG data directory. "" when there is no home to put it in.
func defaultDataDir(getenv func(string) string) string {
	if os.Geteuid() == 0 {
		return "/var/lib/bunting"
	}
	if d := getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "bunting")
	}
	if home := getenv("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, ".local", "share", "bunting")
	}
	return ""
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
		DataDir:       env("DATA_DIR", defaultDataDir(getenv)),
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
	if cfg.SecretKey != "" && len(cfg.SecretKey) < core.MinSecretKeyLen {
		bad("SECRET_KEY", "must be at least %d characters (it is %d)", core.MinSecretKeyLen, len(cfg.SecretKey))
	}
	if a, err := mail.ParseAddress(cfg.AdminEmail); err != nil || a.Address != cfg.AdminEmail {
		bad("ADMIN_EMAIL", "%q is not an email address", cfg.AdminEmail)
	}
	if p := cfg.AdminPassword; p != "" && (len([]rune(p)) < iam.MinPasswordLen || len(p) > iam.MaxPasswordLen) {
		bad("ADMIN_PASSWORD", "must be %d to %d bytes long", iam.MinPasswordLen, iam.MaxPasswordLen)
	}
	grace := env("SHUTDOWN_GRACE", "15s")
	if cfg.ShutdownGrace, err = time.ParseDuration(grace); err != nil || cfg.ShutdownGrace <= 0 {
		bad("SHUTDOWN_GRACE", "%q is not a positive duration such as 15s", grace)
	}
	trust := env("TRUST_PROXY", "false")
	if cfg.TrustProxy, err = strconv.ParseBool(trust); err != nil {
		bad("TRUST_PROXY", "%q is not true or false", trust)
	}
	private := env("SSO_ALLOW_PRIVATE_NETWORKS", "false")
	if cfg.SSOAllowPrivateNetworks, err = strconv.ParseBool(private); err != nil {
		bad("SSO_ALLOW_PRIVATE_NETWORKS", "%q is not true or false", private)
	}
	webhookPrivate := env("WEBHOOK_ALLOW_PRIVATE_NETWORKS", "false")
	if cfg.WebhookAllowPrivateNetworks, err = strconv.ParseBool(webhookPrivate); err != nil {
		bad("WEBHOOK_ALLOW_PRIVATE_NETWORKS", "%q is not true or false", webhookPrivate)
	}
	cost := env("PASSWORD_COST", "12")
	if cfg.PasswordCost, err = strconv.Atoi(cost); err != nil || cfg.PasswordCost < 4 || cfg.PasswordCost > 16 {
		bad("PASSWORD_COST", "%q is not a bcrypt cost from 4 to 16", cost)
	}
	positive := func(name string, def int) int {
		v := env(name, strconv.Itoa(def))
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			bad(name, "%q is not a positive whole number", v)
		}
		return n
	}
	cfg.SDKConnections = positive("SDK_CONNECTIONS", sdk.DefaultConnections.Total)
	cfg.SDKConnectionsPerSecret = positive("SDK_CONNECTIONS_PER_SECRET", sdk.DefaultConnections.PerSecret)
	cfg.SDKConnectionsPerAddr = positive("SDK_CONNECTIONS_PER_ADDRESS", sdk.DefaultConnections.PerAddress)
	cfg.SDKConnectionsPerOrg = positive("SDK_CONNECTIONS_PER_ORG", sdk.DefaultConnections.PerOrg)
	cfg.SDKConnectionsPerEnv = positive("SDK_CONNECTIONS_PER_ENV", sdk.DefaultConnections.PerEnv)
	cfg.RelayAgentQuota = positive("RELAY_AGENT_QUOTA", sdk.DefaultRelayAgentQuota)
	share := env("SDK_CLIENT_SHARE", strconv.Itoa(sdk.DefaultConnections.ClientShare))
	if cfg.SDKClientShare, err = strconv.Atoi(share); err != nil || cfg.SDKClientShare < 1 || cfg.SDKClientShare > 99 {
		bad("SDK_CLIENT_SHARE", "%q is not a percentage from 1 to 99 (server SDKs keep the rest)", share)
	}
	cfg.SDKRatePerSecret = positive("SDK_RATE_PER_SECRET", int(sdk.DefaultLimits.PerSecret))
	cfg.SDKRatePerAddr = positive("SDK_RATE_PER_ADDRESS", int(sdk.DefaultLimits.PerAddress))
	cfg.SDKEndUsersPerSecret = positive("SDK_END_USERS_PER_SECRET", sdk.DefaultLimits.EndUsersPerSecret)
	cfg.SDKEvaluationsPerSecret = positive("SDK_EVALUATIONS_PER_SECRET", sdk.DefaultLimits.EvaluationsPerSecret)
	cfg.MaxEndUsersPerEnv = positive("MAX_END_USERS_PER_ENV", core.DefaultMaxEndUsersPerEnv)
	budget := env("BODY_BUDGET", "64MiB")
	if cfg.BodyBudget, err = parseSize(budget); err != nil || cfg.BodyBudget < minBodyBudget {
		bad("BODY_BUDGET", "%q is not a size of at least 16MiB (a number of bytes, or of KiB, MiB or GiB such as 64MiB)", budget)
	}
	rate := env("BODY_MIN_RATE", "16KiB")
	if cfg.BodyRate.Min, err = parseSize(rate); err != nil || cfg.BodyRate.Min < minBodyRate || cfg.BodyRate.Min > maxBodyRate {
		bad("BODY_MIN_RATE", "%q is not a size from 1KiB to 1MiB, read each second (a number of bytes, or of KiB or MiB such as 16KiB)", rate)
	}
	keep := sdkdata.DefaultSeriesRetention
	for _, r := range []struct {
		name string
		into *time.Duration
		min  time.Duration
	}{{"EVALUATIONS_KEEP_MINUTES", &keep.Minutes, 2 * time.Hour}, {"EVALUATIONS_KEEP_HOURS", &keep.Hours, 2 * 24 * time.Hour},
		{"EVALUATIONS_KEEP_DAYS", &keep.Days, 2 * 24 * time.Hour}} {
		v := env(r.name, "")
		if v == "" {
			continue
		}
		d, err := parseRetention(v)
		if err != nil || d < r.min {
			bad(r.name, "%q is not a duration of at least %s (such as 48h or 90d)", v, r.min)
			continue
		}
		*r.into = d
	}
	if keep.Hours < keep.Minutes || keep.Days < keep.Hours {
		bad("EVALUATIONS_KEEP_HOURS", "hours must be kept at least as long as minutes, and days as long as hours")
	}
	cfg.EvaluationSeries = keep
	level := env("LOG_LEVEL", "info")
	if err := cfg.LogLevel.UnmarshalText([]byte(level)); err != nil {
		bad("LOG_LEVEL", "%q is not debug, info, warn or error", level)
	}
	if origins := env("CORS_ORIGINS", ""); origins != "" {
		for _, o := range strings.Split(origins, ",") {
			o = strings.TrimSpace(o)
			if o == "" {
				continue
			}
			if !isOrigin(o) {
				bad("CORS_ORIGINS", "%q is not an exact origin such as https://app.example.com (no path, no wildcard)", o)
				continue
			}
			cfg.CORSOrigins = append(cfg.CORSOrigins, o)
		}
	}
	cfg.MetricsAddr, cfg.MetricsToken = env("METRICS_ADDR", DefaultMetricsAddr), env("METRICS_TOKEN", "")
	cfg.metricsOptional = env("METRICS_ADDR", "") == ""
	switch cfg.MetricsAddr {
	case MetricsOff:
	case MetricsMain:
		if len(cfg.MetricsToken) < minMetricsToken {
			bad("METRICS_TOKEN", "must be set, at least %d characters, to serve /metrics on the main listener", minMetricsToken)
		}
	default:
		if _, port, err := net.SplitHostPort(cfg.MetricsAddr); err != nil {
			bad("METRICS_ADDR", "%q is not host:port (such as 127.0.0.1:9464 or :9464), main or off", cfg.MetricsAddr)
		} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			bad("METRICS_ADDR", "port %q is not a number from 0 to 65535", port)
		}
	}
	tracing, tracingProblems := loadTracing(getenv)
	cfg.Tracing, problems = tracing, append(problems, tracingProblems...)
	if len(problems) > 0 {
		return Config{}, fmt.Errorf("invalid configuration:\n%w", errors.Join(problems...))
	}
	return cfg, nil
}

// parseRetention reads a retention: a Go duration ("48h") or a whole
// number of days ("90d").
func parseRetention(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days <= 0 || days > 100*365 {
			return 0, fmt.Errorf("%q is not a number of days", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// minBodyRate and maxBodyRate bound BUNTING_BODY_MIN_RATE: below 1 KiB/s a
// slow sender holds a connection for most of the read timeout; past 1 MiB/s
// a largest body must arrive within a second, over any network.
const (
	minBodyRate = 1 << 10
	maxBodyRate = 1 << 20
)

// minBodyBudget is the smallest body budget: one body of the largest size,
// read and decoded, and room beside it.
const minBodyBudget = 16 << 20

// parseSize reads a size in bytes, written as a whole number of bytes or
// of KiB, MiB or GiB ("64MiB").
func parseSize(s string) (int64, error) {
	unit := int64(1)
	for suffix, u := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			s, unit = strings.TrimSpace(n), u
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/unit {
		return 0, fmt.Errorf("%q is not a positive size", s)
	}
	return n * unit, nil
}

// isOrigin reports whether s is a browser origin exactly as browsers send it:
// http or https, a host, an optional port, and nothing else. A wildcard is
// refused: credentials must never be shared with any site.
func isOrigin(s string) bool {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Contains(s, "*") {
		return false
	}
	return u.Scheme+"://"+u.Host == s && u.User == nil
}
