package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/net/html"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/segments"
)

// Flag text from users renders as text everywhere: list, page and history.
func TestFlagNameIsEscaped(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	const evil = `<script>alert(1)</script>`
	a.makeFlag(env, flagstore.FlagInput{Name: "Safe", Key: "evil", Description: evil, Tags: []string{"<i>x</i>"}})
	_, err := a.st.Flags().RenameFlag(t.Context(), a.ownerActor(), env.ID, "evil", flagstore.FlagNameInput{Name: evil, Change: flagstore.Change{Comment: evil}})
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
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
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

	a.addMember("dev@example.com", core.DeveloperPolicyID)
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
	p, err := a.st.IAM().CreatePolicy(a.t.Context(), a.ownerActor(), iam.PolicyInput{Name: "Reader", Key: "reader"})
	must(a.t, err)
	_, err = a.st.IAM().UpdatePolicyStatements(a.t.Context(), a.ownerActor(), p.ID, []access.Statement{
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
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	tg := f.Targeting()
	tg.Rules = []flagstore.FlagRule{{ID: "r",
		Conditions: []flagstore.Condition{{ID: "c", Property: "country", Op: "Equal", Value: "nl"}},
		Variations: []flagstore.RolloutVariation{{ID: f.Variations[0].ID, Rollout: []float64{0, .5}}, {ID: f.Variations[1].ID, Rollout: []float64{.5, 1}}}}}
	_, err := a.st.Flags().SetFlagTargeting(t.Context(), a.ownerActor(), env.ID, "checkout", flagstore.TargetingInput{Targeting: &tg})
	must(t, err)
	sg, err := a.st.Segments().CreateSegment(t.Context(), a.ownerActor(), env.ID, segments.SegmentInput{Name: "Beta", Key: "beta", Type: flagstore.SegmentEnvironmentSpecific,
		Rules: []flagstore.SegmentRule{{ID: "r", Conditions: []flagstore.Condition{{ID: "c", Property: "plan", Op: "Equal", Value: "gold"}}}}})
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
