package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/migrations"
)

// orgAdminOf is the owner acting with webhooks' own permission and
// CanAccessEnv in the given environments only.
func orgAdminOf(owner *Actor, envs ...Environment) *Actor {
	a := *owner
	rns := []string{}
	for _, e := range envs {
		rns = append(rns, "project/web:env/"+e.Key)
	}
	a.statements = []access.Statement{
		{ResourceType: access.TypeOrganization, Effect: "allow", Actions: []string{string(WebhookAction)}, Resources: []string{"organization/*"}},
		{ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: rns},
	}
	return &a
}

func scopeOf(envs ...Environment) []string {
	var ids []string
	for _, e := range envs {
		ids = append(ids, e.ID.String())
	}
	return []string{envs[0].ProjectID.String() + "/" + strings.Join(ids, ",")}
}

// Making a webhook, changing it and reading its log need reading every
// environment it is about: a member who may not read Prod can neither
// scope one to Prod nor read a log of Prod's changes, also after its
// scopes were narrowed to what they may read.
func TestWebhookScopesNeedReadingEachEnvironment(t *testing.T) {
	t.Parallel()
	s, owner, _ := testStore(t)
	s.webhookPrivateNetworks = true
	prod, dev := prodAndDev(t, s, owner)
	ctx := context.Background()
	devAdmin := orgAdminOf(owner, dev)
	r := newReceiver(t)

	in := WebhookInput{Name: "Prod changes", URL: r.URL, Scopes: scopeOf(prod), Events: []string{EventFlagCreated}, IsActive: true}
	if _, err := s.CreateWebhook(ctx, devAdmin, in); !errors.Is(err, ErrForbidden) {
		t.Fatalf("a webhook on Prod made by a member who may not read Prod: %v, want ErrForbidden", err)
	}
	var n int
	must(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM webhooks`).Scan(&n))
	if n != 0 {
		t.Fatalf("%d webhooks stored after the refusal", n)
	}
	mine, err := s.CreateWebhook(ctx, devAdmin, WebhookInput{Name: "Dev changes", URL: r.URL, Scopes: scopeOf(dev),
		Events: []string{EventFlagCreated}, IsActive: true})
	must(t, err)

	// The owner's webhook on both; a change in each reaches its log.
	both, err := s.CreateWebhook(ctx, owner, WebhookInput{Name: "All changes", URL: r.URL, Scopes: scopeOf(prod, dev),
		Events: []string{EventFlagCreated}, IsActive: true})
	must(t, err)
	runWorker(t, s, fast)
	_, err = s.CreateFlag(ctx, owner, prod.ID, FlagInput{Name: "Secret plan", Key: "secret-plan"})
	must(t, err)
	_, err = s.CreateFlag(ctx, owner, dev.ID, FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)
	waitUntil(t, "three deliveries", func() bool { return len(r.received()) == 3 })

	page := WebhookDeliveryFilter{Page: Page{Size: 10}}
	if _, err := s.ListWebhookDeliveries(ctx, devAdmin, both.ID, page); !errors.Is(err, ErrForbidden) {
		t.Errorf("reading a log of Prod's changes: %v, want ErrForbidden", err)
	}
	if _, err := s.UpdateWebhook(ctx, devAdmin, both.ID, WebhookInput{Name: "All changes", URL: "https://elsewhere.example.com/",
		Scopes: both.Scopes, Events: both.Events, IsActive: true}); !errors.Is(err, ErrForbidden) {
		t.Errorf("pointing a webhook on Prod elsewhere: %v, want ErrForbidden", err)
	}
	// Narrowed to Dev by the owner, its log still holds Prod's change.
	_, err = s.UpdateWebhook(ctx, owner, both.ID, WebhookInput{Name: "All changes", URL: r.URL, Scopes: scopeOf(dev),
		Events: both.Events, IsActive: true})
	must(t, err)
	if _, err := s.ListWebhookDeliveries(ctx, devAdmin, both.ID, page); !errors.Is(err, ErrForbidden) {
		t.Errorf("reading Prod's change in a log narrowed to Dev: %v, want ErrForbidden", err)
	}
	// Those who hold the rights read as before.
	if log, err := s.ListWebhookDeliveries(ctx, owner, both.ID, page); err != nil || log.TotalCount != 2 {
		t.Errorf("the owner reads %+v, %v; want both deliveries", log, err)
	}
	if log, err := s.ListWebhookDeliveries(ctx, devAdmin, mine.ID, page); err != nil || log.TotalCount != 1 {
		t.Errorf("the Dev member reads their own webhook's log: %+v, %v", log, err)
	}
}

// An organization has at most 100 webhooks, also when they are made at
// once; the one past the bound is refused with a named error.
func TestWebhooksAreBoundedPerOrganization(t *testing.T) {
	t.Parallel()
	s, a, _ := testStore(t)
	prod, _ := prodAndDev(t, s, a)
	ctx := context.Background()
	const limit = 100
	create := func(i int) error {
		_, err := s.CreateWebhook(ctx, a, WebhookInput{Name: fmt.Sprintf("hook %d", i), URL: "https://hooks.example.com/x",
			Scopes: scopeOf(prod), Events: []string{EventFlagCreated}})
		return err
	}
	for i := range limit - 5 {
		must(t, create(i))
	}
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = create(limit + i) }()
	}
	wg.Wait()
	refused := 0
	for _, err := range errs {
		if err != nil {
			wantRule(t, "a webhook past the bound", err, "TooManyWebhooks")
			refused++
		}
	}
	var n int
	must(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM webhooks`).Scan(&n))
	if n != limit || refused != 5 {
		t.Fatalf("%d webhooks stored and %d refused, want %d and 5", n, refused, limit)
	}
	wantRule(t, "one more", create(1000), "TooManyWebhooks")
}

// The stored secret signs only requests to the stored URL: "send" to
// another URL goes unsigned or with the secret it names, and the mask
// there is refused; the same holds for the webhook's header values.
func TestWebhookSendSignsOnlyTheStoredURL(t *testing.T) {
	t.Parallel()
	s, a, prod := loopbackStore(t)
	ctx := context.Background()
	own, other := newReceiver(t), newReceiver(t)
	secret := "the-stored-secret"
	w, err := s.CreateWebhook(ctx, a, WebhookInput{Name: "Chat", URL: own.URL, Scopes: scopeOf(prod), Events: []string{EventFlagCreated},
		Headers: []WebhookHeader{{Key: "X-Token", Value: "stored-token"}}, Secret: &secret, IsActive: true})
	must(t, err)
	send := func(url, secret string, headers ...WebhookHeader) error {
		_, err := s.SendWebhook(ctx, a, WebhookRequest{ID: w.ID, DeliveryID: "d", URL: url, Secret: secret, Headers: headers,
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
	if got := other.received(); len(got) != 2 || got[1].signature != SignWebhook("the-caller's-own", got[1].body) {
		t.Fatalf("another URL got %+v, want the request signed with the secret it named", got)
	}
	// The stored URL gets the stored secret and header values for the mask
	// (FeatBit's test dialog sends back what the webhook was shown with).
	must(t, send(own.URL, w.Secret, w.Headers...))
	if got := own.received(); len(got) != 1 || got[0].signature != SignWebhook(secret, got[0].body) ||
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
	w, err := s.CreateWebhook(ctx, a, WebhookInput{Name: "Chat", URL: r.URL, Scopes: scopeOf(prod), Events: []string{EventFlagCreated},
		Headers: []WebhookHeader{{Key: "Authorization", Value: "Bearer tok-123456789"}}, Secret: &secret, IsActive: true})
	must(t, err)
	_, err = s.SendWebhookTest(ctx, a, w.ID)
	must(t, err)
	got, err := s.GetWebhook(ctx, a, w.ID)
	must(t, err)
	list, err := s.ListWebhooks(ctx, a, WebhookFilter{Page: Page{Size: 10}})
	must(t, err)
	log, err := s.ListWebhookDeliveries(ctx, a, w.ID, WebhookDeliveryFilter{Page: Page{Size: 10}})
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
	_, err = s.UpdateWebhook(ctx, a, w.ID, WebhookInput{Name: "Renamed", URL: w.URL, Scopes: w.Scopes, Events: w.Events,
		Headers: got.Headers, Secret: &got.Secret, IsActive: true})
	must(t, err)
	row, err := s.q.GetWebhookByID(ctx, w.ID)
	must(t, err)
	if stored, _ := s.webhookSecret(row); stored != secret || headersOf(row)[0].Value != "Bearer tok-123456789" {
		t.Errorf("after an update with the mask: secret %q, headers %+v", stored, headersOf(row))
	}
	// The mask is no value of its own.
	mask := got.Secret
	_, err = s.CreateWebhook(ctx, a, WebhookInput{Name: "Other", URL: w.URL, Scopes: w.Scopes, Events: w.Events, Secret: &mask})
	wantInvalid(t, "a new webhook with the mask as its secret", err, "secret_is_invalid")
	_, err = s.UpdateWebhook(ctx, a, w.ID, WebhookInput{Name: "Renamed", URL: w.URL, Scopes: w.Scopes, Events: w.Events,
		Headers: []WebhookHeader{{Key: "X-Other", Value: mask}}})
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
	byName := hookOn(t, s, a, prod, "http://localhost:"+port+"/internal", "", EventFlagCreated)
	byAddress := hookOn(t, s, a, prod, r.URL+"/internal", "", EventFlagCreated)

	ssoOnly := New(pool, s.keys, slog.New(slog.DiscardHandler), Options{PasswordCost: bcrypt.MinCost, AllowPrivateNetworks: true})
	d, err := ssoOnly.SendWebhookTest(ctx, a, byName.ID)
	must(t, err)
	if d.Error == nil || !strings.Contains(d.Error.Message, "localhost resolves to a private network address") ||
		strings.Contains(d.Error.Message, "127.0.0.1") || strings.Contains(d.Error.Message, "::1") {
		t.Errorf("with only single sign-on's setting on, localhost: %+v", d.Error)
	}
	if len(r.received()) != 0 {
		t.Fatalf("the internal receiver was reached %d times with only single sign-on's setting on", len(r.received()))
	}

	webhooks := New(pool, s.keys, slog.New(slog.DiscardHandler), Options{PasswordCost: bcrypt.MinCost, WebhookAllowPrivateNetworks: true})
	for _, w := range []Webhook{byName, byAddress} {
		d, err := webhooks.SendWebhookTest(ctx, a, w.ID)
		must(t, err)
		if d.Response == nil || d.Response.StatusCode != 200 || d.Response.Body != "" {
			t.Errorf("%s with the webhook setting on: %+v, want 200 without the answer's body", w.URL, d.Response)
		}
	}
	if len(r.received()) != 2 {
		t.Fatalf("the internal receiver got %d requests, want 2", len(r.received()))
	}
	log, err := webhooks.ListWebhookDeliveries(ctx, a, byName.ID, WebhookDeliveryFilter{Page: Page{Size: 10}})
	must(t, err)
	for _, d := range log.Items {
		if d.Response != nil && strings.Contains(d.Response.Body, "answered") {
			t.Errorf("the log shows the internal answer %q", d.Response.Body)
		}
	}
}

// The migration that stopped showing secrets masks what was kept before:
// header values in logged requests, and the secret's ends and the header
// values in the webhooks' audit snapshots. Bunting's own headers stay.
func TestWebhookMigrationMasksWhatWasShown(t *testing.T) {
	t.Parallel()
	s, a, prod := loopbackStore(t)
	ctx := context.Background()
	w := hookOn(t, s, a, prod, "https://hooks.example.com/x", "", EventFlagCreated)
	_, err := s.pool.Exec(ctx, `INSERT INTO webhook_deliveries (webhook_id, delivery_id, events, attempt, success, latency_ms,
		request, started_at, ended_at) VALUES ($1, gen_random_uuid(), 'test', 1, true, 1,
		'{"url": "x", "headers": {"Authorization": "Bearer tok-1", "X-Featbit-Event": "test"}, "payload": "{}"}', now(), now())`, w.ID)
	must(t, err)
	_, err = s.pool.Exec(ctx, `UPDATE audit_logs SET current = current || '{"secret": "Qz********Xw", "headers": [{"key": "X", "value": "tok-2"}]}'
		WHERE ref_type = 'Webhook'`)
	must(t, err)
	body, err := fs.ReadFile(migrations.FS, "0025_webhook_reach.sql")
	must(t, err)
	// What follows the new columns, which the database has already (from
	// within the comment that starts it).
	_, masking, _ := strings.Cut(string(body), "-- A webhook's own header values")
	_, err = s.pool.Exec(ctx, "--"+masking)
	must(t, err)
	var logged, audited string
	must(t, s.pool.QueryRow(ctx, `SELECT request::text FROM webhook_deliveries`).Scan(&logged))
	must(t, s.pool.QueryRow(ctx, `SELECT current::text FROM audit_logs WHERE ref_type = 'Webhook'`).Scan(&audited))
	if strings.Contains(logged+audited, "tok-") || strings.Contains(audited, "Qz") || !strings.Contains(logged, `"X-Featbit-Event": "test"`) ||
		!strings.Contains(audited, `"secret": "********"`) {
		t.Errorf("after the migration: logged %s, audited %s", logged, audited)
	}
}
