package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store"
)

// flagApp is an app with the project "web", whose first environment (Prod)
// is where the owner's pages work.
func flagApp(t *testing.T) (*app, store.Project, store.Environment) {
	t.Helper()
	a := newApp(t)
	_, err := a.st.CreateProject(t.Context(), a.ownerActor(), store.ProjectInput{Name: "Web", Key: "web"})
	must(t, err)
	pr := a.project("web")
	return a, pr, pr.Environments[0]
}

// makeFlag creates a flag as the owner.
func (a *app) makeFlag(env store.Environment, in store.FlagInput) store.Flag {
	a.t.Helper()
	f, err := a.st.CreateFlag(a.t.Context(), a.ownerActor(), env.ID, in)
	must(a.t, err)
	return f
}

// flag reads a flag as the store has it.
func (a *app) flag(env store.Environment, key string) store.Flag {
	a.t.Helper()
	f, err := a.st.GetFlag(a.t.Context(), a.ownerActor(), env.ID, key)
	must(a.t, err)
	return f
}

// requireComments makes the environment require change comments.
func (a *app) requireComments(pr store.Project, env store.Environment) {
	a.t.Helper()
	_, err := a.st.UpdateEnvironment(a.t.Context(), a.ownerActor(), pr.ID, env.ID, store.EnvironmentInput{Name: env.Name,
		Settings: &store.EnvSettings{RequireChangeComment: true}})
	must(a.t, err)
}

// formValues collects what a form inside the element marked id would post:
// its inputs, checked boxes, textareas and selected options.
func formValues(root *html.Node) url.Values {
	v := url.Values{}
	for n := range root.Descendants() {
		if n.Type != html.ElementNode || attr(n, "name") == "" || hasAttr(n, "disabled") {
			continue
		}
		name := attr(n, "name")
		switch n.Data {
		case "input":
			switch attr(n, "type") {
			case "submit":
			case "checkbox", "radio":
				if hasAttr(n, "checked") {
					v.Add(name, attr(n, "value"))
				}
			default:
				v.Add(name, attr(n, "value"))
			}
		case "textarea":
			if n.FirstChild != nil {
				v.Set(name, n.FirstChild.Data)
			} else {
				v.Set(name, "")
			}
		case "select":
			for o := range n.Descendants() {
				if o.Type == html.ElementNode && o.Data == "option" && hasAttr(o, "selected") {
					v.Add(name, attr(o, "value"))
				}
			}
		}
	}
	return v
}

func TestFlagListAndCreate(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	p := b.get("/flags").status(http.StatusOK)
	if got := p.text("work-env"); got != "In Web / Prod" {
		t.Errorf("working environment %q", got)
	}
	if !p.has("flag-create") || p.text("flag-list-empty") != "No feature flags in this environment yet." {
		t.Fatalf("empty list: want the create form and the empty message")
	}
	if !p.has("nav-flags") || attr(p.must("nav-flags"), "aria-current") != "page" {
		t.Errorf("navigation does not mark Feature flags")
	}
	form := p.must("flag-create-form")
	if got := len(findAll(form, "variation-row")); got != 2 {
		t.Errorf("%d variation rows for a boolean flag, want 2", got)
	}
	for i, want := range []string{"true", "false"} {
		if got := attr(input(form, fmt.Sprintf("variation.%d.value", i)), "value"); got != want {
			t.Errorf("default variation %d is %q, want %q", i, got, want)
		}
	}

	// Problems show next to their fields, with what was typed kept.
	b.post("/flags", url.Values{"name": {" "}, "key": {"bad key"}, "variationType": {"boolean"},
		"variation.0.id": {"t"}, "variation.0.name": {"True"}, "variation.0.value": {"true"},
		"variation.1.id": {"f"}, "variation.1.name": {"False"}, "variation.1.value": {"false"}}).status(http.StatusBadRequest)
	form = b.last.must("flag-create")
	if got := text(find(form, "error-name")); got != "Required." {
		t.Errorf("name problem %q", got)
	}
	if got := text(find(form, "error-key")); !strings.HasPrefix(got, "Use at most 128 letters") {
		t.Errorf("key problem %q", got)
	}
	if got := attr(input(form, "key"), "value"); got != "bad key" || !hasAttr(form, "open") {
		t.Errorf("form not kept open with the key %q", got)
	}

	// A flag is created and its page opens.
	b.post("/flags", url.Values{"name": {"New checkout"}, "key": {"new-checkout"}, "variationType": {"boolean"},
		"variation.0.id": {"t"}, "variation.0.name": {"True"}, "variation.0.value": {"true"},
		"variation.1.id": {"f"}, "variation.1.name": {"False"}, "variation.1.value": {"false"}}).status(http.StatusOK).at("/flags/new-checkout")
	if got := b.last.text("flash-success"); got != "Feature flag “New checkout” created." {
		t.Errorf("message %q", got)
	}
	if got := b.last.text("flag-heading"); got != "New checkout" {
		t.Errorf("heading %q", got)
	}
	f := a.flag(env, "new-checkout")
	if f.IsEnabled || len(f.Variations) != 2 || f.Variations[0].ID != "t" || f.DisabledVariationID != "f" {
		t.Errorf("created %+v", f)
	}
	row := b.get("/flags").row("flag-row", "data-key", "new-checkout")
	if row == nil || text(find(row, "flag-name")) != "New checkout" || !strings.Contains(text(find(row, "flag-serves")), "false") {
		t.Fatalf("list row: %s", b.last.body)
	}
	if got := text(find(row, "flag-toggle")); got != "Off" {
		t.Errorf("toggle shows %q, want Off", got)
	}

	b.post("/flags", url.Values{"name": {"Again"}, "key": {"new-checkout"}}).status(http.StatusUnprocessableEntity)
	if got := text(find(b.last.must("flag-create"), "error-key")); got != "This key is already used." {
		t.Errorf("duplicate key problem %q", got)
	}

	// Another type's default variations, and editing them, come back unsaved.
	p = b.post("/flags", url.Values{"name": {"Banner"}, "key": {"banner"}, "variationType": {"string"}, "edit": {"defaults"}}).status(http.StatusOK)
	form = p.must("flag-create")
	if got := attr(input(form, "variation.0.value"), "value"); got != "variation-a" || attr(input(form, "name"), "value") != "Banner" {
		t.Errorf("string defaults: first value %q", got)
	}
	vals := formValues(form)
	vals.Set("edit", "add-variation")
	p = b.post("/flags", vals).status(http.StatusOK)
	if got := len(findAll(p.must("flag-create"), "variation-row")); got != 3 {
		t.Errorf("%d variation rows after adding one, want 3", got)
	}
	vals = formValues(p.must("flag-create"))
	vals.Set("variation.2.name", "Variation C")
	vals.Set("variation.2.value", "variation-c")
	vals.Set("edit", "remove-variation.0")
	p = b.post("/flags", vals).status(http.StatusOK)
	vals = formValues(p.must("flag-create"))
	if got := vals.Get("variation.0.value") + "," + vals.Get("variation.1.value"); got != "variation-b,variation-c" {
		t.Errorf("after removing the first: %s", got)
	}
	if b.get("/flags").row("flag-row", "data-key", "banner") != nil {
		t.Errorf("an edit button created the flag")
	}
	vals.Del("edit")
	b.get("/flags")
	b.post("/flags", vals).status(http.StatusOK).at("/flags/banner")
	if f := a.flag(env, "banner"); f.VariationType != "string" || len(f.Variations) != 2 || f.Variations[1].Value != "variation-c" {
		t.Errorf("created %+v", f.Variations)
	}

	// A value that is not of the type is shown on the variations.
	b.get("/flags")
	b.post("/flags", url.Values{"name": {"Limit"}, "key": {"limit"}, "variationType": {"number"},
		"variation.0.id": {"a"}, "variation.0.name": {"One"}, "variation.0.value": {"one"}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("flag-create"), "error-variations")); got != "Variation 1, value: not a number." {
		t.Errorf("variations problem %q", got)
	}

	// htmx gets the regions; a creation sends it to the flag's page.
	b.get("/flags")
	h := b.htmx("/flags", url.Values{"name": {""}, "key": {"x"}}).status(http.StatusBadRequest)
	if h.has("switcher") || text(find(h.must("flag-create"), "error-name")) != "Required." {
		t.Errorf("htmx problem answer: %s", h.body)
	}
	h = b.htmx("/flags", url.Values{"name": {"Via htmx"}, "key": {"via-htmx"}}).status(http.StatusNoContent)
	if got := h.header.Get("HX-Redirect"); got != "/flags/via-htmx" {
		t.Errorf("HX-Redirect %q", got)
	}
}

func TestFlagListFilters(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	for i := range 23 {
		in := store.FlagInput{Name: fmt.Sprintf("Flag %02d", i), Key: fmt.Sprintf("flag-%02d", i), IsEnabled: i%2 == 0}
		if i < 3 {
			in.Tags = []string{"beta"}
		}
		a.makeFlag(env, in)
	}
	a.makeFlag(env, store.FlagInput{Name: "Checkout redesign", Key: "checkout"})
	_, err := a.st.ArchiveFlag(t.Context(), a.ownerActor(), env.ID, "flag-22", store.Change{})
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)

	keys := func(p *page) []string {
		var out []string
		for _, r := range p.findAll("flag-row") {
			out = append(out, attr(r, "data-key"))
		}
		return out
	}
	p := b.get("/flags").status(http.StatusOK)
	if n := len(p.findAll("flag-row")); n != 20 || p.text("pager-label") != "Page 1 of 2 · 23 flags" {
		t.Errorf("first page: %d rows, pager %q", n, p.text("pager-label"))
	}
	if got := attr(p.must("pager-next"), "href"); got != "/flags?page=2" {
		t.Errorf("next page link %q", got)
	}
	if n := len(b.get("/flags?page=2").findAll("flag-row")); n != 3 {
		t.Errorf("page 2 has %d rows, want 3", n)
	}
	if got := keys(b.get("/flags?q=CHECKOUT")); !slices.Equal(got, []string{"checkout"}) {
		t.Errorf("search by name: %v", got)
	}
	if got := keys(b.get("/flags?q=flag-0")); len(got) != 10 {
		t.Errorf("search by key: %v", got)
	}
	if got := keys(b.get("/flags?tag=beta")); len(got) != 3 {
		t.Errorf("tag filter: %v", got)
	}
	if !strings.Contains(text(b.last.must("flag-tag-filter")), "beta") {
		t.Errorf("tag choices: %q", text(b.last.must("flag-tag-filter")))
	}
	on := keys(b.get("/flags?status=on"))
	off := keys(b.get("/flags?status=off"))
	if len(on) != 11 || len(off) != 12 {
		t.Errorf("on %d, off %d; want 11 and 12", len(on), len(off))
	}
	p = b.get("/flags?archived=1")
	if got := keys(p); !slices.Equal(got, []string{"flag-22"}) || attr(p.must("flags-archived"), "aria-current") != "page" {
		t.Errorf("archived view: %v", got)
	}
	if p.has("flag-toggle") {
		t.Errorf("an archived flag offers its toggle")
	}
	// The pager keeps the filters; htmx gets just the list.
	if got := attr(b.get("/flags?q=flag").must("pager-next"), "href"); got != "/flags?page=2&q=flag" {
		t.Errorf("next page of a search: %q", got)
	}
	req, _ := http.NewRequest(http.MethodGet, a.srv.URL+"/flags?q=checkout", nil)
	req.Header.Set("HX-Request", "true")
	h := b.do(req)
	if h.has("switcher") || !h.has("flag-list") || len(h.findAll("flag-row")) != 1 {
		t.Errorf("htmx search answer: %s", h.body)
	}
	if got := keys(b.get("/flags?q=zzz")); got != nil || b.last.text("flag-list-empty") != "No flags match." {
		t.Errorf("no match: %v %q", got, b.last.text("flag-list-empty"))
	}
	b.get("/flags?page=x").status(http.StatusBadRequest)
}

func TestFlagToggle(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	f := a.makeFlag(env, store.FlagInput{Name: "Checkout", Key: "checkout"})
	other := a.makeFlag(env, store.FlagInput{Name: "Other", Key: "other"})
	b := a.signedIn(ownerEmail, ownerPassword)
	p := b.get("/flags")
	row := p.row("flag-row", "data-key", "checkout")
	toggle := find(row, "flag-toggle")
	if attr(toggle, "role") != "switch" || attr(toggle, "aria-checked") != "false" || attr(toggle, "aria-label") != "Turn on" {
		t.Errorf("toggle %v", toggle.Attr)
	}
	vals := formValues(find(row, "flag-toggle-form"))
	if vals.Get("revision") != f.Revision.String() || vals.Get("on") != "true" {
		t.Errorf("toggle posts %v", vals)
	}

	// htmx replaces just the row, and reports in the message region.
	h := b.htmx("/flags/checkout/toggle", vals).status(http.StatusOK).asRows()
	if h.has("switcher") || len(h.findAll("flag-row")) != 1 || h.text("flash-success") != "“Checkout” turned on." {
		t.Fatalf("htmx toggle answer: %s", h.body)
	}
	if got := attr(find(h.must("flag-row"), "flag-toggle"), "aria-checked"); got != "true" {
		t.Errorf("row after toggle: aria-checked %q", got)
	}
	if !a.flag(env, "checkout").IsEnabled {
		t.Errorf("flag not on")
	}
	// The row came back with the new revision; the old one is stale: 409.
	h = b.htmx("/flags/checkout/toggle", vals).status(http.StatusConflict).asRows()
	if !strings.Contains(h.text("flash-error"), "Someone else changed this") {
		t.Errorf("409 message: %s", h.body)
	}
	if got := attr(find(h.must("flag-row"), "flag-toggle"), "aria-checked"); got != "true" {
		t.Errorf("row after a conflict shows aria-checked %q, want the flag as it is", got)
	}

	// Without script the list comes back, where it was.
	p = b.get("/flags?q=oth")
	vals = formValues(find(p.row("flag-row", "data-key", "other"), "flag-toggle-form"))
	b.post("/flags/other/toggle", vals).status(http.StatusOK).at("/flags?q=oth")
	if got := b.last.text("flash-success"); got != "“Other” turned on." || !a.flag(env, "other").IsEnabled {
		t.Errorf("message %q", got)
	}
	_ = other

	// The flag's page has its own toggle, with an optional comment.
	p = b.get("/flags/checkout")
	vals = formValues(p.must("flag-toggle-form"))
	if vals.Get("on") != "false" || !p.has("comment") {
		t.Errorf("page toggle posts %v", vals)
	}
	vals.Set("comment", "Rollback")
	b.post("/flags/checkout/toggle", vals).status(http.StatusOK).at("/flags/checkout")
	if a.flag(env, "checkout").IsEnabled || b.last.text("flash-success") != "“Checkout” turned off." {
		t.Errorf("page toggle did not turn it off")
	}
	b.post("/flags/checkout/toggle", vals).status(http.StatusConflict)
	if got := b.last.text("form-error"); !strings.Contains(got, "Reload the page") {
		t.Errorf("page toggle conflict %q", got)
	}
	b.post("/flags/nope/toggle", url.Values{"on": {"true"}}).status(http.StatusNotFound)
}

func TestFlagChangesNeedCommentsWhenRequired(t *testing.T) {
	t.Parallel()
	a, pr, env := flagApp(t)
	a.makeFlag(env, store.FlagInput{Name: "Checkout", Key: "checkout"})
	a.requireComments(pr, env)
	b := a.signedIn(ownerEmail, ownerPassword)

	p := b.get("/flags")
	if !p.has("comments-required") {
		t.Errorf("the list does not say comments are required")
	}
	row := p.row("flag-row", "data-key", "checkout")
	if find(row, "flag-toggle-pop") == nil || !hasAttr(input(row, "comment"), "required") {
		t.Fatalf("the row's toggle does not ask for a comment: %s", p.body)
	}
	vals := formValues(find(row, "flag-toggle-form"))
	h := b.htmx("/flags/checkout/toggle", vals).status(http.StatusBadRequest).asRows()
	if got := text(find(h.must("flag-row"), "error-comment")); got != "This environment requires a comment for every change." {
		t.Errorf("comment problem %q in %s", got, h.body)
	}
	if !hasAttr(h.must("flag-toggle-pop"), "open") {
		t.Errorf("the toggle's form is not kept open")
	}
	// Without script, the list shows the row's problem too.
	b.post("/flags/checkout/toggle", vals).status(http.StatusBadRequest).at("/flags/checkout/toggle")
	if got := text(find(b.last.row("flag-row", "data-key", "checkout"), "error-comment")); got == "" {
		t.Errorf("no comment problem on the list")
	}
	b.get("/flags")
	vals.Set("comment", "Launch <b>now</b>")
	h = b.htmx("/flags/checkout/toggle", vals).status(http.StatusOK).asRows()
	if got := text(find(h.must("flag-row"), "flag-last-comment")); got != "Launch <b>now</b>" {
		t.Errorf("last comment %q", got)
	}
	if got := b.get("/flags/checkout/history").text("history-comment"); got != "Launch <b>now</b>" {
		t.Errorf("history comment %q", got)
	}

	// Every form asks for it, and says so when it is missing.
	forms := map[string]string{"/flags/checkout?edit=targeting": "targeting-form", "/flags/checkout/variations": "variations-form",
		"/flags/checkout/settings": "name-form"}
	for path, id := range forms {
		p := b.get(path)
		in := input(p.must(id), "comment")
		if in == nil || !hasAttr(in, "required") {
			t.Errorf("%s: %s has no required comment", path, id)
			continue
		}
		action := p.formAction(id)
		vals := formValues(p.must(id))
		if id == "name-form" {
			vals.Set("name", "Renamed")
		}
		if id == "targeting-form" {
			vals.Set("target."+a.flag(env, "checkout").Variations[0].ID, "alice")
		}
		q := b.post(action, vals).status(http.StatusBadRequest)
		if got := text(find(q.must(id), "error-comment")); got != "This environment requires a comment for every change." {
			t.Errorf("%s: comment problem %q", path, got)
		}
	}
	b.get("/flags")
	b.post("/flags", url.Values{"name": {"New"}, "key": {"new"}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("flag-create"), "error-comment")); got == "" {
		t.Errorf("creation without a comment: no problem shown")
	}
	p = b.get("/flags/checkout/archive")
	b.post(p.formAction("confirm"), formValues(p.must("confirm-form"))).status(http.StatusBadRequest)
	if got := text(find(b.last.must("confirm"), "error-comment")); got == "" {
		t.Errorf("archive without a comment: no problem shown")
	}
	if a.flag(env, "checkout").IsArchived || a.flag(env, "checkout").Name != "Checkout" {
		t.Errorf("a change without a comment was saved")
	}
}

// targetingForm loads the flag's page and returns the targeting form's
// values, as the browser would post them.
func (b *browser) targetingForm(key string) url.Values {
	b.t.Helper()
	p := b.get("/flags/" + key + "?edit=targeting").status(http.StatusOK)
	return formValues(p.must("targeting-form"))
}

func TestFlagTargetingEditor(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	f := a.makeFlag(env, store.FlagInput{Name: "Checkout", Key: "checkout", VariationType: "string",
		Variations: []store.Variation{{ID: "a", Name: "Old", Value: "old"}, {ID: "b", Name: "New", Value: "new"}}})
	seg, err := a.st.CreateSegment(t.Context(), a.ownerActor(), env.ID, store.SegmentInput{Name: "Beta users", Key: "beta", Type: store.SegmentEnvironmentSpecific})
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)

	p := b.get("/flags/checkout?edit=targeting").status(http.StatusOK)
	if p.has("rule") || !p.has("targeting-form") {
		t.Fatalf("a new flag: want the editor and no rules")
	}
	if got := attr(p.must("tab-targeting"), "aria-current"); got != "page" {
		t.Errorf("targeting tab not marked")
	}

	// "Add rule" comes back with a rule, unsaved.
	vals := formValues(p.must("targeting-form"))
	vals.Set("edit", "add-rule")
	p = b.post("/flags/checkout/targeting", vals).status(http.StatusOK)
	if n := len(p.findAll("rule")); n != 1 || len(p.findAll("condition")) != 1 {
		t.Fatalf("after add-rule: %d rules", n)
	}
	if len(a.flag(env, "checkout").Rules) != 0 {
		t.Errorf("add-rule saved the flag")
	}
	ops := text(p.must("condition-op"))
	for _, op := range []string{"is one of", "matches regex", "is at least", "is true", "is in segment", "is not in segment"} {
		if !strings.Contains(ops, op) {
			t.Errorf("operator %q not offered: %s", op, ops)
		}
	}
	if got := countOptions(p.must("condition-op")); got != len(store.Operators())+2 {
		t.Errorf("%d operators offered, want %d", got, len(store.Operators())+2)
	}

	// Percentages that do not add up are shown on the rule, nothing saved.
	vals = formValues(p.must("targeting-form"))
	vals.Set("rule.0.name", "Dutch users")
	vals.Set("rule.0.cond.0.property", "country")
	vals.Set("rule.0.cond.0.op", "Equal")
	vals.Set("rule.0.cond.0.value", "nl")
	vals.Set("rule.0.serve", "rollout")
	vals.Set("rule.0.pct.a", "30")
	vals.Set("rule.0.pct.b", "60")
	p = b.post("/flags/checkout/targeting", vals).status(http.StatusBadRequest)
	if got := text(find(p.must("rule"), "serve-error")); got != "The percentages add up to 90%; they must add up to 100%." {
		t.Errorf("rollout problem %q", got)
	}
	if got := attr(input(p.must("rule"), "rule.0.cond.0.value"), "value"); got != "nl" {
		t.Errorf("typed condition lost: %q", got)
	}

	// 30/70 is saved as ranges covering [0, 1], with the dispatch key.
	vals.Set("rule.0.pct.b", "70")
	vals.Set("rule.0.dispatchKey", "email")
	b.post("/flags/checkout/targeting", vals).status(http.StatusOK).at("/flags/checkout")
	if got := b.last.text("flash-success"); got != "Targeting saved." {
		t.Errorf("message %q", got)
	}
	got := a.flag(env, "checkout")
	if len(got.Rules) != 1 {
		t.Fatalf("rules %+v", got.Rules)
	}
	r := got.Rules[0]
	if r.Name != "Dutch users" || r.DispatchKey == nil || *r.DispatchKey != "email" ||
		!slices.Equal(r.Variations[0].Rollout, []float64{0, 0.3}) || !slices.Equal(r.Variations[1].Rollout, []float64{0.3, 1}) ||
		r.Conditions[0] != (store.Condition{ID: r.Conditions[0].ID, Property: "country", Op: "Equal", Value: "nl"}) {
		t.Errorf("saved rule %+v", r)
	}
	// The page shows it back as 30 and 70.
	vals = b.targetingForm("checkout")
	if vals.Get("rule.0.serve") != "rollout" || vals.Get("rule.0.pct.a") != "30" || vals.Get("rule.0.pct.b") != "70" {
		t.Errorf("shown back as %v", vals)
	}

	// A second rule with a segment condition, a list condition, individual
	// targets and the default rule.
	vals.Set("edit", "add-rule")
	p = b.post("/flags/checkout/targeting", vals).status(http.StatusOK)
	vals = formValues(p.must("targeting-form"))
	vals.Set("rule.1.cond.0.op", "segment-in")
	vals.Set("rule.1.cond.0.segments", seg.ID.String())
	vals.Set("edit", "add-cond.1")
	p = b.post("/flags/checkout/targeting", vals).status(http.StatusOK)
	vals = formValues(p.must("targeting-form"))
	if vals.Get("rule.1.cond.0.op") != "segment-in" || vals.Get("rule.1.cond.0.segments") != seg.ID.String() {
		t.Fatalf("segment condition lost in an edit: %v", vals)
	}
	vals.Set("rule.1.cond.1.property", "plan")
	vals.Set("rule.1.cond.1.op", "IsOneOf")
	vals.Set("rule.1.cond.1.value", "gold, silver")
	vals.Set("rule.1.serve", "b")
	vals.Set("target.a", "alice\nbob, carol")
	vals.Set("default.serve", "b")
	vals.Del("edit")
	b.post("/flags/checkout/targeting", vals).status(http.StatusOK)
	got = a.flag(env, "checkout")
	if len(got.Rules) != 2 {
		t.Fatalf("rules %+v", got.Rules)
	}
	segCond, listCond := got.Rules[1].Conditions[0], got.Rules[1].Conditions[1]
	if segCond.Property != store.SegmentIn || segCond.Value != `["`+seg.ID.String()+`"]` || listCond.Value != `["gold","silver"]` {
		t.Errorf("conditions %+v", got.Rules[1].Conditions)
	}
	if len(got.TargetUsers) != 1 || !slices.Equal(got.TargetUsers[0].KeyIDs, []string{"alice", "bob", "carol"}) {
		t.Errorf("targets %+v", got.TargetUsers)
	}
	if got.Fallthrough.Variations[0].ID != "b" || len(got.Fallthrough.Variations) != 1 {
		t.Errorf("default rule %+v", got.Fallthrough)
	}
	p = b.get("/flags/checkout?edit=targeting")
	if v := attr(input(p.must("targeting-form"), "rule.1.cond.1.value"), "value"); v != "gold, silver" {
		t.Errorf("list value shown as %q", v)
	}

	// Move the second rule up, then save: the order is stored.
	vals = formValues(p.must("targeting-form"))
	vals.Set("edit", "rule-up.1")
	p = b.post("/flags/checkout/targeting", vals).status(http.StatusOK)
	if got := attr(p.findAll("rule")[0], "data-rule-id"); got != a.flag(env, "checkout").Rules[1].ID {
		t.Errorf("rule not moved up")
	}
	vals = formValues(p.must("targeting-form"))
	b.post("/flags/checkout/targeting", vals).status(http.StatusOK)
	if got := a.flag(env, "checkout").Rules; got[0].Name != "" || got[1].Name != "Dutch users" {
		t.Errorf("order saved: %q, %q", got[0].Name, got[1].Name)
	}

	// An invalid regular expression is refused by the store and explained.
	vals = b.targetingForm("checkout")
	vals.Set("rule.1.cond.0.op", "MatchRegex")
	vals.Set("rule.1.cond.0.value", "(")
	p = b.post("/flags/checkout/targeting", vals).status(http.StatusBadRequest)
	if got := p.text("error-rules"); got != "Rule 2, condition 1, value: not a regular expression: missing closing ): `(`." {
		t.Errorf("rules problem %q", got)
	}

	// Removing a condition and a rule.
	vals = b.targetingForm("checkout")
	vals.Set("edit", "remove-cond.0.1")
	p = b.post("/flags/checkout/targeting", vals).status(http.StatusOK)
	vals = formValues(p.must("targeting-form"))
	vals.Set("edit", "remove-rule.1")
	p = b.post("/flags/checkout/targeting", vals).status(http.StatusOK)
	vals = formValues(p.must("targeting-form"))
	vals.Del("edit")
	b.post("/flags/checkout/targeting", vals).status(http.StatusOK)
	if got := a.flag(env, "checkout").Rules; len(got) != 1 || len(got[0].Conditions) != 1 {
		t.Errorf("after removals: %+v", got)
	}

	// A stale revision is a conflict, explained on the form with what was typed.
	stale := b.targetingForm("checkout")
	_, err = a.st.ToggleFlag(t.Context(), a.ownerActor(), env.ID, "checkout", true, store.Change{})
	must(t, err)
	stale.Set("target.b", "dave")
	p = b.post("/flags/checkout/targeting", stale).status(http.StatusConflict)
	if got := p.text("form-error"); !strings.Contains(got, "Someone else changed this") {
		t.Errorf("409 message %q", got)
	}
	if got := formValues(p.must("targeting-form")).Get("target.b"); got != "dave" {
		t.Errorf("typed targets lost")
	}

	// The off variation.
	p = b.get("/flags/checkout?edit=off")
	vals = formValues(p.must("off-variation-form"))
	vals.Set("disabledVariationId", "a")
	b.post(p.formAction("off-variation-form"), vals).status(http.StatusOK)
	if got := a.flag(env, "checkout").DisabledVariationID; got != "a" {
		t.Errorf("off variation %q", got)
	}
	vals.Set("disabledVariationId", "nope")
	vals.Set("revision", a.flag(env, "checkout").Revision.String())
	b.post(p.formAction("off-variation-form"), vals).status(http.StatusBadRequest)
	if got := b.last.text("error-disabledVariationId"); got != "Choose one of the flag's variations." {
		t.Errorf("off variation problem %q", got)
	}
	_ = f
}

// cloneValues copies form values, which a post completes with its token.
func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// rows parses an htmx answer of table rows, which only parse inside a table.
func rows(t *testing.T, body string) *html.Node {
	t.Helper()
	nodes, err := html.ParseFragment(strings.NewReader(body), &html.Node{Type: html.ElementNode, Data: "tbody", DataAtom: atom.Tbody})
	must(t, err)
	root := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	for _, n := range nodes {
		root.AppendChild(n)
	}
	return root
}

// asRows reads the answer as table rows (and what follows them).
func (p *page) asRows() *page {
	p.doc = rows(p.t, p.body)
	return p
}

// countOptions counts a select's options.
func countOptions(sel *html.Node) int {
	n := 0
	for o := range sel.Descendants() {
		if o.Type == html.ElementNode && o.Data == "option" {
			n++
		}
	}
	return n
}

// A rollout made elsewhere (thirds) shows as whole percentages that add up,
// and saving the editor unchanged keeps its exact ranges.
func TestFlagTargetingKeepsForeignRollouts(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	three := a.makeFlag(env, store.FlagInput{Name: "Three", Key: "three", VariationType: "string",
		Variations: []store.Variation{{ID: "a", Name: "A", Value: "a"}, {ID: "b", Name: "B", Value: "b"}, {ID: "c", Name: "C", Value: "c"}}})
	third := 1.0 / 3
	rules := []store.FlagRule{{ID: "r", Conditions: []store.Condition{{ID: "c", Property: "p", Op: "Equal", Value: "v"}},
		Variations: []store.RolloutVariation{{ID: "c", Rollout: []float64{0, third}, ExptRollout: 1},
			{ID: "a", Rollout: []float64{third, 2 * third}, ExptRollout: 1}, {ID: "b", Rollout: []float64{2 * third, 1}, ExptRollout: 1}}}}
	tg := three.Targeting()
	tg.Rules = rules
	_, err := a.st.SetFlagTargeting(t.Context(), a.ownerActor(), env.ID, "three", store.TargetingInput{Targeting: &tg})
	must(t, err)
	before := a.flag(env, "three")
	b := a.signedIn(ownerEmail, ownerPassword)
	vals := b.targetingForm("three")
	sum := 0
	for _, id := range []string{"a", "b", "c"} {
		var n int
		fmt.Sscan(vals.Get("rule.0.pct."+id), &n)
		sum += n
	}
	if sum != 100 {
		t.Errorf("thirds shown as %v", vals)
	}
	b.post("/flags/three/targeting", vals).status(http.StatusOK)
	after := a.flag(env, "three")
	if after.Revision != before.Revision {
		b1, _ := json.Marshal(before.Rules)
		b2, _ := json.Marshal(after.Rules)
		t.Errorf("saving unchanged changed the flag:\n%s\n%s", b1, b2)
	}
}

func TestFlagVariationsEditor(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	a.makeFlag(env, store.FlagInput{Name: "Banner", Key: "banner", VariationType: "string",
		Variations: []store.Variation{{ID: "a", Name: "A", Value: "a"}, {ID: "b", Name: "B", Value: "b"}}})
	b := a.signedIn(ownerEmail, ownerPassword)
	p := b.get("/flags/banner/variations").status(http.StatusOK)
	vals := formValues(p.must("variations-form"))
	if vals.Get("variationType") != "string" || vals.Get("variation.1.value") != "b" {
		t.Fatalf("editor shows %v", vals)
	}
	vals.Set("edit", "add-variation")
	p = b.post("/flags/banner/variations", vals).status(http.StatusOK)
	vals = formValues(p.must("variations-form"))
	vals.Set("variation.2.name", "C")
	vals.Set("variation.2.value", "c")
	vals.Set("variation.0.value", "a2")
	vals.Del("edit")
	b.post("/flags/banner/variations", vals).status(http.StatusOK).at("/flags/banner/variations")
	f := a.flag(env, "banner")
	if len(f.Variations) != 3 || f.Variations[0].Value != "a2" || f.Variations[2].Value != "c" || f.Variations[0].ID != "a" {
		t.Errorf("variations %+v", f.Variations)
	}
	// Removing a variation the default rule serves is refused and explained.
	vals = formValues(b.get("/flags/banner/variations").must("variations-form"))
	vals.Set("edit", "remove-variation.0")
	p = b.post("/flags/banner/variations", vals).status(http.StatusOK)
	vals = formValues(p.must("variations-form"))
	vals.Del("edit")
	p = b.post("/flags/banner/variations", vals).status(http.StatusBadRequest)
	if got := p.text("form-error"); !strings.Contains(got, "still served by the targeting") {
		t.Errorf("problem %q", got)
	}
	// A value that is not of the type.
	vals = formValues(b.get("/flags/banner/variations").must("variations-form"))
	vals.Set("variationType", "number")
	p = b.post("/flags/banner/variations", vals).status(http.StatusBadRequest)
	if got := p.text("error-variations"); got != "Variation 1, value: not a number." {
		t.Errorf("problem %q", got)
	}
	if got := attr(input(p.must("variations-form"), "variation.0.value"), "value"); got != "a2" {
		t.Errorf("typed values lost: %q", got)
	}
	// A stale revision.
	vals = formValues(b.get("/flags/banner/variations").must("variations-form"))
	_, err := a.st.RenameFlag(t.Context(), a.ownerActor(), env.ID, "banner", store.FlagNameInput{Name: "Banner 2"})
	must(t, err)
	b.post("/flags/banner/variations", vals).status(http.StatusConflict)
}

func TestFlagSettingsAndLifecycle(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	a.makeFlag(env, store.FlagInput{Name: "Checkout", Key: "checkout"})
	b := a.signedIn(ownerEmail, ownerPassword)
	post := func(id string, set map[string]string) *page {
		t.Helper()
		p := b.get("/flags/checkout/settings").status(http.StatusOK)
		vals := formValues(p.must(id))
		for k, v := range set {
			vals.Set(k, v)
		}
		return b.post(p.formAction(id), vals)
	}
	post("name-form", map[string]string{"name": " "}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("name-form"), "error-name")); got != "Required." {
		t.Errorf("name problem %q", got)
	}
	post("name-form", map[string]string{"name": "Checkout v2", "comment": "clearer"}).status(http.StatusOK).at("/flags/checkout/settings")
	if got := b.last.text("flag-heading"); got != "Checkout v2" || b.last.text("flash-success") != "Name saved." {
		t.Errorf("heading %q", got)
	}
	post("description-form", map[string]string{"description": "The new checkout."}).status(http.StatusOK)
	post("tags-form", map[string]string{"tags": "team-a, beta"}).status(http.StatusOK)
	f := a.flag(env, "checkout")
	if f.Name != "Checkout v2" || f.Description != "The new checkout." || !slices.Equal(f.Tags, []string{"team-a", "beta"}) {
		t.Errorf("saved %q %q %v", f.Name, f.Description, f.Tags)
	}
	post("tags-form", map[string]string{"tags": "a:b"}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("tags-form"), "error-tags")); !strings.Contains(got, "no “:” or “;”") {
		t.Errorf("tags problem %q", got)
	}
	if got := attr(input(b.last.must("tags-form"), "tags"), "value"); got != "a:b" {
		t.Errorf("typed tags lost: %q", got)
	}

	// A copy: a used key is shown on the field; then the copy opens.
	post("clone-form", map[string]string{"key": "checkout"}).status(http.StatusUnprocessableEntity)
	if got := text(find(b.last.must("clone-form"), "error-key")); got != "This key is already used." {
		t.Errorf("clone key problem %q", got)
	}
	post("clone-form", map[string]string{"name": "Checkout copy", "key": "checkout-2"}).status(http.StatusOK).at("/flags/checkout-2")
	if c := a.flag(env, "checkout-2"); c.Name != "Checkout copy" || c.Description != "The new checkout." || !slices.Equal(c.Tags, []string{"team-a", "beta"}) {
		t.Errorf("copy %+v", c)
	}

	// htmx gets the page's main part, with the new revision on every form.
	p := b.get("/flags/checkout/settings")
	vals := formValues(p.must("name-form"))
	vals.Set("name", "Checkout v3")
	h := b.htmx(p.formAction("name-form"), vals).status(http.StatusOK)
	if h.has("switcher") || !h.has("flag-main") || h.text("flash-success") != "Name saved." {
		t.Errorf("htmx answer: %s", h.body)
	}
	if got := formValues(h.must("tags-form")).Get("revision"); got != a.flag(env, "checkout").Revision.String() {
		t.Errorf("other forms keep an old revision %q", got)
	}

	// Archive, restore, archive again, delete: each asks first.
	p = b.get("/flags/checkout/settings")
	if p.has("delete") || p.has("restore") {
		t.Errorf("a live flag offers deletion or restoration")
	}
	p = b.get(attr(p.must("archive"), "href")).status(http.StatusOK)
	if got := p.text("confirm-heading"); got != "Archive the flag “Checkout v3”?" {
		t.Errorf("confirm heading %q", got)
	}
	vals = formValues(p.must("confirm-form"))
	vals.Set("comment", "done")
	b.post(p.formAction("confirm-form"), vals).status(http.StatusOK).at("/flags/checkout/settings")
	if !a.flag(env, "checkout").IsArchived || !b.last.has("flag-archived") || b.last.has("name-form") {
		t.Errorf("archived flag page still editable or not archived")
	}
	if b.get("/flags/checkout?edit=targeting").has("targeting-form") || b.last.has("summary-edit") || !b.last.has("targeting-summary") {
		t.Errorf("an archived flag's targeting is editable")
	}
	// A change posted anyway (an old tab) is refused by the store; the page
	// says why, as it does for every archived flag.
	b.get("/flags/checkout/settings")
	before := a.flag(env, "checkout")
	b.post("/flags/checkout/name", url.Values{"name": {"Sneaky"}, "revision": {before.Revision.String()}}).status(http.StatusUnprocessableEntity)
	if !strings.Contains(b.last.body, "This flag is archived") || b.last.has("name-form") {
		t.Errorf("an archived flag's refused change does not say why")
	}
	if a.flag(env, "checkout").Revision != before.Revision {
		t.Errorf("an archived flag changed")
	}
	if b.get("/flags?archived=1").row("flag-row", "data-key", "checkout") == nil {
		t.Errorf("not in the archived view")
	}
	p = b.get("/flags/checkout/restore")
	b.post(p.formAction("confirm-form"), formValues(p.must("confirm-form"))).status(http.StatusOK)
	if a.flag(env, "checkout").IsArchived {
		t.Errorf("not restored")
	}
	// Deleting a live flag is refused with its reason.
	p = b.get("/flags/checkout/delete")
	b.post(p.formAction("confirm-form"), formValues(p.must("confirm-form"))).status(http.StatusUnprocessableEntity)
	if got := b.last.text("form-error"); got != "Archive the flag before deleting it." {
		t.Errorf("delete problem %q", got)
	}
	_, err := a.st.ArchiveFlag(t.Context(), a.ownerActor(), env.ID, "checkout", store.Change{})
	must(t, err)
	p = b.get("/flags/checkout/delete")
	b.post(p.formAction("confirm-form"), formValues(p.must("confirm-form"))).status(http.StatusOK).at("/flags?archived=1")
	if got := b.last.text("flash-success"); got != "Feature flag “checkout” deleted." {
		t.Errorf("message %q", got)
	}
	b.get("/flags/checkout").status(http.StatusNotFound)
}

func TestFlagHistory(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	a.makeFlag(env, store.FlagInput{Name: "Checkout", Key: "checkout", Change: store.Change{Comment: "first"}})
	_, err := a.st.RenameFlag(t.Context(), a.ownerActor(), env.ID, "checkout", store.FlagNameInput{Name: "Checkout v2",
		Change: store.Change{Comment: "renamed"}})
	must(t, err)
	tg := a.flag(env, "checkout").Targeting()
	tg.TargetUsers = []store.TargetUser{{KeyIDs: []string{"alice"}, VariationID: a.flag(env, "checkout").Variations[0].ID}}
	_, err = a.st.SetFlagTargeting(t.Context(), a.ownerActor(), env.ID, "checkout", store.TargetingInput{Targeting: &tg})
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)
	p := b.get("/flags/checkout/history").status(http.StatusOK)
	entries := p.findAll("history-entry")
	if len(entries) != 3 {
		t.Fatalf("%d history entries, want 3", len(entries))
	}
	// Newest first, each in words; the JSON diff is one click away.
	lines := func(e *html.Node) []string {
		var out []string
		for _, l := range findAll(e, "history-line") {
			out = append(out, text(l))
		}
		return out
	}
	if got := lines(entries[0]); !slices.Equal(got, []string{"Added alice to " + a.flag(env, "checkout").Variations[0].Name}) {
		t.Errorf("targets in words %q", got)
	}
	if got := lines(entries[1]); !slices.Equal(got, []string{"Renamed Checkout → Checkout v2"}) {
		t.Errorf("rename in words %q", got)
	}
	if got := lines(entries[2]); !slices.Equal(got, []string{"Created the flag Checkout"}) {
		t.Errorf("creation in words %q", got)
	}
	if got := text(find(entries[0], "history-summary")); got != "Show JSON changes: Individual targets" {
		t.Errorf("summary %q", got)
	}
	if diff := text(find(entries[0], "history-diff")); !strings.Contains(diff, "Added: \"alice\"") {
		t.Errorf("targets diff %q", diff)
	}
	if got := text(find(entries[1], "history-diff")); got != "Name Was: Checkout → Now: Checkout v2" {
		t.Errorf("name diff %q", got)
	}
	if got := text(find(entries[1], "history-comment")); got != "renamed" {
		t.Errorf("comment %q", got)
	}
	if got := text(find(entries[2], "history-op")); got != "Create" || !strings.Contains(text(find(entries[2], "history-who")), ownerEmail) {
		t.Errorf("creation entry %q by %q", got, text(find(entries[2], "history-who")))
	}
}

// Flag text from users renders as text everywhere: list, page and history.
func TestFlagNameIsEscaped(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	const evil = `<script>alert(1)</script>`
	a.makeFlag(env, store.FlagInput{Name: "Safe", Key: "evil", Description: evil, Tags: []string{"<i>x</i>"}})
	_, err := a.st.RenameFlag(t.Context(), a.ownerActor(), env.ID, "evil", store.FlagNameInput{Name: evil, Change: store.Change{Comment: evil}})
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)
	for _, path := range []string{"/flags", "/flags/evil", "/flags/evil/variations", "/flags/evil/settings", "/flags/evil/history", "/audit-log", "/flags/evil/archive"} {
		p := b.get(path).status(http.StatusOK)
		if strings.Contains(p.body, evil) || strings.Contains(p.body, "<i>x</i>") {
			t.Errorf("%s renders user text unescaped", path)
		}
		if !strings.Contains(p.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s does not show the escaped name", path)
		}
		for n := range p.doc.Descendants() {
			if n.Type == html.ElementNode && n.Data == "script" && (n.FirstChild != nil || attr(n, "src") == "") {
				t.Errorf("%s has an inline script", path)
			}
		}
	}
	if got := b.get("/flags").text("flag-name"); got != evil {
		t.Errorf("list shows %q", got)
	}
	if got := b.get("/flags/evil/history").text("history-diff"); !strings.Contains(got, evil) {
		t.Errorf("history diff shows %q", got)
	}
}

// A Developer may do everything to flags; a member without access sees no
// environment and is refused; a member who may only read sees no controls
// and is refused when posting anyway.
func TestFlagPagesFollowPermissions(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	f := a.makeFlag(env, store.FlagInput{Name: "Checkout", Key: "checkout"})
	controls := []string{"flag-create", "flag-toggle", "targeting-form", "off-variation-form", "variations-form",
		"name-form", "description-form", "tags-form", "clone-form", "archive"}
	pages := []string{"/flags", "/flags/checkout", "/flags/checkout?edit=targeting", "/flags/checkout?edit=off",
		"/flags/checkout/variations", "/flags/checkout/settings"}
	seen := func(b *browser) []string {
		var out []string
		for _, path := range pages {
			p := b.get(path).status(http.StatusOK)
			for _, id := range controls {
				if p.has(id) {
					out = append(out, id)
				}
			}
		}
		return out
	}

	a.addMember("dev@example.com", store.DeveloperPolicyID)
	dev := a.signedIn("dev@example.com", memberPassword)
	if got := seen(dev); !slices.Equal(got, controls) {
		t.Errorf("a Developer sees %v, want %v", got, controls)
	}
	vals := dev.targetingForm("checkout")
	vals.Set("target."+f.Variations[0].ID, "alice")
	dev.post("/flags/checkout/targeting", vals).status(http.StatusOK)

	// A member without policies sees no environment, and no controls.
	a.addMember("nobody@example.com")
	nobody := a.signedIn("nobody@example.com", memberPassword)
	p := nobody.get("/flags").status(http.StatusOK)
	if !p.has("no-env") || p.has("flag-create") || p.has("flag-list") {
		t.Errorf("a member without access: %s", p.body)
	}
	nobody.get("/flags/checkout").status(http.StatusForbidden)

	// A reader (CanAccessProject, CanAccessEnv) sees flags, not controls.
	reader := a.readerPolicy()
	a.addMember("reader@example.com", reader)
	rb := a.signedIn("reader@example.com", memberPassword)
	if got := seen(rb); got != nil {
		t.Errorf("a reader sees %v", got)
	}
	if p := rb.get("/flags/checkout?edit=targeting"); !p.has("targeting-summary") || p.has("summary-edit") ||
		!rb.get("/flags/checkout/variations").has("variations-readonly") {
		t.Errorf("a reader does not see the targeting read-only")
	}
	if p := rb.get("/flags/checkout/archive"); p.has("confirm-form") || !p.has("confirm-not-allowed") {
		t.Errorf("the confirmation offers archiving to a reader")
	}

	posts := map[string]url.Values{
		"/flags":                        {"name": {"Mine"}, "key": {"mine"}},
		"/flags/checkout/toggle":        {"on": {"true"}},
		"/flags/checkout/off-variation": {"disabledVariationId": {f.Variations[0].ID}},
		"/flags/checkout/targeting":     {"target." + f.Variations[1].ID: {"mallory"}, "default.serve": {f.Variations[0].ID}},
		"/flags/checkout/variations":    {"variationType": {"boolean"}, "variation.0.id": {"x"}, "variation.0.name": {"X"}, "variation.0.value": {"true"}},
		"/flags/checkout/name":          {"name": {"Mine"}},
		"/flags/checkout/description":   {"description": {"Mine"}},
		"/flags/checkout/tags":          {"tags": {"mine"}},
		"/flags/checkout/clone":         {"name": {"Mine"}, "key": {"mine"}},
		"/flags/checkout/archive":       {},
		"/flags/checkout/restore":       {},
		"/flags/checkout/delete":        {},
	}
	for _, b := range []*browser{nobody, rb} {
		for path, form := range posts {
			b.get("/profile")
			p := b.post(path, cloneValues(form))
			if p.code != http.StatusForbidden || p.text("error-heading") != "Not allowed" {
				t.Errorf("POST %s: got %d %q, want the 403 page", path, p.code, p.text("error-heading"))
			}
		}
	}
	after := a.flag(env, "checkout")
	if after.Name != "Checkout" || after.IsEnabled || after.IsArchived || len(after.TargetUsers) != 1 || after.Description != "" {
		t.Errorf("a member without permission changed the flag: %+v", after)
	}
}

// readerPolicy is a policy that may open every project and environment and
// change nothing.
func (a *app) readerPolicy() uuid.UUID {
	a.t.Helper()
	p, err := a.st.CreatePolicy(a.t.Context(), a.ownerActor(), store.PolicyInput{Name: "Reader", Key: "reader"})
	must(a.t, err)
	_, err = a.st.UpdatePolicyStatements(a.t.Context(), a.ownerActor(), p.ID, []access.Statement{
		{ID: "p", ResourceType: access.TypeProject, Effect: "allow", Actions: []string{string(access.CanAccessProject)}, Resources: []string{"project/*"}},
		{ID: "e", ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: []string{"project/*:env/*"}},
	})
	must(a.t, err)
	return p.ID
}

// Every control of the flag pages has a label.
func TestFlagPagesLabelEveryControl(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	f := a.makeFlag(env, store.FlagInput{Name: "Checkout", Key: "checkout"})
	tg := f.Targeting()
	tg.Rules = []store.FlagRule{{ID: "r",
		Conditions: []store.Condition{{ID: "c", Property: "country", Op: "Equal", Value: "nl"}},
		Variations: []store.RolloutVariation{{ID: f.Variations[0].ID, Rollout: []float64{0, .5}}, {ID: f.Variations[1].ID, Rollout: []float64{.5, 1}}}}}
	_, err := a.st.SetFlagTargeting(t.Context(), a.ownerActor(), env.ID, "checkout", store.TargetingInput{Targeting: &tg})
	must(t, err)
	sg, err := a.st.CreateSegment(t.Context(), a.ownerActor(), env.ID, store.SegmentInput{Name: "Beta", Key: "beta", Type: store.SegmentEnvironmentSpecific,
		Rules: []store.SegmentRule{{ID: "r", Conditions: []store.Condition{{ID: "c", Property: "plan", Op: "Equal", Value: "gold"}}}}})
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)
	for _, path := range []string{"/flags", "/flags/checkout", "/flags/checkout/variations", "/flags/checkout/settings",
		"/flags/checkout/history", "/flags/checkout/archive", "/segments", segmentPath(sg), segmentPath(sg) + "/flags",
		segmentPath(sg) + "/settings", segmentPath(sg) + "/history", segmentPath(sg) + "/delete", "/audit-log"} {
		p := b.get(path).status(http.StatusOK)
		labels := map[string]bool{}
		for n := range p.doc.Descendants() {
			if n.Data == "label" {
				labels[attr(n, "for")] = true
			}
		}
		for n := range p.doc.Descendants() {
			if (n.Data == "input" || n.Data == "select" || n.Data == "textarea") && attr(n, "type") != "hidden" &&
				!labels[attr(n, "id")] && attr(n, "aria-hidden") != "true" {
				t.Errorf("%s: control %v has no label", path, n.Attr)
			}
		}
	}
}
