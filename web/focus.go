package web

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
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
