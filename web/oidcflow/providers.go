package oidcflow

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/bunting-flags/bunting/sql/store/iam"
)

// Sign-ins reuse what discovery and the key set said of a provider rather
// than read both again each time: the provider is kept by the settings that
// find it (issuer, or the endpoints discovery starts from), so changing a
// workspace's settings reads it afresh, and for providerTTL at most, for up to
// maxProviders providers. A token the kept keys do not verify makes the
// callback read the provider again once (Identity): providers rotate their
// keys, and the new key is unknown until the key set is read.
const (
	providerTTL  = time.Hour
	maxProviders = 64
)

// providerKey is what finds a provider: the settings discovery reads.
type providerKey struct{ issuer, authorizationEndpoint, tokenEndpoint string }

func providerKeyOf(o iam.OIDCSettings) providerKey {
	return providerKey{o.Issuer, o.AuthorizationEndpoint, o.TokenEndpoint}
}

// providerCache holds the providers read lately; reads of one provider at
// the same time share one fetch.
type providerCache struct {
	mu      sync.Mutex
	kept    map[providerKey]keptProvider
	reading singleflight.Group
	now     func() time.Time
}

type keptProvider struct {
	provider
	read time.Time
}

func newProviderCache() *providerCache {
	return &providerCache{kept: map[providerKey]keptProvider{}, now: time.Now}
}

// get returns the provider for key, read with read when none is kept, the
// kept one is older than providerTTL, or fresh; it reports whether the
// provider came from the cache. A failed read keeps nothing.
func (c *providerCache) get(ctx context.Context, key providerKey, fresh bool, read func(context.Context) (provider, error)) (provider, bool, error) {
	if !fresh {
		c.mu.Lock()
		k, ok := c.kept[key]
		c.mu.Unlock()
		if ok && c.now().Sub(k.read) < providerTTL {
			return k.provider, true, nil
		}
	}
	v, err, _ := c.reading.Do(key.issuer+"\x00"+key.authorizationEndpoint+"\x00"+key.tokenEndpoint, func() (any, error) {
		p, err := read(ctx)
		if err == nil {
			c.keep(key, p)
		}
		return p, err
	})
	return v.(provider), false, err
}

// keep stores a provider just read, making room by forgetting the one read
// longest ago.
func (c *providerCache) keep(key providerKey, p provider) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.kept[key]; !ok && len(c.kept) >= maxProviders {
		var oldest providerKey
		first := true
		for k, kp := range c.kept {
			if first || kp.read.Before(c.kept[oldest].read) {
				oldest, first = k, false
			}
		}
		delete(c.kept, oldest)
	}
	c.kept[key] = keptProvider{provider: p, read: c.now()}
}

// readProvider reads a provider's discovery document and key set.
func (s *Client) readProvider(o iam.OIDCSettings) func(context.Context) (provider, error) {
	return func(ctx context.Context) (provider, error) {
		p, err := s.discover(ctx, o)
		if err == nil {
			p.keys, err = s.SigningKeys(ctx, p.JWKSURI)
		}
		return p, err
	}
}

// provider is the provider of o, kept or read now (fresh: read now); it
// reports whether it was kept.
func (s *Client) provider(ctx context.Context, o iam.OIDCSettings, fresh bool) (provider, bool, error) {
	return s.providers.get(ctx, providerKeyOf(o), fresh, s.readProvider(o))
}
