package web_test

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// datetimeLocal is a time as a datetime-local field holds it, in UTC.
func datetimeLocal(t time.Time) string { return t.UTC().Format("2006-01-02T15:04") }

// Without script: the targeting editor schedules its change for a time in
// UTC, names what is missing, and the flag page lists the pending change in
// words with a button that cancels it.
func TestScheduleTargetingWithoutScript(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout", VariationType: "string",
		Variations: []flagstore.Variation{{ID: "a", Name: "Old", Value: "old"}, {ID: "b", Name: "New", Value: "new"}}})
	b := a.signedIn(ownerEmail, ownerPassword)

	vals := b.targetingForm("checkout")
	if !strings.Contains(b.last.text("schedule-fields"), "UTC") {
		t.Errorf("the schedule fields do not say their time zone: %q", b.last.text("schedule-fields"))
	}
	vals.Set("target.b", "alice")
	vals.Set("schedule", "1")
	vals.Set("scheduledTime", datetimeLocal(time.Now().Add(-time.Hour)))
	p := b.post("/flags/checkout/targeting", vals).status(http.StatusBadRequest)
	if p.text("error-title") == "" || !strings.Contains(p.text("error-scheduledTime"), "has passed") {
		t.Errorf("problems: title %q, time %q", p.text("error-title"), p.text("error-scheduledTime"))
	}
	if got := text(input(p.must("targeting-form"), "target.b")); got != "alice" {
		t.Errorf("the typed targeting %q was lost", got)
	}

	at := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Minute)
	vals = formValues(p.must("targeting-form"))
	vals.Set("schedule", "1")
	vals.Set("title", "Alice gets the new checkout")
	vals.Set("scheduledTime", datetimeLocal(at))
	p = b.post("/flags/checkout/targeting", vals).status(http.StatusOK).at("/flags/checkout")
	if got, want := p.text("flash-success"), "Targeting change scheduled for "+at.Format("2006-01-02 15:04")+" UTC."; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if len(a.flag(env, "checkout").TargetUsers) != 0 {
		t.Fatal("scheduling changed the flag now")
	}
	item := p.must("pending-change")
	if got := text(find(item, "pending-title")); got != "Alice gets the new checkout" {
		t.Errorf("pending title %q", got)
	}
	if got := text(find(item, "pending-when")); !strings.Contains(got, at.Format("2006-01-02 15:04")+" UTC") {
		t.Errorf("pending when %q", got)
	}
	if got := text(find(item, "pending-lines")); !strings.Contains(got, "alice") {
		t.Errorf("the change in words %q does not name alice", got)
	}

	p = b.post(attrOfForm(item), formValues(item)).status(http.StatusOK).at("/flags/checkout")
	if got := p.text("flash-success"); got != "Scheduled change cancelled." {
		t.Errorf("message %q", got)
	}
	if p.has("pending-change") {
		t.Error("the cancelled change is still listed")
	}
	pending, err := a.st.Governance().FlagPendingChanges(t.Context(), a.ownerActor(), env.ID, "checkout")
	must(t, err)
	if len(pending) != 0 {
		t.Errorf("pending after cancelling: %+v", pending)
	}

	// Scheduled again and made due, the worker applies it; history says so.
	vals = b.targetingForm("checkout")
	vals.Set("target.b", "alice")
	vals.Set("schedule", "1")
	vals.Set("title", "Alice again")
	vals.Set("scheduledTime", datetimeLocal(at))
	b.post("/flags/checkout/targeting", vals).status(http.StatusOK)
	if _, err := a.pool.Exec(t.Context(), `UPDATE flag_schedules SET scheduled_at = now() WHERE status = 'pending'`); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		runner.NewSchedules(a.st, slog.New(slog.DiscardHandler)).Run(ctx, 20*time.Millisecond)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for len(a.flag(env, "checkout").TargetUsers) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	<-done
	p = b.get("/flags/checkout/history").status(http.StatusOK)
	entry := p.must("history-entry") // newest first
	if got := text(find(entry, "history-op")); got != "Scheduled update" {
		t.Errorf("history operation %q, want Scheduled update", got)
	}
	// The worker started after the time: it says it applied the change at start.
	if got := text(find(entry, "history-comment")); !strings.HasPrefix(got, `Scheduled change "Alice again": applied at start; it was due at `) {
		t.Errorf("history comment %q", got)
	}
	if p.has("pending-change") {
		t.Error("the applied change is still pending")
	}
}

// In Chromium: a targeting change is scheduled from the editor and
// cancelled from the flag page.
func TestBrowserScheduleAndCancel(t *testing.T) {
	t.Parallel()
	ch := headless(t, 90*time.Second)
	a, _, env := flagApp(t)
	a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout", VariationType: "string",
		Variations: []flagstore.Variation{{ID: "a", Name: "Old", Value: "old"}, {ID: "b", Name: "New", Value: "new"}}})

	ch.do("desktop", viewport(1440))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("editor", chromedp.Navigate(a.srv.URL+"/flags/checkout?edit=targeting"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=targeting-form]`)))
	ch.do("target alice", chromedp.SendKeys(chromedp.CSS(`textarea[name="target.b"]`), "alice"))
	at := time.Now().Add(3 * time.Hour).UTC().Truncate(time.Minute)
	ch.eval(`(function(){var f=document.querySelector("[data-testid=schedule-time]");f.value=` + "`" + datetimeLocal(at) + "`" +
		`;f.dispatchEvent(new Event("input",{bubbles:true}));return f.value})()`)
	ch.fill(`[data-testid=schedule-title]`, "Alice first")
	ch.do("schedule", chromedp.Click(chromedp.CSS(`[data-testid=targeting-schedule]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=pending-change]`)))
	if got := ch.eval(`document.querySelector("[data-testid=pending-title]").textContent`); got != "Alice first" {
		t.Errorf("pending title %q", got)
	}
	if got := ch.eval(`document.querySelector("[data-testid=pending-lines]").textContent`); !strings.Contains(got, "alice") {
		t.Errorf("the change in words %q", got)
	}
	pending, err := a.st.Governance().FlagPendingChanges(t.Context(), a.ownerActor(), env.ID, "checkout")
	must(t, err)
	if len(pending) != 1 || !pending[0].ScheduledTime.Equal(at) {
		t.Fatalf("pending %+v, want one at %s", pending, at)
	}
	if len(a.flag(env, "checkout").TargetUsers) != 0 {
		t.Fatal("scheduling changed the flag now")
	}

	// The editor with its schedule fields, and the pending change above it,
	// fit a desktop and a phone.
	for _, width := range []int64{1440, 390} {
		ch.shootAt(a.srv.URL, "/flags/checkout?edit=targeting", "schedule-editor-"+strconv.FormatInt(width, 10), width, "[data-testid=pending-change]")
	}
	ch.do("flag page", viewport(1440), chromedp.Navigate(a.srv.URL+"/flags/checkout"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=pending-change]`)))
	ch.do("cancel", chromedp.Click(chromedp.CSS(`[data-testid=pending-cancel]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`[data-testid=pending-change]`)))
	pending, err = a.st.Governance().FlagPendingChanges(t.Context(), a.ownerActor(), env.ID, "checkout")
	must(t, err)
	if len(pending) != 0 {
		t.Errorf("pending after cancelling: %+v", pending)
	}
}
