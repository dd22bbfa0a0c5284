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
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store"
)

// Server serves the SDK endpoints.
type Server struct {
	store  *store.Store
	log    *slog.Logger
	cache  *cache
	hub    *hub
	limits *limits
	now    func() time.Time
}

// Options tune a Server; the zero value is production-ready.
type Options struct {
	// Limits are the rate limits; DefaultLimits when zero.
	Limits Limits
}

// New returns the SDK server over s. Pushes to streaming SDKs and caching
// need s.Changes() to be running.
func New(s *store.Store, log *slog.Logger, opts Options) *Server {
	if opts.Limits == (Limits{}) {
		opts.Limits = DefaultLimits
	}
	srv := &Server{store: s, log: log, cache: newCache(s), limits: newLimits(opts.Limits), now: time.Now}
	srv.hub = newHub(srv)
	return srv
}

// Register adds the SDK routes to e.
func (s *Server) Register(e *echo.Echo) {
	e.GET("/streaming", s.streaming)

	pub := e.Group("/api/public", cors)
	pub.POST("/insight/track", s.track)
	pub.GET("/sdk/server/latest-all", s.serverLatest)
	pub.POST("/sdk/client/latest-all", s.clientLatest)

	ofrep := e.Group("/ofrep/v1", cors)
	ofrep.POST("/evaluate/flags", s.ofrepBulk)
	ofrep.POST("/evaluate/flags/:key", s.ofrepFlag)
}

// secretEnv resolves a secret to its environment within the rate limits
// (the caller has counted the request against its address):
// store.ErrUnauthenticated for an unknown secret, store.ErrTooManyRequests
// past the secret's limit, or for an unknown secret from an address that
// presented too many. Known secrets are served even then, so one
// misconfigured client cannot lock out its neighbours behind the same NAT.
func (s *Server) secretEnv(ctx context.Context, addr, secret string) (store.SDKEnv, error) {
	env, known := s.cache.knownSecret(secret)
	if !known {
		if s.limits.failures.exhausted(addr) {
			return store.SDKEnv{}, store.ErrTooManyRequests
		}
		var err error
		env, err = s.cache.secretEnv(ctx, secret)
		if errors.Is(err, store.ErrUnauthenticated) {
			s.limits.failures.allow(addr)
		}
		if err != nil {
			return store.SDKEnv{}, err
		}
	}
	if !s.limits.secret.allow(env.SecretID.String()) {
		return store.SDKEnv{}, store.ErrTooManyRequests
	}
	return env, nil
}
