package webhook

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
)

// The stored secret signs only requests to the stored URL: "send" to
// another URL goes unsigned or with the secret it names, and the mask
// there is refused; the same holds for the webhook's header values.
func TestWebhookSendSignsOnlyTheStoredURL(t *testing.T) {
	t.Parallel()
	s, a, prod := loopbackStore(t)
	ctx := context.Background()
	own, other := newReceiver(t), newReceiver(t)
	secret := "the-stored-secret"
	w, err := s.Webhooks().CreateWebhook(ctx, a, webhooks.WebhookInput{Name: "Chat", URL: own.URL, Scopes: scopeOf(prod), Events: []string{webhooks.EventFlagCreated},
		Headers: []webhooks.WebhookHeader{{Key: "X-Token", Value: "stored-token"}}, Secret: &secret, IsActive: true})
	must(t, err)
	send := func(url, secret string, headers ...webhooks.WebhookHeader) error {
		_, err := NewSender(s.Store).Send(ctx, a, webhooks.WebhookRequest{ID: w.ID, DeliveryID: "d", URL: url, Secret: secret, Headers: headers,
			Events: "test", Payload: `{"forged":true}`})
		return err
	}
	// Another URL: an empty secret sends unsigned, without the stored header.
	must(t, send(other.URL, ""))
	if got := other.received(); len(got) != 1 || got[0].signature != "" || got[0].header.Get("X-Token") != "" {
		t.Fatalf("another URL got %+v, want an unsigned request without the stored header", got)
	}
	// The mask stands for stored values, which another URL is not sent.
	wantInvalid(t, "the masked secret to another URL", send(other.URL, w.Secret), "secret_is_invalid")
	wantInvalid(t, "a masked header to another URL", send(other.URL, "", w.Headers...), "headers_is_invalid")
	// A secret the request names is its own to use.
	must(t, send(other.URL, "the-caller's-own"))
	if got := other.received(); len(got) != 2 || got[1].signature != Sign("the-caller's-own", got[1].body) {
		t.Fatalf("another URL got %+v, want the request signed with the secret it named", got)
	}
	// The stored URL gets the stored secret and header values for the mask
	// (FeatBit's test dialog sends back what the webhook was shown with).
	must(t, send(own.URL, w.Secret, w.Headers...))
	if got := own.received(); len(got) != 1 || got[0].signature != Sign(secret, got[0].body) ||
		got[0].header.Get("X-Token") != "stored-token" {
		t.Fatalf("the stored URL got %+v, want the stored secret's signature and header", got)
	}
}

// Secrets and header values are never shown again once saved, not even in
// part: not in answers, audit entries or the delivery log. The mask given
// back keeps them; it is refused as a new value.
func TestWebhookSecretsAreNeverShownAgain(t *testing.T) {
	t.Parallel()
	s, a, prod := loopbackStore(t)
	ctx := context.Background()
	r := newReceiver(t)
	secret := "Qz#a-long-random-secret#Xw"
	w, err := s.Webhooks().CreateWebhook(ctx, a, webhooks.WebhookInput{Name: "Chat", URL: r.URL, Scopes: scopeOf(prod), Events: []string{webhooks.EventFlagCreated},
		Headers: []webhooks.WebhookHeader{{Key: "Authorization", Value: "Bearer tok-123456789"}}, Secret: &secret, IsActive: true})
	must(t, err)
	_, err = NewSender(s.Store).SendTest(ctx, a, w.ID)
	must(t, err)
	got, err := s.Webhooks().GetWebhook(ctx, a, w.ID)
	must(t, err)
	list, err := s.Webhooks().ListWebhooks(ctx, a, webhooks.WebhookFilter{Page: core.Page{Size: 10}})
	must(t, err)
	log, err := s.Webhooks().ListWebhookDeliveries(ctx, a, w.ID, webhooks.WebhookDeliveryFilter{Page: core.Page{Size: 10}})
	must(t, err)
	var audit []string
	rows, err := s.pool.Query(ctx, `SELECT coalesce(previous::text, '') || coalesce(current::text, '') FROM audit_logs WHERE ref_type = 'Webhook'`)
	must(t, err)
	for rows.Next() {
		var d string
		must(t, rows.Scan(&d))
		audit = append(audit, d)
	}
	must(t, rows.Err())
	shown, err := json.Marshal([]any{w, got, list, log, audit})
	must(t, err)
	for _, part := range []string{"Qz", "Xw", "tok-"} {
		if strings.Contains(string(shown), part) {
			t.Errorf("%q of a secret value is shown: %s", part, shown)
		}
	}
	var view map[string]any
	raw, _ := json.Marshal(got)
	must(t, json.Unmarshal(raw, &view))
	if view["secret"] != "********" || view["hasSecret"] != true || got.Headers[0].Value != "********" {
		t.Errorf("shown as %s, want the secret and the header value masked and hasSecret", raw)
	}
	if h := r.received(); len(h) != 1 || h[0].header.Get("Authorization") != "Bearer tok-123456789" {
		t.Errorf("the receiver got %+v, want the header's value", h)
	}

	// Sent back masked, as FeatBit's UI does on update, they are kept.
	_, err = s.Webhooks().UpdateWebhook(ctx, a, w.ID, webhooks.WebhookInput{Name: "Renamed", URL: w.URL, Scopes: w.Scopes, Events: w.Events,
		Headers: got.Headers, Secret: &got.Secret, IsActive: true})
	must(t, err)
	stored, err := s.Webhooks().PrepareWebhookTest(ctx, a, w.ID)
	must(t, err)
	if stored.Secret != secret || stored.Headers[0].Value != "Bearer tok-123456789" {
		t.Errorf("after an update with the mask: secret %q, headers %+v", stored.Secret, stored.Headers)
	}
	// The mask is no value of its own.
	mask := got.Secret
	_, err = s.Webhooks().CreateWebhook(ctx, a, webhooks.WebhookInput{Name: "Other", URL: w.URL, Scopes: w.Scopes, Events: w.Events, Secret: &mask})
	wantInvalid(t, "a new webhook with the mask as its secret", err, "secret_is_invalid")
	_, err = s.Webhooks().UpdateWebhook(ctx, a, w.ID, webhooks.WebhookInput{Name: "Renamed", URL: w.URL, Scopes: w.Scopes, Events: w.Events,
		Headers: []webhooks.WebhookHeader{{Key: "X-Other", Value: mask}}})
	wantInvalid(t, "a masked header that is not stored", err, "headers_is_invalid")
}

// Webhooks have their own private-network setting: single sign-on's does
// not open loopback to them. Opened, an answer from there keeps its status
// but not its body, and a refused name is described without its address.
func TestWebhookPrivateNetworksHaveTheirOwnSetting(t *testing.T) {
	t.Parallel()
	s, a, pool := testStore(t)
	prod, _ := prodAndDev(t, s, a)
	ctx := context.Background()
	r := newReceiver(t)
	port := r.URL[strings.LastIndex(r.URL, ":")+1:]
	byName := hookOn(t, s, a, prod, "http://localhost:"+port+"/internal", "", webhooks.EventFlagCreated)
	byAddress := hookOn(t, s, a, prod, r.URL+"/internal", "", webhooks.EventFlagCreated)

	ssoOnly := store.New(pool, s.Projects().Keys(), slog.New(slog.DiscardHandler), core.Options{PasswordCost: bcrypt.MinCost, AllowPrivateNetworks: true})
	d, err := NewSender(ssoOnly).SendTest(ctx, a, byName.ID)
	must(t, err)
	if d.Error == nil || !strings.Contains(d.Error.Message, "localhost resolves to a private network address") ||
		strings.Contains(d.Error.Message, "127.0.0.1") || strings.Contains(d.Error.Message, "::1") {
		t.Errorf("with only single sign-on's setting on, localhost: %+v", d.Error)
	}
	if len(r.received()) != 0 {
		t.Fatalf("the internal receiver was reached %d times with only single sign-on's setting on", len(r.received()))
	}

	permissive := store.New(pool, s.Projects().Keys(), slog.New(slog.DiscardHandler), core.Options{PasswordCost: bcrypt.MinCost, WebhookAllowPrivateNetworks: true})
	for _, w := range []webhooks.Webhook{byName, byAddress} {
		d, err := NewSender(permissive).SendTest(ctx, a, w.ID)
		must(t, err)
		if d.Response == nil || d.Response.StatusCode != 200 || d.Response.Body != "" {
			t.Errorf("%s with the webhook setting on: %+v, want 200 without the answer's body", w.URL, d.Response)
		}
	}
	if len(r.received()) != 2 {
		t.Fatalf("the internal receiver got %d requests, want 2", len(r.received()))
	}
	log, err := permissive.Webhooks().ListWebhookDeliveries(ctx, a, byName.ID, webhooks.WebhookDeliveryFilter{Page: core.Page{Size: 10}})
	must(t, err)
	for _, d := range log.Items {
		if d.Response != nil && strings.Contains(d.Response.Body, "answered") {
			t.Errorf("the log shows the internal answer %q", d.Response.Body)
		}
	}
}
