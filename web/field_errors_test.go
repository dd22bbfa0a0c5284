package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
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
