// Package actorcache keeps the actors the API and the pages resolved from
// credentials, so that while nothing about access changes a request costs no
// database round trip to authenticate and authorize. It trusts what it keeps
// only while the store's listener listens for access changes
// (store.AccessVersion): any change, made here or on another instance, and
// any lost connection, empties it.
package actorcache

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// Cache is one process's resolved actors.
type Cache struct {
	store *store.Store

	mu      sync.Mutex
	entries map[[32]byte]*cachedActor
	// version is the store's access version the entries were resolved at.
	version int64
	hits    int64
}

type cachedActor struct {
	actor core.Actor
	// page is the rest of a page's session (SignedIn), whose Actor is actor.
	page iam.PageSession
	// touched is when the token's last use was last written (tokens only).
	touched time.Time
}

const maxCachedActors = 10_000

// touchEvery is how often a cached access token's last use is written.
const touchEvery = time.Minute

// New returns an empty cache over st.
func New(st *store.Store) *Cache {
	return &Cache{store: st, entries: map[[32]byte]*cachedActor{}}
}

func cacheKey(c iam.Credentials, token string) [32]byte {
	return sha256.Sum256([]byte(token + "\x00" + c.Workspace + "\x00" + c.Organization))
}

// Authenticate resolves credentials to an actor (store.Authenticate), from
// memory when access has not changed since it was resolved. A session
// token's signature and expiry are checked every time, without the
// database; whether the session has ended is in the cache or the database.
func (c *Cache) Authenticate(ctx context.Context, creds iam.Credentials) (*core.Actor, error) {
	token, accessToken, err := c.store.IAM().Bearer(creds)
	if err != nil {
		return nil, err
	}
	key := cacheKey(creds, token)
	if e, touch, hit := c.get(key, accessToken); hit {
		a := &e.actor
		a.Address = creds.Address
		if touch {
			if err := c.store.Projects().TouchAccessToken(ctx, a.TokenID); err != nil {
				return nil, err
			}
		}
		return a, nil
	}
	// An access change made while this actor is resolved must not be
	// cached over: put drops the actor when the version moved meanwhile.
	version, _ := c.store.Projects().AccessVersion()
	a, err := c.store.IAM().Authenticate(ctx, creds)
	if err != nil {
		return nil, err
	}
	c.put(key, cachedActor{actor: *a}, version)
	return a, nil
}

// pageKey is what a page's session is cached under: its token alone, the
// place it works in being part of what is cached.
func pageKey(token string) [32]byte { return sha256.Sum256([]byte(token + "\x00page")) }

// SignedIn resolves a page's session cookie token (store.PageSession), from
// memory when nothing about access, the person or where they work has
// changed since (migration 0047 makes those changes empty the cache too).
// Its signature and expiry are checked every time, as Authenticate's.
func (c *Cache) SignedIn(ctx context.Context, token string) (iam.PageSession, error) {
	token, accessToken, err := c.store.IAM().Bearer(iam.Credentials{Authorization: token})
	if err != nil || accessToken {
		return iam.PageSession{}, core.ErrUnauthenticated
	}
	key := pageKey(token)
	if e, _, hit := c.get(key, false); hit {
		ps := e.page
		ps.Actor = &e.actor
		return ps, nil
	}
	version, _ := c.store.Projects().AccessVersion()
	ps, err := c.store.IAM().PageSession(ctx, token)
	if err != nil {
		return iam.PageSession{}, err
	}
	kept := ps
	kept.Actor = nil // the entry's actor stands in for it
	c.put(key, cachedActor{actor: *ps.Actor, page: kept}, version)
	return ps, nil
}

// sync empties the cache when the store's access version moved since the
// entries were resolved, and reports whether the store watches for changes
// at all. c.mu is held.
func (c *Cache) sync() bool {
	version, watched := c.store.Projects().AccessVersion()
	if version != c.version {
		clear(c.entries)
		c.version = version
	}
	return watched
}

// get returns a copy of a cached entry, so callers cannot change the cache
// (the slices it holds are never written), and whether an access token's
// use is due to be written.
func (c *Cache) get(key [32]byte, accessToken bool) (e *cachedActor, touch, hit bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.sync() {
		return nil, false, false
	}
	kept, ok := c.entries[key]
	if !ok {
		return nil, false, false
	}
	c.hits++
	if accessToken && time.Since(kept.touched) > touchEvery {
		kept.touched, touch = time.Now(), true
	}
	copied := *kept
	return &copied, touch, true
}

// put caches an actor resolved from the database at the store's access
// version; if the version moved since, the actor may predate the change
// that moved it (a session ended, a membership removed) and is not kept.
func (c *Cache) put(key [32]byte, e cachedActor, version int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.sync() || c.version != version {
		return
	}
	if len(c.entries) >= maxCachedActors {
		clear(c.entries)
	}
	e.touched = time.Now()
	c.entries[key] = &e
}

// Hits is how many requests were authorized from the cache.
func (c *Cache) Hits() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits
}
