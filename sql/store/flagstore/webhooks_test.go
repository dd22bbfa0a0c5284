package flagstore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/storetest"
)

// loopbackStore is a test store whose webhooks may reach loopback, as
// BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS allows in tests.
func loopbackStore(t *testing.T) (*store.Store, *core.Actor, core.Environment) {
	s, a, _ := storetest.New(t)
	s.WebhookPrivateNetworks = true
	prod, _ := storetest.ProdAndDev(t, s, a)
	return s, a, prod
}

func hookOn(t *testing.T, s *store.Store, a *core.Actor, env core.Environment, url, secret string, events ...string) flagstore.Webhook {
	t.Helper()
	w, err := s.CreateWebhook(context.Background(), a, flagstore.WebhookInput{Name: "hook " + uuid.NewString()[:8], URL: url,
		Scopes: []string{env.ProjectID.String() + "/" + env.ID.String()}, Events: events, Secret: &secret, IsActive: true})
	storetest.Must(t, err)
	return w
}

// deliverQueued claims every due delivery and logs each as answered 200,
// as the delivery worker (web/webhook) does once it sent one.
func deliverQueued(t *testing.T, s *store.Store) []flagstore.WebhookSend {
	t.Helper()
	ctx := context.Background()
	sends, err := s.ClaimWebhookDeliveries(ctx, flagstore.WebhookClaim{Max: 100, PerOrganization: 100, LeaseUntil: time.Now().Add(time.Minute)})
	storetest.Must(t, err)
	for _, d := range sends {
		_, err := s.LogWebhookAttempt(ctx, d, flagstore.WebhookAttempt{Request: json.RawMessage(`{}`), StatusCode: 200, ReasonPhrase: "OK",
			Started: time.Now(), Ended: time.Now(), Succeeded: true})
		storetest.Must(t, err)
		storetest.Must(t, s.FinishWebhookDelivery(ctx, d, time.Time{}))
	}
	return sends
}

// waitUntil polls until cond holds or fails the test after ten seconds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited ten seconds for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Webhooks need the organization-management permission; bad input is
// named, and nothing is saved.
func TestWebhookInputAndPermission(t *testing.T) {
	t.Parallel()
	s, a, prod := loopbackStore(t)
	ctx := context.Background()
	bad := []struct {
		in   flagstore.WebhookInput
		code string
	}{
		{flagstore.WebhookInput{URL: "https://example.com", Scopes: []string{prod.ProjectID.String() + "/" + prod.ID.String()}, Events: []string{flagstore.EventFlagCreated}}, "name_is_required"},
		{flagstore.WebhookInput{Name: "x", URL: "ftp://example.com", Scopes: []string{prod.ProjectID.String() + "/" + prod.ID.String()}, Events: []string{flagstore.EventFlagCreated}}, "url_is_invalid"},
		{flagstore.WebhookInput{Name: "x", URL: "https://example.com", Scopes: []string{uuid.NewString() + "/" + prod.ID.String()}, Events: []string{flagstore.EventFlagCreated}}, "scopes_is_invalid"},
		{flagstore.WebhookInput{Name: "x", URL: "https://example.com", Scopes: []string{prod.ProjectID.String() + "/" + prod.ID.String()}, Events: []string{"flag.exploded"}}, "events_is_invalid"},
		{flagstore.WebhookInput{Name: "x", URL: "https://example.com", Scopes: []string{prod.ProjectID.String() + "/" + prod.ID.String()}, Events: []string{flagstore.EventFlagCreated},
			Headers: []flagstore.WebhookHeader{{Key: "X-Bad", Value: "a\r\nb"}}}, "headers_is_invalid"},
		{flagstore.WebhookInput{Name: "x", URL: "https://example.com", Scopes: []string{prod.ProjectID.String() + "/" + prod.ID.String()}, Events: []string{flagstore.EventFlagCreated},
			PayloadTemplateType: flagstore.PayloadCustom}, "payloadTemplateType_is_invalid"},
	}
	for _, b := range bad {
		_, err := s.CreateWebhook(ctx, a, b.in)
		if err == nil || !strings.Contains(err.Error(), b.code) {
			t.Errorf("%+v: %v, want %s", b.in, err, b.code)
		}
	}
	w := hookOn(t, s, a, prod, "https://example.com/hook", "first-secret-value", flagstore.EventFlagCreated)
	_, err := s.CreateWebhook(ctx, a, flagstore.WebhookInput{Name: w.Name, URL: "https://example.com", Scopes: w.Scopes, Events: w.Events})
	if err != core.ErrNameUsed {
		t.Fatalf("same name: %v", err)
	}
	// Updating with the masked secret keeps the secret.
	in := flagstore.WebhookInput{Name: "renamed", URL: w.URL, Scopes: w.Scopes, Events: w.Events, Secret: &w.Secret, IsActive: true}
	u, err := s.UpdateWebhook(ctx, a, w.ID, in)
	storetest.Must(t, err)
	row, err := s.Q.GetWebhookByID(ctx, w.ID)
	storetest.Must(t, err)
	if secret, _ := s.WebhookSecret(row); secret != "first-secret-value" || u.Name != "renamed" {
		t.Fatalf("secret %q name %q after an update with the mask", secret, u.Name)
	}
	developer := *a
	developer.Granted = nil
	if _, err := s.ListWebhooks(ctx, &developer, flagstore.WebhookFilter{Page: core.Page{Size: 10}}); err != core.ErrForbidden {
		t.Fatalf("list without the permission: %v", err)
	}
	if _, err := s.CreateWebhook(ctx, &developer, in); err != core.ErrForbidden {
		t.Fatalf("create without the permission: %v", err)
	}
}

// A webhook whose URL names an address the outbound client refuses is
// saved, and says why no delivery can reach it; with private networks
// open, only link-local and metadata addresses stay undeliverable, and a
// name is left for the delivery to check.
func TestWebhookSaysWhenNoDeliveryCanReachIt(t *testing.T) {
	t.Parallel()
	s, a, _ := storetest.New(t)
	prod, _ := storetest.ProdAndDev(t, s, a)
	cases := []struct {
		url           string
		closed, opens string // what it says with private networks closed, and open
	}{
		{"http://127.0.0.1:9/hook", "private network address", ""},
		{"http://localhost:9/hook", "private network address", ""},
		{"https://10.1.2.3/hook", "private network address", ""},
		{"http://[::1]/hook", "private network address", ""},
		{"http://169.254.169.254/latest", "link-local address", "link-local address"},
		{"https://hooks.example.com/bunting", "", ""},
		{"https://internal.example/hook", "", ""},
	}
	for _, open := range []bool{false, true} {
		s.WebhookPrivateNetworks = open
		for _, c := range cases {
			w := hookOn(t, s, a, prod, c.url, "", flagstore.EventFlagCreated)
			want := c.closed
			if open {
				want = c.opens
			}
			switch {
			case want == "" && w.Undeliverable != "":
				t.Errorf("%s (private networks open: %v) says %q, want nothing", c.url, open, w.Undeliverable)
			case want != "" && !strings.Contains(w.Undeliverable, want):
				t.Errorf("%s (private networks open: %v) says %q, want it to name a %s", c.url, open, w.Undeliverable, want)
			case want == "private network address" && !strings.Contains(w.Undeliverable, "BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS"):
				t.Errorf("%s says %q, want the setting that would open it", c.url, w.Undeliverable)
			}
			got, err := s.GetWebhook(context.Background(), a, w.ID)
			storetest.Must(t, err)
			if got.Undeliverable != w.Undeliverable {
				t.Errorf("%s read again says %q, saved %q", c.url, got.Undeliverable, w.Undeliverable)
			}
		}
	}
}
