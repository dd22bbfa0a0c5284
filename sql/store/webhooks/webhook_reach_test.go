package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/migrations"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/storetest"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
)

// orgAdminOf is the owner acting with webhooks' own permission and
// CanAccessEnv in the given environments only.
func orgAdminOf(owner *core.Actor, envs ...core.Environment) *core.Actor {
	a := *owner
	rns := []string{}
	for _, e := range envs {
		rns = append(rns, "project/web:env/"+e.Key)
	}
	a.Granted = []access.Statement{
		{ResourceType: access.TypeOrganization, Effect: "allow", Actions: []string{string(core.WebhookAction)}, Resources: []string{"organization/*"}},
		{ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: rns},
	}
	return &a
}

func scopeOf(envs ...core.Environment) []string {
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
	s, owner, _ := storetest.New(t)
	prod, dev := storetest.ProdAndDev(t, s, owner)
	ctx := context.Background()
	devAdmin := orgAdminOf(owner, dev)
	const url = "https://hooks.example.com/x"

	in := webhooks.WebhookInput{Name: "Prod changes", URL: url, Scopes: scopeOf(prod), Events: []string{webhooks.EventFlagCreated}, IsActive: true}
	if _, err := s.Webhooks().CreateWebhook(ctx, devAdmin, in); !errors.Is(err, core.ErrForbidden) {
		t.Fatalf("a webhook on Prod made by a member who may not read Prod: %v, want ErrForbidden", err)
	}
	var n int
	storetest.Must(t, storetest.Pool(t, s).QueryRow(ctx, `SELECT count(*) FROM webhooks`).Scan(&n))
	if n != 0 {
		t.Fatalf("%d webhooks stored after the refusal", n)
	}
	mine, err := s.Webhooks().CreateWebhook(ctx, devAdmin, webhooks.WebhookInput{Name: "Dev changes", URL: url, Scopes: scopeOf(dev),
		Events: []string{webhooks.EventFlagCreated}, IsActive: true})
	storetest.Must(t, err)

	// The owner's webhook on both; a change in each reaches its log.
	both, err := s.Webhooks().CreateWebhook(ctx, owner, webhooks.WebhookInput{Name: "All changes", URL: url, Scopes: scopeOf(prod, dev),
		Events: []string{webhooks.EventFlagCreated}, IsActive: true})
	storetest.Must(t, err)
	_, err = s.Flags().CreateFlag(ctx, owner, prod.ID, flagstore.FlagInput{Name: "Secret plan", Key: "secret-plan"})
	storetest.Must(t, err)
	_, err = s.Flags().CreateFlag(ctx, owner, dev.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	storetest.Must(t, err)
	if n := len(storetest.DeliverQueued(t, s)); n != 3 {
		t.Fatalf("%d deliveries, want three", n)
	}

	page := webhooks.WebhookDeliveryFilter{Page: core.Page{Size: 10}}
	if _, err := s.Webhooks().ListWebhookDeliveries(ctx, devAdmin, both.ID, page); !errors.Is(err, core.ErrForbidden) {
		t.Errorf("reading a log of Prod's changes: %v, want ErrForbidden", err)
	}
	if _, err := s.Webhooks().UpdateWebhook(ctx, devAdmin, both.ID, webhooks.WebhookInput{Name: "All changes", URL: "https://elsewhere.example.com/",
		Scopes: both.Scopes, Events: both.Events, IsActive: true}); !errors.Is(err, core.ErrForbidden) {
		t.Errorf("pointing a webhook on Prod elsewhere: %v, want ErrForbidden", err)
	}
	// Narrowed to Dev by the owner, its log still holds Prod's change.
	_, err = s.Webhooks().UpdateWebhook(ctx, owner, both.ID, webhooks.WebhookInput{Name: "All changes", URL: url, Scopes: scopeOf(dev),
		Events: both.Events, IsActive: true})
	storetest.Must(t, err)
	if _, err := s.Webhooks().ListWebhookDeliveries(ctx, devAdmin, both.ID, page); !errors.Is(err, core.ErrForbidden) {
		t.Errorf("reading Prod's change in a log narrowed to Dev: %v, want ErrForbidden", err)
	}
	// Those who hold the rights read as before.
	if log, err := s.Webhooks().ListWebhookDeliveries(ctx, owner, both.ID, page); err != nil || log.TotalCount != 2 {
		t.Errorf("the owner reads %+v, %v; want both deliveries", log, err)
	}
	if log, err := s.Webhooks().ListWebhookDeliveries(ctx, devAdmin, mine.ID, page); err != nil || log.TotalCount != 1 {
		t.Errorf("the Dev member reads their own webhook's log: %+v, %v", log, err)
	}
}

// An organization has at most 100 webhooks, also when they are made at
// once; the one past the bound is refused with a named error.
func TestWebhooksAreBoundedPerOrganization(t *testing.T) {
	t.Parallel()
	s, a, _ := storetest.New(t)
	prod, _ := storetest.ProdAndDev(t, s, a)
	ctx := context.Background()
	const limit = 100
	create := func(i int) error {
		_, err := s.Webhooks().CreateWebhook(ctx, a, webhooks.WebhookInput{Name: fmt.Sprintf("hook %d", i), URL: "https://hooks.example.com/x",
			Scopes: scopeOf(prod), Events: []string{webhooks.EventFlagCreated}})
		return err
	}
	for i := range limit - 5 {
		storetest.Must(t, create(i))
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
			storetest.WantRule(t, "a webhook past the bound", err, "TooManyWebhooks")
			refused++
		}
	}
	var n int
	storetest.Must(t, storetest.Pool(t, s).QueryRow(ctx, `SELECT count(*) FROM webhooks`).Scan(&n))
	if n != limit || refused != 5 {
		t.Fatalf("%d webhooks stored and %d refused, want %d and 5", n, refused, limit)
	}
	storetest.WantRule(t, "one more", create(1000), "TooManyWebhooks")
}

// The migration that stopped showing secrets masks what was kept before:
// header values in logged requests, and the secret's ends and the header
// values in the webhooks' audit snapshots. Bunting's own headers stay.
func TestWebhookMigrationMasksWhatWasShown(t *testing.T) {
	t.Parallel()
	s, a, prod := storetest.LoopbackStore(t)
	ctx := context.Background()
	w := storetest.HookOn(t, s, a, prod, "https://hooks.example.com/x", "", webhooks.EventFlagCreated)
	_, err := storetest.Pool(t, s).Exec(ctx, `INSERT INTO webhook_deliveries (webhook_id, delivery_id, events, attempt, success, latency_ms,
		request, started_at, ended_at) VALUES ($1, gen_random_uuid(), 'test', 1, true, 1,
		'{"url": "x", "headers": {"Authorization": "Bearer tok-1", "X-Featbit-Event": "test"}, "payload": "{}"}', now(), now())`, w.ID)
	storetest.Must(t, err)
	_, err = storetest.Pool(t, s).Exec(ctx, `UPDATE audit_logs SET current = current || '{"secret": "Qz********Xw", "headers": [{"key": "X", "value": "tok-2"}]}'
		WHERE ref_type = 'Webhook'`)
	storetest.Must(t, err)
	body, err := fs.ReadFile(migrations.FS, "0025_webhook_reach.sql")
	storetest.Must(t, err)
	// What follows the new columns, which the database has already (from
	// within the comment that starts it).
	_, masking, _ := strings.Cut(string(body), "-- A webhook's own header values")
	_, err = storetest.Pool(t, s).Exec(ctx, "--"+masking)
	storetest.Must(t, err)
	var logged, audited string
	storetest.Must(t, storetest.Pool(t, s).QueryRow(ctx, `SELECT request::text FROM webhook_deliveries`).Scan(&logged))
	storetest.Must(t, storetest.Pool(t, s).QueryRow(ctx, `SELECT current::text FROM audit_logs WHERE ref_type = 'Webhook'`).Scan(&audited))
	if strings.Contains(logged+audited, "tok-") || strings.Contains(audited, "Qz") || !strings.Contains(logged, `"X-Featbit-Event": "test"`) ||
		!strings.Contains(audited, `"secret": "********"`) {
		t.Errorf("after the migration: logged %s, audited %s", logged, audited)
	}
}
