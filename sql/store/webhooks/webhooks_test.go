package webhooks_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/storetest"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
)

// Webhooks need the organization-management permission; bad input is
// named, and nothing is saved.
func TestWebhookInputAndPermission(t *testing.T) {
	t.Parallel()
	s, a, prod := storetest.LoopbackStore(t)
	ctx := context.Background()
	bad := []struct {
		in   webhooks.WebhookInput
		code string
	}{
		{webhooks.WebhookInput{URL: "https://example.com", Scopes: []string{prod.ProjectID.String() + "/" + prod.ID.String()}, Events: []string{webhooks.EventFlagCreated}}, "name_is_required"},
		{webhooks.WebhookInput{Name: "x", URL: "ftp://example.com", Scopes: []string{prod.ProjectID.String() + "/" + prod.ID.String()}, Events: []string{webhooks.EventFlagCreated}}, "url_is_invalid"},
		{webhooks.WebhookInput{Name: "x", URL: "https://example.com", Scopes: []string{uuid.NewString() + "/" + prod.ID.String()}, Events: []string{webhooks.EventFlagCreated}}, "scopes_is_invalid"},
		{webhooks.WebhookInput{Name: "x", URL: "https://example.com", Scopes: []string{prod.ProjectID.String() + "/" + prod.ID.String()}, Events: []string{"flag.exploded"}}, "events_is_invalid"},
		{webhooks.WebhookInput{Name: "x", URL: "https://example.com", Scopes: []string{prod.ProjectID.String() + "/" + prod.ID.String()}, Events: []string{webhooks.EventFlagCreated},
			Headers: []webhooks.WebhookHeader{{Key: "X-Bad", Value: "a\r\nb"}}}, "headers_is_invalid"},
		{webhooks.WebhookInput{Name: "x", URL: "https://example.com", Scopes: []string{prod.ProjectID.String() + "/" + prod.ID.String()}, Events: []string{webhooks.EventFlagCreated},
			PayloadTemplateType: webhooks.PayloadCustom}, "payloadTemplateType_is_invalid"},
	}
	for _, b := range bad {
		_, err := s.Webhooks().CreateWebhook(ctx, a, b.in)
		if err == nil || !strings.Contains(err.Error(), b.code) {
			t.Errorf("%+v: %v, want %s", b.in, err, b.code)
		}
	}
	w := storetest.HookOn(t, s, a, prod, "https://example.com/hook", "first-secret-value", webhooks.EventFlagCreated)
	_, err := s.Webhooks().CreateWebhook(ctx, a, webhooks.WebhookInput{Name: w.Name, URL: "https://example.com", Scopes: w.Scopes, Events: w.Events})
	if err != core.ErrNameUsed {
		t.Fatalf("same name: %v", err)
	}
	// Updating with the masked secret keeps the secret.
	in := webhooks.WebhookInput{Name: "renamed", URL: w.URL, Scopes: w.Scopes, Events: w.Events, Secret: &w.Secret, IsActive: true}
	u, err := s.Webhooks().UpdateWebhook(ctx, a, w.ID, in)
	storetest.Must(t, err)
	row, err := db.New(storetest.Pool(t, s)).GetWebhookByID(ctx, w.ID)
	storetest.Must(t, err)
	if secret, _ := s.Webhooks().WebhookSecret(row); secret != "first-secret-value" || u.Name != "renamed" {
		t.Fatalf("secret %q name %q after an update with the mask", secret, u.Name)
	}
	developer := *a
	developer.Granted = nil
	if _, err := s.Webhooks().ListWebhooks(ctx, &developer, webhooks.WebhookFilter{Page: core.Page{Size: 10}}); err != core.ErrForbidden {
		t.Fatalf("list without the permission: %v", err)
	}
	if _, err := s.Webhooks().CreateWebhook(ctx, &developer, in); err != core.ErrForbidden {
		t.Fatalf("create without the permission: %v", err)
	}
}

// A webhook whose URL names an address the outbound client refuses is
// saved, and says why no delivery can reach it; with private networks
// open, only link-local and metadata addresses stay undeliverable, and a
// name is left for the delivery to check.
func TestWebhookSaysWhenNoDeliveryCanReachIt(t *testing.T) {
	t.Parallel()
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
		opts := storetest.Options
		opts.WebhookAllowPrivateNetworks = open
		s, a, _ := storetest.NewWith(t, opts)
		prod, _ := storetest.ProdAndDev(t, s, a)
		for _, c := range cases {
			w := storetest.HookOn(t, s, a, prod, c.url, "", webhooks.EventFlagCreated)
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
			got, err := s.Webhooks().GetWebhook(context.Background(), a, w.ID)
			storetest.Must(t, err)
			if got.Undeliverable != w.Undeliverable {
				t.Errorf("%s read again says %q, saved %q", c.url, got.Undeliverable, w.Undeliverable)
			}
		}
	}
}
