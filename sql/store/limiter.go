package store

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiter is a per-key token bucket kept in memory: each instance limits on
// its own, which bounds the rate behind a load balancer by the instance count.
type limiter struct {
	every time.Duration
	burst int

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	limit *rate.Limiter
	seen  time.Time
}

func newLimiter(every time.Duration, burst int) *limiter {
	return &limiter{every: every, burst: burst, buckets: map[string]*bucket{}}
}

// allow takes one token from every key's bucket; all must have one.
func (l *limiter) allow(keys ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if len(l.buckets) > 10_000 { // forget keys idle long enough to be full again
		for k, b := range l.buckets {
			if now.Sub(b.seen) > l.every*time.Duration(l.burst) {
				delete(l.buckets, k)
			}
		}
	}
	ok := true
	for _, k := range keys {
		b := l.buckets[k]
		if b == nil {
			b = &bucket{limit: rate.NewLimiter(rate.Every(l.every), l.burst)}
			l.buckets[k] = b
		}
		b.seen = now
		if !b.limit.AllowN(now, 1) {
			ok = false
		}
	}
	return ok
}
