package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
)

// LoopbackStore is a test store whose webhooks may reach loopback, as
// BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS allows in tests.
func LoopbackStore(t *testing.T) (*store.Store, *core.Actor, core.Environment) {
	opts := Options
	opts.WebhookAllowPrivateNetworks = true
	s, a, _ := NewWith(t, opts)
	prod, _ := ProdAndDev(t, s, a)
	return s, a, prod
}

func HookOn(t testing.TB, s *store.Store, a *core.Actor, env core.Environment, url, secret string, events ...string) webhooks.Webhook {
	t.Helper()
	w, err := s.Webhooks().CreateWebhook(context.Background(), a, webhooks.WebhookInput{Name: "hook " + uuid.NewString()[:8], URL: url,
		Scopes: []string{env.ProjectID.String() + "/" + env.ID.String()}, Events: events, Secret: &secret, IsActive: true})
	Must(t, err)
	return w
}

// DeliverQueued claims every due delivery and logs each as answered 200,
// as the delivery worker (web/webhook) does once it sent one.
func DeliverQueued(t testing.TB, s *store.Store) []webhooks.WebhookSend {
	t.Helper()
	ctx := context.Background()
	sends, err := s.Webhooks().ClaimWebhookDeliveries(ctx, webhooks.WebhookClaim{Max: 100, PerOrganization: 100, LeaseUntil: time.Now().Add(time.Minute)})
	Must(t, err)
	for _, d := range sends {
		_, err := s.Webhooks().LogWebhookAttempt(ctx, d, webhooks.WebhookAttempt{Request: json.RawMessage(`{}`), StatusCode: 200, ReasonPhrase: "OK",
			Started: time.Now(), Ended: time.Now(), Succeeded: true})
		Must(t, err)
		Must(t, s.Webhooks().FinishWebhookDelivery(ctx, d, time.Time{}))
	}
	return sends
}

// WantRule checks that err is the rule error code.
func WantRule(t testing.TB, what string, err error, code string) {
	t.Helper()
	var rerr *core.RuleError
	if !errors.As(err, &rerr) || rerr.Code != code {
		t.Fatalf("%s: got %v, want %s", what, err, code)
	}
}

// WantInvalid checks that err is a validation error with code.
func WantInvalid(t testing.TB, what string, err error, code string) {
	t.Helper()
	var verr *core.ValidationError
	if !errors.As(err, &verr) || !strings.Contains(strings.Join(verr.Codes, " "), code) {
		t.Fatalf("%s: got %v, want %s", what, err, code)
	}
}

// WaitUntil polls until cond holds or fails the test after ten seconds.
func WaitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited ten seconds for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
