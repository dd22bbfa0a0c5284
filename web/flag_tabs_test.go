package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

func TestFlagVariationsEditor(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	a.makeFlag(env, flagstore.FlagInput{Name: "Banner", Key: "banner", VariationType: "string",
		Variations: []flagstore.Variation{{ID: "a", Name: "A", Value: "a"}, {ID: "b", Name: "B", Value: "b"}}})
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
	_, err := a.st.Flags().RenameFlag(t.Context(), a.ownerActor(), env.ID, "banner", flagstore.FlagNameInput{Name: "Banner 2"})
	must(t, err)
	b.post("/flags/banner/variations", vals).status(http.StatusConflict)
}

func TestFlagSettingsAndLifecycle(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
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
	_, err := a.st.Flags().ArchiveFlag(t.Context(), a.ownerActor(), env.ID, "checkout", flagstore.Change{})
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
	a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout", Change: flagstore.Change{Comment: "first"}})
	_, err := a.st.Flags().RenameFlag(t.Context(), a.ownerActor(), env.ID, "checkout", flagstore.FlagNameInput{Name: "Checkout v2",
		Change: flagstore.Change{Comment: "renamed"}})
	must(t, err)
	tg := a.flag(env, "checkout").Targeting()
	tg.TargetUsers = []flagstore.TargetUser{{KeyIDs: []string{"alice"}, VariationID: a.flag(env, "checkout").Variations[0].ID}}
	_, err = a.st.Flags().SetFlagTargeting(t.Context(), a.ownerActor(), env.ID, "checkout", flagstore.TargetingInput{Targeting: &tg})
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
