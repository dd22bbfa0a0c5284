package sdk

import (
	"net/http"
	"sync"

	"github.com/google/uuid"
)

// Connections caps the open streaming connections, which each hold a file
// descriptor and about 9 KB (measured by bunting-bench's stream-fanout at
// 10,000) until the peer leaves. Past a cap the upgrade is refused before
// it happens: 429 past an address's, a secret's, an environment's or an
// organization's cap, 503 past the total, both with Retry-After; FeatBit's
// SDKs take a failed upgrade like a dropped connection and retry with
// back-off.
//
// Client secrets are public (they are in every browser bundle), so anyone
// may open client connections from as many addresses as they have. The
// organization's and the environment's caps keep one tenant's leaked
// secrets to that tenant's budget, and ClientShare keeps server SDKs
// (whose secrets stay on the tenant's servers) a part of every budget that
// client connections can never take.
type Connections struct {
	Total      int
	PerSecret  int
	PerAddress int
	// PerOrg and PerEnv cap an organization's and an environment's
	// connections, all their secrets together; zero is Total.
	PerOrg int
	PerEnv int
	// ClientShare is the percentage of Total, of PerOrg and of PerEnv
	// (rounded down) that client SDKs' connections may hold; the rest is
	// kept for server SDKs. Zero is DefaultConnections.ClientShare.
	ClientShare int
}

// DefaultConnections: 10,000 connections (about 90 MB) in all; one
// organization, one environment and one secret each at most half of them,
// so the others keep streaming when one tenant's secrets leak or loop (an
// environment's several secrets together no more than one); one address
// 1,000, more than a fleet of server processes or an office of browsers
// behind one NAT opens, and a tenth of the total. Client SDKs at most 80%
// of each budget: 2,000 places in all, and a fifth of each organization's
// and environment's, stay for server SDKs whatever browsers do. The process
// lowers Total below its descriptor limit.
var DefaultConnections = Connections{Total: 10_000, PerSecret: 5_000, PerAddress: 1_000, PerOrg: 5_000, PerEnv: 5_000, ClientShare: 80}

// place is what one streaming connection counts against.
type place struct {
	addr   string
	secret string // "" for a token that does not parse
	// env and org are the secret's environment and organization; uuid.Nil
	// when it opened none (the connection is closed right after the upgrade).
	env, org uuid.UUID
	// server: a server secret's connection; every other one (a client
	// secret's, or one that opened nothing) takes from the client share.
	server bool
}

// inUse is the connections open in one budget, and how many of them are
// client connections.
type inUse struct{ all, client int }

// budget is one cap and the client share of it.
type budget struct{ all, client int }

func newBudget(all, share int) budget { return budget{all: all, client: all * share / 100} }

// refuses names the cap of b that p does not fit in (all, or client for
// b's client share), or "" when p fits.
func (b budget) refuses(u inUse, p place, all, client string) string {
	switch {
	case u.all >= b.all:
		return all
	case !p.server && u.client >= b.client:
		return client
	}
	return ""
}

// connCounter counts the open streaming connections against their caps.
type connCounter struct {
	total, perOrg, perEnv budget
	perSecret, perAddress int

	mu      sync.Mutex
	all     inUse
	address map[string]int
	secret  map[string]int
	env     map[uuid.UUID]inUse
	org     map[uuid.UUID]inUse
}

func newConnCounter(caps Connections) *connCounter {
	if caps.PerOrg <= 0 {
		caps.PerOrg = caps.Total
	}
	if caps.PerEnv <= 0 {
		caps.PerEnv = caps.Total
	}
	if caps.ClientShare <= 0 {
		caps.ClientShare = DefaultConnections.ClientShare
	}
	return &connCounter{total: newBudget(caps.Total, caps.ClientShare), perOrg: newBudget(caps.PerOrg, caps.ClientShare),
		perEnv: newBudget(caps.PerEnv, caps.ClientShare), perSecret: caps.PerSecret, perAddress: caps.PerAddress,
		address: map[string]int{}, secret: map[string]int{}, env: map[uuid.UUID]inUse{}, org: map[uuid.UUID]inUse{}}
}

// Names of the caps, as refusals are logged.
const (
	capAddress   = "connections per address"
	capSecret    = "connections per secret"
	capEnv       = "connections per environment"
	capEnvClient = "client connections per environment"
	capOrg       = "connections per organization"
	capOrgClient = "client connections per organization"
	capTotal     = "connections"
	capClient    = "client connections"
)

// acquire takes a place for a connection, or returns the status to refuse
// it with and the cap that is full.
func (c *connCounter) acquire(p place) (status int, full string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.address[p.addr] >= c.perAddress:
		return http.StatusTooManyRequests, capAddress
	case p.secret != "" && c.secret[p.secret] >= c.perSecret:
		return http.StatusTooManyRequests, capSecret
	}
	// The server as a whole first: when it is full, that is the answer,
	// whoever asks.
	if full := c.total.refuses(c.all, p, capTotal, capClient); full != "" {
		return http.StatusServiceUnavailable, full
	}
	if p.env != uuid.Nil {
		if full := c.perEnv.refuses(c.env[p.env], p, capEnv, capEnvClient); full != "" {
			return http.StatusTooManyRequests, full
		}
	}
	if p.org != uuid.Nil {
		if full := c.perOrg.refuses(c.org[p.org], p, capOrg, capOrgClient); full != "" {
			return http.StatusTooManyRequests, full
		}
	}
	c.count(p, 1)
	return 0, ""
}

func (c *connCounter) release(p place) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count(p, -1)
}

// count adds n (1 or -1) connections at p to every budget p is in; c.mu is held.
func (c *connCounter) count(p place, n int) {
	c.all = c.all.add(p, n)
	addTo(c.address, p.addr, n)
	if p.secret != "" {
		addTo(c.secret, p.secret, n)
	}
	if p.env != uuid.Nil {
		addInUse(c.env, p.env, p, n)
	}
	if p.org != uuid.Nil {
		addInUse(c.org, p.org, p, n)
	}
}

func (u inUse) add(p place, n int) inUse {
	u.all += n
	if !p.server {
		u.client += n
	}
	return u
}

func addInUse(m map[uuid.UUID]inUse, k uuid.UUID, p place, n int) {
	if u := m[k].add(p, n); u.all > 0 {
		m[k] = u
	} else {
		delete(m, k)
	}
}

// addTo adds n to m[k], forgetting k at zero so the maps hold only what is open.
func addTo[K comparable](m map[K]int, k K, n int) {
	if m[k] += n; m[k] <= 0 {
		delete(m, k)
	}
}

// open is the number of connections open (or being opened).
func (c *connCounter) open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.all.all
}
