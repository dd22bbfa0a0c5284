package web_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// seeEndUsers records end users as the SDK endpoints do: key, name.
func (a *app) seeEndUsers(envID string, users ...[2]string) {
	a.t.Helper()
	buffer := runner.NewEndUsers(a.st, slog.New(slog.DiscardHandler))
	var seen []eval.EndUser
	for _, u := range users {
		name := u[1]
		seen = append(seen, eval.EndUser{KeyID: u[0], Name: &name})
	}
	env := a.project("web").Environments[0]
	if env.ID.String() != envID {
		a.t.Fatalf("seeEndUsers: environment %s is not web's first", envID)
	}
	buffer.Saw(env.ID, seen, time.Now())
	must(a.t, buffer.Flush(a.t.Context()))
}

// The user-key fields' suggestions: at most twenty end users of the working
// environment, each with key and name; nothing for an empty or over-long
// word, and nothing for someone who may open no environment.
func TestEndUserSuggestions(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	var users [][2]string
	for i := range 25 {
		users = append(users, [2]string{fmt.Sprintf("vip-%02d", i), fmt.Sprintf("Vip number %d", i)})
	}
	a.seeEndUsers(env.ID.String(), append(users, [2]string{"alice", "Alice Smith"})...)
	b := a.signedIn(ownerEmail, ownerPassword)

	if n := len(b.get("/end-users/suggest?q=vip").status(http.StatusOK).findAll("user-suggestion")); n != 20 {
		t.Errorf("vip: got %d suggestions, want 20 (the bound)", n)
	}
	p := b.get("/end-users/suggest?q=ali").status(http.StatusOK)
	if opts := p.findAll("user-suggestion"); len(opts) != 1 || attr(opts[0], "data-value") != "alice" || !strings.Contains(text(opts[0]), "Alice Smith") {
		t.Errorf("ali: got %q", p.body)
	}
	for _, q := range []string{"", "nobody", strings.Repeat("x", 200)} {
		if p := b.get("/end-users/suggest?q=" + url.QueryEscape(q)).status(http.StatusOK); len(p.findAll("user-suggestion")) != 0 {
			t.Errorf("q=%.10s…: got %q, want no suggestion", q, p.body)
		}
	}

	a.addMember("nobody@example.com")
	m := a.signedIn("nobody@example.com", memberPassword)
	if p := m.get("/end-users/suggest?q=vip"); len(p.findAll("user-suggestion")) != 0 {
		t.Errorf("a member who may open no environment got suggestions: %d %q", p.code, p.body)
	}
}

// htmx answers of the targeting editor name where the keyboard goes next
// and what screen readers hear (HX-Trigger): the new rule's first field,
// and after saving, the Edit link of the part edited.
func TestTargetingAnswersMoveFocus(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/flags/checkout?edit=targeting&part=rules")
	triggers := func(p *page) map[string]string {
		t.Helper()
		got := map[string]string{}
		if err := json.Unmarshal([]byte(p.header.Get("HX-Trigger")), &got); err != nil {
			t.Fatalf("HX-Trigger %q: %v", p.header.Get("HX-Trigger"), err)
		}
		return got
	}
	form := url.Values{"revision": {f.Revision.String()}, "part": {"rules"}, "edit": {"add-rule"},
		"default.serve": {f.Variations[0].ID}}
	got := triggers(b.htmx("/flags/checkout/targeting", form).status(http.StatusOK))
	if got["bunting:focus"] != "targeting-rule-0-name" || got["bunting:announce"] != "Rule 1 added." {
		t.Errorf("add rule: %v", got)
	}
	form.Del("edit")
	form.Set("rule.0.name", "Dutch")
	form.Set("rule.0.serve", f.Variations[0].ID)
	form.Set("rule.0.cond.0.property", "country")
	form.Set("rule.0.cond.0.op", "Equal")
	form.Set("rule.0.cond.0.value", "NL")
	got = triggers(b.htmx("/flags/checkout/targeting", form).status(http.StatusOK))
	if got["bunting:focus"] != "summary-edit-rule-1" || got["bunting:announce"] != "Targeting saved." {
		t.Errorf("save: %v", got)
	}
}
