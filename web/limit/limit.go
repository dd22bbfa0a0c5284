// Package limit holds the rate limits of the HTTP edge: a token bucket per
// key (Limiter), and the policies of the management surfaces (Edge) that the
// API and the pages apply before they ask the store for work. The SDK
// endpoints keep their own policies (web/sdk) on the same Limiter.
package limit

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter is a token bucket per key kept in memory: each instance limits on
// its own, which bounds the rate behind a load balancer by the instance
// count. It is the one rate limiter of the process: the management
// surfaces' policies (Edge) and the SDK endpoints' sit on it.
type Limiter struct {
	every rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	l    *rate.Limiter
	seen time.Time
}

// maxBuckets bounds a limiter's memory; past it, idle buckets are dropped
// and, if that is not enough, all of them (a flood of new addresses).
const maxBuckets = 100_000

// New returns a limiter whose buckets refill at every tokens a second and
// hold burst.
func New(every rate.Limit, burst int) *Limiter {
	return &Limiter{every: every, burst: burst, buckets: map[string]*bucket{}}
}

// idle is how long a bucket takes to fill up from empty: a bucket idle that
// long is full, so forgetting it changes nothing.
func (l *Limiter) idle() time.Duration {
	if l.every <= 0 {
		return time.Minute
	}
	return max(time.Minute, time.Duration(float64(l.burst)/float64(l.every)*float64(time.Second)))
}

func (l *Limiter) get(key string, now time.Time) *bucket {
	if now.Sub(l.swept) > l.idle() || len(l.buckets) >= maxBuckets {
		for k, b := range l.buckets {
			if now.Sub(b.seen) > l.idle() {
				delete(l.buckets, k)
			}
		}
		if len(l.buckets) >= maxBuckets {
			l.buckets = map[string]*bucket{}
		}
		l.swept = now
	}
	b := l.buckets[key]
	if b == nil {
		b = &bucket{l: rate.NewLimiter(l.every, l.burst)}
		l.buckets[key] = b
	}
	b.seen = now
	return b
}

// Allow takes a token from every key's bucket; all must have one. Every
// bucket pays even when another refuses, so no key is spared by asking
// together with one that is exhausted.
func (l *Limiter) Allow(keys ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	ok := true
	for _, k := range keys {
		if !l.get(k, now).l.AllowN(now, 1) {
			ok = false
		}
	}
	return ok
}

// Exhausted reports whether key has no token left, without taking one.
func (l *Limiter) Exhausted(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	return l.get(key, now).l.TokensAt(now) < 1
}

// AllowUpTo takes as many of n tokens as key's bucket holds, and answers
// how many it took: a batch (a report's evaluations, a write's new end
// users) keeps what fits and drops the rest, where Allow would refuse all.
func (l *Limiter) AllowUpTo(key string, n int) int {
	if n <= 0 {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	b := l.get(key, now).l
	take := min(n, int(b.TokensAt(now)))
	if take <= 0 || !b.AllowN(now, take) {
		return 0
	}
	return take
}
