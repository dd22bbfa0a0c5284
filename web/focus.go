package web

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// The keyboard keeps its place. An htmx answer that replaces the part of the
// page holding the focus names, in its HX-Trigger header, the element that
// should have it next (bunting:focus, an element id) and what a screen reader
// should hear (bunting:announce); static/app.js moves the focus as the new
// part is swapped in and speaks through the layout's live region. Links and
// buttons whose next place is known when the page is drawn say it
// themselves (data-focus-after); the header is for what only the answer
// knows, such as whether a save went through.

// htmx events of an answer (HX-Trigger).
const (
	eventFocus    = "bunting:focus"
	eventAnnounce = "bunting:announce"
	triggersKey   = "htmx-triggers"
)

// trigger adds an htmx event with its value to the answer's HX-Trigger.
func trigger(c echo.Context, event, value string) {
	if !isHTMX(c) || value == "" {
		return
	}
	events, _ := c.Get(triggersKey).(map[string]string)
	if events == nil {
		events = map[string]string{}
		c.Set(triggersKey, events)
	}
	events[event] = value
	b, err := json.Marshal(events)
	if err != nil {
		return
	}
	c.Response().Header().Set("HX-Trigger", asciiJSON(b))
}

// asciiJSON writes JSON's non-ASCII characters as \u escapes: a header
// carries bytes, and the browser reads them as Latin-1, not UTF-8.
func asciiJSON(b []byte) string {
	var sb strings.Builder
	for _, r := range string(b) {
		switch {
		case r < utf8.RuneSelf:
			sb.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&sb, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&sb, `\u%04x`, r)
		}
	}
	return sb.String()
}

// focusOn gives the keyboard to the element id once htmx has swapped the answer in.
func focusOn(c echo.Context, id string) { trigger(c, eventFocus, id) }

// announce has screen readers say text, politely, after an htmx answer.
func announce(c echo.Context, text string) { trigger(c, eventAnnounce, text) }

// ruleFieldID is the id of a part of rule i in the rule editor of form formID
// ("targeting-rule-0-name"), as views/rule_editor.templ names them.
func ruleFieldID(formID string, i int, part string) string {
	return formID + "-rule-" + strconv.Itoa(i) + "-" + part
}

// editRulesFocused applies one rule editor button (editRules) and says where
// the keyboard goes next and what is announced: the first field of a rule
// or a condition just added; after a removal, what took its place, else
// the button that adds another; after a move, the same button on the rule
// in its new place (or its other move button at the end), so pressing
// again moves it on.
func editRulesFocused(formID string, rules []ruleForm, edit string, vars []flagstore.Variation) ([]ruleForm, string, string) {
	op, arg, _ := strings.Cut(edit, ".")
	ruleArg, condArg, _ := strings.Cut(arg, ".")
	at := slices.IndexFunc(rules, func(r ruleForm) bool { return r.index == ruleArg })
	n := len(rules)
	cond := -1
	if at >= 0 {
		cond = slices.IndexFunc(rules[at].conds, func(c condForm) bool { return c.index == condArg })
	}
	rules = editRules(rules, edit, vars)
	condField := func(r, j int) string {
		c := rules[r].conds[j]
		if c.op == opSegmentIn || c.op == opSegmentNotIn { // its attribute is hidden
			return ruleFieldID(formID, r, "cond-"+strconv.Itoa(j)+"-op")
		}
		return ruleFieldID(formID, r, "cond-"+strconv.Itoa(j)+"-property")
	}
	switch {
	case op == "add-rule":
		return rules, ruleFieldID(formID, len(rules)-1, "name"), fmt.Sprintf("Rule %d added.", len(rules))
	case at < 0:
		return rules, "", ""
	case op == "remove-rule":
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
		return rules, ruleFieldID(formID, to, button), fmt.Sprintf("Rule %d moved up to %d.", at+1, to+1)
	case op == "rule-down" && at < n-1:
		to, button := at+1, "down"
		if to == n-1 {
			button = "up"
		}
		return rules, ruleFieldID(formID, to, button), fmt.Sprintf("Rule %d moved down to %d.", at+1, to+1)
	case op == "add-cond":
		return rules, condField(at, len(rules[at].conds)-1), fmt.Sprintf("Condition %d added to rule %d.", len(rules[at].conds), at+1)
	case op == "remove-cond" && cond >= 0:
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
