package web_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/runner"
)

// The end-user pages without script: a broken page address (one whose time
// is out of range too) and an over-long search are named on the page, an unknown user is 404, and htmx
// gets the list region only.
func TestEndUserPagesRefuseBadInput(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	endUsers := runner.NewEndUsers(a.st, slog.New(slog.DiscardHandler))
	endUsers.Saw(env.ID, []eval.EndUser{{KeyID: "alice"}, {KeyID: "bob"}}, time.Now())
	must(t, endUsers.Flush(t.Context()))
	b := a.signedIn(ownerEmail, ownerPassword)

	p := b.get("/end-users").status(http.StatusOK)
	if n := len(p.findAll("end-user-row")); n != 2 || p.has("end-user-bound") || attr(p.must("nav-end-users"), "aria-current") != "page" {
		t.Fatalf("list: %d rows, bound notice %v", n, p.has("end-user-bound"))
	}
	for _, cursor := range []string{"not-a-cursor", "-9223372036854775808_" + uuid.Max.String(), "253402300800000000_" + uuid.Max.String()} {
		p = b.get("/end-users?after=" + cursor).status(http.StatusBadRequest)
		if got := p.text("end-user-list-error"); got != "That page address is not valid; here is the first page." || len(p.findAll("end-user-row")) != 2 {
			t.Errorf("cursor %s: %q", cursor, got)
		}
	}
	p = b.get("/end-users?q=" + strings.Repeat("x", 200)).status(http.StatusBadRequest)
	if got := p.text("end-user-list-error"); got != "Search for at most 128 characters." {
		t.Errorf("long search: %q", got)
	}
	if got := b.get("/end-users?q=nobody").text("end-user-list-empty"); got != "No end user's key or name starts with “nobody”." {
		t.Errorf("no match: %q", got)
	}
	b.get("/end-users/00000000-0000-0000-0000-000000000001").status(http.StatusNotFound)
	b.get("/end-users/not-an-id").status(http.StatusNotFound)

	req, _ := http.NewRequest(http.MethodGet, a.srv.URL+"/end-users?q=ali", nil)
	req.Header.Set("HX-Request", "true")
	h := b.do(req)
	if h.has("switcher") || len(h.findAll("end-user-row")) != 1 {
		t.Errorf("htmx answer: %s", h.body)
	}
}
