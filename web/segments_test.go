package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// makeSegment creates an environment-specific segment as the owner.
func (a *app) makeSegment(env core.Environment, name, key string) flagstore.Segment {
	a.t.Helper()
	sg, err := a.st.Segments().CreateSegment(a.t.Context(), a.ownerActor(), env.ID, segments.SegmentInput{Name: name, Key: key, Type: flagstore.SegmentEnvironmentSpecific})
	must(a.t, err)
	return sg
}

func (a *app) segment(env core.Environment, sg flagstore.Segment) flagstore.Segment {
	a.t.Helper()
	out, err := a.st.Segments().GetSegment(a.t.Context(), a.ownerActor(), env.ID, sg.ID)
	must(a.t, err)
	return out
}

func segmentPath(sg flagstore.Segment) string { return "/segments/" + sg.ID.String() }

func TestSegmentListAndCreate(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	p := b.get("/segments").status(http.StatusOK)
	if !p.has("segment-create") || p.text("segment-list-empty") != "No segments in this environment yet." {
		t.Fatalf("empty list: %s", p.body)
	}
	// A shared segment's scopes start as every environment of the project.
	if got := formValues(p.must("segment-create-form")).Get("scopes"); got != "organization/default-organization:project/web:env/*" {
		t.Errorf("suggested scopes %q", got)
	}

	b.post("/segments", url.Values{"name": {""}, "key": {"beta"}, "type": {flagstore.SegmentEnvironmentSpecific}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("segment-create"), "error-name")); got != "Required." {
		t.Errorf("name problem %q", got)
	}
	b.post("/segments", url.Values{"name": {"Beta"}, "key": {"beta"}, "type": {flagstore.SegmentShared}, "scopes": {"organization/other"}}).status(http.StatusBadRequest)
	if got := text(find(b.last.must("segment-create"), "error-scopes")); got != "Choose where it can be used, including the environment you work in." {
		t.Errorf("scopes problem %q", got)
	}
	if got := formValues(b.last.must("segment-create-form")).Get("type"); got != flagstore.SegmentShared {
		t.Errorf("type not kept: %q", got)
	}
	b.post("/segments", url.Values{"name": {"Beta users"}, "key": {"beta"}, "type": {flagstore.SegmentEnvironmentSpecific},
		"description": {"Early adopters"}}).status(http.StatusOK)
	if got := b.last.text("segment-heading"); got != "Beta users" || b.last.text("flash-success") != "Segment “Beta users” created." {
		t.Errorf("segment page %q", got)
	}
	b.get("/segments")
	b.post("/segments", url.Values{"name": {"Everyone"}, "key": {"everyone"}, "type": {flagstore.SegmentShared},
		"scopes": {"organization/default-organization:project/web:env/*", "organization/default-organization:project/web:env/dev"}}).status(http.StatusOK)
	list, err := a.st.Segments().ListSegments(t.Context(), a.ownerActor(), env.ID, segments.SegmentFilter{Name: "everyone", Page: core.Page{Size: 10}})
	must(t, err)
	if len(list.Items) != 1 || len(list.Items[0].Scopes) != 2 || list.Items[0].Type != flagstore.SegmentShared {
		t.Errorf("shared segment %+v", list.Items)
	}
	b.get("/segments")
	b.post("/segments", url.Values{"name": {"Again"}, "key": {"beta"}, "type": {flagstore.SegmentEnvironmentSpecific}}).status(http.StatusUnprocessableEntity)
	if got := text(find(b.last.must("segment-create"), "error-key")); got != "This key is already used." {
		t.Errorf("duplicate key %q", got)
	}

	// Search, the archived view and paging.
	for i := range 20 {
		a.makeSegment(env, fmt.Sprintf("Cohort %02d", i), fmt.Sprintf("cohort-%02d", i))
	}
	sg := a.makeSegment(env, "Old", "old")
	_, err = a.st.Segments().ArchiveSegment(t.Context(), a.ownerActor(), env.ID, sg.ID, flagstore.Change{})
	must(t, err)
	p = b.get("/segments").status(http.StatusOK)
	if n := len(p.findAll("segment-row")); n != 20 || p.text("pager-label") != "Page 1 of 2 · 22 segments" {
		t.Errorf("page 1: %d rows, %q", n, p.text("pager-label"))
	}
	if n := len(b.get("/segments?page=2").findAll("segment-row")); n != 2 {
		t.Errorf("page 2: %d rows", n)
	}
	if n := len(b.get("/segments?q=cohort").findAll("segment-row")); n != 20 {
		t.Errorf("search: %d rows", n)
	}
	p = b.get("/segments?archived=1")
	if rows := p.findAll("segment-row"); len(rows) != 1 || attr(rows[0], "data-key") != "old" {
		t.Errorf("archived view: %d rows", len(rows))
	}
	if got := b.get("/segments?q=zzz").text("segment-list-empty"); got != "No segments match." {
		t.Errorf("no match: %q", got)
	}
}

func TestSegmentTargeting(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	sg := a.makeSegment(env, "Beta users", "beta")
	b := a.signedIn(ownerEmail, ownerPassword)
	p := b.get(segmentPath(sg)).status(http.StatusOK)
	vals := formValues(p.must("segment-targeting-form"))
	vals.Set("edit", "add-rule")
	p = b.post(segmentPath(sg)+"/targeting", vals).status(http.StatusOK)
	ops := text(p.must("condition-op"))
	if strings.Contains(ops, "segment") || countOptions(p.must("condition-op")) != len(flagstore.Operators()) {
		t.Errorf("segment rules offer %q", ops)
	}
	if p.has("condition-segments") || p.has("serve-choice") {
		t.Errorf("segment rules offer segments or serving")
	}
	vals = formValues(p.must("segment-targeting-form"))
	vals.Set("included", "alice\nbob")
	vals.Set("excluded", "mallory")
	vals.Set("rule.0.name", "Paying")
	vals.Set("rule.0.cond.0.property", "plan")
	vals.Set("rule.0.cond.0.op", "NotOneOf")
	vals.Set("rule.0.cond.0.value", "free, trial")
	vals.Del("edit")
	b.post(segmentPath(sg)+"/targeting", vals).status(http.StatusOK)
	if got := b.last.text("flash-success"); got != "Segment targeting saved." {
		t.Errorf("message %q", got)
	}
	got := a.segment(env, sg)
	if !slices.Equal(got.Included, []string{"alice", "bob"}) || !slices.Equal(got.Excluded, []string{"mallory"}) ||
		len(got.Rules) != 1 || got.Rules[0].Conditions[0].Value != `["free","trial"]` || got.Rules[0].Name != "Paying" {
		t.Errorf("saved %+v", got)
	}

	// A numeric operator needs a number: the store says so, what was typed stays.
	vals = formValues(b.get(segmentPath(sg)).must("segment-targeting-form"))
	vals.Set("rule.0.cond.0.op", "LessThan")
	vals.Set("rule.0.cond.0.value", "many")
	p = b.post(segmentPath(sg)+"/targeting", vals).status(http.StatusBadRequest)
	if got := p.text("error-rules"); got != "Rule 1, condition 1, value: not a number." {
		t.Errorf("rules problem %q", got)
	}
	if got := formValues(p.must("segment-targeting-form")).Get("rule.0.cond.0.value"); got != "many" {
		t.Errorf("typed value lost: %q", got)
	}

	// Settings: name, description, tags.
	p = b.get(segmentPath(sg) + "/settings")
	vals = formValues(p.must("name-form"))
	vals.Set("name", "Beta testers")
	b.post(p.formAction("name-form"), vals).status(http.StatusOK)
	p = b.get(segmentPath(sg) + "/settings")
	vals = formValues(p.must("tags-form"))
	vals.Set("tags", "qa, beta")
	b.post(p.formAction("tags-form"), vals).status(http.StatusOK)
	p = b.get(segmentPath(sg) + "/settings")
	vals = formValues(p.must("description-form"))
	vals.Set("description", "People testing")
	b.post(p.formAction("description-form"), vals).status(http.StatusOK)
	if got := a.segment(env, sg); got.Name != "Beta testers" || !slices.Equal(got.Tags, []string{"qa", "beta"}) || got.Description != "People testing" {
		t.Errorf("settings saved %q %v %q", got.Name, got.Tags, got.Description)
	}
	// History shows the changes.
	entries := b.get(segmentPath(sg) + "/history").findAll("history-entry")
	if len(entries) != 5 || text(find(entries[0], "history-line")) != "Changed the description" ||
		text(find(entries[1], "history-line")) != "Added tag qa" || text(find(entries[2], "history-line")) != "Renamed Beta users → Beta testers" {
		t.Errorf("%d history entries; newest %q", len(entries), text(find(entries[0], "history-lines")))
	}
}

func TestSegmentLifecycle(t *testing.T) {
	t.Parallel()
	a, pr, env := flagApp(t)
	sg := a.makeSegment(env, "Beta users", "beta")
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	tg := f.Targeting()
	tg.Rules = []flagstore.FlagRule{{ID: "r",
		Conditions: []flagstore.Condition{{ID: "c", Property: targeting.SegmentIn, Value: `["` + sg.ID.String() + `"]`}},
		Variations: []flagstore.RolloutVariation{{ID: f.Variations[0].ID, Rollout: []float64{0, 1}}}}}
	_, err := a.st.Flags().SetFlagTargeting(t.Context(), a.ownerActor(), env.ID, "checkout", flagstore.TargetingInput{Targeting: &tg})
	must(t, err)
	a.requireComments(pr, env)
	b := a.signedIn(ownerEmail, ownerPassword)

	p := b.get(segmentPath(sg) + "/flags").status(http.StatusOK)
	if row := p.row("segment-flag", "data-key", "checkout"); row == nil || !strings.Contains(text(row), "web / Prod") {
		t.Errorf("usage: %s", p.text("segment-usage"))
	}
	// Its settings do not offer archiving or deletion, and say why.
	p = b.get(segmentPath(sg) + "/settings").status(http.StatusOK)
	if p.has("archive") || p.has("delete") || p.text("danger-blocked") != "One flag uses this segment, so it cannot be archived or deleted: take it out of their rules first (see the Flags tab)." {
		t.Errorf("a used segment's settings: archive offered %v, says %q", p.has("archive"), p.text("danger-blocked"))
	}
	// Archiving it anyway (an old page) is refused with a clear message.
	p = b.get(segmentPath(sg) + "/archive").status(http.StatusOK)
	if !strings.Contains(p.text("confirm"), "Flags use it: “Checkout”") {
		t.Errorf("confirmation does not name the flag: %q", p.text("confirm"))
	}
	vals := formValues(p.must("confirm-form"))
	b.post(p.formAction("confirm-form"), vals).status(http.StatusBadRequest)
	if got := text(find(b.last.must("confirm"), "error-comment")); got != "This environment requires a comment for every change." {
		t.Errorf("comment problem %q", got)
	}
	vals.Set("comment", "cleanup")
	b.post(p.formAction("confirm-form"), vals).status(http.StatusUnprocessableEntity)
	if got := b.last.text("form-error"); !strings.HasPrefix(got, "Flags use this segment") {
		t.Errorf("422 message %q", got)
	}
	if got := attr(input(b.last.must("confirm-form"), "comment"), "value"); got != "cleanup" {
		t.Errorf("comment lost: %q", got)
	}
	p = b.get(segmentPath(sg) + "/delete")
	vals = formValues(p.must("confirm-form"))
	vals.Set("comment", "cleanup")
	b.post(p.formAction("confirm-form"), vals).status(http.StatusUnprocessableEntity)

	// Once no flag uses it: archive, restore, delete, each with its comment.
	tg.Rules = []flagstore.FlagRule{}
	_, err = a.st.Flags().SetFlagTargeting(t.Context(), a.ownerActor(), env.ID, "checkout", flagstore.TargetingInput{Targeting: &tg,
		Change: flagstore.Change{Comment: "no segment"}})
	must(t, err)
	for _, step := range []struct{ action, to, message string }{
		{"archive", segmentPath(sg) + "/settings", "Segment archived."},
		{"restore", segmentPath(sg) + "/settings", "Segment restored."},
		{"delete", "/segments", "Segment deleted."},
	} {
		p := b.get(segmentPath(sg) + "/settings")
		href := attr(p.must(step.action), "href")
		p = b.get(href).status(http.StatusOK)
		vals := formValues(p.must("confirm-form"))
		vals.Set("comment", "step "+step.action)
		b.post(p.formAction("confirm-form"), vals).status(http.StatusOK).at(step.to)
		if got := b.last.text("flash-success"); got != step.message {
			t.Errorf("%s: message %q", step.action, got)
		}
		if step.action == "archive" && (!b.last.has("segment-archived") || b.last.has("name-form")) {
			t.Errorf("archived segment page: still editable")
		}
	}
	b.get(segmentPath(sg)).status(http.StatusNotFound)
	logs, err := a.st.Flags().ListAuditLogs(t.Context(), a.ownerActor(), env.ID, flagstore.AuditFilter{RefType: "Segment", RefID: sg.ID.String(), Page: core.Page{Size: 10}})
	must(t, err)
	var comments []string
	for _, e := range logs.Items {
		comments = append(comments, e.Comment)
	}
	if !slices.Equal(comments[:3], []string{"step delete", "step restore", "step archive"}) {
		t.Errorf("comments recorded %v", comments)
	}
}

// A Developer may do everything to segments; a reader sees no controls and
// is refused when posting anyway; user text renders as text.
func TestSegmentPagesFollowPermissions(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	const evil = `<script>alert(1)</script>`
	sg := a.makeSegment(env, evil, "evil")
	controls := []string{"segment-create", "segment-targeting-form", "name-form", "description-form", "tags-form", "archive", "delete"}
	pages := []string{"/segments", segmentPath(sg), segmentPath(sg) + "/settings"}
	seen := func(b *browser) []string {
		var out []string
		for _, path := range pages {
			p := b.get(path).status(http.StatusOK)
			if strings.Contains(p.body, evil) || !strings.Contains(p.body, "&lt;script&gt;") {
				t.Errorf("%s renders the segment name unescaped", path)
			}
			for _, id := range controls {
				if p.has(id) {
					out = append(out, id)
				}
			}
		}
		return out
	}
	a.addMember("dev@example.com", core.DeveloperPolicyID)
	if got := seen(a.signedIn("dev@example.com", memberPassword)); !slices.Equal(got, controls) {
		t.Errorf("a Developer sees %v, want %v", got, controls)
	}
	a.addMember("reader@example.com", a.readerPolicy())
	rb := a.signedIn("reader@example.com", memberPassword)
	if got := seen(rb); got != nil {
		t.Errorf("a reader sees %v", got)
	}
	if !rb.get(segmentPath(sg)).has("segment-targeting-readonly") {
		t.Errorf("a reader does not see who is in the segment")
	}
	a.addMember("nobody@example.com")
	nobody := a.signedIn("nobody@example.com", memberPassword)
	if !nobody.get("/segments").has("no-env") {
		t.Errorf("a member without access sees segments")
	}
	posts := map[string]url.Values{
		"/segments":                      {"name": {"Mine"}, "key": {"mine"}, "type": {flagstore.SegmentEnvironmentSpecific}},
		segmentPath(sg) + "/targeting":   {"included": {"mallory"}},
		segmentPath(sg) + "/name":        {"name": {"Mine"}},
		segmentPath(sg) + "/description": {"description": {"Mine"}},
		segmentPath(sg) + "/tags":        {"tags": {"mine"}},
		segmentPath(sg) + "/archive":     {},
		segmentPath(sg) + "/restore":     {},
		segmentPath(sg) + "/delete":      {},
	}
	for _, b := range []*browser{rb, nobody} {
		for path, form := range posts {
			b.get("/profile")
			p := b.post(path, cloneValues(form))
			if p.code != http.StatusForbidden || p.text("error-heading") != "Not allowed" {
				t.Errorf("POST %s: got %d %q, want the 403 page", path, p.code, p.text("error-heading"))
			}
		}
	}
	if got := a.segment(env, sg); got.Name != evil || len(got.Included) != 0 || got.IsArchived {
		t.Errorf("a member without permission changed the segment: %+v", got)
	}
}

// A shared segment changes every environment it is visible in, so its page
// offers changes only to those allowed them in all of those environments.
func TestSharedSegmentPageNeedsEveryEnvironment(t *testing.T) {
	a, pr, prod := flagApp(t)
	dev := pr.Environments[1]
	sg, err := a.st.Segments().CreateSegment(t.Context(), a.ownerActor(), dev.ID, segments.SegmentInput{Name: "Staff", Key: "staff",
		Type: flagstore.SegmentShared, Scopes: []string{"organization/default-organization:project/web"}, Included: []string{"alice"}})
	must(t, err)
	p, err := a.st.IAM().CreatePolicy(t.Context(), a.ownerActor(), iam.PolicyInput{Name: "Dev segments", Key: "dev-segments"})
	must(t, err)
	_, err = a.st.IAM().UpdatePolicyStatements(t.Context(), a.ownerActor(), p.ID, []access.Statement{
		{ID: "p", ResourceType: access.TypeProject, Effect: "allow", Actions: []string{string(access.CanAccessProject)}, Resources: []string{"project/*"}},
		{ID: "e", ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: []string{"project/*:env/*"}},
		{ID: "s", ResourceType: "segment", Effect: "allow", Actions: []string{"*"}, Resources: []string{"project/web:env/" + dev.Key + ":segment/*"}},
	})
	must(t, err)
	a.addMember("dev@example.com", p.ID)
	b := a.signedIn("dev@example.com", memberPassword)
	b.post("/context", url.Values{"envId": {dev.ID.String()}, "next": {"/segments"}}).status(http.StatusOK)
	page := b.get(segmentPath(sg)).status(http.StatusOK)
	if page.has("segment-targeting-form") || !page.has("segment-targeting-readonly") {
		t.Errorf("a segment visible in %s is editable by a member allowed only %s", prod.Key, dev.Key)
	}
	vals := url.Values{"included": {"mallory"}, "excluded": {""}}
	b.post(segmentPath(sg)+"/targeting", vals).status(http.StatusForbidden)
	if got := a.segment(dev, sg); !slices.Equal(got.Included, []string{"alice"}) {
		t.Errorf("included %v after a refused change", got.Included)
	}
}

// A shared segment's Flags tab names only the flags of environments the
// person may open; the others are counted, not named, and still keep the
// segment from being archived.
func TestSegmentUsageShowsOnlyReadableEnvironments(t *testing.T) {
	t.Parallel()
	a, pr, prod := flagApp(t)
	dev := pr.Environments[1]
	sg, err := a.st.Segments().CreateSegment(t.Context(), a.ownerActor(), dev.ID, segments.SegmentInput{Name: "Staff", Key: "staff",
		Type: flagstore.SegmentShared, Scopes: []string{"organization/default-organization:project/web"}})
	must(t, err)
	for _, use := range []struct {
		env core.Environment
		key string
	}{{prod, "prod-secret-launch"}, {dev, "dev-tryout"}} {
		env, key := use.env, use.key
		f := a.makeFlag(env, flagstore.FlagInput{Name: "Flag " + key, Key: key})
		tg := f.Targeting()
		tg.Rules = []flagstore.FlagRule{{ID: "r", Conditions: []flagstore.Condition{{ID: "c", Property: targeting.SegmentIn, Value: `["` + sg.ID.String() + `"]`}},
			Variations: []flagstore.RolloutVariation{{ID: f.Variations[0].ID, Rollout: []float64{0, 1}}}}}
		_, err := a.st.Flags().SetFlagTargeting(t.Context(), a.ownerActor(), env.ID, key, flagstore.TargetingInput{Targeting: &tg})
		must(t, err)
	}
	p, err := a.st.IAM().CreatePolicy(t.Context(), a.ownerActor(), iam.PolicyInput{Name: "Dev only", Key: "dev-only"})
	must(t, err)
	_, err = a.st.IAM().UpdatePolicyStatements(t.Context(), a.ownerActor(), p.ID, []access.Statement{
		{ID: "p", ResourceType: access.TypeProject, Effect: "allow", Actions: []string{string(access.CanAccessProject)}, Resources: []string{"project/*"}},
		{ID: "e", ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: []string{"project/web:env/" + dev.Key}},
		{ID: "s", ResourceType: "segment", Effect: "allow", Actions: []string{"*"}, Resources: []string{"project/web:env/*:segment/*"}},
	})
	must(t, err)
	a.addMember("dev@example.com", p.ID)
	b := a.signedIn("dev@example.com", memberPassword)
	b.post("/context", url.Values{"envId": {dev.ID.String()}, "next": {"/segments"}}).status(http.StatusOK)

	page := b.get(segmentPath(sg) + "/flags").status(http.StatusOK)
	if page.row("segment-flag", "data-key", "dev-tryout") == nil || len(page.findAll("segment-flag")) != 1 ||
		strings.Contains(page.body, "prod-secret-launch") {
		t.Errorf("a member who may open only %s sees: %s", dev.Key, page.text("segment-usage"))
	}
	if got := page.text("segment-usage-hidden"); got != "One flag in environments you may not open uses it too." {
		t.Errorf("hidden flags: %q", got)
	}
	page = b.get(segmentPath(sg) + "/settings").status(http.StatusOK)
	if page.has("archive") || !strings.HasPrefix(page.text("danger-blocked"), "2 flags use this segment") {
		t.Errorf("settings: archive offered %v, says %q", page.has("archive"), page.text("danger-blocked"))
	}
	page = b.get(segmentPath(sg) + "/archive").status(http.StatusOK)
	if got := page.text("confirm"); strings.Contains(got, "prod-secret") || !strings.Contains(got, "“Flag dev-tryout”, one flag in environments you may not open") {
		t.Errorf("confirmation: %q", got)
	}
}
