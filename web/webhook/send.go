// Package webhook sends webhook requests: those the store queues in its
// outbox with every flag and segment change (Run, the delivery worker) and
// those sent by hand (Sender). The store decides what to send, to whom and
// with which secret, and records how it went; this package only makes the
// requests, through the outbound client, so the data layer holds no HTTP.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/reach"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
	"github.com/bunting-flags/bunting/web/outbound"
)

// FeatBit's webhook request headers (Domain/Webhooks/WebhookHeaders.cs).
const (
	HeaderDelivery  = "X-FeatBit-Delivery"
	HeaderEvent     = "X-FeatBit-Event"
	HeaderHookID    = "X-FeatBit-Hook-ID"
	HeaderSignature = "X-FeatBit-Signature-256"
)

// MaxExcerpt bounds how much of an answer's body is read and kept.
const MaxExcerpt = 2048

// Sign is FeatBit's signature of a payload: "sha256=" and the hex
// HMAC-SHA256 of the body keyed by the webhook's secret.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Sender makes the requests people send by hand and waits for the answers.
type Sender struct {
	store  *store.Store
	client *http.Client
}

// NewSender returns a sender over st, whose client reaches private
// networks only where st's webhook setting allows.
func NewSender(st *store.Store) *Sender {
	return &Sender{store: st, client: outbound.NewClient(outbound.Options{AllowPrivate: st.Webhooks().WebhookAllowPrivateNetworks()})}
}

// Send makes a request now, as FeatBit's "send" does for the webhook
// form's test (store.PrepareWebhookRequest says what may be sent), and
// says how it went; an attempt for a stored webhook goes into its log.
func (s *Sender) Send(ctx context.Context, a *core.Actor, in webhooks.WebhookRequest) (webhooks.WebhookDelivery, error) {
	d, err := s.store.Webhooks().PrepareWebhookRequest(ctx, a, in)
	if err != nil {
		return webhooks.WebhookDelivery{}, err
	}
	if d.Refused != "" {
		return webhooks.WebhookDelivery{WebhookID: d.WebhookID, Error: &webhooks.DeliveryErrorInfo{Message: d.Refused},
			Request: recordRequest(d.URL, http.Header{}, nil, d.Payload)}, nil
	}
	return s.store.Webhooks().LogWebhookAttempt(ctx, d, send(ctx, s.client, d))
}

// SendTest sends a webhook its test delivery ("Send test" on its page),
// signed and logged like any delivery, and says how it went.
func (s *Sender) SendTest(ctx context.Context, a *core.Actor, id uuid.UUID) (webhooks.WebhookDelivery, error) {
	d, err := s.store.Webhooks().PrepareWebhookTest(ctx, a, id)
	if err != nil {
		return webhooks.WebhookDelivery{}, err
	}
	return s.store.Webhooks().LogWebhookAttempt(ctx, d, send(ctx, s.client, d))
}

// send makes one signed request. A failure is part of the attempt, in
// words safe to show (outbound.Describe). An answer from a loopback or
// private address (reached only where BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS
// allows it) keeps its status but not its body: that is the inside of the
// server's network, and whoever may manage webhooks must not read it
// through them.
func send(ctx context.Context, client *http.Client, d webhooks.WebhookSend) (at webhooks.WebhookAttempt) {
	at.Started = time.Now()
	defer func() { at.Ended = time.Now() }() // the named result: every return has its end
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Payload))
	if err != nil {
		at.Error = "the URL is not one Bunting can request"
		at.Request = recordRequest(d.URL, http.Header{}, nil, d.Payload)
		return at
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "Bunting-Webhook")
	req.Header.Set(HeaderDelivery, d.DeliveryID.String())
	req.Header.Set(HeaderEvent, d.Events)
	req.Header.Set(HeaderHookID, d.WebhookID.String())
	if d.Secret != "" {
		req.Header.Set(HeaderSignature, Sign(d.Secret, d.Payload))
	}
	// The webhook's own headers come last and replace built-in ones, as FeatBit's do.
	for _, h := range d.Headers {
		req.Header.Set(h.Key, h.Value)
	}
	at.Request = recordRequest(d.URL, req.Header, d.Headers, d.Payload)
	// After recording: the log shows the delivery, not this attempt's trace.
	injectTrace(ctx, req.Header)
	var mu sync.Mutex
	var remote netip.Addr
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(c httptrace.GotConnInfo) {
		if ap, err := netip.ParseAddrPort(c.Conn.RemoteAddr().String()); err == nil {
			mu.Lock()
			remote = ap.Addr()
			mu.Unlock()
		}
	}}))
	resp, err := client.Do(req)
	if err != nil {
		at.Error = outbound.Describe(d.URL, err)
		return at
	}
	defer resp.Body.Close()
	at.StatusCode, at.ReasonPhrase = resp.StatusCode, http.StatusText(resp.StatusCode)
	at.Succeeded = resp.StatusCode >= 200 && resp.StatusCode < 300
	mu.Lock()
	private := !remote.IsValid() || reach.IsPrivate(remote)
	mu.Unlock()
	if private {
		return at
	}
	// Only the excerpt is read: the rest of a large answer is never held.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxExcerpt))
	// Stored as text: a cut character and NULs (which PostgreSQL text
	// refuses) are dropped.
	at.Excerpt = strings.ReplaceAll(strings.ToValidUTF8(string(body), ""), "\x00", "")
	return at
}

// recordRequest is the request as the log shows it, the webhook's own
// header values masked: they are not shown again once saved.
func recordRequest(target string, h http.Header, own []webhooks.WebhookHeader, payload []byte) json.RawMessage {
	headers := map[string]string{}
	for k, v := range h {
		headers[k] = strings.Join(v, "; ")
	}
	for _, o := range own {
		if _, ok := headers[http.CanonicalHeaderKey(o.Key)]; ok {
			headers[http.CanonicalHeaderKey(o.Key)] = webhooks.MaskSecret(o.Value)
		}
	}
	raw, _ := json.Marshal(map[string]any{"url": target, "headers": headers, "payload": string(payload)})
	return raw
}
