package webhooks

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// WebhookClaim is what a delivery worker may take now (ClaimWebhookDeliveries).
type WebhookClaim struct {
	// Max is how many deliveries the worker has room for.
	Max int
	// PerOrganization is how many of the worker's deliveries one
	// organization may hold; Busy is how many each holds already.
	PerOrganization int
	Busy            map[uuid.UUID]int
	// LeaseUntil is when a claimed delivery is due again should this
	// instance not finish it: later than a request can take.
	LeaseUntil time.Time
}

// ClaimWebhookDeliveries takes due deliveries from the webhook outbox for one
// worker, fairly across organizations (ClaimWebhookOutbox): a delivery is
// claimed by one worker of all instances. A delivery whose webhook was
// deactivated since its change is dropped: it is sent nothing.
func (s *Webhooks) ClaimWebhookDeliveries(ctx context.Context, c WebhookClaim) ([]WebhookSend, error) {
	orgs := make([]uuid.UUID, 0, len(c.Busy))
	counts := make([]int32, 0, len(c.Busy))
	for org, n := range c.Busy {
		orgs = append(orgs, org)
		counts = append(counts, int32(n))
	}
	rows, err := s.core.Q.ClaimWebhookOutbox(ctx, db.ClaimWebhookOutboxParams{LeaseUntil: c.LeaseUntil,
		BusyOrgs: orgs, BusyCounts: counts, PerOrganization: int32(c.PerOrganization), Max: int32(c.Max)})
	if err != nil {
		return nil, core.Translate(err)
	}
	sends := make([]WebhookSend, 0, len(rows))
	for _, row := range rows {
		hook, err := s.core.Q.GetWebhookByID(ctx, row.WebhookID)
		if err != nil { // deleted meanwhile: its outbox rows went with it
			continue
		}
		if !hook.IsActive {
			if err := s.core.Q.DeleteWebhookOutbox(ctx, row.ID); err != nil {
				s.core.Log.Warn("webhooks: updating the outbox failed", "webhook", hook.ID, "err", err)
			}
			continue
		}
		secret, err := s.WebhookSecret(hook)
		if err != nil {
			s.core.Log.Warn("webhooks: the secret does not open with this server key", "webhook", hook.ID)
		}
		sends = append(sends, WebhookSend{WebhookID: hook.ID, OrganizationID: row.OrganizationID, DeliveryID: row.ID,
			URL: hook.Url, Secret: secret, Headers: headersOf(hook), Events: row.Events, Payload: []byte(row.Payload),
			Attempt: int(row.Attempts), EnvIDs: row.EnvIds, QueuedAt: row.CreatedAt, Trace: traceOf(row.Trace)})
	}
	return sends, nil
}

// FinishWebhookDelivery takes a claimed delivery off the outbox once it
// succeeded or has no attempt left (retryAt zero), or makes it due again
// at retryAt.
func (s *Webhooks) FinishWebhookDelivery(ctx context.Context, d WebhookSend, retryAt time.Time) error {
	if retryAt.IsZero() {
		return core.Translate(s.core.Q.DeleteWebhookOutbox(ctx, d.DeliveryID))
	}
	return core.Translate(s.core.Q.RescheduleWebhookOutbox(ctx, db.RescheduleWebhookOutboxParams{ID: d.DeliveryID, DueAt: retryAt}))
}

// PruneWebhookLog forgets attempts older than WebhookLogDays; any
// instance may.
func (s *Webhooks) PruneWebhookLog(ctx context.Context) error {
	_, err := s.core.Q.PruneWebhookDeliveries(ctx, time.Now().AddDate(0, 0, -WebhookLogDays))
	return core.Translate(err)
}

// WebhooksQueued is signalled after a transaction that queued webhook
// deliveries commits on this instance, so its worker sends them now
// rather than at its next poll.
func (s *Webhooks) WebhooksQueued() <-chan struct{} { return s.core.OutboxKick }

// traceOf is a queued delivery's trace context, "" when it has none.
func traceOf(trace *string) string {
	if trace == nil {
		return ""
	}
	return *trace
}
