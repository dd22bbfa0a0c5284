package store

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/web/outbound"
)

// WebhookRequest is FeatBit's SendWebhook body: a request to make now.
type WebhookRequest struct {
	ID                   uuid.UUID       `json:"id"`
	DeliveryID           string          `json:"deliveryId"`
	URL                  string          `json:"url"`
	Name                 string          `json:"name"`
	Secret               string          `json:"secret"`
	Headers              []WebhookHeader `json:"headers"`
	Events               string          `json:"events"`
	Payload              string          `json:"payload"`
	PreventEmptyPayloads bool            `json:"preventEmptyPayloads"`
}

// MaxWebhookPayload bounds the payload of a request sent by hand.
const MaxWebhookPayload = 256 << 10

// storedOnlyForOwnURL says why SecretMask cannot be used: the request is
// not to the URL of a stored webhook.
const storedOnlyForOwnURL = "stands for the stored value, which is sent only to the webhook's own URL"

// SendWebhook makes a request now, as FeatBit's "send" does for the
// webhook form's test: it waits for the answer (at most the outbound
// timeout) and says how it went. When id names one of the organization's
// webhooks the attempt goes into its log. The stored secret and header
// values go only to the webhook's stored URL: there an empty or masked
// secret, and a masked header value, mean the stored ones. The request
// names its URL and payload, so signing another URL with the stored secret
// would let whoever may send forge a delivery any receiver trusting that
// secret accepts; to another URL an empty secret sends unsigned, and the
// mask is refused (400 secret_is_invalid, headers_is_invalid).
func (s *Store) SendWebhook(ctx context.Context, a *Actor, in WebhookRequest) (WebhookDelivery, error) {
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return WebhookDelivery{}, err
	}
	var v validator
	v.required("deliveryId", in.DeliveryID, MaxNameLen)
	if in.URL == "" {
		v.add("url", "required")
	} else if !validWebhookURL(in.URL) {
		v.add("url", "invalid")
	}
	v.required("events", in.Events, 1024)
	if in.Payload == "" {
		v.add("payload", "required")
	} else if len(in.Payload) > MaxWebhookPayload || !json.Valid([]byte(in.Payload)) {
		v.add("payload", "invalid")
	}
	v.text("secret", in.Secret, MaxWebhookSecretLen)
	checkHeaders(&v, in.Headers)
	if err := v.err(); err != nil {
		return WebhookDelivery{}, err
	}
	deliveryID, err := uuid.Parse(in.DeliveryID)
	if err != nil {
		deliveryID = uuid.New()
	}
	var hook *db.Webhook
	if in.ID != uuid.Nil {
		row, err := s.q.GetWebhook(ctx, db.GetWebhookParams{OrganizationID: orgID, ID: in.ID})
		if err != nil {
			return WebhookDelivery{}, translate(err)
		}
		hook = &row
	}
	var stored []WebhookHeader
	if own := hook != nil && in.URL == hook.Url; own {
		stored = headersOf(*hook)
		if in.Secret == "" || in.Secret == SecretMask {
			in.Secret, _ = s.webhookSecret(*hook)
		}
	} else if in.Secret == SecretMask {
		v.at("secret", "invalid", "secret", SecretMask+" "+storedOnlyForOwnURL)
	}
	in.Headers = unmaskHeaders(&v, in.Headers, stored, storedOnlyForOwnURL)
	if err := v.err(); err != nil {
		return WebhookDelivery{}, err
	}
	o := outgoing{hookID: in.ID, deliveryID: deliveryID, target: in.URL, secret: in.Secret, headers: in.Headers,
		events: in.Events, payload: []byte(in.Payload)}
	if in.PreventEmptyPayloads && strings.TrimSpace(strings.Join(strings.Fields(in.Payload), "")) == "{}" {
		return WebhookDelivery{WebhookID: in.ID, Error: &DeliveryErrorInfo{Message: "Not allowed to send an empty JSON object"},
			Request: recordRequest(in.URL, http.Header{}, nil, o.payload)}, nil
	}
	return s.sendNow(ctx, hook, o)
}

// sendNow makes a request sent by hand and, for a stored webhook, logs it.
func (s *Store) sendNow(ctx context.Context, hook *db.Webhook, o outgoing) (WebhookDelivery, error) {
	at := send(ctx, s.sendClient(), o)
	if hook == nil {
		d := deliveryOut(db.WebhookDelivery{DeliveryID: o.deliveryID, Events: o.events, Attempt: 1, Success: at.succeeded,
			StatusCode: at.status, LatencyMs: int32(at.ended.Sub(at.started).Milliseconds()), Request: at.request,
			Response: at.excerpt, Error: at.err, StartedAt: at.started, EndedAt: at.ended})
		return d, nil
	}
	return logAttempt(ctx, s.q, hook.ID, o.deliveryID, o.events, 1, nil, at)
}

// sendClient is the outbound client of requests sent by hand, made once so
// its connections are reused.
func (s *Store) sendClient() *http.Client {
	s.sendClientOnce.Do(func() {
		s.sendHTTP = outbound.NewClient(outbound.Options{AllowPrivate: s.webhookPrivateNetworks})
	})
	return s.sendHTTP
}

// SendWebhookTest sends a webhook a test delivery ("Send test" on its
// page): FeatBit's data object with the event "test", signed and logged
// like any delivery, and waits for the answer.
func (s *Store) SendWebhookTest(ctx context.Context, a *Actor, id uuid.UUID) (WebhookDelivery, error) {
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return WebhookDelivery{}, err
	}
	row, err := s.q.GetWebhook(ctx, db.GetWebhookParams{OrganizationID: orgID, ID: id})
	if err != nil {
		return WebhookDelivery{}, translate(err)
	}
	org, err := s.q.GetOrganization(ctx, orgID)
	if err != nil {
		return WebhookDelivery{}, translate(err)
	}
	payload, err := json.Marshal(map[string]any{"events": EventTest, "operator": operatorName(ctx, s.q, a),
		"happenedAt": time.Now().UTC(), "organization": idName{org.ID, org.Name},
		"data":    map[string]any{"kind": "test", "object": map[string]any{"webhook": idName{row.ID, row.Name}}},
		"changes": []string{"A test delivery from Bunting"}})
	if err != nil {
		return WebhookDelivery{}, err
	}
	secret, _ := s.webhookSecret(row)
	return s.sendNow(ctx, &row, outgoing{hookID: row.ID, deliveryID: uuid.New(), target: row.Url, secret: secret,
		headers: headersOf(row), events: EventTest, payload: payload})
}

func headersOf(row db.Webhook) []WebhookHeader {
	var h []WebhookHeader
	_ = json.Unmarshal(row.Headers, &h)
	return h
}
