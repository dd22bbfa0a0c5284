package sdk

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/bunting-flags/bunting/sql/store/experiments"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/web/limit"
	"github.com/bunting-flags/bunting/web/metrics"
)

// Limits bound the public SDK endpoints. A request with a secret this
// instance knows counts against that secret only, so one busy backend (an
// OFREP provider asks once per evaluation) is never cut off by its
// address; every other request (no secret, an unknown one, a streaming
// upgrade) counts against its client address, and an unknown secret also
// against the address's failures, so guessing secrets is slow.
type Limits struct {
	PerAddress   rate.Limit
	AddressBurst int
	PerSecret    rate.Limit
	SecretBurst  int
	Failures     rate.Limit
	FailureBurst int
	// EndUsersPerSecret is how many new end users (keys their environment
	// does not keep yet) one secret may add a minute; past it they are
	// dropped when written. EvaluationsPerSecret is how many reported
	// evaluations one secret may have counted a second (bursts of twice
	// that); past it a report's rest is dropped. Both are answered as if
	// kept, since an SDK does not retry. Zero takes the default.
	EndUsersPerSecret    int
	EvaluationsPerSecret int
	// ExperimentEventsPerSecret is how many experiment events (exposures
	// with sendToExperiment, and metric events) one secret may have
	// recorded a second (bursts of twice that); past it a report's rest is
	// dropped, answered as if kept. Zero takes the default.
	ExperimentEventsPerSecret int
}

// DefaultLimits: a secret may ask 10,000 times a second (bursts of 20,000),
// which is more than one instance evaluates on two cores, so the limit only
// keeps one environment's runaway fleet from taking all of it; an address
// without a known secret 1,000 times a second; unknown secrets one a second
// after 20. A secret adds at most 10,000 new end users a minute (14 million
// a day, more than most sites see; the environment's cap, 1,000,000 by
// default, is then reached in 100 minutes, not a second) and has 10,000
// evaluations a second counted (a report of a thousand browsers' batches).
var DefaultLimits = Limits{
	PerAddress: 1000, AddressBurst: 2000,
	PerSecret: 10_000, SecretBurst: 20_000,
	Failures: 1, FailureBurst: 20,
	EndUsersPerSecret: 10_000, EvaluationsPerSecret: 10_000, ExperimentEventsPerSecret: 10_000,
}

// Size limits of what SDKs send.
const (
	maxOFREPBody   = 64 << 10
	maxInsightBody = 1 << 20
	maxPollingBody = 64 << 10
	maxFrame       = 32 << 10
)

// limits are the limiters of one server.
type limits struct {
	address, secret, failures *limit.Limiter
	// endUsers and evaluations bound what one secret writes: a client
	// secret is in every browser, so the per-environment bounds alone would
	// let anyone fill an environment from one.
	endUsers, evaluations *limit.Limiter
	// experimentEvents bounds the experiment events one secret records: a
	// client secret is public, so anyone holding one could otherwise skew
	// an experiment's results with made-up users.
	experimentEvents *limit.Limiter
}

func newLimits(l Limits) *limits {
	if l.EndUsersPerSecret <= 0 {
		l.EndUsersPerSecret = DefaultLimits.EndUsersPerSecret
	}
	if l.EvaluationsPerSecret <= 0 {
		l.EvaluationsPerSecret = DefaultLimits.EvaluationsPerSecret
	}
	if l.ExperimentEventsPerSecret <= 0 {
		l.ExperimentEventsPerSecret = DefaultLimits.ExperimentEventsPerSecret
	}
	return &limits{address: limit.New(l.PerAddress, l.AddressBurst), secret: limit.New(l.PerSecret, l.SecretBurst),
		failures:         limit.New(l.Failures, l.FailureBurst),
		endUsers:         limit.New(rate.Limit(float64(l.EndUsersPerSecret)/60), l.EndUsersPerSecret),
		evaluations:      limit.New(rate.Limit(l.EvaluationsPerSecret), 2*l.EvaluationsPerSecret),
		experimentEvents: limit.New(rate.Limit(l.ExperimentEventsPerSecret), 2*l.ExperimentEventsPerSecret)}
}

// admitNewEndUsers is the end-user buffer's limit (runner.LimitNew): how
// many of n new end users the secret may add now; the rest are counted as
// dropped.
func (s *Server) admitNewEndUsers(secretID uuid.UUID, n int) int {
	granted := s.limits.endUsers.AllowUpTo(secretID.String(), n)
	s.metrics.SDKDropped(metrics.DroppedEndUsers, n-granted)
	return granted
}

// admitEvaluations keeps as many of a report's evaluations as the secret
// may have counted now, counting the rest as dropped.
func (s *Server) admitEvaluations(secretID uuid.UUID, counts []sdkdata.EvaluationCount) []sdkdata.EvaluationCount {
	granted := s.limits.evaluations.AllowUpTo(secretID.String(), len(counts))
	s.metrics.SDKDropped(metrics.DroppedEvaluations, len(counts)-granted)
	return counts[:granted]
}

// admitExperimentEvents keeps as many of a report's experiment events as
// the secret may have recorded now (exposures first: a conversion without
// its exposure counts for nothing), counting the rest as dropped.
func (s *Server) admitExperimentEvents(secretID uuid.UUID, ev experiments.Events) experiments.Events {
	n := ev.Len()
	if n == 0 {
		return ev
	}
	granted := s.limits.experimentEvents.AllowUpTo(secretID.String(), n)
	s.metrics.SDKDropped(metrics.DroppedExperimentEvents, n-granted)
	if granted < len(ev.Exposures) {
		return experiments.Events{Exposures: ev.Exposures[:granted]}
	}
	ev.Conversions = ev.Conversions[:granted-len(ev.Exposures)]
	return ev
}

// refuse answers nothing yet but prepares a refusal past a limit: it asks
// the client to wait (a second is the least Retry-After can say) and counts
// the refusal for the summary log. A client past its limit may send
// thousands a second; one log line each would drown the log.
func (s *Server) refuse(c echo.Context, limit, key string) {
	c.Response().Header().Set("Retry-After", "1")
	c.Set(summarizedKey, true)
	s.refusals.add(limit, key)
	s.metrics.SDKRefused(refusalKind(c), strings.ReplaceAll(limit, " ", "_")) // limit is one of a few constants
}

// refusalKind is the metrics' kind of a refused request: the SDK kind a
// streaming upgrade asked for, or a request to the HTTP endpoints.
func refusalKind(c echo.Context) string {
	if c.Path() != "/streaming" {
		return metrics.KindRequest
	}
	if c.QueryParam("type") == typeServer {
		return metrics.KindServer
	}
	return metrics.KindClient
}

const summarizedKey = "sdk.refusal"

// LoggedInSummary reports whether the request was refused past a limit and
// is logged in the refusal summary, so the request logger skips it.
func LoggedInSummary(c echo.Context) bool {
	v, _ := c.Get(summarizedKey).(bool)
	return v
}

// refusals counts refused requests by limit and key and logs them once per
// interval: one line for each, with the count.
type refusals struct {
	log   *slog.Logger
	every time.Duration

	mu     sync.Mutex
	counts map[refusalKey]int // nil while no summary is due
	other  int                // refusals of keys past maxRefusalKeys
}

type refusalKey struct{ limit, key string }

// maxRefusalKeys bounds one summary; a flood of addresses is summed up.
const maxRefusalKeys = 100

func (r *refusals) add(limit, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counts == nil {
		r.counts = map[refusalKey]int{}
		time.AfterFunc(r.every, r.flush)
	}
	k := refusalKey{limit, key}
	if _, ok := r.counts[k]; !ok && len(r.counts) >= maxRefusalKeys {
		r.other++
		return
	}
	r.counts[k]++
}

func (r *refusals) flush() {
	r.mu.Lock()
	counts, other := r.counts, r.other
	r.counts, r.other = nil, 0
	r.mu.Unlock()
	for k, n := range counts {
		r.log.Warn("sdk: requests refused past a limit", "limit", k.limit, "key", k.key, "count", n, "interval", r.every)
	}
	if other > 0 {
		r.log.Warn("sdk: requests refused past a limit", "limit", "any", "key", "others", "count", other, "interval", r.every)
	}
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
