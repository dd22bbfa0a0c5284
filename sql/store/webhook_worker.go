package store

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/web/outbound"
)

// WebhookWorkerOptions tune the delivery worker; the zero value is production-ready.
type WebhookWorkerOptions struct {
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
func (f *inFlight) busy() (int, []uuid.UUID, []int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	orgs := make([]uuid.UUID, 0, len(f.byOrg))
	counts := make([]int32, 0, len(f.byOrg))
	for org, n := range f.byOrg {
		orgs = append(orgs, org)
		counts = append(counts, int32(n))
	}
	return f.total, orgs, counts
}

// RunWebhooks sends queued deliveries until ctx ends, then waits for the
// requests under way (each bounded by Timeout) and returns. Every instance
// may run it: a delivery is claimed by one of them. Claims are fair across
// organizations (ClaimWebhookOutbox): each holds at most PerOrganization of
// the Concurrency slots, and due deliveries are taken in turns.
func (s *Store) RunWebhooks(ctx context.Context, o WebhookWorkerOptions) {
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
	client := outbound.NewClient(outbound.Options{AllowPrivate: s.webhookPrivateNetworks, Timeout: o.Timeout})
	// A claimed row is not due again for the lease: longer than a request
	// can take, so another instance cannot send it meanwhile.
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
		// The log keeps WebhookLogDays of attempts; any instance may prune.
		if time.Since(pruned) > time.Hour {
			if _, err := s.q.PruneWebhookDeliveries(ctx, time.Now().AddDate(0, 0, -WebhookLogDays)); err != nil && ctx.Err() == nil {
				s.log.Warn("webhooks: pruning the delivery log failed", "err", err)
			}
			pruned = time.Now()
		}
		total, orgs, counts := flight.busy()
		if free := o.Concurrency - total; free > 0 {
			rows, err := s.q.ClaimWebhookOutbox(ctx, db.ClaimWebhookOutboxParams{LeaseUntil: time.Now().Add(lease),
				BusyOrgs: orgs, BusyCounts: counts, PerOrganization: int32(o.PerOrganization), Max: int32(free)})
			if err != nil && ctx.Err() == nil {
				s.log.Warn("webhooks: claiming deliveries failed", "err", err)
			}
			for _, row := range rows {
				flight.add(row.OrganizationID)
				wg.Add(1)
				go func() {
					defer func() {
						flight.done(row.OrganizationID)
						wg.Done()
						select {
						case freed <- struct{}{}:
						default:
						}
					}()
					// Not ctx: a request under way at shutdown finishes
					// (within Timeout) and is recorded.
					s.deliver(context.WithoutCancel(ctx), client, row, o.Retries)
				}()
			}
			if len(rows) == free {
				continue // more may be due
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.outboxKick:
		case <-freed:
		}
	}
}

// deliver makes one attempt of a claimed outbox row and records it; the
// row is deleted when it succeeded or has no attempt left, and otherwise
// comes due again after the next wait of the schedule.
func (s *Store) deliver(ctx context.Context, client *http.Client, row db.ClaimWebhookOutboxRow, retries []time.Duration) {
	hook, err := s.q.GetWebhookByID(ctx, row.WebhookID)
	if err != nil { // deleted meanwhile: its outbox rows went with it
		return
	}
	if !hook.IsActive { // deactivated since the change: it is sent nothing
		if err := s.q.DeleteWebhookOutbox(ctx, row.ID); err != nil {
			s.log.Warn("webhooks: updating the outbox failed", "webhook", hook.ID, "err", err)
		}
		return
	}
	secret, err := s.webhookSecret(hook)
	if err != nil {
		s.log.Warn("webhooks: the secret does not open with this server key", "webhook", hook.ID)
	}
	at := send(ctx, client, outgoing{hookID: hook.ID, deliveryID: row.ID, target: hook.Url, secret: secret,
		headers: headersOf(hook), events: row.Events, payload: []byte(row.Payload)})
	if _, err := logAttempt(ctx, s.q, hook.ID, row.ID, row.Events, int(row.Attempts), row.EnvIds, at); err != nil {
		s.log.Warn("webhooks: recording a delivery failed", "webhook", hook.ID, "err", err)
	}
	n := int(row.Attempts)
	if at.succeeded || n > len(retries) {
		err = s.q.DeleteWebhookOutbox(ctx, row.ID)
	} else {
		err = s.q.RescheduleWebhookOutbox(ctx, db.RescheduleWebhookOutboxParams{ID: row.ID, DueAt: time.Now().Add(retries[n-1])})
	}
	if err != nil {
		s.log.Warn("webhooks: updating the outbox failed", "webhook", hook.ID, "err", err)
	}
}
