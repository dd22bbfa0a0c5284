package webhooks

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
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

// WebhookSend is one request to make to a webhook: where, what, and the
// secret that signs it. The store decides it (PrepareWebhookRequest,
// PrepareWebhookTest, ClaimWebhookDeliveries); the sender in web/webhook
// makes it and records how it went (LogWebhookAttempt).
type WebhookSend struct {
	// WebhookID is the stored webhook the attempt is logged for; uuid.Nil
	// for a request sent by hand for no stored webhook, which is not logged.
	WebhookID      uuid.UUID
	OrganizationID uuid.UUID
	DeliveryID     uuid.UUID
	URL            string
	Secret         string
	Headers        []WebhookHeader
	Events         string
	Payload        []byte
	// Attempt counts the attempts of a queued delivery, this one included.
	Attempt int
	// EnvIDs are the environments a queued delivery's change is about.
	EnvIDs []uuid.UUID
	// QueuedAt is when a queued delivery's change queued it.
	QueuedAt time.Time
	// Trace is the W3C trace context of the request whose change queued
	// the delivery (feed.TraceParent); "" when it was not traced.
	Trace string
	// Refused, when set, says why the request is not to be made: the
	// sender answers it as a failed delivery, and logs nothing.
	Refused string
}

// WebhookAttempt is how one request to a webhook went.
type WebhookAttempt struct {
	// Request is the request as the log shows it, the webhook's own header
	// values masked (MaskSecret).
	Request json.RawMessage
	// StatusCode and ReasonPhrase are the answer's; 0 without an answer.
	StatusCode   int
	ReasonPhrase string
	// Excerpt is the start of the answer's body; none from a private
	// address.
	Excerpt string
	// Error says, in words safe to show, why there was no answer.
	Error     string
	Started   time.Time
	Ended     time.Time
	Succeeded bool
}

// PrepareWebhookRequest checks a request to send now, as FeatBit's "send"
// does for the webhook form's test, and says what to send. When ID names one
// of the organization's webhooks the attempt goes into its log. The stored
// secret and header values go only to the webhook's stored URL: there an
// empty or masked secret, and a masked header value, mean the stored ones.
// The request names its URL and payload, so signing another URL with the
// stored secret would let whoever may send forge a delivery any receiver
// trusting that secret accepts; to another URL an empty secret sends
// unsigned, and the mask is refused (400 secret_is_invalid,
// headers_is_invalid).
func (s *Webhooks) PrepareWebhookRequest(ctx context.Context, a *core.Actor, in WebhookRequest) (WebhookSend, error) {
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return WebhookSend{}, err
	}
	var v core.Validator
	v.Required("deliveryId", in.DeliveryID, core.MaxNameLen)
	if in.URL == "" {
		v.Add("url", "required")
	} else if !validWebhookURL(in.URL) {
		v.Add("url", "invalid")
	}
	v.Required("events", in.Events, 1024)
	if in.Payload == "" {
		v.Add("payload", "required")
	} else if len(in.Payload) > MaxWebhookPayload || !json.Valid([]byte(in.Payload)) {
		v.Add("payload", "invalid")
	}
	v.Text("secret", in.Secret, MaxWebhookSecretLen)
	checkHeaders(&v, in.Headers)
	if err := v.Err(); err != nil {
		return WebhookSend{}, err
	}
	deliveryID, err := uuid.Parse(in.DeliveryID)
	if err != nil {
		deliveryID = uuid.New()
	}
	var hook *db.Webhook
	if in.ID != uuid.Nil {
		row, err := s.core.Q.GetWebhook(ctx, db.GetWebhookParams{OrganizationID: orgID, ID: in.ID})
		if err != nil {
			return WebhookSend{}, core.Translate(err)
		}
		hook = &row
	}
	var stored []WebhookHeader
	if own := hook != nil && in.URL == hook.Url; own {
		stored = headersOf(*hook)
		if in.Secret == "" || in.Secret == SecretMask {
			in.Secret, _ = s.WebhookSecret(*hook)
		}
	} else if in.Secret == SecretMask {
		v.At("secret", "invalid", "secret", SecretMask+" "+storedOnlyForOwnURL)
	}
	in.Headers = unmaskHeaders(&v, in.Headers, stored, storedOnlyForOwnURL)
	if err := v.Err(); err != nil {
		return WebhookSend{}, err
	}
	send := WebhookSend{WebhookID: in.ID, OrganizationID: orgID, DeliveryID: deliveryID, URL: in.URL, Secret: in.Secret,
		Headers: in.Headers, Events: in.Events, Payload: []byte(in.Payload), Attempt: 1}
	if in.PreventEmptyPayloads && strings.TrimSpace(strings.Join(strings.Fields(in.Payload), "")) == "{}" {
		send.Refused = "Not allowed to send an empty JSON object"
	}
	return send, nil
}

// PrepareWebhookTest is a webhook's test delivery ("Send test" on its
// page): FeatBit's data object with the event "test", signed and logged
// like any delivery.
func (s *Webhooks) PrepareWebhookTest(ctx context.Context, a *core.Actor, id uuid.UUID) (WebhookSend, error) {
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return WebhookSend{}, err
	}
	row, err := s.core.Q.GetWebhook(ctx, db.GetWebhookParams{OrganizationID: orgID, ID: id})
	if err != nil {
		return WebhookSend{}, core.Translate(err)
	}
	org, err := s.core.Q.GetOrganization(ctx, orgID)
	if err != nil {
		return WebhookSend{}, core.Translate(err)
	}
	if row.PayloadTemplateType == PayloadSlack {
		payload, err := json.Marshal(map[string]string{"text": "A test message from Bunting's webhook " + row.Name + " (" + org.Name + ")"})
		if err != nil {
			return WebhookSend{}, err
		}
		secret, _ := s.WebhookSecret(row)
		return WebhookSend{WebhookID: row.ID, OrganizationID: orgID, DeliveryID: uuid.New(), URL: row.Url, Secret: secret,
			Headers: headersOf(row), Events: EventTest, Payload: payload, Attempt: 1}, nil
	}
	payload, err := json.Marshal(map[string]any{"events": EventTest, "operator": operatorName(ctx, s.core.Q, a),
		"happenedAt": time.Now().UTC(), "organization": idName{org.ID, org.Name},
		"data":    map[string]any{"kind": "test", "object": map[string]any{"webhook": idName{row.ID, row.Name}}},
		"changes": []string{"A test delivery from Bunting"}})
	if err != nil {
		return WebhookSend{}, err
	}
	secret, _ := s.WebhookSecret(row)
	return WebhookSend{WebhookID: row.ID, OrganizationID: orgID, DeliveryID: uuid.New(), URL: row.Url, Secret: secret,
		Headers: headersOf(row), Events: EventTest, Payload: payload, Attempt: 1}, nil
}

// LogWebhookAttempt records an attempt in its webhook's delivery log, with
// the environments it is about, and as the webhook's last delivery. A
// request for no stored webhook is only described.
func (s *Webhooks) LogWebhookAttempt(ctx context.Context, send WebhookSend, at WebhookAttempt) (WebhookDelivery, error) {
	var status *int32
	if at.StatusCode != 0 {
		code := int32(at.StatusCode)
		status = &code
	}
	row := db.WebhookDelivery{WebhookID: send.WebhookID, DeliveryID: send.DeliveryID, Events: send.Events,
		Attempt: int32(send.Attempt), Success: at.Succeeded, StatusCode: status, ReasonPhrase: at.ReasonPhrase,
		LatencyMs: int32(at.Ended.Sub(at.Started).Milliseconds()), Request: at.Request, Response: at.Excerpt,
		Error: at.Error, StartedAt: at.Started, EndedAt: at.Ended, EnvIds: send.EnvIDs}
	if send.WebhookID == uuid.Nil {
		return deliveryOut(row), nil
	}
	if row.EnvIds == nil {
		row.EnvIds = []uuid.UUID{}
	}
	logged, err := s.core.Q.InsertWebhookDelivery(ctx, db.InsertWebhookDeliveryParams{WebhookID: row.WebhookID,
		DeliveryID: row.DeliveryID, Events: row.Events, Attempt: row.Attempt, Success: row.Success,
		StatusCode: row.StatusCode, ReasonPhrase: row.ReasonPhrase, LatencyMs: row.LatencyMs, Request: row.Request,
		Response: row.Response, Error: row.Error, StartedAt: row.StartedAt, EndedAt: row.EndedAt, EnvIds: row.EnvIds})
	if err != nil {
		return WebhookDelivery{}, core.Translate(err)
	}
	return deliveryOut(db.WebhookDelivery(logged)), nil
}

// WebhookAllowPrivateNetworks tells whether webhooks may be sent to
// loopback and private addresses; the sender's client applies it.
func (s *Webhooks) WebhookAllowPrivateNetworks() bool { return s.core.WebhookPrivateNetworks }

func headersOf(row db.Webhook) []WebhookHeader {
	var h []WebhookHeader
	_ = json.Unmarshal(row.Headers, &h)
	return h
}
