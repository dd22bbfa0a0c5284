package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/relayproxies"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/web/httpx"
)

// FeatBit's agent protocol, upstream: a relay (FeatBit's agent, or
// `bunting relay`) registers with its relay proxy key, then holds one
// WebSocket, /streaming?type=relay-proxy&token=<key>, over which it asks
// for the data of every environment its key serves (data-sync: rp_full for
// timestamp 0, rp_patch with per-environment timestamps), is sent every
// change as the server SDKs' patch, pings, and reports its status.

// typeRelay is the relay's connection type.
const typeRelay = "relay-proxy"

// Data-sync event types of the relay protocol.
const (
	eventRelayFull  = "rp_full"
	eventRelayPatch = "rp_patch"
)

// DefaultRelayAgentQuota is the auto agents a workspace may register when
// no quota is set: no limit, answered as .NET's int.MaxValue.
const DefaultRelayAgentQuota = math.MaxInt32

// maxRegisterBody bounds an agent's registration: a JSON string, its id.
const maxRegisterBody = 1 << 10

// RelayItem is one environment of a relay's data-sync: FeatBit's
// RelayProxyService item.
type RelayItem struct {
	EnvID        uuid.UUID             `json:"envId"`
	Secrets      []relayproxies.Secret `json:"secrets"`
	FeatureFlags []flagstore.Flag      `json:"featureFlags"`
	Segments     []RelaySegment        `json:"segments"`
}

// RelaySegment is a segment as relays and server SDKs receive it.
type RelaySegment = sdkSegment

// RelayPayload is a relay's data-sync answer, and the body of a manual
// agent's bootstrap.
type RelayPayload struct {
	EventType string      `json:"eventType"`
	Items     []RelayItem `json:"items"`
}

// relayConn is what a relay's connection knows beyond an SDK's: its key
// (looked up again when its relay proxy or an environment changes), what
// the key serves, and the data-sync being answered.
type relayConn struct {
	key string

	mu      sync.Mutex
	relay   relayproxies.Relay
	syncing bool
	// pending is a patch to send once the answer being made is sent:
	// changes pushed meanwhile, or a newer request.
	pending *relayRequest
}

// relayRequest is a data-sync to answer: full, or a patch of what changed
// after each environment's timestamp (absent: everything).
type relayRequest struct {
	full  bool
	since map[uuid.UUID]int64
	all   int64 // the timestamp of environments not in since
}

// relayStreaming accepts a relay's WebSocket. Like FeatBit, a key that is
// not one, or serves no environment with a server secret, is closed with
// 4003, after which the agent stops; a database failure closes with 1011,
// and the agent retries.
func (s *Server) relayStreaming(c echo.Context) error {
	r := c.Request()
	addr := c.RealIP()
	key := r.URL.Query().Get("token")
	relay, err := s.relayByKey(c, key)
	pl := place{addr: addr, server: true}
	if err == nil {
		pl.secret, pl.org = "relay "+relay.ID.String(), relay.OrgID
	}
	if status, full := s.conns.acquire(pl); status != 0 {
		s.refuse(c, full, s.capKey(full, pl))
		c.Response().Header().Set(echo.HeaderConnection, "close")
		return c.NoContent(status)
	}
	held := true
	defer func() {
		if held {
			s.conns.release(pl)
		}
	}()
	ws, upgradeErr := upgrader.Upgrade(c.Response(), r, nil)
	if upgradeErr != nil {
		return nil
	}
	c.Response().Status = http.StatusSwitchingProtocols
	switch {
	case errors.Is(err, core.ErrUnauthenticated) || (err == nil && !relay.HasServerSecret()):
		closeNow(ws, closeInvalid, "invalid request, close by server")
		return nil
	case errors.Is(err, core.ErrTooManyRequests):
		closeNow(ws, closeTooSlow, "too many requests, close by server")
		return nil
	case err != nil:
		s.log.WarnContext(r.Context(), "streaming: looking up a relay proxy key", "err", err)
		closeNow(ws, closeUnavailable, "service unavailable, close by server")
		return nil
	}
	cn := &conn{srv: s, ws: ws, typ: typeRelay, env: sdkdata.SDKEnv{OrgID: relay.OrgID, SecretType: typeServer}, place: pl,
		messages: rate.NewLimiter(messageRate, messageBurst), pending: noSync, relay: &relayConn{key: key, relay: relay}}
	if !s.hub.add(cn) {
		closeNow(ws, websocket.CloseGoingAway, goingAway)
		return nil
	}
	held = false
	go cn.serve()
	return nil
}

// relayByKey looks a key up within the limits: an address that presented
// too many unknown keys or secrets waits, as for secrets.
func (s *Server) relayByKey(c echo.Context, key string) (relayproxies.Relay, error) {
	addr := c.RealIP()
	if s.limits.failures.Exhausted(addr) {
		s.refuse(c, "unknown secrets per address", addr)
		return relayproxies.Relay{}, core.ErrTooManyRequests
	}
	relay, err := s.store.RelayProxies().RelayByKey(c.Request().Context(), key)
	if errors.Is(err, core.ErrUnauthenticated) {
		s.limits.failures.Allow(addr)
	}
	if err == nil {
		httpx.SetPrincipal(c, httpx.SDKSecret, "relay "+relay.ID.String(), relay.OrgID)
	}
	return relay, err
}

// registerAgent is FeatBit's POST /api/public/agent/register: the key in
// Authorization, the agent's id as a JSON string. 401 for a bad key, 403
// at the quota, 200 with the id as text.
func (s *Server) registerAgent(c echo.Context) error {
	addr := c.RealIP()
	if !s.limits.address.Allow(addr) {
		s.refuse(c, "requests per address", addr)
		return c.NoContent(http.StatusTooManyRequests)
	}
	key := strings.TrimSpace(strings.TrimPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer "))
	if _, err := s.relayByKey(c, key); err != nil {
		return s.relayRefused(c, err)
	}
	body, err := httpx.ReadBody(c, maxRegisterBody)
	if err != nil {
		if class, ok := httpx.Classify(err); ok {
			return c.NoContent(class.Status)
		}
		return c.NoContent(http.StatusBadRequest)
	}
	var agentID string
	if json.Unmarshal(body, &agentID) != nil {
		return c.NoContent(http.StatusBadRequest)
	}
	err = s.store.RelayProxies().RegisterAgent(c.Request().Context(), key, agentID, s.agentQuota)
	if err != nil {
		return s.relayRefused(c, err)
	}
	// ASP.NET answers a string result as text/plain, and the agent keeps
	// the answer's text as its id: a JSON string would put quotes in it.
	return c.String(http.StatusOK, agentID)
}

func (s *Server) relayRefused(c echo.Context, err error) error {
	switch {
	case errors.Is(err, core.ErrUnauthenticated):
		return c.NoContent(http.StatusUnauthorized)
	case errors.Is(err, relayproxies.ErrQuota):
		return c.NoContent(http.StatusForbidden)
	case errors.Is(err, core.ErrTooManyRequests):
		return c.NoContent(http.StatusTooManyRequests)
	}
	if class := core.Classify(err); class.Status < http.StatusInternalServerError {
		return c.NoContent(class.Status)
	}
	s.log.WarnContext(c.Request().Context(), "relay proxy: registering an agent", "err", err)
	return c.NoContent(http.StatusServiceUnavailable)
}

// relayHandle answers a relay's messages beyond ping: data-sync and its
// status. It reports whether it took the message.
func (c *conn) relayHandle(ctx context.Context, typ string, data json.RawMessage) bool {
	switch typ {
	case "data-sync":
		var req struct {
			Timestamp json.RawMessage `json:"timestamp"`
			Envs      []struct {
				EnvID     uuid.UUID       `json:"envId"`
				Timestamp json.RawMessage `json:"timestamp"`
			} `json:"envs"`
		}
		if json.Unmarshal(data, &req) != nil {
			return true
		}
		ts, ok := timestamp(req.Timestamp)
		if !ok {
			return true
		}
		r := relayRequest{full: ts == 0, since: map[uuid.UUID]int64{}}
		for _, e := range req.Envs {
			if v, ok := timestamp(e.Timestamp); ok {
				r.since[e.EnvID] = v
			}
		}
		c.relaySync(ctx, r)
		return true
	case "rp-agent-status":
		// FeatBit's agent sends its status as JSON text; one sent as an
		// object is kept as its text too.
		var st struct {
			AgentID string          `json:"agentId"`
			Status  json.RawMessage `json:"status"`
		}
		if json.Unmarshal(data, &st) != nil || st.AgentID == "" {
			return true
		}
		status := string(st.Status)
		var text string
		if json.Unmarshal(st.Status, &text) == nil {
			status = text
		}
		c.relay.mu.Lock()
		id := c.relay.relay.ID
		c.relay.mu.Unlock()
		if err := c.srv.store.RelayProxies().ReportStatus(ctx, id, st.AgentID, status); err != nil &&
			core.Classify(err).Status >= http.StatusInternalServerError {
			c.srv.log.WarnContext(ctx, "relay proxy: keeping an agent's status", "err", err)
		}
		return true
	}
	return false
}

// relaySync answers a data-sync, or, while another answer is being made,
// has that one followed by it; pushes met meanwhile follow as a patch too,
// so a relay never gets an rp_full older than a push it already has.
func (c *conn) relaySync(ctx context.Context, req relayRequest) {
	rc := c.relay
	rc.mu.Lock()
	if rc.syncing {
		rc.pending = mergeRelay(rc.pending, req)
		rc.mu.Unlock()
		return
	}
	rc.syncing = true
	for {
		relay := rc.relay
		rc.mu.Unlock()
		msg, err := c.srv.relayData(ctx, relay, req)
		rc.mu.Lock()
		if err != nil {
			rc.syncing, rc.pending = false, nil
			rc.mu.Unlock()
			c.srv.log.WarnContext(ctx, "streaming: reading a relay's environments", "err", err)
			c.close(closeUnavailable, "service unavailable, close by server")
			return
		}
		c.send(outgoing{data: msg})
		if rc.pending == nil {
			rc.syncing = false
			rc.mu.Unlock()
			return
		}
		req, rc.pending = *rc.pending, nil
	}
}

func mergeRelay(p *relayRequest, r relayRequest) *relayRequest {
	if p == nil {
		return &r
	}
	m := relayRequest{full: p.full || r.full, since: map[uuid.UUID]int64{}, all: min(p.all, r.all)}
	for id, v := range p.since {
		m.since[id] = v
	}
	for id, v := range r.since {
		if old, ok := m.since[id]; !ok || v < old {
			m.since[id] = v
		}
	}
	return &m
}

// relayData is a relay's data-sync answer: for rp_full every environment
// it serves with its secrets, flags and segments; for rp_patch, with no
// secrets, what changed after each environment's timestamp.
func (s *Server) relayData(ctx context.Context, relay relayproxies.Relay, req relayRequest) ([]byte, error) {
	p, err := s.RelayPayload(ctx, relay, req.full, func(env uuid.UUID) int64 {
		if v, ok := req.since[env]; ok {
			return v
		}
		return req.all
	})
	if err != nil {
		return nil, err
	}
	return encode("data-sync", p), nil
}

// RelayPayload is the data of the environments a relay serves: everything
// (rp_full) or what changed after since(env) (rp_patch), read from the same
// snapshots the SDKs are served from. A manual agent's bootstrap is the
// full one.
func (s *Server) RelayPayload(ctx context.Context, relay relayproxies.Relay, full bool, since func(uuid.UUID) int64) (RelayPayload, error) {
	p := RelayPayload{EventType: eventRelayPatch, Items: make([]RelayItem, 0, len(relay.Envs))}
	if full {
		p.EventType = eventRelayFull
	}
	for _, e := range relay.Envs {
		snap, err := s.cache.get(ctx, sdkdata.SDKEnv{EnvID: e.EnvID, OrgID: relay.OrgID, SecretType: typeServer})
		if errors.Is(err, core.ErrNotFound) {
			continue // deleted since the relay proxy was read
		}
		if err != nil {
			return RelayPayload{}, err
		}
		it := RelayItem{EnvID: e.EnvID, Secrets: []relayproxies.Secret{}}
		var d serverPayload
		if full {
			it.Secrets = e.Secrets
			d = serverData(snap, eventFull, 0)
		} else {
			d = serverData(snap, eventPatch, since(e.EnvID))
		}
		it.FeatureFlags, it.Segments = d.FeatureFlags, d.Segments
		p.Items = append(p.Items, it)
	}
	return p, nil
}

// relayPush sends a change's server-SDK patch to a relay, unless an answer
// is being made: then a patch follows that answer.
func (c *conn) relayPush(env uuid.UUID, msg *websocket.PreparedMessage, since int64) {
	rc := c.relay
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !rc.serves(env) {
		return
	}
	if rc.syncing {
		rc.pending = mergeRelay(rc.pending, relayRequest{since: map[uuid.UUID]int64{env: since}, all: math.MaxInt64})
		return
	}
	c.send(outgoing{shared: msg})
}

// serves reports whether the relay serves env; rc.mu is held.
func (rc *relayConn) serves(env uuid.UUID) bool {
	for _, e := range rc.relay.Envs {
		if e.EnvID == env {
			return true
		}
	}
	return false
}

// pushRelays hands the relays the changes of a batch of events: flags and
// segments of the environments they serve as server-SDK patches; a change
// of their relay proxy, or of an environment's secrets, looks their key up
// again: a key deleted, or left serving nothing, is closed with 4003; a
// changed scope is sent everything again (rp_full replaces a relay's data).
func (h *hub) pushRelays(ctx context.Context, events []feed.Event) {
	relays := h.relayConns()
	if len(relays) == 0 {
		return
	}
	recheck := map[*conn]bool{}
	flags := map[uuid.UUID][]uuid.UUID{}
	segs := map[uuid.UUID][]uuid.UUID{}
	var reset *time.Time
	for _, ev := range events {
		for _, c := range relays {
			c.relay.mu.Lock()
			relay := c.relay.relay
			c.relay.mu.Unlock()
			switch {
			case ev.Kind == feed.EventReset:
				if reset == nil || ev.Since.Before(*reset) {
					reset = &ev.Since
				}
			case ev.Kind == feed.EventRelayProxy && ev.ID == relay.ID:
				recheck[c] = true
			case ev.Kind == feed.EventEnv:
				for _, e := range relay.Envs {
					if ev.Affects(relay.OrgID, e.EnvID) {
						recheck[c] = true
					}
				}
			case ev.Kind == feed.EventFlag || ev.Kind == feed.EventSegment:
				for _, e := range relay.Envs {
					if !ev.Affects(relay.OrgID, e.EnvID) {
						continue
					}
					if ev.Kind == feed.EventFlag {
						flags[e.EnvID] = append(flags[e.EnvID], ev.ID)
					} else {
						segs[e.EnvID] = append(segs[e.EnvID], ev.ID)
					}
				}
			}
		}
	}
	if reset != nil {
		// Changes may have gone unseen: every relay is patched with what
		// changed since shortly before.
		for _, c := range relays {
			go c.relaySyncLater(relayRequest{since: map[uuid.UUID]int64{}, all: reset.UnixMilli() - catchUpMargin})
		}
	}
	for c := range recheck {
		h.recheckRelay(ctx, c)
	}
	envs := map[uuid.UUID]uuid.UUID{}
	for _, c := range relays {
		c.relay.mu.Lock()
		for _, e := range c.relay.relay.Envs {
			envs[e.EnvID] = c.relay.relay.OrgID
		}
		c.relay.mu.Unlock()
	}
	for envID, org := range envs {
		if len(flags[envID])+len(segs[envID]) == 0 {
			continue
		}
		snap, err := h.srv.cache.get(ctx, sdkdata.SDKEnv{EnvID: envID, OrgID: org, SecretType: typeServer})
		if err != nil {
			h.srv.log.Warn("streaming: reading changes for relays", "env", envID, "err", err)
			continue
		}
		p := serverPayload{EventType: eventPatch, FeatureFlags: []flagstore.Flag{}, Segments: []sdkSegment{}}
		seen := map[uuid.UUID]bool{}
		since := int64(math.MaxInt64)
		for _, id := range flags[envID] {
			if f := snap.byID[id]; f != nil && !seen[id] {
				p.FeatureFlags, seen[id] = append(p.FeatureFlags, sdkFlag(f)), true
				since = min(since, version(f.UpdatedAt)-1)
			}
		}
		for _, id := range segs[envID] {
			if sg := snap.segments[id]; sg != nil && !seen[id] {
				p.Segments, seen[id] = append(p.Segments, toSDKSegment(sg)), true
				since = min(since, version(sg.UpdatedAt)-1)
			}
		}
		if len(p.FeatureFlags)+len(p.Segments) == 0 {
			continue
		}
		msg := prepare(encode("data-sync", p))
		for _, c := range relays {
			c.relayPush(envID, msg, since)
		}
	}
}

// recheckRelay looks a relay's key up again after its relay proxy or one
// of its environments changed.
func (h *hub) recheckRelay(ctx context.Context, c *conn) {
	relay, err := h.srv.store.RelayProxies().RelayByKey(ctx, c.relay.key)
	switch {
	case errors.Is(err, core.ErrUnauthenticated) || (err == nil && !relay.HasServerSecret()):
		c.close(closeInvalid, "invalid request, close by server")
		return
	case err != nil:
		h.srv.log.Warn("streaming: checking a relay proxy key", "err", err)
		return
	}
	c.relay.mu.Lock()
	c.relay.relay = relay
	c.relay.mu.Unlock()
	go c.relaySyncLater(relayRequest{full: true})
}

// relaySyncLater answers req on a goroutine of its own, for the hub, which
// never waits for one relay.
func (c *conn) relaySyncLater(req relayRequest) {
	ctx, cancel := context.WithTimeout(context.Background(), hubTimeout)
	defer cancel()
	c.relaySync(ctx, req)
}
