package sdk

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"
)

// Limits bound the public SDK endpoints. Every request counts against its
// client address; requests with a known secret also against that secret;
// requests with an unknown secret also against the address's failures, so
// guessing secrets is slow.
type Limits struct {
	PerAddress   rate.Limit
	AddressBurst int
	PerSecret    rate.Limit
	SecretBurst  int
	Failures     rate.Limit
	FailureBurst int
}

// DefaultLimits are generous enough for application servers that evaluate
// through OFREP on every request they serve.
var DefaultLimits = Limits{
	PerAddress: 1000, AddressBurst: 2000,
	PerSecret: 1000, SecretBurst: 2000,
	Failures: 1, FailureBurst: 20,
}

// Size limits of what SDKs send.
const (
	maxOFREPBody   = 64 << 10
	maxInsightBody = 1 << 20
	maxPollingBody = 64 << 10
	maxFrame       = 32 << 10
)

// limiter is a token bucket per key, forgetting keys idle long enough that
// their bucket would be full again anyway.
type limiter struct {
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

func newLimiter(every rate.Limit, burst int) *limiter {
	return &limiter{every: every, burst: burst, buckets: map[string]*bucket{}}
}

// idle is how long a bucket takes to fill up from empty.
func (l *limiter) idle() time.Duration {
	if l.every <= 0 {
		return time.Minute
	}
	return max(time.Minute, time.Duration(float64(l.burst)/float64(l.every)*float64(time.Second)))
}

func (l *limiter) get(key string, now time.Time) *bucket {
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

// allow takes a token for key, if there is one.
func (l *limiter) allow(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	return l.get(key, now).l.AllowN(now, 1)
}

// exhausted reports whether key has no token left, without taking one.
func (l *limiter) exhausted(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	return l.get(key, now).l.TokensAt(now) < 1
}

// limits are the limiters of one server.
type limits struct {
	address, secret, failures *limiter
}

func newLimits(l Limits) *limits {
	return &limits{address: newLimiter(l.PerAddress, l.AddressBurst), secret: newLimiter(l.PerSecret, l.SecretBurst),
		failures: newLimiter(l.Failures, l.FailureBurst)}
}

// tooMany asks the client to wait: a second is the least Retry-After can say.
func tooMany(c echo.Context) {
	c.Response().Header().Set("Retry-After", "1")
}

// credential is the secret a request presents: X-API-Key, or Authorization
// bare (as FeatBit SDKs send it) or after "Bearer".
func credential(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("X-API-Key")); k != "" {
		return k
	}
	a := strings.TrimSpace(r.Header.Get(echo.HeaderAuthorization))
	if len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return a
}

// cors lets browsers call the public endpoints from any origin: they are
// authenticated by a secret in a header, never by cookies.
func cors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", "ETag, Retry-After")
		if c.Request().Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-API-Key, If-None-Match, X-User-Agent")
			h.Set("Access-Control-Max-Age", "600")
			return c.NoContent(http.StatusNoContent)
		}
		return next(c)
	}
}
