package describe

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/bunting-flags/bunting/sql/targeting"
)

// Change says in lines how a recorded change changed its subject, one line
// per thing a person would name: "Turned the flag on", "Added vip-3 to
// True", "Renamed Checkout → New checkout". refType is the audit entry's
// (FeatureFlag, Segment, Project…); previous and current are its snapshots,
// null (or empty) when the thing did not exist before or after.
func Change(refType string, previous, current json.RawMessage, segments Names) []string {
	switch refType {
	case "FeatureFlag":
		before, after := decode[targeting.Flag](previous), decode[targeting.Flag](current)
		return FlagChange(before, after, segments)
	case "Segment":
		before, after := decode[targeting.Segment](previous), decode[targeting.Segment](current)
		return SegmentChange(before, after, segments)
	}
	return genericChange(kindName(refType), previous, current)
}

// decode reads a snapshot; nil when there is none or it is not one.
func decode[T any](raw json.RawMessage) *T {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var v T
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return &v
}

// FlagChange says how a flag changed; before is nil for a creation, after
// for a deletion.
func FlagChange(before, after *targeting.Flag, segments Names) []string {
	switch {
	case before == nil && after == nil:
		return nil
	case before == nil:
		return []string{"Created the flag " + after.Name}
	case after == nil:
		return []string{"Deleted the flag " + before.Name}
	}
	var out []string
	add := func(s string) { out = append(out, s) }
	if before.IsArchived != after.IsArchived {
		add(pick(after.IsArchived, "Archived the flag", "Restored the flag"))
	}
	if before.IsEnabled != after.IsEnabled {
		add(pick(after.IsEnabled, "Turned the flag on", "Turned the flag off"))
	}
	if before.Name != after.Name {
		add("Renamed " + before.Name + " → " + after.Name)
	}
	if before.Description != after.Description {
		add(pick(after.Description == "", "Removed the description", "Changed the description"))
	}
	if before.VariationType != after.VariationType {
		add("Changed the variation type " + before.VariationType + " → " + after.VariationType)
	}
	out = append(out, variationChanges(before.Variations, after.Variations)...)
	if before.DisabledVariationID != after.DisabledVariationID {
		add("Off variation: " + VariationName(before.DisabledVariationID, before.Variations) + " → " +
			VariationName(after.DisabledVariationID, after.Variations))
	}
	out = append(out, targetChanges(before, after)...)
	out = append(out, flagRuleChanges(before, after, segments)...)
	if !sameJSON(before.Fallthrough, after.Fallthrough) {
		out = append(out, serveChange("Default rule", before.Fallthrough.Variations, before.Fallthrough.DispatchKey, before.Variations,
			after.Fallthrough.Variations, after.Fallthrough.DispatchKey, after.Variations))
	}
	if before.ExptIncludeAllTargets != after.ExptIncludeAllTargets {
		add(pick(after.ExptIncludeAllTargets, "Experiments now include all targeted users", "Experiments no longer include all targeted users"))
	}
	out = append(out, tagChanges(before.Tags, after.Tags)...)
	if before.Key != after.Key {
		add("Changed the key " + before.Key + " → " + after.Key)
	}
	return out
}

// SegmentChange says how a segment changed.
func SegmentChange(before, after *targeting.Segment, segments Names) []string {
	switch {
	case before == nil && after == nil:
		return nil
	case before == nil:
		return []string{"Created the segment " + after.Name}
	case after == nil:
		return []string{"Deleted the segment " + before.Name}
	}
	var out []string
	add := func(s string) { out = append(out, s) }
	if before.IsArchived != after.IsArchived {
		add(pick(after.IsArchived, "Archived the segment", "Restored the segment"))
	}
	if before.Name != after.Name {
		add("Renamed " + before.Name + " → " + after.Name)
	}
	if before.Description != after.Description {
		add(pick(after.Description == "", "Removed the description", "Changed the description"))
	}
	out = append(out, userListChanges(before.Included, after.Included, "included users")...)
	out = append(out, userListChanges(before.Excluded, after.Excluded, "excluded users")...)
	out = append(out, ruleChanges(segmentRules(before.Rules, segments), segmentRules(after.Rules, segments))...)
	if !slices.Equal(before.Scopes, after.Scopes) {
		add("Changed where the segment can be used: " + list(after.Scopes))
	}
	out = append(out, tagChanges(before.Tags, after.Tags)...)
	return out
}

func variationChanges(before, after []targeting.Variation) []string {
	var out []string
	for _, a := range after {
		i := slices.IndexFunc(before, func(b targeting.Variation) bool { return b.ID == a.ID })
		if i < 0 {
			out = append(out, "Added variation "+variationLabel(a)+" ("+a.Value+")")
			continue
		}
		b := before[i]
		if b.Name != a.Name {
			out = append(out, "Renamed variation "+variationLabel(b)+" → "+variationLabel(a))
		}
		if b.Value != a.Value {
			out = append(out, "Changed variation "+variationLabel(a)+"'s value "+b.Value+" → "+a.Value)
		}
	}
	for _, b := range before {
		if !slices.ContainsFunc(after, func(a targeting.Variation) bool { return a.ID == b.ID }) {
			out = append(out, "Removed variation "+variationLabel(b))
		}
	}
	return out
}

// targetChanges says which users were added to or removed from which
// variation's individual targets.
func targetChanges(before, after *targeting.Flag) []string {
	users := func(f *targeting.Flag) map[string][]string {
		m := map[string][]string{}
		for _, t := range f.TargetUsers {
			m[t.VariationID] = append(m[t.VariationID], t.KeyIDs...)
		}
		return m
	}
	old, cur := users(before), users(after)
	var out []string
	for _, v := range after.Variations {
		if added := missing(cur[v.ID], old[v.ID]); len(added) > 0 {
			out = append(out, "Added "+list(added)+" to "+variationLabel(v))
		}
	}
	for _, v := range before.Variations {
		if removed := missing(old[v.ID], cur[v.ID]); len(removed) > 0 {
			out = append(out, "Removed "+list(removed)+" from "+variationLabel(v))
		}
	}
	return out
}

func userListChanges(before, after []string, what string) []string {
	var out []string
	if added := missing(after, before); len(added) > 0 {
		out = append(out, "Added "+list(added)+" to "+what)
	}
	if removed := missing(before, after); len(removed) > 0 {
		out = append(out, "Removed "+list(removed)+" from "+what)
	}
	return out
}

// missing lists the values of a not in b, in a's order.
func missing(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, v := range b {
		in[v] = true
	}
	var out []string
	for _, v := range a {
		if !in[v] {
			out = append(out, v)
		}
	}
	return out
}

func tagChanges(before, after []string) []string {
	var out []string
	for _, t := range missing(after, before) {
		out = append(out, "Added tag "+t)
	}
	for _, t := range missing(before, after) {
		out = append(out, "Removed tag "+t)
	}
	return out
}

// describedRule is a rule of a flag or a segment as the change lines need it.
type describedRule struct {
	id, name   string
	conditions string
	// serve and split are a flag rule's serve sentence and its rollout's
	// percentages ("" when it serves one variation); empty for segment rules.
	serve, split string
	whole        string
}

func flagRuleChanges(before, after *targeting.Flag, segments Names) []string {
	rules := func(f *targeting.Flag) []describedRule {
		out := make([]describedRule, len(f.Rules))
		for i, r := range f.Rules {
			d := describedRule{id: r.ID, name: r.Name, conditions: Conditions(r.Conditions, segments),
				serve: Serve(r.Variations, r.DispatchKey, f.Variations), whole: FlagRule(r, f.Variations, segments)}
			if _, single := singleVariation(r.Variations); !single {
				d.split = shares(r.Variations)
			}
			out[i] = d
		}
		return out
	}
	return ruleChanges(rules(before), rules(after))
}

func segmentRules(rs []targeting.SegmentRule, segments Names) []describedRule {
	out := make([]describedRule, len(rs))
	for i, r := range rs {
		out[i] = describedRule{id: r.ID, name: r.Name, conditions: Conditions(r.Conditions, segments), whole: SegmentRule(r, segments)}
	}
	return out
}

// ruleChanges matches rules by id: added, removed, renamed, changed
// conditions or serve, a rollout's new split, and a new order.
func ruleChanges(before, after []describedRule) []string {
	var out []string
	name := func(r describedRule) string {
		if r.name != "" {
			return r.name
		}
		return "(unnamed)"
	}
	for _, a := range after {
		i := slices.IndexFunc(before, func(b describedRule) bool { return b.id == a.id })
		if i < 0 {
			out = append(out, "Added rule "+name(a)+": "+lowerFirst(a.whole))
			continue
		}
		b := before[i]
		if b.name != a.name {
			out = append(out, "Renamed rule "+name(b)+" → "+name(a))
		}
		if b.conditions != a.conditions {
			out = append(out, "Changed rule "+name(a)+": "+lowerFirst(a.whole))
			continue
		}
		if b.serve != a.serve {
			if b.split != "" && a.split != "" && b.split != a.split {
				out = append(out, "Rollout of "+name(a)+": "+b.split+" → "+a.split)
			} else {
				out = append(out, "Rule "+name(a)+": "+b.serve+" → "+a.serve)
			}
		}
	}
	for _, b := range before {
		if !slices.ContainsFunc(after, func(a describedRule) bool { return a.id == b.id }) {
			out = append(out, "Removed rule "+name(b))
		}
	}
	if order(before, after) {
		out = append(out, "Reordered the rules")
	}
	return out
}

// order tells whether the rules kept on both sides are in another order.
func order(before, after []describedRule) bool {
	var b, a []string
	for _, r := range before {
		if slices.ContainsFunc(after, func(x describedRule) bool { return x.id == r.id }) {
			b = append(b, r.id)
		}
	}
	for _, r := range after {
		if slices.ContainsFunc(before, func(x describedRule) bool { return x.id == r.id }) {
			a = append(a, r.id)
		}
	}
	return !slices.Equal(a, b)
}

// serveChange says a changed serve, as a split when both are rollouts over
// the same attribute.
func serveChange(what string, old []targeting.RolloutVariation, oldKey *string, oldVars []targeting.Variation,
	cur []targeting.RolloutVariation, curKey *string, curVars []targeting.Variation) string {
	_, oldSingle := singleVariation(old)
	_, curSingle := singleVariation(cur)
	if !oldSingle && !curSingle && dispatchAttribute(oldKey) == dispatchAttribute(curKey) {
		return what + ": " + shares(old) + " → " + shares(cur)
	}
	return what + ": " + Serve(old, oldKey, oldVars) + " → " + Serve(cur, curKey, curVars)
}

// genericChange describes a change of a project, environment, member,
// policy, access token or setting from its snapshots' plain members.
func genericChange(kind string, previous, current json.RawMessage) []string {
	before, after := members(previous), members(current)
	switch {
	case before == nil && after == nil:
		return nil
	case before == nil:
		return []string{"Created " + kind + named(after)}
	case after == nil:
		return []string{"Deleted " + kind + named(before)}
	}
	var keys []string
	for k := range after {
		keys = append(keys, k)
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		if Bookkeeping(k) {
			continue
		}
		old, cur := before[k], after[k]
		if bytes.Equal(Compact(old), Compact(cur)) {
			continue
		}
		label := fieldWords(k)
		o, c := plain(old), plain(cur)
		switch {
		case k == "name" && o != "" && c != "":
			out = append(out, "Renamed "+o+" → "+c)
		case o != "" || c != "":
			if isText(old) && isText(cur) && (len(o) > 60 || len(c) > 60) {
				out = append(out, "Changed the "+label)
			} else {
				out = append(out, "Changed the "+label+": "+orNone(o)+" → "+orNone(c))
			}
		default:
			out = append(out, "Changed the "+label)
		}
	}
	return out
}

// Bookkeeping tells a snapshot's member that changes with every change and
// says nothing about it (ids, revisions, timestamps): the words and the
// JSON diff both leave these out.
func Bookkeeping(member string) bool { return slices.Contains(bookkeeping, member) }

var bookkeeping = []string{"id", "revision", "createdAt", "updatedAt", "creatorId", "updatorId", "envId",
	"workspaceId", "organizationId", "projectId", "isEnvironmentSpecific"}

func members(raw json.RawMessage) map[string]json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return map[string]json.RawMessage{}
	}
	return m
}

// Compact is JSON text without insignificant space (as given when it is not
// JSON), to compare snapshots' members.
func Compact(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// plain is a scalar member as text ("" for a structured one or none).
func plain(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	switch t := v.(type) {
	case string:
		return t
	case bool:
		return pick(t, "yes", "no")
	case float64:
		return strings.TrimSpace(string(Compact(raw)))
	}
	return ""
}

func isText(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

func named(m map[string]json.RawMessage) string {
	if n := plain(m["name"]); n != "" {
		return " " + n
	}
	if n := plain(m["key"]); n != "" {
		return " " + n
	}
	return ""
}

// fieldWords turns a member name into words: "requireComment" → "require comment".
func fieldWords(k string) string {
	var b strings.Builder
	for i, r := range k {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(r + ('a' - 'A'))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// kindName is an audit entry's subject type as words: "AccessToken" → "access token".
func kindName(refType string) string { return fieldWords(refType) }

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// SegmentIDs lists the segments a change's snapshots name in their rules'
// conditions, so the caller can look their names up once for a page.
func SegmentIDs(refType string, snapshots ...json.RawMessage) []string {
	var ids []string
	for _, raw := range snapshots {
		switch refType {
		case "FeatureFlag":
			if f := decode[targeting.Flag](raw); f != nil {
				ids = appendNew(ids, FlagSegmentIDs(*f)...)
			}
		case "Segment":
			if sg := decode[targeting.Segment](raw); sg != nil {
				for _, r := range sg.Rules {
					ids = appendNew(ids, conditionSegments(r.Conditions)...)
				}
			}
		}
	}
	return ids
}

// FlagSegmentIDs lists the segments a flag's rules name.
func FlagSegmentIDs(f targeting.Flag) []string {
	var ids []string
	for _, r := range f.Rules {
		ids = appendNew(ids, conditionSegments(r.Conditions)...)
	}
	return ids
}

func conditionSegments(cs []targeting.Condition) []string {
	var ids []string
	for _, c := range cs {
		if c.Property == targeting.SegmentIn || c.Property == targeting.SegmentNotIn {
			var named []string
			_ = json.Unmarshal([]byte(c.Value), &named)
			ids = append(ids, named...)
		}
	}
	return ids
}

func appendNew(ids []string, more ...string) []string {
	for _, id := range more {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}
