package webhook

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
	"github.com/bunting-flags/bunting/web/metrics"
	"github.com/bunting-flags/bunting/web/outbound"
)

// Options tune the delivery worker; the zero value is production-ready.
type Options struct {
	// Poll is how often the outbox is looked at when nothing wakes the
	// worker; one second when zero.
	Poll time.Duration
	// Retries are the waits before each attempt after the first; a
	// delivery gets len(Retries)+1 attempts. 10s, 1m, 5m, 30m when nil.
	Retries []time.Duration
	// Timeout bounds one request, answer included; 10 seconds when zero.
	Timeout time.Duration
	// Concurrency is how many deliveries one instance sends at once, so a
	// receiver that hangs holds only its own; 8 when zero.
	Concurrency int
	// PerOrganization is how many of them one organization's deliveries
	// may hold, so its receivers that hang leave the others to everyone
	// else; a quarter of Concurrency (at least one) when zero.
	PerOrganization int
	// Metrics, when set, counts the attempts by result and how long new
	// deliveries waited.
	Metrics *metrics.Metrics
	// Tracer, when set, traces each delivery (span webhook.deliver) under
	// the request whose change queued it; nil when tracing is off.
	Tracer trace.TracerProvider
}

// inFlight counts the deliveries this instance is sending, in all and by
// organization, for fair claims.
type inFlight struct {
	mu    sync.Mutex
	total int
	byOrg map[uuid.UUID]int
}

func (f *inFlight) add(org uuid.UUID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.total++
	f.byOrg[org]++
}

func (f *inFlight) done(org uuid.UUID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.total--
	if f.byOrg[org]--; f.byOrg[org] == 0 {
		delete(f.byOrg, org)
	}
}

// busy says how many are in flight in all and by organization.
func (f *inFlight) busy() (int, map[uuid.UUID]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	byOrg := make(map[uuid.UUID]int, len(f.byOrg))
	for org, n := range f.byOrg {
		byOrg[org] = n
	}
	return f.total, byOrg
}

// Run sends the deliveries queued in st's outbox until ctx ends, then
// waits for the requests under way (each bounded by Timeout) and returns.
// Every instance may run it: a delivery is claimed by one of them. Claims
// are fair across organizations (store.ClaimWebhookDeliveries): each holds
// at most PerOrganization of the Concurrency slots, and due deliveries are
// taken in turns.
func Run(ctx context.Context, st *store.Store, log *slog.Logger, o Options) {
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Retries == nil {
		o.Retries = []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute}
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if o.PerOrganization <= 0 {
		o.PerOrganization = max(1, o.Concurrency/4)
	}
	w := &worker{store: st, log: log, opts: o,
		client: outbound.NewClient(outbound.Options{AllowPrivate: st.Webhooks().WebhookAllowPrivateNetworks(), Timeout: o.Timeout})}
	if o.Tracer != nil {
		w.tracer = o.Tracer.Tracer("github.com/bunting-flags/bunting/web/webhook")
	}
	// A claimed delivery is not due again for the lease: longer than a
	// request can take, so another instance cannot send it meanwhile.
	lease := o.Timeout + 30*time.Second
	flight := &inFlight{byOrg: map[uuid.UUID]int{}}
	// freed wakes the loop when a delivery ends: an organization that was at
	// its share may have more due.
	freed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(o.Poll)
	defer tick.Stop()
	var pruned time.Time
	for {
		// The log keeps store.WebhookLogDays of attempts; any instance may prune.
		if time.Since(pruned) > time.Hour {
			if err := st.Webhooks().PruneWebhookLog(ctx); err != nil && ctx.Err() == nil {
				log.Warn("webhooks: pruning the delivery log failed", "err", err)
			}
			pruned = time.Now()
		}
		total, busy := flight.busy()
		if free := o.Concurrency - total; free > 0 {
			sends, err := st.Webhooks().ClaimWebhookDeliveries(ctx, webhooks.WebhookClaim{Max: free, PerOrganization: o.PerOrganization,
				Busy: busy, LeaseUntil: time.Now().Add(lease)})
			if err != nil && ctx.Err() == nil {
				log.Warn("webhooks: claiming deliveries failed", "err", err)
			}
			for _, d := range sends {
				if d.Attempt == 1 {
					o.Metrics.WebhookQueued(time.Since(d.QueuedAt))
				}
				flight.add(d.OrganizationID)
				wg.Go(func() {
					defer func() {
						flight.done(d.OrganizationID)
						select {
						case freed <- struct{}{}:
						default:
						}
					}()
					// Not ctx: a request under way at shutdown finishes
					// (within Timeout) and is recorded.
					w.deliver(context.WithoutCancel(ctx), d)
				})
			}
			if len(sends) == free {
				continue // more may be due
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-st.Webhooks().WebhooksQueued():
		case <-freed:
		}
	}
}

// worker is what Run's deliveries share.
type worker struct {
	store  *store.Store
	log    *slog.Logger
	opts   Options
	client *http.Client
	tracer trace.Tracer // nil when tracing is off
}

// deliver makes one attempt of a claimed delivery and records it; the
// delivery leaves the outbox when it succeeded or has no attempt left, and
// otherwise comes due again after the next wait of the schedule.
func (w *worker) deliver(ctx context.Context, d webhooks.WebhookSend) {
	span := trace.SpanFromContext(ctx) // not recording, unless traced below
	if w.tracer != nil {
		ctx, span = deliverSpan(ctx, w.tracer, d)
		defer span.End()
	}
	at := send(ctx, w.client, d)
	switch {
	case d.Refused != "":
		w.opts.Metrics.WebhookDelivered("refused")
	case at.Succeeded:
		w.opts.Metrics.WebhookDelivered("success")
	default:
		w.opts.Metrics.WebhookDelivered("failure")
	}
	recordAttempt(span, at)
	if _, err := w.store.Webhooks().LogWebhookAttempt(ctx, d, at); err != nil {
		w.log.Warn("webhooks: recording a delivery failed", "webhook", d.WebhookID, "err", err)
	}
	var retryAt time.Time
	if !at.Succeeded && d.Attempt <= len(w.opts.Retries) {
		retryAt = time.Now().Add(w.opts.Retries[d.Attempt-1])
	}
	if err := w.store.Webhooks().FinishWebhookDelivery(ctx, d, retryAt); err != nil {
		w.log.Warn("webhooks: updating the outbox failed", "webhook", d.WebhookID, "err", err)
	}
}
