package webhook

import (
	"context"
	"encoding/json"
	"fmt"
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

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// Each change reaches the receiver once, signed with the webhook's secret
// as FeatBit signs (sha256= and the hex HMAC of the body), with FeatBit's
// headers and data object.
func TestWebhookDeliversEachEventOnceSigned(t *testing.T) {
	t.Parallel()
	s, a, prod := loopbackStore(t)
	ctx := context.Background()
	r := newReceiver(t)
	const secret = "a-webhook-secret"
	w := hookOn(t, s, a, prod, r.URL, secret, webhooks.EventFlagCreated, webhooks.EventFlagToggled, webhooks.EventFlagArchived,
		webhooks.EventFlagRestored, webhooks.EventFlagDeleted, webhooks.EventSegmentCreated, webhooks.EventSegmentArchived)
	if w.Secret == secret || !strings.Contains(w.Secret, "****") {
		t.Fatalf("secret shown as %q, want it masked", w.Secret)
	}
	runWorker(t, s.Store, fast)

	_, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)
	_, err = s.Flags().ToggleFlag(ctx, a, prod.ID, "pay", true, flagstore.Change{})
	must(t, err)
	_, err = s.Flags().ArchiveFlag(ctx, a, prod.ID, "pay", flagstore.Change{})
	must(t, err)
	_, err = s.Flags().RestoreFlag(ctx, a, prod.ID, "pay", flagstore.Change{})
	must(t, err)
	_, err = s.Flags().ArchiveFlag(ctx, a, prod.ID, "pay", flagstore.Change{})
	must(t, err)
	must(t, s.Flags().DeleteFlag(ctx, a, prod.ID, "pay", flagstore.Change{}))
	_, err = s.Segments().CreateSegment(ctx, a, prod.ID, segments.SegmentInput{Name: "Beta", Key: "beta", Type: "environment-specific"})
	must(t, err)
	want := []string{webhooks.EventFlagCreated, webhooks.EventFlagToggled, webhooks.EventFlagArchived, webhooks.EventFlagRestored, webhooks.EventFlagArchived,
		webhooks.EventFlagDeleted, webhooks.EventSegmentCreated}
	drained(t, s.pool)
	got := r.received()
	var events []string
	deliveries := map[string]bool{}
	for _, g := range got {
		events = append(events, g.event)
		if g.signature != Sign(secret, g.body) {
			t.Errorf("%s: signature %q does not match the body", g.event, g.signature)
		}
		if g.hookID != w.ID.String() || deliveries[g.delivery] {
			t.Errorf("%s: hook %q delivery %q", g.event, g.hookID, g.delivery)
		}
		deliveries[g.delivery] = true
		var payload struct {
			Events      string `json:"events"`
			Environment struct {
				ID uuid.UUID `json:"id"`
			} `json:"environment"`
			Data struct {
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
	log, err := s.Webhooks().ListWebhookDeliveries(ctx, a, w.ID, webhooks.WebhookDeliveryFilter{Page: core.Page{Size: 100}})
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
	s, a, _ := openStore(t, true)
	prod, dev := prodAndDev(t, s, a)
	ctx := context.Background()
	r := newReceiver(t)
	hookOn(t, s, a, prod, r.URL, "", webhooks.EventFlagToggled)
	runWorker(t, s.Store, fast)
	_, err := s.Flags().CreateFlag(ctx, a, dev.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)
	_, err = s.Flags().ToggleFlag(ctx, a, dev.ID, "pay", true, flagstore.Change{}) // another environment
	must(t, err)
	_, err = s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"}) // another event
	must(t, err)
	_, err = s.Flags().ToggleFlag(ctx, a, prod.ID, "pay", true, flagstore.Change{})
	must(t, err)
	drained(t, s.pool)
	if got := r.received(); len(got) != 1 || got[0].event != webhooks.EventFlagToggled || got[0].signature != "" {
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
	w := hookOn(t, s, a, prod, r.URL, "s3cret-value", webhooks.EventFlagCreated)
	runWorker(t, s.Store, Options{Poll: 20 * time.Millisecond, Retries: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}})
	_, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)
	drained(t, s.pool)
	got := r.received()
	if len(got) != 3 || got[0].delivery != got[2].delivery || got[2].status != 200 {
		t.Fatalf("got %+v, want 500, 500, then 200 of one delivery", got)
	}
	log, err := s.Webhooks().ListWebhookDeliveries(ctx, a, w.ID, webhooks.WebhookDeliveryFilter{Page: core.Page{Size: 10}})
	must(t, err)
	if log.TotalCount != 3 || !log.Items[0].Success || log.Items[0].Attempt != 3 || log.Items[2].Success ||
		log.Items[2].Response.StatusCode != 500 {
		t.Fatalf("log %+v", log.Items)
	}
	hook, err := s.Webhooks().GetWebhook(ctx, a, w.ID)
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
	w := hookOn(t, s, a, prod, r.URL, "", webhooks.EventFlagCreated)
	// An attempt older than the log keeps is forgotten when the worker starts.
	_, err := s.pool.Exec(ctx, `INSERT INTO webhook_deliveries (webhook_id, delivery_id, events, attempt, success, latency_ms,
		request, started_at, ended_at) VALUES ($1, gen_random_uuid(), 'test', 1, true, 1, '{}', now() - interval '31 days', now() - interval '31 days')`, w.ID)
	must(t, err)
	runWorker(t, s.Store, fast) // three attempts
	_, err = s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)
	drained(t, s.pool)
	if n := len(r.received()); n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
	log, err := s.Webhooks().ListWebhookDeliveries(ctx, a, w.ID, webhooks.WebhookDeliveryFilter{Page: core.Page{Size: 10}})
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
	other := store.New(s.pool, s.Projects().Keys(), slog.New(slog.DiscardHandler), core.Options{PasswordCost: bcrypt.MinCost, WebhookAllowPrivateNetworks: true})
	r := newReceiver(t)
	hookOn(t, s, a, prod, r.URL, "k", webhooks.EventFlagCreated, webhooks.EventFlagToggled)
	hookOn(t, s, a, prod, r.URL, "k", webhooks.EventFlagCreated)
	opts := Options{Poll: 5 * time.Millisecond, Retries: []time.Duration{time.Second}}
	runWorker(t, s.Store, opts)
	runWorker(t, other, opts)
	const flags = 30
	for i := range flags {
		key := fmt.Sprintf("f%d", i)
		_, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: key, Key: key})
		must(t, err)
		_, err = s.Flags().ToggleFlag(ctx, a, prod.ID, key, true, flagstore.Change{})
		must(t, err)
	}
	const want = flags * 3 // two creations and one toggle each
	drained(t, s.pool)
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
// the worker, not in the change's transaction.
func TestWebhookHangingReceiverDoesNotSlowChanges(t *testing.T) {
	t.Parallel()
	s, a, prod := loopbackStore(t)
	ctx := context.Background()
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	release := sync.OnceFunc(func() { close(hang) })
	t.Cleanup(func() { release(); slow.Close() })
	_, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)
	toggles := func(n int) time.Duration {
		var times []time.Duration
		for i := range n {
			start := time.Now()
			_, err := s.Flags().ToggleFlag(ctx, a, prod.ID, "pay", i%2 == 0, flagstore.Change{})
			must(t, err)
			times = append(times, time.Since(start))
		}
		slices.Sort(times)
		return times[len(times)/2]
	}
	toggles(5) // warm up
	without := toggles(30)
	hookOn(t, s, a, prod, slow.URL, "k", webhooks.EventFlagToggled)
	runWorker(t, s.Store, Options{Poll: 10 * time.Millisecond, Timeout: 30 * time.Second, Concurrency: 4})
	t.Cleanup(release) // before the worker stops, which waits for its requests
	with := toggles(30)
	t.Logf("median toggle: %v without a webhook, %v with one whose receiver hangs", without, with)
	if with > 3*without+20*time.Millisecond {
		t.Fatalf("changes slowed from %v to %v by a hanging receiver", without, with)
	}
	var queued int
	must(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_outbox`).Scan(&queued))
	if queued != 30 {
		t.Fatalf("%d deliveries queued, want 30", queued)
	}
}

// The outbound rules apply: without private networks allowed, a loopback
// receiver is refused and the log says why without the answer.
func TestWebhookOutboundRules(t *testing.T) {
	t.Parallel()
	s, a, _ := testStore(t)
	prod, _ := prodAndDev(t, s, a)
	r := newReceiver(t)
	w := hookOn(t, s, a, prod, r.URL, "", webhooks.EventFlagCreated)
	d, err := NewSender(s.Store).SendTest(context.Background(), a, w.ID)
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
	w := hookOn(t, s, a, prod, r.URL, "", webhooks.EventFlagCreated)
	_, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)
	_, err = s.Webhooks().UpdateWebhook(ctx, a, w.ID, webhooks.WebhookInput{Name: w.Name, URL: w.URL, Scopes: w.Scopes, Events: w.Events})
	must(t, err)
	runWorker(t, s.Store, fast)
	waitUntil(t, "the outbox to empty", func() bool {
		var n int
		must(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_outbox`).Scan(&n))
		return n == 0
	})
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
	s, a, _ := openStore(t, true)
	prod, dev := prodAndDev(t, s, a)
	ctx := context.Background()
	other, err := s.Projects().CreateProject(ctx, a, core.ProjectInput{Name: "Api", Key: "api"})
	must(t, err)
	inDev, elsewhere := newReceiver(t), newReceiver(t)
	hookOn(t, s, a, dev, inDev.URL, "", webhooks.EventSegmentTargetUsersChanged)
	hookOn(t, s, a, other.Environments[0], elsewhere.URL, "", webhooks.EventSegmentTargetUsersChanged)
	runWorker(t, s.Store, fast)

	sg, err := s.Segments().CreateSegment(ctx, a, prod.ID, segments.SegmentInput{Name: "Beta", Key: "beta", Type: flagstore.SegmentShared,
		Scopes: []string{"organization/default-organization:project/web"}})
	must(t, err)
	for _, env := range []core.Environment{prod, dev} {
		f, err := s.Flags().CreateFlag(ctx, a, env.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
		must(t, err)
		tg := f.Targeting()
		tg.Rules = []flagstore.FlagRule{{ID: "r", Name: "Beta",
			Conditions: []flagstore.Condition{{ID: "c", Property: targeting.SegmentIn, Value: `["` + sg.ID.String() + `"]`}},
			Variations: []flagstore.RolloutVariation{{ID: f.Variations[1].ID, Rollout: []float64{0, 1}, ExptRollout: 1}}}}
		_, err = s.Flags().SetFlagTargeting(ctx, a, env.ID, "pay", flagstore.TargetingInput{Targeting: &tg})
		must(t, err)
	}
	users := []string{"u1"}
	_, err = s.Segments().SetSegmentTargeting(ctx, a, prod.ID, sg.ID, segments.SegmentTargetingInput{Included: &users})
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
	drained(t, s.pool)
	if got := elsewhere.received(); len(got) != 0 {
		t.Errorf("a webhook of a project the segment does not apply in got %d deliveries", len(got))
	}
}
