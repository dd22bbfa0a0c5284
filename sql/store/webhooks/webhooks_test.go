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
