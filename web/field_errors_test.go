package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/net/html"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/segments"
)

// A refused targeting, variation list or segment marks the very input that
// is wrong with why, and keeps everything typed.
func TestEditorsMarkTheWrongField(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	a.makeFlag(env, flagstore.FlagInput{Name: "Theme", Key: "theme", VariationType: "json",
		Variations: []flagstore.Variation{{ID: "a", Name: "A", Value: `{"color": "blue"}`}, {ID: "b", Name: "B", Value: `{"color": "red"}`}}})
	sg := a.makeSegment(env, "Beta users", "beta")
	b := a.signedIn(ownerEmail, ownerPassword)

	// A rule with two conditions; the second is what each case gets wrong.
	vals := b.targetingForm("checkout")
	vals.Set("edit", "add-rule")
	p := b.post("/flags/checkout/targeting", vals).status(http.StatusOK)
	vals = formValues(p.must("targeting-form"))
	vals.Set("edit", "add-cond.0")
	p = b.post("/flags/checkout/targeting", vals).status(http.StatusOK)
	base := formValues(p.must("targeting-form"))
	base.Del("edit")
	base.Set("rule.0.name", "Dutch users")
	base.Set("rule.0.cond.0.property", "country")
	base.Set("rule.0.cond.0.op", "Equal")
	base.Set("rule.0.cond.0.value", "NL")
	for _, c := range []struct {
		name, op, value, why string
	}{
		{"regex", "MatchRegex", "(unclosed", "Not a regular expression: missing closing ): `(unclosed`."},
		{"number", "LessThan", "12abc", "Not a number."},
	} {
		vals := cloneValues(base)
		vals.Set("rule.0.cond.1.property", "x")
		vals.Set("rule.0.cond.1.op", c.op)
		vals.Set("rule.0.cond.1.value", c.value)
		p := b.post("/flags/checkout/targeting", vals).status(http.StatusBadRequest)
		field := input(p.must("targeting-form"), "rule.0.cond.1.value")
		if attr(field, "aria-invalid") != "true" || attr(field, "value") != c.value {
			t.Errorf("%s: the condition's value is not marked, or lost (%q)", c.name, attr(field, "value"))
		}
		if got := p.text("error-rules[0].conditions[1].value"); got != c.why {
			t.Errorf("%s: message on the field %q, want %q", c.name, got, c.why)
		}
		if got, want := p.text("error-rules"), "Rule 1, condition 2, value: "+strings.ToLower(c.why[:1])+c.why[1:]; got != want {
			t.Errorf("%s: the rules section says %q, want %q", c.name, got, want)
		}
		if len(a.flag(env, "checkout").Rules) != 0 {
			t.Fatalf("%s: a refused rule was saved", c.name)
		}
	}

	// A JSON value that does not parse marks that variation's value.
	p = b.get("/flags/theme/variations").status(http.StatusOK)
	vals = formValues(p.must("variations-form"))
	vals.Set("variation.1.value", `{"color": "red",}`)
	p = b.post(p.formAction("variations-form"), vals).status(http.StatusBadRequest)
	field := input(p.must("variations-form"), "variation.1.value")
	if attr(field, "aria-invalid") != "true" || attr(field, "value") != `{"color": "red",}` {
		t.Errorf("the JSON value is not marked or not kept")
	}
	if got := p.text("error-variations[1].value"); got != "Not valid JSON: '}' looking for beginning of object key string at character 17." {
		t.Errorf("JSON problem %q", got)
	}

	// A segment rule's condition too.
	p = b.get(segmentPath(sg)).status(http.StatusOK)
	vals = formValues(p.must("segment-targeting-form"))
	vals.Set("edit", "add-rule")
	p = b.post(p.formAction("segment-targeting-form"), vals).status(http.StatusOK)
	vals = formValues(p.must("segment-targeting-form"))
	vals.Del("edit")
	vals.Set("rule.0.cond.0.property", "age")
	vals.Set("rule.0.cond.0.op", "BiggerThan")
	vals.Set("rule.0.cond.0.value", "ten")
	p = b.post(p.formAction("segment-targeting-form"), vals).status(http.StatusBadRequest)
	if got := p.text("error-rules[0].conditions[0].value"); got != "Not a number." {
		t.Errorf("segment condition problem %q", got)
	}
}

// everyFieldMarked checks that each of fields has, in the form posted to
// action, every control marked invalid and described by a message.
func everyFieldMarked(t *testing.T, name string, p *page, action string, fields ...string) {
	t.Helper()
	var form *html.Node
	for n := range p.doc.Descendants() {
		if n.Type == html.ElementNode && n.Data == "form" && attr(n, "action") == action {
			form = n
			break
		}
	}
	if form == nil {
		t.Errorf("%s: no form posting to %s", name, action)
		return
	}
	for _, field := range fields {
		controls := 0
		for n := range form.Descendants() {
			if n.Type != html.ElementNode || attr(n, "name") != field || attr(n, "type") == "hidden" ||
				(n.Data != "input" && n.Data != "select" && n.Data != "textarea") {
				continue
			}
			controls++
			msg := p.find("error-" + field)
			if attr(n, "aria-invalid") != "true" {
				t.Errorf("%s: a %s control is not marked invalid", name, field)
				break
			}
			if id := attr(n, "aria-describedby"); msg == nil || attr(msg, "id") != id || text(msg) == "" {
				t.Errorf("%s: %s is described by %q, which is not its message", name, field, id)
				break
			}
		}
		if controls == 0 {
			t.Errorf("%s: no %s control", name, field)
		}
	}
}

// A save with several invalid fields marks every one at once, on every
// form whose check can report two problems: each control aria-invalid, and
// tied to its message.
func TestFormsMarkEveryInvalidField(t *testing.T) {
	t.Parallel()
	a, pr, env := flagApp(t)
	a.requireComments(pr, env)
	a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout", Change: flagstore.Change{Comment: "new"}})
	sg, err := a.st.Segments().CreateSegment(t.Context(), a.ownerActor(), env.ID, segments.SegmentInput{Name: "Beta", Key: "beta",
		Type: flagstore.SegmentEnvironmentSpecific, Change: flagstore.Change{Comment: "new"}})
	must(t, err)
	pol, err := a.st.IAM().CreatePolicy(t.Context(), a.ownerActor(), iam.PolicyInput{Name: "Readers", Key: "readers"})
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)
	long := strings.Repeat("x", 600)
	projectHref := "/projects/" + pr.ID.String()
	for _, c := range []struct {
		name, page, action string
		vals               url.Values
		fields             []string
	}{
		{"flag create", "/flags", "/flags", url.Values{"name": {long}, "key": {"bad key!"}, "description": {long}},
			[]string{"name", "key", "description", "comment"}},
		{"flag name", "/flags/checkout/settings", "/flags/checkout/name", url.Values{"name": {""}}, []string{"name", "comment"}},
		{"flag description", "/flags/checkout/settings", "/flags/checkout/description", url.Values{"description": {long}},
			[]string{"description", "comment"}},
		{"segment create", "/segments", "/segments", url.Values{"name": {""}, "key": {"bad key!"}, "type": {flagstore.SegmentShared}},
			[]string{"name", "key", "scopes", "comment"}},
		{"segment description", segmentPath(sg) + "/settings", segmentPath(sg) + "/description", url.Values{"description": {long}},
			[]string{"description", "comment"}},
		{"member invite", "/members", "/members", url.Values{"email": {"not-an-email"}, "policyIds": {uuid.NewString()}},
			[]string{"email", "policyIds"}},
		{"policy create", "/policies", "/policies", url.Values{"name": {""}, "key": {"bad key!"}, "description": {long}},
			[]string{"name", "key", "description"}},
		{"policy settings", "/policies/" + pol.ID.String() + "?tab=settings", "/policies/" + pol.ID.String() + "/settings",
			url.Values{"name": {""}, "description": {long}}, []string{"name", "description"}},
		{"group create", "/groups", "/groups", url.Values{"name": {""}, "description": {long}}, []string{"name", "description"}},
		{"project create", "/projects", "/projects", url.Values{"name": {""}, "key": {"bad key!"}}, []string{"name", "key"}},
		{"environment create", projectHref, projectHref + "/envs", url.Values{"name": {""}, "key": {"bad key!"}, "description": {long}},
			[]string{"name", "key", "description"}},
		{"webhook create", "/webhooks/new", "/webhooks", url.Values{"name": {""}, "url": {"not-a-url"}},
			[]string{"name", "url", "scopes", "events"}},
		{"token create", "/access-tokens", "/access-tokens", url.Values{"name": {""}, "type": {"Weird"}}, []string{"name", "type"}},
		{"service token create", "/access-tokens", "/access-tokens", url.Values{"name": {""}, "type": {"Service"}, "permissions": {"[not json"}},
			[]string{"name", "permissions"}},
	} {
		b.get(c.page)
		p := b.post(c.action, c.vals)
		if p.code != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", c.name, p.code)
			continue
		}
		everyFieldMarked(t, c.name, p, c.action, c.fields...)
	}
}

// A refused statement marks every field wrong with it, each beside its
// controls: here its actions and its resources.
func TestStatementMarksEveryWrongField(t *testing.T) {
	t.Parallel()
	a, _, _ := flagApp(t)
	pol, err := a.st.IAM().CreatePolicy(t.Context(), a.ownerActor(), iam.PolicyInput{Name: "Flags", Key: "flags"})
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)
	href := "/policies/" + pol.ID.String()
	b.get(href)
	p := b.post(href+"/statements", url.Values{"st": {"0"}, "op": {"save"}, "st-0-type": {"flag"}, "st-0-effect": {"allow"}}).
		status(http.StatusBadRequest)
	st := p.row("statement", "data-index", "0")
	var said []string
	for _, n := range findAll(st, "statement-problem") {
		said = append(said, text(n))
	}
	if want := []string{"Choose at least one action of this resource type.", "Add at least one resource pattern, such as project/web:env/prod:flag/*."}; strings.Join(said, "|") != strings.Join(want, "|") {
		t.Errorf("problems %q, want %q", said, want)
	}
	for _, testID := range []string{"statement-action", "statement-resource-new"} {
		n := find(st, testID)
		if n == nil || attr(n, "aria-invalid") != "true" {
			t.Fatalf("%s is not marked invalid", testID)
		}
		if msg := byID(p.doc, attr(n, "aria-describedby")); msg == nil || attr(msg, "data-testid") != "statement-problem" {
			t.Errorf("%s is not described by its problem", testID)
		}
	}
	if n := find(st, "statement-type"); attr(n, "aria-invalid") != "" {
		t.Errorf("the valid type is marked invalid")
	}
}

// byID finds the element with an id.
func byID(root *html.Node, id string) *html.Node {
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && attr(n, "id") == id {
			return n
		}
	}
	return nil
}
