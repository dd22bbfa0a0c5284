package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

func TestAuditLog(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	for i := range 22 {
		a.makeFlag(env, flagstore.FlagInput{Name: fmt.Sprintf("Flag %02d", i), Key: fmt.Sprintf("flag-%02d", i),
			Change: flagstore.Change{Comment: fmt.Sprintf("batch %02d", i)}})
	}
	_, err := a.st.Flags().ToggleFlag(t.Context(), a.ownerActor(), env.ID, "flag-03", true, flagstore.Change{Comment: "launch day"})
	must(t, err)
	sg := a.makeSegment(env, "Beta users", "beta")
	b := a.signedIn(ownerEmail, ownerPassword)

	p := b.get("/audit-log").status(http.StatusOK)
	if n := len(p.findAll("history-entry")); n != 20 || p.text("pager-label") != "Page 1 of 2 · 24 changes" {
		t.Fatalf("page 1: %d entries, %q", n, p.text("pager-label"))
	}
	first := p.findAll("history-entry")[0]
	if text(find(first, "history-name")) != "Beta users" || attr(find(first, "history-name"), "href") != segmentPath(sg) {
		t.Errorf("newest entry names %q → %q", text(find(first, "history-name")), attr(find(first, "history-name"), "href"))
	}
	if n := len(b.get("/audit-log?page=2").findAll("history-entry")); n != 4 {
		t.Errorf("page 2: %d entries", n)
	}

	// Type, text and dates filter; the pager keeps the filters.
	if n := len(b.get("/audit-log?type=Segment").findAll("history-entry")); n != 1 {
		t.Errorf("segments only: %d entries", n)
	}
	p = b.get("/audit-log?type=FeatureFlag")
	if got := attr(p.must("pager-next"), "href"); got != "/audit-log?page=2&type=FeatureFlag" {
		t.Errorf("pager of a filtered log: %q", got)
	}
	p = b.get("/audit-log?q=launch+day")
	entries := p.findAll("history-entry")
	if len(entries) != 1 || text(find(entries[0], "history-comment")) != "launch day" {
		t.Fatalf("search by comment: %d entries", len(entries))
	}
	if got := text(find(entries[0], "history-diff")); got != "Status Was: Off → Now: On" {
		t.Errorf("diff %q", got)
	}
	if got := attr(find(entries[0], "history-name"), "href"); got != "/flags/flag-03" {
		t.Errorf("link %q", got)
	}
	if n := len(b.get("/audit-log?q=flag-1").findAll("history-entry")); n != 10 {
		t.Errorf("search by key: %d entries", n)
	}
	today := time.Now().UTC().Format("2006-01-02")
	tomorrow := time.Now().UTC().Add(24 * time.Hour).Format("2006-01-02")
	yesterday := time.Now().UTC().Add(-24 * time.Hour).Format("2006-01-02")
	if got := b.get("/audit-log?from=" + today + "&to=" + today).text("pager-label"); got != "Page 1 of 2 · 24 changes" {
		t.Errorf("today: %q", got)
	}
	if got := b.get("/audit-log?from=" + tomorrow).text("history-empty"); got != "No changes match." {
		t.Errorf("from tomorrow: %q", got)
	}
	if got := b.get("/audit-log?to=" + yesterday).text("history-empty"); got != "No changes match." {
		t.Errorf("until yesterday: %q", got)
	}
	p = b.get("/audit-log?from=31/01/2025").status(http.StatusBadRequest)
	if got := p.text("error-from"); got != "Enter a date like 2025-01-31." {
		t.Errorf("date problem %q", got)
	}
	if got := attr(p.must("audit-from"), "value"); got != "31/01/2025" {
		t.Errorf("typed date lost: %q", got)
	}
	// htmx gets the history region only.
	req, _ := http.NewRequest(http.MethodGet, a.srv.URL+"/audit-log?type=Segment", nil)
	req.Header.Set("HX-Request", "true")
	h := b.do(req)
	if h.has("switcher") || !h.has("history") || len(h.findAll("history-entry")) != 1 {
		t.Errorf("htmx answer: %s", h.body)
	}
	if !strings.Contains(b.get("/audit-log").text("work-env"), "Web / Prod") {
		t.Errorf("the audit log does not name its environment")
	}
	if attr(b.last.must("nav-audit-log"), "aria-current") != "page" {
		t.Errorf("navigation does not mark the audit log")
	}
}

// The audit log does not link to a flag since deleted: its entries name it
// as deleted instead of leading to a missing page.
func TestAuditLogNamesDeletedFlags(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	a.makeFlag(env, flagstore.FlagInput{Name: "Gone", Key: "gone"})
	a.makeFlag(env, flagstore.FlagInput{Name: "Kept", Key: "kept"})
	_, err := a.st.Flags().ArchiveFlag(t.Context(), a.ownerActor(), env.ID, "gone", flagstore.Change{})
	must(t, err)
	must(t, a.st.Flags().DeleteFlag(t.Context(), a.ownerActor(), env.ID, "gone", flagstore.Change{}))
	b := a.signedIn(ownerEmail, ownerPassword)
	p := b.get("/audit-log").status(http.StatusOK)
	for _, e := range p.findAll("history-entry") {
		name := find(e, "history-name")
		switch {
		case strings.HasPrefix(text(name), "Gone"):
			if text(name) != "Gone (deleted)" || attr(name, "href") != "" {
				t.Errorf("a deleted flag's entry reads %q and links to %q", text(name), attr(name, "href"))
			}
		case text(name) == "Kept":
			if attr(name, "href") != "/flags/kept" {
				t.Errorf("a flag's entry links to %q", attr(name, "href"))
			}
		default:
			t.Errorf("unexpected entry %q", text(name))
		}
	}
}
