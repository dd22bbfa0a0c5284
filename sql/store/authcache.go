package store

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/google/uuid"
)

// authChannel is notified, by database triggers, of every committed change to
// credentials, memberships, policies or their attachments (migration 0012).
const authChannel = "bunting_auth"

// authCache keeps resolved actors so that, while nothing about access changes,
// a request costs no database round trip to authenticate and authorize. It is
// trusted only while the store's listener (feed.Listener) listens on
// authChannel: any notification, and any lost connection, empties it.
type authCache struct {
	mu        sync.Mutex
	listening bool
	entries   map[[32]byte]*cachedActor
	hits      int64
	// generation counts invalidations; changes marks changes made here.
	generation int64
	changes    int64
}

type cachedActor struct {
	actor *Actor
	// touched is when the token's last use was last written (tokens only).
	touched time.Time
}

const maxCachedActors = 10_000

func newAuthCache() *authCache { return &authCache{entries: map[[32]byte]*cachedActor{}} }

func cacheKey(c Credentials, token string) [32]byte {
	return sha256.Sum256([]byte(token + "\x00" + c.Workspace + "\x00" + c.Organization))
}

// get returns a copy of a cached actor, so callers cannot change the cache.
func (c *authCache) get(key [32]byte) (*cachedActor, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !c.listening {
		return nil, false
	}
	c.hits++
	return e, true
}

// gen is the cache's generation, to hand to put.
func (c *authCache) gen() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.generation
}

// put caches an actor resolved from the database after gen() answered
// generation; if the cache was emptied since, the actor may predate the
// change that emptied it (a session ended, a membership removed) and is
// not kept.
func (c *authCache) put(key [32]byte, a *Actor, generation int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.listening || c.generation != generation {
		return
	}
	if len(c.entries) >= maxCachedActors {
		clear(c.entries)
	}
	c.entries[key] = &cachedActor{actor: a, touched: time.Now()}
}

// invalidate forgets every cached actor.
func (c *authCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.generation++
}

// changeCount is how many access changes this instance has made.
func (c *authCache) changeCount() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changes
}

// up follows the listening connection: the cache is trusted only while it
// is up, and whatever it held when it went up or down may be stale.
func (c *authCache) up(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listening = on
	clear(c.entries)
	c.generation++
}

// AccessGeneration counts the times the actor cache was emptied; tests that
// change access behind the store's back wait for it to move.
func (s *Store) AccessGeneration() int64 {
	s.auth.mu.Lock()
	defer s.auth.mu.Unlock()
	return s.auth.generation
}

// AuthCacheHits is how many requests were authorized from the cache.
func (s *Store) AuthCacheHits() int64 {
	s.auth.mu.Lock()
	defer s.auth.mu.Unlock()
	return s.auth.hits
}

// accessChanged marks a change to access made through this instance: its
// cache forgets at once and again when the transaction commits (inTx), before
// the notification comes back, so the change's author sees it on the very
// next request.
func (s *Store) accessChanged() {
	s.auth.mu.Lock()
	s.auth.changes++
	s.auth.mu.Unlock()
	s.auth.invalidate()
}

// touchToken records a token's use at most once a minute.
func (s *Store) touchToken(ctx context.Context, e *cachedActor, id uuid.UUID) error {
	s.auth.mu.Lock()
	due := time.Since(e.touched) > time.Minute
	if due {
		e.touched = time.Now()
	}
	s.auth.mu.Unlock()
	if !due {
		return nil
	}
	return translate(s.q.TouchAccessToken(ctx, id))
}
