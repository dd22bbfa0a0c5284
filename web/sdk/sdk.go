// Package sdk serves feature flags to applications: FeatBit's SDK protocol
// (the /streaming WebSocket for server and client SDKs, their polling and
// insight endpoints under /api/public) and OpenFeature's OFREP under
// /ofrep/v1, all authenticated by environment secrets and evaluated by the
// store's one evaluation engine.
package sdk

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/trace"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/web/httpx"
	"github.com/bunting-flags/bunting/web/metrics"
)

// Server serves the SDK endpoints.
type Server struct {
	src Source
	// store is the database's, for serving relays (relay.go): nil in a
	// relay, which serves SDKs only, as FeatBit's agent does.
	store    *store.Store
	log      *slog.Logger
	cache    *cache
	hub      *hub
	writers  *writers
	limits   *limits
	conns    *connCounter
	refusals *refusals
	endUsers *runner.EndUsers
	// evaluations counts the evaluations OFREP answers; nil counts none.
	evaluations *runner.Evaluations
	// metrics counts connections, refusals, evaluations and pushes; nil
	// counts nothing.
	metrics *metrics.Metrics
	// tracer traces pushes of changes; nil when tracing is off.
	tracer trace.Tracer
	now    func() time.Time
	// agentQuota is how many auto agents a workspace's relay proxies may
	// register.
	agentQuota int64
	// agentHTTP calls manual agents (relay_sync.go).
	agentHTTP agentClient
	// seen holds the environments whose first SDK request this process has
	// recorded (bounded by the environments there are), so each costs the
	// database one statement per process.
	seen sync.Map
	// forwardInsight takes event reports in place of counting them.
	forwardInsight func(c echo.Context, env sdkdata.SDKEnv, secret string, body []byte) error
}

// Options tune a Server; the zero value is production-ready but for
// EndUsers, which the process sets.
type Options struct {
	// Limits are the rate limits; DefaultLimits when zero.
	Limits Limits
	// Connections caps the streaming connections; DefaultConnections when zero.
	Connections Connections
	// RefusalLog is how often refused requests are logged, one line per
	// limit and key with the count; 10 s when zero.
	RefusalLog time.Duration
	// EndUsers keeps the end users SDKs report until it writes them; the
	// process runs it. When nil none are kept (tests that do not look).
	EndUsers *runner.EndUsers
	// Evaluations counts the evaluations OFREP answers until it writes
	// them; the process runs it. When nil none are counted.
	Evaluations *runner.Evaluations
	// Metrics, when set, is told of connections, refusals, evaluations and
	// pushes.
	Metrics *metrics.Metrics
	// Tracer, when set, traces the pushes of changes to streaming SDKs
	// (span change.notify); nil when tracing is off.
	Tracer trace.TracerProvider
	// ForwardInsight, when set, takes the SDKs' event reports in place of
	// counting them: a relay sends them on to its upstream, which counts
	// them. The body has been read within the limits and the secret
	// checked; what it answers is the answer.
	ForwardInsight func(c echo.Context, env sdkdata.SDKEnv, secret string, body []byte) error
	// RelayAgentQuota is how many auto agents the relay proxies of a
	// workspace may register (BUNTING_RELAY_AGENT_QUOTA);
	// DefaultRelayAgentQuota when zero.
	RelayAgentQuota int64
}

// New returns the SDK server over s. Pushes to streaming SDKs and caching
// need the change listener of s.Feed() to be running (feed.Listener).
func New(s *store.Store, log *slog.Logger, opts Options) *Server {
	srv := NewFrom(StoreSource(s), log, opts)
	srv.store = s
	return srv
}

// NewFrom returns the SDK server over a Source: pushes and caching follow
// src.Changes().
func NewFrom(src Source, log *slog.Logger, opts Options) *Server {
	if opts.Limits == (Limits{}) {
		opts.Limits = DefaultLimits
	}
	if opts.Connections == (Connections{}) {
		opts.Connections = DefaultConnections
	}
	if opts.RefusalLog <= 0 {
		opts.RefusalLog = 10 * time.Second
	}
	if opts.RelayAgentQuota <= 0 {
		opts.RelayAgentQuota = DefaultRelayAgentQuota
	}
	srv := &Server{src: src, log: log, cache: newCache(src), forwardInsight: opts.ForwardInsight, limits: newLimits(opts.Limits),
		conns: newConnCounter(opts.Connections), writers: &writers{}, refusals: &refusals{log: log, every: opts.RefusalLog},
		endUsers: opts.EndUsers, evaluations: opts.Evaluations, metrics: opts.Metrics, now: time.Now, agentQuota: opts.RelayAgentQuota}
	if opts.Tracer != nil {
		srv.tracer = opts.Tracer.Tracer("github.com/bunting-flags/bunting/web/sdk")
	}
	srv.hub = newHub(srv)
	if opts.EndUsers != nil {
		opts.EndUsers.LimitNewPerSecret(srv.admitNewEndUsers)
	}
	return srv
}

// Shutdown closes every streaming connection with 1001 (going away), so
// SDKs reconnect at once (to another instance, or to this one restarted),
// refuses new ones with 503, and waits until the connections are gone or
// ctx ends. net/http's Shutdown does neither: WebSockets are hijacked
// connections it no longer knows.
func (s *Server) Shutdown(ctx context.Context) error {
	s.hub.shutdown()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for s.conns.open() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// Register adds the SDK routes to e.
func (s *Server) Register(e *echo.Echo) {
	e.GET("/streaming", s.streaming)

	pub := e.Group("/api/public", cors)
	pub.POST("/insight/track", s.track)
	pub.GET("/sdk/server/latest-all", s.serverLatest)
	pub.POST("/sdk/client/latest-all", s.clientLatest)
	if s.store != nil { // a relay serves no relays
		pub.POST("/agent/register", s.registerAgent)
	}

	ofrep := e.Group("/ofrep/v1", cors)
	ofrep.POST("/evaluate/flags", s.ofrepBulk)
	ofrep.POST("/evaluate/flags/:key", s.ofrepFlag)
}

// secretEnv resolves a secret to its environment within the rate limits
// (the caller has counted the request against its address when the secret
// is not known): store.ErrUnauthenticated for an unknown secret,
// store.ErrTooManyRequests past the secret's limit, or for an unknown
// secret from an address that presented too many. Known secrets are served
// even then, so one misconfigured client cannot lock out its neighbours
// behind the same NAT. Refusals are counted for the summary log.
func (s *Server) secretEnv(c echo.Context, secret string) (sdkdata.SDKEnv, error) {
	addr := c.RealIP()
	env, known := s.cache.knownSecret(secret)
	if !known {
		if s.limits.failures.Exhausted(addr) {
			s.refuse(c, "unknown secrets per address", addr)
			return sdkdata.SDKEnv{}, core.ErrTooManyRequests
		}
		var err error
		env, err = s.cache.secretEnv(c.Request().Context(), secret)
		if errors.Is(err, core.ErrUnauthenticated) {
			s.limits.failures.Allow(addr)
		}
		if err != nil {
			return sdkdata.SDKEnv{}, err
		}
	}
	if !s.limits.secret.Allow(env.SecretID.String()) {
		s.refuse(c, "requests per secret", "secret "+env.SecretID.String())
		return sdkdata.SDKEnv{}, core.ErrTooManyRequests
	}
	s.markSeen(c.Request().Context(), env)
	httpx.SetPrincipal(c, httpx.SDKSecret, env.SecretID.String(), env.OrgID)
	return env, nil
}

// markSeen records an environment's first SDK request, for the first-run
// guide's live check. A failure is logged and tried again on the next
// request; it never refuses the SDK.
func (s *Server) markSeen(ctx context.Context, env sdkdata.SDKEnv) {
	if _, done := s.seen.LoadOrStore(env.EnvID, true); done {
		return
	}
	if err := s.src.RecordSDKSeen(ctx, env, s.now()); err != nil {
		s.seen.Delete(env.EnvID)
		s.log.WarnContext(ctx, "record an environment's first SDK request", "env", env.EnvID, "err", err)
	}
}

// sawEndUsers hands the users a secret's SDK evaluated for at at to the
// end-user buffer, when there is one; it never waits for the database. The
// new ones count against the secret when written (admitNewEndUsers).
func (s *Server) sawEndUsers(env sdkdata.SDKEnv, users []eval.EndUser, at time.Time) {
	if s.endUsers != nil {
		s.endUsers.SawVia(env.EnvID, env.SecretID, users, at)
	}
}
