package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	cdpinput "github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// keyboard drives a page with real key events, counting the presses that
// are not typing (Tab, Enter, the arrows): what the keyboard costs a person.
type keyboard struct {
	ch      *chrome
	presses int
}

// press presses one key as a keyboard does: a key down that carries the
// key's text (so a handler that prevents it also stops the text), and a
// key up.
func (k *keyboard) press(key string) {
	k.ch.t.Helper()
	k.presses++
	v, ok := kb.Keys[[]rune(key)[0]]
	if !ok {
		k.ch.t.Fatalf("press: unknown key %q", key)
	}
	down := cdpinput.DispatchKeyEventParams{Type: cdpinput.DispatchKeyEventTypeRawKeyDown, Key: v.Key, Code: v.Code,
		WindowsVirtualKeyCode: v.Windows, NativeVirtualKeyCode: v.Native}
	if v.Print {
		down.Type, down.Text, down.UnmodifiedText = cdpinput.DispatchKeyEventTypeKeyDown, v.Text, v.Unmodified
	}
	up := cdpinput.DispatchKeyEventParams{Type: cdpinput.DispatchKeyEventTypeKeyUp, Key: v.Key, Code: v.Code,
		WindowsVirtualKeyCode: v.Windows, NativeVirtualKeyCode: v.Native}
	k.ch.do("press "+v.Key, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, cdpinput.DispatchKeyEvent, down); err != nil {
			return err
		}
		_, err := chromedp.Call(ctx, cdpinput.DispatchKeyEvent, up)
		return err
	}))
}

func (k *keyboard) typeText(s string) {
	k.ch.t.Helper()
	k.ch.do("type "+s, chromedp.KeyEvent(s))
}

// focused tells whether the focused element matches sel.
func (ch *chrome) focused(sel string) bool {
	ch.t.Helper()
	return ch.eval(fmt.Sprintf(`String(!!document.activeElement && document.activeElement.matches(%q))`, sel)) == "true"
}

// tabTo presses Tab until the element sel has the focus.
func (k *keyboard) tabTo(sel string) {
	k.ch.t.Helper()
	for range 80 {
		if k.ch.focused(sel) {
			return
		}
		k.press(kb.Tab)
	}
	k.ch.t.Fatalf("80 Tabs did not reach %s; at %s", sel, k.ch.activeElement())
}

func (ch *chrome) activeElement() string {
	return ch.eval(`(function(e){ return e ? e.tagName + "#" + e.id + "[" + (e.getAttribute("data-testid") || "") + "]" : "none" })(document.activeElement)`)
}

// waitFocus waits until the element sel has the focus: htmx answers give it
// as they are swapped in.
func (ch *chrome) waitFocus(step, sel string) {
	ch.t.Helper()
	for range 200 {
		if ch.focused(sel) {
			// The focus moves at the swap; the next key waits for the
			// settle, when htmx has processed what it swapped in.
			ch.settled()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	ch.t.Errorf("%s: the focus is on %s, want %s", step, ch.activeElement(), sel)
}

// waitAnnounced waits until the layout's live region says text.
func (ch *chrome) waitAnnounced(step, text string) {
	ch.t.Helper()
	got := ""
	for range 200 {
		if got = ch.eval(`document.getElementById("announcer").textContent`); got == text {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	ch.t.Errorf("%s: the live region says %q, want %q", step, got, text)
}

// TestBrowserKeyboardKeepsItsPlace creates a flag with two individual
// targets and a rule by keyboard alone, counting the key presses besides
// typing, and checks where the focus lands after each step: the new flag's
// heading, the first field of what Edit or Add rule opened, the Edit link
// after Save or Cancel; and that saves are said in the live region. The
// segment page's editor does the same.
func TestBrowserKeyboardKeepsItsPlace(t *testing.T) {
	t.Parallel()
	ch := headless(t, 150*time.Second)
	a, _, env := flagApp(t)
	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	ch.do("flags", chromedp.Navigate(a.srv.URL+"/flags"), chromedp.WaitVisible(chromedp.CSS(`#flag-create > summary`)))
	k := &keyboard{ch: ch}
	steps, last := []string{}, 0
	mark := func(step string) {
		steps = append(steps, fmt.Sprintf("%s %d", step, k.presses-last))
		last = k.presses
	}

	// Create the flag: skip to the content, open the form, type its name, Enter.
	k.tabTo(`.skip-link`)
	k.press(kb.Enter)
	k.tabTo(`#flag-create > summary`)
	k.press(kb.Enter)
	k.tabTo(`#flag-create-name`)
	k.typeText("Checkout")
	k.press(kb.Enter)
	ch.waitPath("^/flags/checkout$")
	ch.waitFocus("created", `[data-testid=flag-heading]`)
	ch.waitAnnounced("created", "Feature flag “Checkout” created.")
	mark("create")

	// Two individual targets: Edit opens them with the keyboard in the first box.
	k.tabTo(`#summary-edit-targets`)
	k.press(kb.Enter)
	f := a.flag(env, "checkout")
	ch.waitFocus("edit targets", `#target-`+f.Variations[0].ID)
	k.typeText("vip-1\nvip-2")
	mark("targets")

	// A rule: unfold the rules, Add rule, the keyboard is in the new rule.
	k.tabTo(`#edit-rules > summary`)
	k.press(kb.Enter)
	k.tabTo(`#targeting-rule-add`)
	k.press(kb.Enter)
	ch.waitFocus("add rule", `#targeting-rule-0-name`)
	ch.waitAnnounced("add rule", "Rule 1 added.")
	mark("add rule")
	k.tabTo(`#targeting-rule-0-cond-0-property`)
	k.typeText("country")
	k.tabTo(`#targeting-rule-0-cond-0-value`)
	k.typeText("NL")
	k.press(kb.Enter) // Enter in a field saves
	ch.waitFocus("save", `#summary-edit-targets`)
	ch.waitAnnounced("save", "Targeting saved.")
	mark("condition and save")
	f = a.flag(env, "checkout")
	if len(f.TargetUsers) != 1 || !slices.Equal(f.TargetUsers[0].KeyIDs, []string{"vip-1", "vip-2"}) || len(f.Rules) != 1 || f.Rules[0].Conditions[0].Value != "NL" {
		t.Fatalf("saved targets %+v, rules %+v", f.TargetUsers, f.Rules)
	}
	t.Logf("creating a flag with two targets and a rule took %d key presses besides typing (%s)", k.presses, strings.Join(steps, ", "))
	if k.presses > 45 { // 31 when measured; the flag list's controls come first
		t.Errorf("creating a flag with two targets and a rule took %d key presses besides typing, want at most 45", k.presses)
	}

	// "Add a rule…" lands on Add rule; Add rule on the new rule; removing
	// it on the rule before; saving on the Edit of the last rule.
	ch.do("focus Add a rule…", chromedp.Focus(chromedp.CSS(`#summary-add-rule`)))
	k.press(kb.Enter)
	ch.waitFocus("Add a rule…", `#targeting-rule-add`)
	k.press(kb.Enter)
	ch.waitFocus("second rule", `#targeting-rule-1-name`)
	ch.waitAnnounced("second rule", "Rule 2 added.")
	ch.do("focus Remove", chromedp.Focus(chromedp.CSS(`#edit-rule-2 [data-testid=rule-remove]`)))
	k.press(kb.Enter)
	ch.waitFocus("remove rule", `#targeting-rule-0-name`)
	ch.waitAnnounced("remove rule", "Rule 2 removed.")
	ch.do("focus Save", chromedp.Focus(chromedp.CSS(`[data-testid=targeting-save]`)))
	k.press(kb.Enter)
	ch.waitFocus("save rules", `#summary-edit-rule-1`)

	// The off variation: Edit, Cancel, Edit, Save.
	ch.do("focus Edit off", chromedp.Focus(chromedp.CSS(`#summary-edit-off`)))
	k.press(kb.Enter)
	ch.waitFocus("edit off", `#off-variation`)
	ch.do("focus Cancel", chromedp.Focus(chromedp.CSS(`[data-testid=editor-cancel]`)))
	k.press(kb.Enter)
	ch.waitFocus("cancel off", `#summary-edit-off`)
	k.press(kb.Enter)
	ch.waitFocus("edit off again", `#off-variation`)
	ch.do("focus Save", chromedp.Focus(chromedp.CSS(`[data-testid=off-variation-submit]`)))
	k.press(kb.Enter)
	ch.waitFocus("save off", `#summary-edit-off`)
	ch.waitAnnounced("save off", "Off variation saved.")

	// The segment page: Add rule, Add condition, remove it, save.
	sg := a.makeSegment(env, "Beta testers", "beta")
	ch.do("segment", chromedp.Navigate(a.srv.URL+"/segments/"+sg.ID.String()), chromedp.WaitVisible(chromedp.CSS(`#segment-targeting-rule-add`)),
		chromedp.Focus(chromedp.CSS(`#segment-targeting-rule-add`)))
	k.press(kb.Enter)
	ch.waitFocus("segment rule", `#segment-targeting-rule-0-name`)
	ch.do("focus Add condition", chromedp.Focus(chromedp.CSS(`#segment-targeting-rule-0-cond-add`)))
	k.press(kb.Enter)
	ch.waitFocus("segment condition", `#segment-targeting-rule-0-cond-1-property`)
	ch.waitAnnounced("segment condition", "Condition 2 added to rule 1.")
	ch.do("focus Remove condition", chromedp.Focus(chromedp.CSS(`#edit-rule-1 [aria-label="Remove condition 2"]`)))
	k.press(kb.Enter)
	ch.waitFocus("segment condition removed", `#segment-targeting-rule-0-cond-0-property`)
	// A refused save leaves the keyboard where it was, the problem marked.
	ch.do("focus Save", chromedp.Focus(chromedp.CSS(`#segment-targeting-save`)))
	k.press(kb.Enter)
	ch.do("refused", chromedp.WaitVisible(chromedp.CSS(`#segment-targeting [data-testid=form-error], #segment-main .field-error`)))
	ch.waitFocus("refused", `#segment-targeting-save`)
	ch.do("focus property", chromedp.Focus(chromedp.CSS(`#segment-targeting-rule-0-cond-0-property`)))
	k.typeText("country")
	ch.do("focus value", chromedp.Focus(chromedp.CSS(`#segment-targeting-rule-0-cond-0-value`)))
	k.typeText("NL")
	k.press(kb.Enter)
	ch.waitFocus("segment saved", `#segment-targeting-heading`)
	ch.waitAnnounced("segment saved", "Segment targeting saved.")
	if got := a.segment(env, sg); len(got.Rules) != 1 || len(got.Rules[0].Conditions) != 1 {
		t.Errorf("segment rules %+v", got.Rules)
	}
}

// TestBrowserTargetSuggestions types part of a key into an individual
// target and into a segment's included users: the end users SDKs have seen
// are suggested with key and name; the arrow keys and Enter, or a click,
// take one; saving keeps them. axe finds nothing serious with the list open.
func TestBrowserTargetSuggestions(t *testing.T) {
	t.Parallel()
	ch := headless(t, 120*time.Second)
	a, _, env := flagApp(t)
	a.seeEndUsers(env.ID.String(), [2]string{"vip-1", "Ann Vip"}, [2]string{"vip-2", "Bob Vip"}, [2]string{"alice", "Alice Smith"})
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	field := `#target-` + f.Variations[0].ID
	list := field + `-suggestions [data-testid=user-suggestion]`
	ch.do("desktop", viewport(1280))
	ch.signIn(a.srv.URL, ownerEmail, ownerPassword)
	k := &keyboard{ch: ch}

	ch.do("editor", chromedp.Navigate(a.srv.URL+"/flags/checkout?edit=targeting&part=targets"),
		chromedp.WaitVisible(chromedp.CSS(field)), chromedp.Focus(chromedp.CSS(field)))
	k.typeText("vip")
	ch.do("suggested", chromedp.WaitVisible(chromedp.CSS(list)))
	var shown []string
	must(t, json.Unmarshal([]byte(ch.eval(`JSON.stringify([...document.querySelectorAll(`+fmt.Sprintf("%q", list)+`)].map(o => o.textContent.replace(/\s+/g, " ").trim()))`)), &shown))
	slices.Sort(shown)
	if !slices.Equal(shown, []string{"vip-1 Ann Vip", "vip-2 Bob Vip"}) {
		t.Errorf("suggested %q, want vip-1 Ann Vip and vip-2 Bob Vip", shown)
	}
	axeSerious(ch, "suggestions open")
	first := ch.eval(`document.querySelector(` + fmt.Sprintf("%q", list) + `).dataset.value`)
	k.press(kb.ArrowDown)
	if got := ch.eval(`document.querySelector(` + fmt.Sprintf("%q", field) + `).getAttribute("aria-activedescendant")`); got != `target-`+f.Variations[0].ID+`-suggestions-0` {
		t.Errorf("the field's active option is %q", got)
	}
	k.press(kb.Enter)
	if got := ch.eval(`document.querySelector(` + fmt.Sprintf("%q", field) + `).value`); got != first+"\n" {
		t.Errorf("after choosing by keyboard the field holds %q, want %q", got, first+"\n")
	}
	ch.waitAnnounced("chosen", first+" added.")
	k.typeText("Alice")
	ch.do("click a suggestion", chromedp.WaitVisible(chromedp.CSS(list+`[data-value=alice]`)), chromedp.Click(chromedp.CSS(list+`[data-value=alice]`)))
	if got := ch.eval(`document.querySelector(` + fmt.Sprintf("%q", field) + `).value`); got != first+"\nalice\n" {
		t.Errorf("after clicking the field holds %q", got)
	}
	if ch.eval(`String(document.querySelector(`+fmt.Sprintf("%q", field+"-suggestions")+`).hidden)`) != "true" {
		t.Errorf("the list stays open after choosing")
	}
	ch.do("save", chromedp.Click(chromedp.CSS(`[data-testid=targeting-save]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=targeting-summary]`)))
	if got := a.flag(env, "checkout").TargetUsers; len(got) != 1 || !slices.Equal(got[0].KeyIDs, []string{first, "alice"}) {
		t.Errorf("saved targets %+v, want %s and alice", got, first)
	}

	// A segment's included users suggest the same way.
	sg := a.makeSegment(env, "Beta testers", "beta")
	inc := `#segment-targeting-included`
	ch.do("segment", chromedp.Navigate(a.srv.URL+"/segments/"+sg.ID.String()), chromedp.WaitVisible(chromedp.CSS(inc)), chromedp.Focus(chromedp.CSS(inc)))
	k.typeText("bob")
	ch.do("segment suggested", chromedp.WaitVisible(chromedp.CSS(inc+`-suggestions [data-value="vip-2"]`)))
	k.press(kb.ArrowDown)
	k.press(kb.Enter)
	ch.do("save segment", chromedp.Click(chromedp.CSS(`[data-testid=segment-targeting-save]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash-success]`)))
	if got := a.segment(env, sg).Included; !slices.Equal(got, []string{"vip-2"}) {
		t.Errorf("included %q, want vip-2", got)
	}
}

// axeSerious fails on serious or critical axe-core findings on the page as it is now.
func axeSerious(ch *chrome, state string) {
	ch.t.Helper()
	script, err := json.Marshal(axeScript)
	must(ch.t, err)
	ch.eval(`(function(){ if (!window.axe) { (0, eval)(` + string(script) + `) }; return "ready" })()`)
	result := ch.eval(`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations
		.filter(v => v.impact === "serious" || v.impact === "critical").map(v => v.id + " at " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", "))))`)
	var found []string
	must(ch.t, json.Unmarshal([]byte(result), &found))
	if len(found) > 0 {
		ch.t.Errorf("%s: axe: %s", state, strings.Join(found, "; "))
	}
}
