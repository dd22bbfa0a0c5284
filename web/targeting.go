package web

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/jsonbody"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/targeting"
	"github.com/bunting-flags/bunting/views"
)

// The targeting and variation editors post structured forms: fields named
// "rule.0.cond.1.op", "rule.0.pct.<variation id>", "variation.2.value". Their
// add, remove and move buttons post the same form with an "edit" value, and
// the page comes back changed but not saved, so the editors work without
// script; htmx only makes the round trip smaller. Saving turns the form into
// the store's input types; the store validates them.

// Operator choices of segment conditions; the store stores these as the
// condition's property (store.SegmentIn, store.SegmentNotIn).
const (
	opSegmentIn    = "segment-in"
	opSegmentNotIn = "segment-not-in"
	serveRollout   = "rollout"
)

// operatorLabels words the store's operators for people.
var operatorLabels = map[string]string{
	"Equal": "is", "NotEqual": "is not", "Contains": "contains", "NotContain": "does not contain",
	"StartsWith": "starts with", "EndsWith": "ends with",
	"LessThan": "is less than", "BiggerThan": "is greater than",
	"LessEqualThan": "is at most", "BiggerEqualThan": "is at least",
	"MatchRegex": "matches regex", "NotMatchRegex": "does not match regex",
	"IsOneOf": "is one of", "NotOneOf": "is not one of",
	"IsTrue": "is true", "IsFalse": "is false",
	opSegmentIn: "is in segment", opSegmentNotIn: "is not in segment",
}

// targetingForm is the targeting editor's state: read from a flag, or from
// the form just posted.
type targetingForm struct {
	targets map[string]string // variation id → user keys as typed
	rules   []ruleForm
	def     serveForm
}

// ruleForm is a flag rule (with serve) or a segment rule (without).
type ruleForm struct {
	index, id, name string
	conds           []condForm
	serve           serveForm
}

type condForm struct {
	index, id, property, op, value string
	segments                       []string
}

// serveForm is what a rule serves: one variation (choice is its id) or a
// rollout in percentages with up to two decimals (choice "rollout").
type serveForm struct {
	choice      string
	percents    map[string]string
	dispatchKey string
	err         string
	// errField is the variation whose percentage err is about, if one.
	errField string
}

func targetingFromFlag(f flagstore.Flag) targetingForm {
	t := targetingForm{targets: map[string]string{}, def: serveFrom(f.Variations, f.Fallthrough.Variations, f.Fallthrough.DispatchKey)}
	for _, tu := range f.TargetUsers {
		if len(tu.KeyIDs) > 0 {
			t.targets[tu.VariationID] = strings.Join(tu.KeyIDs, "\n")
		}
	}
	for i, r := range f.Rules {
		rf := ruleForm{index: strconv.Itoa(i), id: r.ID, name: r.Name, conds: condsFrom(r.Conditions),
			serve: serveFrom(f.Variations, r.Variations, r.DispatchKey)}
		t.rules = append(t.rules, rf)
	}
	return t
}

func condsFrom(cs []flagstore.Condition) []condForm {
	out := make([]condForm, len(cs))
	for i, c := range cs {
		cf := condForm{index: strconv.Itoa(i), id: c.ID, property: c.Property, op: c.Op, value: c.Value}
		switch {
		case c.Property == targeting.SegmentIn || c.Property == targeting.SegmentNotIn:
			cf.op, cf.property, cf.value = opSegmentIn, "", ""
			if c.Property == targeting.SegmentNotIn {
				cf.op = opSegmentNotIn
			}
			_ = json.Unmarshal([]byte(c.Value), &cf.segments)
		case c.Op == "IsOneOf" || c.Op == "NotOneOf":
			cf.value = listText(c.Value)
		}
		out[i] = cf
	}
	return out
}

// serveFrom reads a rollout: one variation over [0, 1], or percentages
// with up to two decimals.
func serveFrom(vars []flagstore.Variation, rv []flagstore.RolloutVariation, dispatchKey *string) serveForm {
	s := serveForm{percents: map[string]string{}}
	if dispatchKey != nil {
		s.dispatchKey = *dispatchKey
	}
	pct := percentsOf(vars, rv)
	if len(rv) == 1 && len(rv[0].Rollout) == 2 && rv[0].Rollout[0] <= 1e-6 && rv[0].Rollout[1] >= 1-1e-6 {
		s.choice = rv[0].ID
	} else {
		s.choice = serveRollout
	}
	for id, n := range pct {
		s.percents[id] = targeting.FormatPercent(n)
	}
	return s
}

// percentsOf turns rollout ranges into basis points (hundredths of a
// percent) per variation that add up to 100% (largest remainders round up),
// so ranges made elsewhere, such as thirds, still show and save.
func percentsOf(vars []flagstore.Variation, rv []flagstore.RolloutVariation) map[string]int {
	exact := map[string]float64{}
	for _, r := range rv {
		if len(r.Rollout) == 2 {
			exact[r.ID] += (r.Rollout[1] - r.Rollout[0]) * targeting.WholeRollout
		}
	}
	out := map[string]int{}
	total := 0
	type rest struct {
		id   string
		frac float64
	}
	var rests []rest
	for _, v := range vars {
		n := math.Floor(exact[v.ID] + 1e-6)
		out[v.ID] = int(n)
		total += int(n)
		rests = append(rests, rest{v.ID, exact[v.ID] - n})
	}
	slices.SortStableFunc(rests, func(a, b rest) int { return cmp.Compare(b.frac, a.frac) })
	for i := 0; total < targeting.WholeRollout && i < len(rests); i++ {
		if rests[i].frac > 1e-6 {
			out[rests[i].id]++
			total++
		}
	}
	return out
}

var (
	ruleField      = regexp.MustCompile(`^rule\.(\d{1,4})\.`)
	condField      = regexp.MustCompile(`^rule\.(\d{1,4})\.cond\.(\d{1,4})\.`)
	variationField = regexp.MustCompile(`^variation\.(\d{1,4})\.`)
)

// parseTargeting reads the posted targeting editor of a flag with these variations.
func parseTargeting(form url.Values, vars []flagstore.Variation) targetingForm {
	t := targetingForm{targets: map[string]string{}, rules: parseRules(form, vars, true),
		def: parseServe(form, "default", vars)}
	for _, v := range vars {
		t.targets[v.ID] = form.Get("target." + v.ID)
	}
	return t
}

// parseRules reads the posted rules in the order of their indexes.
func parseRules(form url.Values, vars []flagstore.Variation, serve bool) []ruleForm {
	ruleIdx := map[int]bool{}
	condIdx := map[int]map[int]bool{}
	for name := range form {
		if m := condField.FindStringSubmatch(name); m != nil {
			r, _ := strconv.Atoi(m[1])
			c, _ := strconv.Atoi(m[2])
			if condIdx[r] == nil {
				condIdx[r] = map[int]bool{}
			}
			condIdx[r][c] = true
		}
		if m := ruleField.FindStringSubmatch(name); m != nil {
			r, _ := strconv.Atoi(m[1])
			ruleIdx[r] = true
		}
	}
	var rules []ruleForm
	for _, r := range sortedKeys(ruleIdx) {
		p := "rule." + strconv.Itoa(r)
		rf := ruleForm{index: strconv.Itoa(r), id: form.Get(p + ".id"), name: form.Get(p + ".name")}
		if rf.id == "" {
			rf.id = uuid.NewString()
		}
		for _, c := range sortedKeys(condIdx[r]) {
			cp := p + ".cond." + strconv.Itoa(c)
			cf := condForm{index: strconv.Itoa(c), id: form.Get(cp + ".id"), property: form.Get(cp + ".property"),
				op: form.Get(cp + ".op"), value: form.Get(cp + ".value"), segments: form[cp+".segments"]}
			if cf.id == "" {
				cf.id = uuid.NewString()
			}
			rf.conds = append(rf.conds, cf)
		}
		if serve {
			rf.serve = parseServe(form, p, vars)
		}
		rules = append(rules, rf)
	}
	return rules
}

func sortedKeys(m map[int]bool) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func parseServe(form url.Values, prefix string, vars []flagstore.Variation) serveForm {
	s := serveForm{choice: form.Get(prefix + ".serve"), dispatchKey: form.Get(prefix + ".dispatchKey"), percents: map[string]string{}}
	for _, v := range vars {
		s.percents[v.ID] = form.Get(prefix + ".pct." + v.ID)
	}
	return s
}

// newRule is a rule as "Add rule" makes it: one empty condition, serving the
// first variation.
func newRule(vars []flagstore.Variation) ruleForm {
	r := ruleForm{id: uuid.NewString(), conds: []condForm{newCondition()}, serve: serveForm{percents: map[string]string{}}}
	if len(vars) > 0 {
		r.serve.choice = vars[0].ID
	}
	return r
}

func newCondition() condForm { return condForm{id: uuid.NewString(), op: "Equal"} }

// editRules applies one rule editor button ("add-rule", "remove-rule.2",
// "rule-up.2", "rule-down.2", "add-cond.2", "remove-cond.2.0") to rules,
// which it names by their posted indexes, and says where the keyboard goes
// next in the form formID and what is announced: the first field of a rule
// or a condition just added; after a removal, what took its place, else the
// button that adds another; after a move, the same button on the rule in
// its new place (or its other move button at the end), so pressing again
// moves it on.
func editRules(formID string, rules []ruleForm, edit string, vars []flagstore.Variation) (edited []ruleForm, focus, message string) {
	op, arg, _ := strings.Cut(edit, ".")
	ruleArg, condArg, _ := strings.Cut(arg, ".")
	at := slices.IndexFunc(rules, func(r ruleForm) bool { return r.index == ruleArg })
	condField := func(r, j int) string {
		c := rules[r].conds[j]
		if c.op == opSegmentIn || c.op == opSegmentNotIn { // its attribute is hidden
			return ruleFieldID(formID, r, "cond-"+strconv.Itoa(j)+"-op")
		}
		return ruleFieldID(formID, r, "cond-"+strconv.Itoa(j)+"-property")
	}
	switch {
	case op == "add-rule":
		rules = append(rules, newRule(vars))
		return rules, ruleFieldID(formID, len(rules)-1, "name"), fmt.Sprintf("Rule %d added.", len(rules))
	case at < 0:
		return rules, "", ""
	case op == "remove-rule":
		rules = slices.Delete(rules, at, at+1)
		msg := fmt.Sprintf("Rule %d removed.", at+1)
		switch {
		case at < len(rules):
			return rules, ruleFieldID(formID, at, "name"), msg
		case len(rules) > 0:
			return rules, ruleFieldID(formID, len(rules)-1, "name"), msg
		}
		return rules, formID + "-rule-add", msg
	case op == "rule-up" && at > 0:
		to, button := at-1, "up"
		if to == 0 {
			button = "down"
		}
		rules[to], rules[at] = rules[at], rules[to]
		return rules, ruleFieldID(formID, to, button), fmt.Sprintf("Rule %d moved up to %d.", at+1, to+1)
	case op == "rule-down" && at < len(rules)-1:
		to, button := at+1, "down"
		if to == len(rules)-1 {
			button = "up"
		}
		rules[to], rules[at] = rules[at], rules[to]
		return rules, ruleFieldID(formID, to, button), fmt.Sprintf("Rule %d moved down to %d.", at+1, to+1)
	case op == "add-cond":
		rules[at].conds = append(rules[at].conds, newCondition())
		return rules, condField(at, len(rules[at].conds)-1), fmt.Sprintf("Condition %d added to rule %d.", len(rules[at].conds), at+1)
	case op == "remove-cond":
		cond := slices.IndexFunc(rules[at].conds, func(c condForm) bool { return c.index == condArg })
		if cond < 0 {
			return rules, "", ""
		}
		rules[at].conds = slices.Delete(rules[at].conds, cond, cond+1)
		msg := fmt.Sprintf("Condition %d removed from rule %d.", cond+1, at+1)
		switch left := len(rules[at].conds); {
		case cond < left:
			return rules, condField(at, cond), msg
		case left > 0:
			return rules, condField(at, left-1), msg
		}
		return rules, ruleFieldID(formID, at, "cond-add"), msg
	}
	return rules, "", ""
}

// userKeys splits user keys typed one per line or separated by commas.
func userKeys(s string) []string {
	separator := func(r rune) bool { return r == '\n' || r == '\r' || r == ',' }
	// Counted first, the list is made once at its size: a posted value of
	// a million one-character keys costs their 16-byte headers, not five
	// times that in a list grown on the way.
	n := 0
	for k := range strings.FieldsFuncSeq(s, separator) {
		if strings.TrimSpace(k) != "" {
			n++
		}
	}
	keys := make([]string, 0, n)
	for k := range strings.FieldsFuncSeq(s, separator) {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// listText shows a JSON string array as "a, b"; a list whose values contain
// commas stays JSON, which listValue reads back.
func listText(value string) string {
	var vs []string
	if json.Unmarshal([]byte(value), &vs) != nil || slices.ContainsFunc(vs, func(v string) bool { return strings.Contains(v, ",") }) {
		return value
	}
	return strings.Join(vs, ", ")
}

// listValue is the JSON string array the store keeps for "is one of" values:
// a typed JSON array as it is, else the comma-separated values.
func listValue(s string) string {
	var vs []string
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "[") && jsonbody.Decode([]byte(t), &vs) == nil {
		return t
	}
	b, _ := json.Marshal(userKeys(s))
	return string(b)
}

func (c condForm) condition() flagstore.Condition {
	switch c.op {
	case opSegmentIn, opSegmentNotIn:
		property := targeting.SegmentIn
		if c.op == opSegmentNotIn {
			property = targeting.SegmentNotIn
		}
		ids, _ := json.Marshal(core.OrEmpty(c.segments))
		return flagstore.Condition{ID: c.id, Property: property, Value: string(ids)}
	case "IsOneOf", "NotOneOf":
		return flagstore.Condition{ID: c.id, Property: strings.TrimSpace(c.property), Op: c.op, Value: listValue(c.value)}
	}
	return flagstore.Condition{ID: c.id, Property: strings.TrimSpace(c.property), Op: c.op, Value: c.value}
}

func conditions(cs []condForm) []flagstore.Condition {
	out := make([]flagstore.Condition, len(cs))
	for i, c := range cs {
		out[i] = c.condition()
	}
	return out
}

// rollout turns what a rule serves into the store's ranges over [0, 1]:
// [0, 1] for one variation, or consecutive ranges of the percentages in the
// order of the variations. A rollout whose percentages are those of the
// stored one keeps the stored ranges exactly. Percentages with more than two
// decimals, or not adding up to 100 cannot become ranges; the problem is kept in s.err.
func (s *serveForm) rollout(vars []flagstore.Variation, stored []flagstore.RolloutVariation) ([]flagstore.RolloutVariation, bool) {
	expt := func(id string) float64 {
		if i := slices.IndexFunc(stored, func(r flagstore.RolloutVariation) bool { return r.ID == id }); i >= 0 {
			return stored[i].ExptRollout
		}
		return 1
	}
	if s.choice != serveRollout {
		return []flagstore.RolloutVariation{{ID: s.choice, Rollout: []float64{0, 1}, ExptRollout: expt(s.choice)}}, true
	}
	pct := map[string]int{}
	total := 0
	for _, v := range vars {
		raw := strings.TrimSpace(s.percents[v.ID])
		if raw == "" {
			continue
		}
		n, err := targeting.ParsePercent(raw)
		if err != nil {
			s.err, s.errField = percentProblem(variationLabel(v), err), v.ID
			return nil, false
		}
		pct[v.ID] = n
		total += n
	}
	if total != targeting.WholeRollout {
		s.err = fmt.Sprintf("The percentages add up to %s%%; they must add up to 100%%.", targeting.FormatPercent(total))
		return nil, false
	}
	if len(stored) > 0 && samePercents(percentsOf(vars, stored), pct) {
		return stored, true
	}
	var out []flagstore.RolloutVariation
	at := 0
	for _, v := range vars {
		if n := pct[v.ID]; n > 0 {
			out = append(out, flagstore.RolloutVariation{ID: v.ID, Rollout: targeting.RolloutRange(at, n), ExptRollout: expt(v.ID)})
			at += n
		}
	}
	return out, true
}

// percentProblem names what is wrong with a variation's percentage.
func percentProblem(label string, err error) string {
	switch {
	case errors.Is(err, targeting.ErrPercentTooPrecise):
		return label + ": use at most two decimals, such as 12.34."
	case errors.Is(err, targeting.ErrPercentOutOfRange):
		return label + ": enter a percentage from 0 to 100."
	}
	return label + ": enter a percentage from 0 to 100, such as 12.34."
}

func samePercents(a, b map[string]int) bool {
	for id, n := range a {
		if b[id] != n {
			return false
		}
	}
	for id, n := range b {
		if a[id] != n {
			return false
		}
	}
	return true
}

// dispatch is the rollout's dispatch key; a single variation keeps the
// stored one, since it does not split users.
func (s serveForm) dispatch(stored *string) *string {
	if s.choice != serveRollout {
		return stored
	}
	if k := strings.TrimSpace(s.dispatchKey); k != "" {
		return &k
	}
	return nil
}

// input turns the editor into the store's targeting input, whole: the store
// checks only the parts that change. ok is false when a rollout could not be
// read; the problems are in t.
func (t *targetingForm) input(f flagstore.Flag) (flagstore.TargetingInput, bool) {
	ok := true
	targets := []flagstore.TargetUser{}
	for _, v := range f.Variations {
		if keys := userKeys(t.targets[v.ID]); len(keys) > 0 {
			targets = append(targets, flagstore.TargetUser{KeyIDs: keys, VariationID: v.ID})
		}
	}
	storedRules := map[string]flagstore.FlagRule{}
	for _, r := range f.Rules {
		storedRules[r.ID] = r
	}
	rules := []flagstore.FlagRule{}
	for i := range t.rules {
		r := &t.rules[i]
		stored, existed := storedRules[r.id]
		vars, good := r.serve.rollout(f.Variations, stored.Variations)
		ok = ok && good
		rule := flagstore.FlagRule{ID: r.id, Name: r.name, DispatchKey: r.serve.dispatch(stored.DispatchKey),
			IncludedInExpt: !existed || stored.IncludedInExpt, Conditions: conditions(r.conds), Variations: vars}
		rules = append(rules, rule)
	}
	fallVars, good := t.def.rollout(f.Variations, f.Fallthrough.Variations)
	ok = ok && good
	fall := flagstore.Fallthrough{DispatchKey: t.def.dispatch(f.Fallthrough.DispatchKey), IncludedInExpt: f.Fallthrough.IncludedInExpt, Variations: fallVars}

	tg := f.Targeting()
	tg.Rules, tg.Fallthrough = rules, fall
	// The editor cannot show a target entry without keys (the API can make
	// one): while the entries it shows are unchanged, the stored ones stay.
	shown := slices.DeleteFunc(slices.Clone(f.TargetUsers), func(tu flagstore.TargetUser) bool { return len(tu.KeyIDs) == 0 })
	if !flagstore.SameJSON(targets, core.OrEmpty(shown)) {
		tg.TargetUsers = targets
	}
	return flagstore.TargetingInput{Targeting: &tg}, ok
}

// variationLabel names a variation in choices: its name, or its value.
func variationLabel(v flagstore.Variation) string {
	if strings.TrimSpace(v.Name) != "" {
		return v.Name
	}
	return v.Value
}

// editorView shows the targeting editor. segments are the segments
// conditions may name, by id.
func (t targetingForm) editorView(f flagstore.Flag, segments []views.Option) views.TargetingEditor {
	e := views.TargetingEditor{HasSegments: len(segments) > 0 || slices.ContainsFunc(t.rules, usesSegments)}
	for _, v := range f.Variations {
		e.Targets = append(e.Targets, views.TargetEdit{VariationID: v.ID, Label: variationLabel(v), Users: t.targets[v.ID]})
	}
	e.Rules = rulesView(t.rules, f.Variations, segments, true)
	e.Default = serveView("default", t.def, f.Variations)
	return e
}

func usesSegments(r ruleForm) bool {
	return slices.ContainsFunc(r.conds, func(c condForm) bool { return c.op == opSegmentIn || c.op == opSegmentNotIn })
}

// rulesView shows rules renumbered from 0; flag rules (serve) also show what
// they serve and may use segment conditions.
func rulesView(rules []ruleForm, vars []flagstore.Variation, segments []views.Option, serve bool) []views.RuleEdit {
	out := make([]views.RuleEdit, len(rules))
	for i, r := range rules {
		re := views.RuleEdit{Index: strconv.Itoa(i), ID: r.id, Name: r.name, First: i == 0, Last: i == len(rules)-1}
		for j, c := range r.conds {
			re.Conditions = append(re.Conditions, views.ConditionEdit{Index: strconv.Itoa(j), ID: c.id, Property: c.property,
				Value: c.value, Ops: operatorOptions(c.op, serve), Segments: segmentOptions(segments, c.segments)})
		}
		if serve {
			s := serveView("rule."+strconv.Itoa(i), r.serve, vars)
			re.Serve = &s
		}
		out[i] = re
	}
	return out
}

// operatorOptions offers the store's operators and, for flag rules, segment membership.
func operatorOptions(selected string, segments bool) []views.Option {
	ops := flagstore.Operators()
	if segments {
		ops = append(ops, opSegmentIn, opSegmentNotIn)
	}
	if selected != "" && !slices.Contains(ops, selected) {
		ops = append(ops, selected) // kept as stored; the store says whether it is valid
	}
	out := make([]views.Option, len(ops))
	for i, op := range ops {
		label := operatorLabels[op]
		if label == "" {
			label = op
		}
		out[i] = views.Option{Value: op, Label: label, Selected: op == selected}
	}
	return out
}

// segmentOptions offers the environment's segments, those chosen selected;
// a chosen segment that is no longer offered (archived, gone) still shows.
func segmentOptions(all []views.Option, chosen []string) []views.Option {
	out := make([]views.Option, 0, len(all))
	for _, o := range all {
		o.Selected = slices.Contains(chosen, o.Value)
		out = append(out, o)
	}
	for _, id := range chosen {
		if !slices.ContainsFunc(all, func(o views.Option) bool { return o.Value == id }) {
			out = append(out, views.Option{Value: id, Label: "Unavailable segment " + id, Selected: true})
		}
	}
	return out
}

func serveView(prefix string, s serveForm, vars []flagstore.Variation) views.ServeEdit {
	v := views.ServeEdit{Prefix: prefix, Rollout: s.choice == serveRollout, DispatchKey: s.dispatchKey, Error: s.err}
	for _, vr := range vars {
		v.Choices = append(v.Choices, views.Option{Value: vr.ID, Label: variationLabel(vr), Selected: s.choice == vr.ID})
		pct := s.percents[vr.ID]
		if s.choice != serveRollout && pct == "" { // switching to a rollout starts from what is served now
			pct = "0"
			if s.choice == vr.ID {
				pct = "100"
			}
		}
		pe := views.PercentEdit{VariationID: vr.ID, Label: variationLabel(vr), Value: pct}
		// A problem of one share marks that share; one of the whole
		// rollout (its total) marks them all.
		if s.errField == vr.ID || (s.err != "" && s.errField == "" && s.choice == serveRollout) {
			pe.Invalid = true
		}
		v.Percents = append(v.Percents, pe)
	}
	v.Choices = append(v.Choices, views.Option{Value: serveRollout, Label: "Percentage rollout", Selected: v.Rollout})
	return v
}

// parseVariations reads posted variations ("variation.0.id", ".name", ".value") in index order.
func parseVariations(form url.Values) []views.VariationEdit {
	idx := map[int]bool{}
	for name := range form {
		if m := variationField.FindStringSubmatch(name); m != nil {
			n, _ := strconv.Atoi(m[1])
			idx[n] = true
		}
	}
	var out []views.VariationEdit
	for _, n := range sortedKeys(idx) {
		p := "variation." + strconv.Itoa(n)
		id := form.Get(p + ".id")
		if id == "" {
			id = uuid.NewString()
		}
		out = append(out, views.VariationEdit{Index: strconv.Itoa(n), ID: id, Name: form.Get(p + ".name"), Value: form.Get(p + ".value")})
	}
	return out
}

// editVariations applies "add-variation" or "remove-variation.N".
func editVariations(vs []views.VariationEdit, edit string) []views.VariationEdit {
	op, arg, _ := strings.Cut(edit, ".")
	switch op {
	case "add-variation":
		return append(vs, views.VariationEdit{ID: uuid.NewString()})
	case "remove-variation":
		return slices.DeleteFunc(vs, func(v views.VariationEdit) bool { return v.Index == arg })
	}
	return vs
}

// renumber gives variations the indexes of their places, for the form.
func renumber(vs []views.VariationEdit) []views.VariationEdit {
	for i := range vs {
		vs[i].Index = strconv.Itoa(i)
	}
	return vs
}

func variationEdits(vs []flagstore.Variation) []views.VariationEdit {
	out := make([]views.VariationEdit, len(vs))
	for i, v := range vs {
		out[i] = views.VariationEdit{Index: strconv.Itoa(i), ID: v.ID, Name: v.Name, Value: v.Value}
	}
	return out
}

func storeVariations(vs []views.VariationEdit) []flagstore.Variation {
	out := make([]flagstore.Variation, len(vs))
	for i, v := range vs {
		out[i] = flagstore.Variation{ID: v.ID, Name: v.Name, Value: v.Value}
	}
	return out
}

// variationTypes offers the flag types.
func variationTypes(selected string) []views.Option {
	return options(selected, targeting.VariationBoolean, targeting.VariationString, targeting.VariationNumber, targeting.VariationJSON)
}
