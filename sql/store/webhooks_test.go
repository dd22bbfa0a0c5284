package store

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"
)

// receiver is a webhook endpoint on loopback that records what it gets
// and answers with the statuses it is told, then 200.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []received
	statuses []int
}

type received struct {
	event, delivery, signature, hookID string
	body                               []byte
	status                             int
	header                             http.Header
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		status := http.StatusOK
		if len(r.statuses) > 0 {
			status, r.statuses = r.statuses[0], r.statuses[1:]
		}
		r.got = append(r.got, received{req.Header.Get(HeaderWebhookEvent), req.Header.Get(HeaderWebhookDelivery),
			req.Header.Get(HeaderWebhookSignature), req.Header.Get(HeaderWebhookHookID), body, status, req.Header.Clone()})
		r.mu.Unlock()
		w.WriteHeader(status)
		fmt.Fprintf(w, "answered %d", status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// waitFor polls until cond holds or fails the test after ten seconds.
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

// runWorker runs a delivery worker until the test ends.
func runWorker(t *testing.T, s *Store, o WebhookWorkerOptions) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.RunWebhooks(ctx, o); close(done) }()
	t.Cleanup(func() { stop(); <-done })
}

// drained waits until the outbox is empty: every queued delivery has had
// its last attempt, so no request comes after it. The worker tells no one
// when it is done, so the outbox is what is watched.
func drained(t *testing.T, s *Store) {
	t.Helper()
	waitUntil(t, "the outbox to empty", func() bool {
		var n int
		must(t, s.pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_outbox`).Scan(&n))
		return n == 0
	})
}

// loopbackStore is a test store whose webhooks may reach loopback, as
// BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS allows in tests.
func loopbackStore(t *testing.T) (*Store, *Actor, Environment) {
	s, a, _ := testStore(t)
	s.webhookPrivateNetworks = true
	prod, _ := prodAndDev(t, s, a)
	return s, a, prod
}

func hookOn(t *testing.T, s *Store, a *Actor, env Environment, url, secret string, events ...string) Webhook {
	t.Helper()
	w, err := s.CreateWebhook(context.Background(), a, WebhookInput{Name: "hook " + uuid.NewString()[:8], URL: url,
		Scopes: []string{env.ProjectID.String() + "/" + env.ID.String()}, Events: events, Secret: &secret, IsActive: true})
	must(t, err)
	return w
}

var fast = WebhookWorkerOptions{Poll: 20 * time.Millisecond, Retries: []time.Duration{50 * time.Millisecond, 50 * time.Millisecond},
	Timeout: 2 * time.Second}

// Each change reaches the receiver once, signed with the webhook's secret
// as FeatBit signs (sha256= and the hex HMAC of the body), with FeatBit's
// headers and data object.
func TestWebhookDeliversEachEventOnceSigned(t *testing.T) {
	t.Parallel()
	s, a, prod := loopbackStore(t)
	ctx := context.Background()
	r := newReceiver(t)
	const secret = "a-webhook-secret"
	w := hookOn(t, s, a, prod, r.URL, secret, EventFlagCreated, EventFlagToggled, EventFlagArchived,
		EventFlagRestored, EventFlagDeleted, EventSegmentCreated, EventSegmentArchived)
	if w.Secret == secret || !strings.Contains(w.Secret, "****") {
		t.Fatalf("secret shown as %q, want it masked", w.Secret)
	}
	runWorker(t, s, fast)

	_, err := s.CreateFlag(ctx, a, prod.ID, FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)
	_, err = s.ToggleFlag(ctx, a, prod.ID, "pay", true, Change{})
	must(t, err)
	_, err = s.ArchiveFlag(ctx, a, prod.ID, "pay", Change{})
	must(t, err)
	_, err = s.RestoreFlag(ctx, a, prod.ID, "pay", Change{})
	must(t, err)
	_, err = s.ArchiveFlag(ctx, a, prod.ID, "pay", Change{})
	must(t, err)
	must(t, s.DeleteFlag(ctx, a, prod.ID, "pay", Change{}))
	_, err = s.CreateSegment(ctx, a, prod.ID, SegmentInput{Name: "Beta", Key: "beta", Type: "environment-specific"})
	must(t, err)
	want := []string{EventFlagCreated, EventFlagToggled, EventFlagArchived, EventFlagRestored, EventFlagArchived,
		EventFlagDeleted, EventSegmentCreated}
	drained(t, s)
	got := r.received()
	var events []string
	deliveries := map[string]bool{}
	for _, g := range got {
		events = append(events, g.event)
		if g.signature != SignWebhook(secret, g.body) {
			t.Errorf("%s: signature %q does not match the body", g.event, g.signature)
		}
		if g.hookID != w.ID.String() || deliveries[g.delivery] {
			t.Errorf("%s: hook %q delivery %q", g.event, g.hookID, g.delivery)
		}
		deliveries[g.delivery] = true
		var payload struct {
			Events      string `json:"events"`
			Environment idName `json:"environment"`
			Data        struct {
				Kind   string         `json:"kind"`
				Object map[string]any `json:"object"`
			} `json:"data"`
			Changes []string `json:"changes"`
		}
		must(t, json.Unmarshal(g.body, &payload))
		if payload.Events != g.event || payload.Environment.ID != prod.ID || payload.Data.Object["id"] == nil || len(payload.Changes) == 0 {
			t.Errorf("%s: payload %s", g.event, g.body)
		}
	}
	sort.Strings(events)
	sort.Strings(want)
	if !slices.Equal(events, want) {
		t.Fatalf("events %v, want each of %v once", events, want)
	}
	log, err := s.ListWebhookDeliveries(ctx, a, w.ID, WebhookDeliveryFilter{Page: Page{Size: 100}})
	must(t, err)
	// The receiver is on loopback: its answer's body is not kept.
	if log.TotalCount != int64(len(want)) || !log.Items[0].Success || log.Items[0].Response.StatusCode != 200 ||
		log.Items[0].Response.Body != "" {
		t.Fatalf("log %+v", log)
	}
}

// A change outside the webhook's scope or events is not sent.
func TestWebhookFollowsScopesAndEvents(t *testing.T) {
	t.Parallel()
	s, a, _ := testStore(t)
	s.webhookPrivateNetworks = true
	prod, dev := prodAndDev(t, s, a)
	ctx := context.Background()
	r := newReceiver(t)
	hookOn(t, s, a, prod, r.URL, "", EventFlagToggled)
	runWorker(t, s, fast)
	_, err := s.CreateFlag(ctx, a, dev.ID, FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)
	_, err = s.ToggleFlag(ctx, a, dev.ID, "pay", true, Change{}) // another environment
	must(t, err)
	_, err = s.CreateFlag(ctx, a, prod.ID, FlagInput{Name: "Pay", Key: "pay"}) // another event
	must(t, err)
	_, err = s.ToggleFlag(ctx, a, prod.ID, "pay", true, Change{})
	must(t, err)
	drained(t, s)
	if got := r.received(); len(got) != 1 || got[0].event != EventFlagToggled || got[0].signature != "" {
		t.Fatalf("got %+v, want one unsigned toggle", got)
	}
}

// A receiver that answers 500 gets the delivery again after the retry wait,
// with the same delivery id, and the log shows both attempts.
func TestWebhookRetriesAfterFailure(t *testing.T) {
	t.Parallel()
	s, a, prod := loopbackStore(t)
	ctx := context.Background()
	r := newReceiver(t, 500, 500)
	w := hookOn(t, s, a, prod, r.URL, "s3cret-value", EventFlagCreated)
	runWorker(t, s, WebhookWorkerOptions{Poll: 20 * time.Millisecond, Retries: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}})
	_, err := s.CreateFlag(ctx, a, prod.ID, FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)
	drained(t, s)
	got := r.received()
	if len(got) != 3 || got[0].delivery != got[2].delivery || got[2].status != 200 {
		t.Fatalf("got %+v, want 500, 500, then 200 of one delivery", got)
	}
	log, err := s.ListWebhookDeliveries(ctx, a, w.ID, WebhookDeliveryFilter{Page: Page{Size: 10}})
	must(t, err)
	if log.TotalCount != 3 || !log.Items[0].Success || log.Items[0].Attempt != 3 || log.Items[2].Success ||
		log.Items[2].Response.StatusCode != 500 {
		t.Fatalf("log %+v", log.Items)
	}
	hook, err := s.GetWebhook(ctx, a, w.ID)
	must(t, err)
	if hook.LastDelivery == nil || !hook.LastDelivery.Success || *hook.LastDelivery.Response != 200 {
		t.Fatalf("last delivery %+v", hook.LastDelivery)
	}
	var left int
	must(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_outbox`).Scan(&left))
	if left != 0 {
		t.Fatalf("%d deliveries left in the outbox", left)
	}
}

// A delivery that fails every attempt stops after the schedule.
func TestWebhookGivesUpAfterItsAttempts(t *testing.T) {
	t.Parallel()
	s, a, prod := loopbackStore(t)
	ctx := context.Background()
	r := newReceiver(t, 503, 503, 503, 503, 503)
	w := hookOn(t, s, a, prod, r.URL, "", EventFlagCreated)
	// An attempt older than the log keeps is forgotten when the worker starts.
	_, err := s.pool.Exec(ctx, `INSERT INTO webhook_deliveries (webhook_id, delivery_id, events, attempt, success, latency_ms,
		request, started_at, ended_at) VALUES ($1, gen_random_uuid(), 'test', 1, true, 1, '{}', now() - interval '31 days', now() - interval '31 days')`, w.ID)
	must(t, err)
	runWorker(t, s, fast) // three attempts
	_, err = s.CreateFlag(ctx, a, prod.ID, FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)
	drained(t, s)
	if n := len(r.received()); n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
	log, err := s.ListWebhookDeliveries(ctx, a, w.ID, WebhookDeliveryFilter{Page: Page{Size: 10}})
	must(t, err)
	if log.TotalCount != 3 {
		t.Fatalf("%d attempts in the log, want the 3 of the flag's creation", log.TotalCount)
	}
}

// Two workers over one database (two instances) send each delivery once.
func TestWebhookTwoWorkersSendOnce(t *testing.T) {
	t.Parallel()
	s, a, prod := loopbackStore(t)
	ctx := context.Background()
	other := New(s.pool, s.keys, slog.New(slog.DiscardHandler), Options{PasswordCost: bcrypt.MinCost, WebhookAllowPrivateNetworks: true})
	r := newReceiver(t)
	hookOn(t, s, a, prod, r.URL, "k", EventFlagCreated, EventFlagToggled)
	hookOn(t, s, a, prod, r.URL, "k", EventFlagCreated)
	opts := WebhookWorkerOptions{Poll: 5 * time.Millisecond, Retries: []time.Duration{time.Second}}
	runWorker(t, s, opts)
	runWorker(t, other, opts)
	const flags = 30
	for i := range flags {
		key := fmt.Sprintf("f%d", i)
		_, err := s.CreateFlag(ctx, a, prod.ID, FlagInput{Name: key, Key: key})
		must(t, err)
		_, err = s.ToggleFlag(ctx, a, prod.ID, key, true, Change{})
		must(t, err)
	}
	const want = flags * 3 // two creations and one toggle each
	drained(t, s)
	got := r.received()
	seen := map[string]int{}
	for _, g := range got {
		seen[g.hookID+"/"+g.delivery]++
	}
	if len(got) != want || len(seen) != want {
		t.Fatalf("%d requests for %d deliveries, want %d each once", len(got), len(seen), want)
	}
}

// A receiver that never answers does not slow changes: the delivery waits in
// the worker, not in the change's transaction, so changes go on being made
// while the worker's requests to it hang. (What a hanging receiver costs a
// change in time is measured by bunting-bench's flag-hanging-webhook
// scenario.)
func TestWebhookHangingReceiverDoesNotSlowChanges(t *testing.T) {
	t.Parallel()
	s, a, prod := loopbackStore(t)
	ctx := context.Background()
	urls, hanging, release := hangingReceivers(t, 1)
	_, err := s.CreateFlag(ctx, a, prod.ID, FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)
	hookOn(t, s, a, prod, urls[0], "k", EventFlagToggled)
	runWorker(t, s, WebhookWorkerOptions{Poll: 10 * time.Millisecond, Timeout: time.Hour, Concurrency: 4})
	t.Cleanup(release) // before the worker stops, which waits for its requests
	toggle := func(i int) {
		t.Helper()
		_, err := s.ToggleFlag(ctx, a, prod.ID, "pay", i%2 == 0, Change{})
		must(t, err)
	}
	toggle(0)
	waitUntil(t, "the receiver to be called", func() bool { return hanging.Load() >= 1 })
	for i := 1; i < 30; i++ {
		toggle(i) // would wait for the receiver, for an hour, if the change did
	}
	var queued, attempts int
	must(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_outbox`).Scan(&queued))
	must(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries`).Scan(&attempts))
	if queued != 30 || attempts != 0 {
		t.Fatalf("%d deliveries queued and %d attempts ended, want 30 queued while every request hangs", queued, attempts)
	}
}

// Webhooks need the organization-management permission; bad input is
// named, and nothing is saved.
func TestWebhookInputAndPermission(t *testing.T) {
	t.Parallel()
	s, a, prod := loopbackStore(t)
	ctx := context.Background()
	bad := []struct {
		in   WebhookInput
		code string
	}{
		{WebhookInput{URL: "https://example.com", Scopes: []string{prod.ProjectID.String() + "/" + prod.ID.String()}, Events: []string{EventFlagCreated}}, "name_is_required"},
		{WebhookInput{Name: "x", URL: "ftp://example.com", Scopes: []string{prod.ProjectID.String() + "/" + prod.ID.String()}, Events: []string{EventFlagCreated}}, "url_is_invalid"},
		{WebhookInput{Name: "x", URL: "https://example.com", Scopes: []string{uuid.NewString() + "/" + prod.ID.String()}, Events: []string{EventFlagCreated}}, "scopes_is_invalid"},
		{WebhookInput{Name: "x", URL: "https://example.com", Scopes: []string{prod.ProjectID.String() + "/" + prod.ID.String()}, Events: []string{"flag.exploded"}}, "events_is_invalid"},
		{WebhookInput{Name: "x", URL: "https://example.com", Scopes: []string{prod.ProjectID.String() + "/" + prod.ID.String()}, Events: []string{EventFlagCreated},
			Headers: []WebhookHeader{{Key: "X-Bad", Value: "a\r\nb"}}}, "headers_is_invalid"},
		{WebhookInput{Name: "x", URL: "https://example.com", Scopes: []string{prod.ProjectID.String() + "/" + prod.ID.String()}, Events: []string{EventFlagCreated},
			PayloadTemplateType: PayloadCustom}, "payloadTemplateType_is_invalid"},
	}
	for _, b := range bad {
		_, err := s.CreateWebhook(ctx, a, b.in)
		if err == nil || !strings.Contains(err.Error(), b.code) {
			t.Errorf("%+v: %v, want %s", b.in, err, b.code)
		}
	}
	w := hookOn(t, s, a, prod, "https://example.com/hook", "first-secret-value", EventFlagCreated)
	_, err := s.CreateWebhook(ctx, a, WebhookInput{Name: w.Name, URL: "https://example.com", Scopes: w.Scopes, Events: w.Events})
	if err != ErrNameUsed {
		t.Fatalf("same name: %v", err)
	}
	// Updating with the masked secret keeps the secret.
	in := WebhookInput{Name: "renamed", URL: w.URL, Scopes: w.Scopes, Events: w.Events, Secret: &w.Secret, IsActive: true}
	u, err := s.UpdateWebhook(ctx, a, w.ID, in)
	must(t, err)
	row, err := s.q.GetWebhookByID(ctx, w.ID)
	must(t, err)
	if secret, _ := s.webhookSecret(row); secret != "first-secret-value" || u.Name != "renamed" {
		t.Fatalf("secret %q name %q after an update with the mask", secret, u.Name)
	}
	developer := *a
	developer.statements = nil
	if _, err := s.ListWebhooks(ctx, &developer, WebhookFilter{Page: Page{Size: 10}}); err != ErrForbidden {
		t.Fatalf("list without the permission: %v", err)
	}
	if _, err := s.CreateWebhook(ctx, &developer, in); err != ErrForbidden {
		t.Fatalf("create without the permission: %v", err)
	}
}

// The outbound rules apply: without private networks allowed, a loopback
// receiver is refused and the log says why without the answer.
func TestWebhookOutboundRules(t *testing.T) {
	t.Parallel()
	s, a, _ := testStore(t)
	prod, _ := prodAndDev(t, s, a)
	r := newReceiver(t)
	w := hookOn(t, s, a, prod, r.URL, "", EventFlagCreated)
	d, err := s.SendWebhookTest(context.Background(), a, w.ID)
	must(t, err)
	if d.Success || d.Error == nil || !strings.Contains(d.Error.Message, "private network address 127.0.0.1 not allowed") || len(r.received()) != 0 {
		t.Fatalf("delivery %+v", d)
	}
}

// A webhook deactivated after a change was queued is not sent it.
func TestWebhookDeactivatedIsSentNothing(t *testing.T) {
	t.Parallel()
	s, a, prod := loopbackStore(t)
	ctx := context.Background()
	r := newReceiver(t)
	w := hookOn(t, s, a, prod, r.URL, "", EventFlagCreated)
	_, err := s.CreateFlag(ctx, a, prod.ID, FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)
	_, err = s.UpdateWebhook(ctx, a, w.ID, WebhookInput{Name: w.Name, URL: w.URL, Scopes: w.Scopes, Events: w.Events})
	must(t, err)
	runWorker(t, s, fast)
	drained(t, s)
	if got := r.received(); len(got) != 0 {
		t.Fatalf("an inactive webhook was sent %d requests", len(got))
	}
}

// A shared segment's change reaches the webhooks whose scopes cover an
// environment it is visible in, whichever environment manages it, and names
// the flags that use it in those environments only: Prod's flag is not the
// Dev webhook's to read.
func TestWebhookSharedSegmentFollowsWhereItApplies(t *testing.T) {
	t.Parallel()
	s, a, _ := testStore(t)
	s.webhookPrivateNetworks = true
	prod, dev := prodAndDev(t, s, a)
	ctx := context.Background()
	other, err := s.CreateProject(ctx, a, ProjectInput{Name: "Api", Key: "api"})
	must(t, err)
	inDev, elsewhere := newReceiver(t), newReceiver(t)
	hookOn(t, s, a, dev, inDev.URL, "", EventSegmentTargetUsersChanged)
	hookOn(t, s, a, other.Environments[0], elsewhere.URL, "", EventSegmentTargetUsersChanged)
	runWorker(t, s, fast)

	sg, err := s.CreateSegment(ctx, a, prod.ID, SegmentInput{Name: "Beta", Key: "beta", Type: SegmentShared,
		Scopes: []string{"organization/default-organization:project/web"}})
	must(t, err)
	for _, env := range []Environment{prod, dev} {
		f, err := s.CreateFlag(ctx, a, env.ID, FlagInput{Name: "Pay", Key: "pay"})
		must(t, err)
		tg := f.Targeting()
		tg.Rules = []FlagRule{{ID: "r", Name: "Beta",
			Conditions: []Condition{{ID: "c", Property: SegmentIn, Value: `["` + sg.ID.String() + `"]`}},
			Variations: []RolloutVariation{{ID: f.Variations[1].ID, Rollout: []float64{0, 1}, ExptRollout: 1}}}}
		_, err = s.SetFlagTargeting(ctx, a, env.ID, "pay", TargetingInput{Targeting: &tg})
		must(t, err)
	}
	users := []string{"u1"}
	_, err = s.SetSegmentTargeting(ctx, a, prod.ID, sg.ID, SegmentTargetingInput{Included: &users})
	must(t, err)

	waitUntil(t, "the segment's change in Dev", func() bool { return len(inDev.received()) == 1 })
	var payload struct {
		Data struct {
			Object struct {
				FlagReferences []struct {
					EnvID uuid.UUID `json:"envId"`
					Key   string    `json:"key"`
				} `json:"flagReferences"`
			} `json:"object"`
		} `json:"data"`
	}
	must(t, json.Unmarshal(inDev.received()[0].body, &payload))
	if refs := payload.Data.Object.FlagReferences; len(refs) != 1 || refs[0].Key != "pay" || refs[0].EnvID != dev.ID {
		t.Errorf("flagReferences %+v, want Dev's pay", refs)
	}
	drained(t, s)
	if got := elsewhere.received(); len(got) != 0 {
		t.Errorf("a webhook of a project the segment does not apply in got %d deliveries", len(got))
	}
}
