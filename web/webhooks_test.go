package web_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
	"github.com/bunting-flags/bunting/web/webhook"
)

// signedReceiver is a webhook endpoint on loopback that checks each
// request's signature as a receiver would, with the shared secret.
type signedReceiver struct {
	*httptest.Server
	mu            sync.Mutex
	valid, forged int
	events        []string
}

func newSignedReceiver(t *testing.T, secret string) *signedReceiver {
	r := &signedReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
		r.mu.Lock()
		if hmac.Equal([]byte(req.Header.Get("X-FeatBit-Signature-256")), []byte(want)) {
			r.valid++
		} else {
			r.forged++
		}
		r.events = append(r.events, req.Header.Get("X-FeatBit-Event"))
		r.mu.Unlock()
		io.WriteString(w, "thanks from the receiver")
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *signedReceiver) counts() (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.valid, r.forged
}

// In Chromium: create a webhook from the navigation, send a test, and see
// it in the delivery log with its status and latency (the receiver is on
// loopback, so its answer's body is not kept); a flag change then reaches
// the receiver through the worker and the log.
func TestBrowserWebhooks(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	// The receiver is on loopback: webhooks need private networks allowed.
	a := newLoopbackApp(t, &logRecorder{}, core.Options{WebhookAllowPrivateNetworks: true})
	ctx := context.Background()
	p, err := a.st.Projects().CreateProject(ctx, a.ownerActor(), core.ProjectInput{Name: "Web", Key: "web"})
	must(t, err)
	const secret = "browser-test-secret"
	r := newSignedReceiver(t, secret)

	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("nav", chromedp.Navigate(a.srv.URL+"/projects"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=nav-webhooks]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=nav-webhooks]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=webhook-new]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=webhook-new]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=webhook-form]`)))
	ch.fill(`#webhook-name`, "Chat")
	ch.fill(`#webhook-url`, r.URL+"/hook")
	ch.fill(`#webhook-secret`, secret)
	ch.do("choose", chromedp.Click(chromedp.CSS(`[data-testid=webhook-scopes] input[value="`+p.ID.String()+"/"+p.Environments[0].ID.String()+`"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=webhook-flag-events] input[value="feature_flag.toggled"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=webhook-submit]`)))
	ch.waitPath(`^/webhooks/[0-9a-f-]{36}$`)
	if got := ch.eval(`document.querySelector("[data-testid=webhook-name]").textContent`); got != "Chat" {
		t.Fatalf("webhook page for %q", got)
	}
	if ch.value(`#webhook-secret`) != "" || strings.Contains(ch.eval(`document.body.innerHTML`), secret) {
		t.Fatal("the secret is shown again")
	}

	ch.do("send test", chromedp.Click(chromedp.CSS(`[data-testid=webhook-test]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=delivery-row]`)))
	row := ch.eval(`document.querySelector("[data-testid=delivery-row]").textContent`)
	for _, want := range []string{"test", "200 OK", " ms"} {
		if !strings.Contains(row, want) {
			t.Errorf("delivery row %q does not say %q", row, want)
		}
	}
	if strings.Contains(row, "thanks from the receiver") {
		t.Errorf("delivery row %q shows the answer of a receiver on loopback", row)
	}
	if flash := ch.eval(`document.getElementById("flash").textContent`); !strings.Contains(flash, "Test delivered: the receiver answered 200 OK") {
		t.Errorf("flash %q", flash)
	}

	// A toggle in the scope goes through the outbox and the worker.
	work, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		webhook.Run(work, a.st, slog.New(slog.DiscardHandler), webhook.Options{Poll: 20 * time.Millisecond})
		close(done)
	}()
	t.Cleanup(func() { stop(); <-done })
	_, err = a.st.Flags().CreateFlag(ctx, a.ownerActor(), p.Environments[0].ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	must(t, err)
	_, err = a.st.Flags().ToggleFlag(ctx, a.ownerActor(), p.Environments[0].ID, "pay", true, flagstore.Change{})
	must(t, err)
	for i := 0; ; i++ {
		if valid, _ := r.counts(); valid == 2 {
			break
		}
		if i == 200 {
			t.Fatal("the toggle did not reach the receiver")
		}
		time.Sleep(25 * time.Millisecond)
	}
	ch.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`[data-testid=delivery-row]`)))
	if n := ch.eval(`String(document.querySelectorAll("[data-testid=delivery-row]").length)`); n != "2" {
		t.Errorf("%s deliveries in the log, want the test and the toggle", n)
	}
	if valid, forged := r.counts(); valid != 2 || forged != 0 {
		t.Errorf("%d valid and %d forged signatures, want 2 and 0", valid, forged)
	}
	page := ch.eval(`location.pathname`)
	for _, width := range []int64{1280, 390} {
		ch.shootAt(a.srv.URL, page, "webhook", width, `[data-testid=delivery-row]`)
		ch.shootAt(a.srv.URL, "/webhooks", "webhooks", width, `[data-testid=webhook-row]`)
	}
}

// Without script, the form posts and a refused one comes back with the
// problems named at the fields and what was typed kept; a Developer neither
// sees webhooks nor reaches them.
func TestWebhookFormWithoutScript(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	p, err := a.st.Projects().CreateProject(context.Background(), a.ownerActor(), core.ProjectInput{Name: "Web", Key: "web"})
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/webhooks/new").status(http.StatusOK)
	b.post("/webhooks", url.Values{"name": {"Chat"}, "url": {"ftp://nope"}}).status(http.StatusBadRequest)
	for _, id := range []string{"error-url", "error-scopes", "error-events"} {
		if !b.last.has(id) {
			t.Errorf("the refused form does not show %s", id)
		}
	}
	b.post("/webhooks", url.Values{"name": {"Chat"}, "url": {"https://hooks.example.com/x"}, "secret": {"s3cret-s3cret"},
		"scopes": {p.ID.String() + "/" + p.Environments[0].ID.String()}, "events": {"feature_flag.created"},
		"headers": {"X-Team: team-7f3"}, "isActive": {"true"}}).status(http.StatusOK)
	hooks, err := a.st.Webhooks().ListWebhooks(context.Background(), a.ownerActor(), webhooks.WebhookFilter{Page: core.Page{Size: 10}})
	must(t, err)
	// Its header's value and its secret are not shown again, not even here.
	if hooks.TotalCount != 1 || hooks.Items[0].Headers[0].Value != "********" || !hooks.Items[0].IsActive {
		t.Fatalf("webhooks %+v", hooks.Items)
	}
	page := "/webhooks/" + hooks.Items[0].ID.String()
	b.get(page).status(http.StatusOK)
	if html := b.last.body; strings.Contains(html, "team-7f3") || strings.Contains(html, "s3cret") {
		t.Error("the webhook's page shows its header's value or its secret")
	}
	// Saved as shown, the form keeps them.
	scope := p.ID.String() + "/" + p.Environments[0].ID.String()
	b.post(page, url.Values{"name": {"Chat"}, "url": {"https://hooks.example.com/x"}, "secret": {""}, "scopes": {scope},
		"events": {"feature_flag.created"}, "headers": {"X-Team: ********"}, "isActive": {"true"}}).status(http.StatusOK)
	var headers, sealed string
	must(t, a.pool.QueryRow(context.Background(), `SELECT headers::text, sealed_secret FROM webhooks`).Scan(&headers, &sealed))
	if !strings.Contains(headers, `"team-7f3"`) || sealed == "" {
		t.Errorf("after saving the form as shown: headers %s, secret kept %v", headers, sealed != "")
	}
	// Delete asks first, saying what goes with the webhook, then deletes it.
	b.get(page).status(http.StatusOK)
	if href := attr(b.last.must("webhook-delete"), "href"); href != page+"/delete" {
		t.Fatalf("Delete links to %q", href)
	}
	b.get(page + "/delete").status(http.StatusOK)
	if got := b.last.text("delete-consequences"); !strings.Contains(got, "delivery log is deleted") {
		t.Errorf("the confirmation says %q", got)
	}
	if n, _ := a.st.Webhooks().ListWebhooks(context.Background(), a.ownerActor(), webhooks.WebhookFilter{Page: core.Page{Size: 10}}); n.TotalCount != 1 {
		t.Fatal("asking deleted the webhook")
	}
	b.post(page+"/delete", nil).status(http.StatusOK)
	if n, _ := a.st.Webhooks().ListWebhooks(context.Background(), a.ownerActor(), webhooks.WebhookFilter{Page: core.Page{Size: 10}}); n.TotalCount != 0 {
		t.Error("the webhook is still there after confirming")
	}

	a.addMember("dev@example.com", core.DeveloperPolicyID)
	dev := a.signedIn("dev@example.com", memberPassword)
	dev.get("/projects").status(http.StatusOK)
	if dev.last.has("nav-webhooks") {
		t.Error("navigation offers webhooks to a Developer")
	}
	dev.get("/webhooks").status(http.StatusForbidden)
}

// A member who may manage webhooks but not read Prod sees a webhook on Prod
// without its deliveries, and is told why.
func TestWebhookPageWithholdsTheLogOfUnreadableEnvironments(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	ctx, owner := t.Context(), a.ownerActor()
	p, err := a.st.Projects().CreateProject(ctx, owner, core.ProjectInput{Name: "Web", Key: "web"})
	must(t, err)
	prod, dev := p.Environments[0], p.Environments[1]
	hook, err := a.st.Webhooks().CreateWebhook(ctx, owner, webhooks.WebhookInput{Name: "Prod changes", URL: "https://hooks.example.com/x",
		Scopes: []string{p.ID.String() + "/" + prod.ID.String()}, Events: []string{webhooks.EventFlagCreated}, IsActive: true})
	must(t, err)
	policy, err := a.st.IAM().CreatePolicy(ctx, owner, iam.PolicyInput{Name: "Dev hooks", Key: "dev-hooks"})
	must(t, err)
	_, err = a.st.IAM().UpdatePolicyStatements(ctx, owner, policy.ID, []access.Statement{
		{ID: "o", ResourceType: access.TypeOrganization, Effect: "allow", Actions: []string{string(core.WebhookAction)}, Resources: []string{"organization/*"}},
		{ID: "e", ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: []string{"project/web:env/" + dev.Key}}})
	must(t, err)
	a.addMember("hooks@example.com", policy.ID)
	b := a.signedIn("hooks@example.com", memberPassword)
	b.get("/webhooks/" + hook.ID.String()).status(http.StatusOK)
	if got := b.last.text("webhook-log-withheld"); !strings.Contains(got, "environments you may not read") {
		t.Errorf("the log region says %q", got)
	}
	owners := a.signedIn(ownerEmail, ownerPassword)
	owners.get("/webhooks/" + hook.ID.String()).status(http.StatusOK)
	if owners.last.has("webhook-log-withheld") {
		t.Error("the owner is not shown the log")
	}
}

// TestWebhookFormSlackFormat: the form's Slack format and change request
// events are saved, and the webhook's page shows them chosen.
func TestWebhookFormSlackFormat(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	p, err := a.st.Projects().CreateProject(context.Background(), a.ownerActor(), core.ProjectInput{Name: "Web", Key: "web"})
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/webhooks/new").status(http.StatusOK)
	if !b.last.has("webhook-request-events") || !b.last.has("webhook-format") {
		t.Fatal("the form offers no format or change request events")
	}
	b.post("/webhooks", url.Values{"name": {"Team chat"}, "url": {"https://hooks.slack.example/T1"}, "payloadTemplateType": {"slack"},
		"scopes": {p.ID.String() + "/" + p.Environments[0].ID.String()}, "events": {"change_request.created", "feature_flag.toggled"},
		"isActive": {"true"}}).status(http.StatusOK)
	hooks, err := a.st.Webhooks().ListWebhooks(context.Background(), a.ownerActor(), webhooks.WebhookFilter{Page: core.Page{Size: 10}})
	must(t, err)
	if hooks.TotalCount != 1 || hooks.Items[0].PayloadTemplateType != webhooks.PayloadSlack ||
		strings.Join(hooks.Items[0].Events, ",") != "change_request.created,feature_flag.toggled" {
		t.Fatalf("saved %+v", hooks.Items)
	}
	b.get("/webhooks/" + hooks.Items[0].ID.String()).status(http.StatusOK)
	if !strings.Contains(b.last.body, `<option value="slack" selected`) {
		t.Error("the webhook's page does not show the Slack format chosen")
	}
	b.post("/webhooks", url.Values{"name": {"Other"}, "url": {"https://hooks.example.com/y"}, "payloadTemplateType": {"teams"},
		"scopes": {p.ID.String() + "/" + p.Environments[0].ID.String()}, "events": {"feature_flag.toggled"}}).status(http.StatusBadRequest)
	if !b.last.has("error-payloadTemplateType") {
		t.Error("an unknown format is not named on the form")
	}
}
