package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/sql/targeting"
)

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
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout", VariationType: "string",
		Variations: []flagstore.Variation{{ID: "a", Name: "Old", Value: "old"}, {ID: "b", Name: "New", Value: "new"}}})
	seg, err := a.st.Segments().CreateSegment(t.Context(), a.ownerActor(), env.ID, segments.SegmentInput{Name: "Beta users", Key: "beta", Type: flagstore.SegmentEnvironmentSpecific})
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
	if got := countOptions(p.must("condition-op")); got != len(flagstore.Operators())+2 {
		t.Errorf("%d operators offered, want %d", got, len(flagstore.Operators())+2)
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
		r.Conditions[0] != (flagstore.Condition{ID: r.Conditions[0].ID, Property: "country", Op: "Equal", Value: "nl"}) {
		t.Errorf("saved rule %+v", r)
	}
	// The page shows it back as 30 and 70.
	vals = b.targetingForm("checkout")
	if vals.Get("rule.0.serve") != "rollout" || vals.Get("rule.0.pct.a") != "30" || vals.Get("rule.0.pct.b") != "70" {
		t.Errorf("shown back as %v", vals)
	}

	// A third decimal is refused on its field, by the variation's name;
	// two decimals save exactly and show back as typed.
	vals.Set("rule.0.pct.a", "12.345")
	vals.Set("rule.0.pct.b", "87.655")
	p = b.post("/flags/checkout/targeting", vals).status(http.StatusBadRequest)
	if got := text(find(p.must("rule"), "serve-error")); !strings.HasSuffix(got, ": use at most two decimals, such as 12.34.") {
		t.Errorf("three decimals: problem %q", got)
	}
	if got := attr(input(p.must("rule"), "rule.0.pct.a"), "aria-invalid"); got != "true" {
		t.Errorf("three decimals: field's aria-invalid %q, want true", got)
	}
	if got := a.flag(env, "checkout").Rules[0].Variations[0].Rollout; !slices.Equal(got, []float64{0, 0.3}) {
		t.Errorf("three decimals saved: %v", got)
	}
	vals.Set("rule.0.pct.a", "12.34")
	vals.Set("rule.0.pct.b", "87.66")
	b.post("/flags/checkout/targeting", vals).status(http.StatusOK)
	if got := a.flag(env, "checkout").Rules[0].Variations; !slices.Equal(got[0].Rollout, []float64{0, 0.1234}) || !slices.Equal(got[1].Rollout, []float64{0.1234, 1}) {
		t.Errorf("12.34/87.66 saved as %+v", got)
	}
	vals = b.targetingForm("checkout")
	if vals.Get("rule.0.pct.a") != "12.34" || vals.Get("rule.0.pct.b") != "87.66" {
		t.Errorf("12.34/87.66 shown back as %q/%q", vals.Get("rule.0.pct.a"), vals.Get("rule.0.pct.b"))
	}
	vals.Set("rule.0.pct.a", "30")
	vals.Set("rule.0.pct.b", "70")
	b.post("/flags/checkout/targeting", vals).status(http.StatusOK)
	vals = b.targetingForm("checkout")

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
	if segCond.Property != targeting.SegmentIn || segCond.Value != `["`+seg.ID.String()+`"]` || listCond.Value != `["gold","silver"]` {
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
	_, err = a.st.Flags().ToggleFlag(t.Context(), a.ownerActor(), env.ID, "checkout", true, flagstore.Change{})
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

// A rollout made elsewhere (thirds) shows as percentages to a hundredth that add up,
// and saving the editor unchanged keeps its exact ranges.
func TestFlagTargetingKeepsForeignRollouts(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	three := a.makeFlag(env, flagstore.FlagInput{Name: "Three", Key: "three", VariationType: "string",
		Variations: []flagstore.Variation{{ID: "a", Name: "A", Value: "a"}, {ID: "b", Name: "B", Value: "b"}, {ID: "c", Name: "C", Value: "c"}}})
	third := 1.0 / 3
	rules := []flagstore.FlagRule{{ID: "r", Conditions: []flagstore.Condition{{ID: "c", Property: "p", Op: "Equal", Value: "v"}},
		Variations: []flagstore.RolloutVariation{{ID: "c", Rollout: []float64{0, third}, ExptRollout: 1},
			{ID: "a", Rollout: []float64{third, 2 * third}, ExptRollout: 1}, {ID: "b", Rollout: []float64{2 * third, 1}, ExptRollout: 1}}}}
	tg := three.Targeting()
	tg.Rules = rules
	_, err := a.st.Flags().SetFlagTargeting(t.Context(), a.ownerActor(), env.ID, "three", flagstore.TargetingInput{Targeting: &tg})
	must(t, err)
	before := a.flag(env, "three")
	b := a.signedIn(ownerEmail, ownerPassword)
	vals := b.targetingForm("three")
	sum := 0
	for _, id := range []string{"a", "b", "c"} {
		n, err := targeting.ParsePercent(vals.Get("rule.0.pct." + id))
		must(t, err)
		sum += n
	}
	if sum != targeting.WholeRollout {
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
