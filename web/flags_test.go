package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// flagApp is an app with the project "web", whose first environment (Prod)
// is where the owner's pages work.
func flagApp(t *testing.T) (*app, core.Project, core.Environment) {
	t.Helper()
	a := newApp(t)
	_, err := a.st.Projects().CreateProject(t.Context(), a.ownerActor(), core.ProjectInput{Name: "Web", Key: "web"})
	must(t, err)
	pr := a.project("web")
	return a, pr, pr.Environments[0]
}

// makeFlag creates a flag as the owner.
func (a *app) makeFlag(env core.Environment, in flagstore.FlagInput) flagstore.Flag {
	a.t.Helper()
	f, err := a.st.Flags().CreateFlag(a.t.Context(), a.ownerActor(), env.ID, in)
	must(a.t, err)
	return f
}

// flag reads a flag as the store has it.
func (a *app) flag(env core.Environment, key string) flagstore.Flag {
	a.t.Helper()
	f, err := a.st.Flags().GetFlag(a.t.Context(), a.ownerActor(), env.ID, key)
	must(a.t, err)
	return f
}

// requireComments makes the environment require change comments.
func (a *app) requireComments(pr core.Project, env core.Environment) {
	a.t.Helper()
	_, err := a.st.Projects().UpdateEnvironment(a.t.Context(), a.ownerActor(), pr.ID, env.ID, core.EnvironmentInput{Name: env.Name,
		Settings: &core.EnvSettings{RequireChangeComment: true}})
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
		in := flagstore.FlagInput{Name: fmt.Sprintf("Flag %02d", i), Key: fmt.Sprintf("flag-%02d", i), IsEnabled: i%2 == 0}
		if i < 3 {
			in.Tags = []string{"beta"}
		}
		a.makeFlag(env, in)
	}
	a.makeFlag(env, flagstore.FlagInput{Name: "Checkout redesign", Key: "checkout"})
	_, err := a.st.Flags().ArchiveFlag(t.Context(), a.ownerActor(), env.ID, "flag-22", flagstore.Change{})
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
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	other := a.makeFlag(env, flagstore.FlagInput{Name: "Other", Key: "other"})
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
	a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
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
