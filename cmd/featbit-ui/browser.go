package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
)

// browser is headless Chromium on the UI, with what it has logged.
type browser struct {
	ctx   context.Context
	ui    string // the UI's origin
	rec   *recorder
	limit time.Duration // how long a step waits for the page or a request

	mu      sync.Mutex
	console []consoleError
	step    string
}

// consoleError is an error the page logged or threw.
type consoleError struct {
	Step string `json:"step"`
	Text string `json:"text"`
}

func newBrowser(parent context.Context, bin, ui string, rec *recorder) (*browser, context.CancelFunc) {
	alloc, cancelAlloc := chromedp.NewExecAllocator(parent,
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.WindowSize(1440, 1000),
	)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	b := &browser{ctx: ctx, ui: ui, rec: rec, limit: 20 * time.Second}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				text := m.Text
				if m.IsException() {
					text = "uncaught: " + text
				}
				b.logError(text)
			}
		}
	}()
	return b, func() { cancelCtx(); cancelAlloc() }
}

func (b *browser) logError(text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// The first lines say what and where; a stack trace's tail does not.
	if lines := strings.SplitN(text, "\n", 4); len(lines) > 3 {
		text = strings.Join(lines[:3], "\n") + " …"
	}
	b.console = append(b.console, consoleError{Step: b.step, Text: text})
}

func (b *browser) setStep(name string) {
	b.mu.Lock()
	b.step = name
	b.mu.Unlock()
	b.rec.setStep(name)
}

func (b *browser) errors() []consoleError {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]consoleError(nil), b.console...)
}

// helpers are the page-side functions the walk calls: they find what a
// person would look for (a button's label, an input's placeholder, a
// select's placeholder) among the visible elements, the last one first, as
// modals and drawers are appended to the end of the page.
const helpers = `(() => {
  if (window.__walk) return;
  const visible = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'; };
  const text = e => (e.innerText || e.textContent || '').trim().replace(/\s+/g, ' ');
  let n = 0;
  const mark = e => { if (!e) return ''; n++; e.setAttribute('data-walk', n); return '[data-walk="' + n + '"]'; };
  const scope = s => s ? [...document.querySelectorAll(s)].filter(visible).pop() : document;
  window.__walk = {
    has: t => document.body && document.body.innerText.includes(t),
    // byText marks the last visible element matching sel whose text is t
    // (or, when partial, contains it), preferring the innermost.
    byText: (t, sel, partial, within) => {
      const root = scope(within); if (!root) return '';
      const all = [...root.querySelectorAll(sel || 'button, a, li, span, div, label, nz-option-item, .ant-select-item-option')]
        .filter(e => visible(e) && (partial ? text(e).includes(t) : text(e) === t));
      const inner = all.filter(e => !all.some(o => o !== e && e.contains(o)));
      return mark(inner.pop());
    },
    input: (ph, within) => {
      const root = scope(within); if (!root) return '';
      return mark([...root.querySelectorAll('input, textarea')].filter(e => visible(e) && e.placeholder === ph).pop());
    },
    // field marks the input of the form item whose label reads label, as a
    // person finds a box with no placeholder by the label above it.
    field: (label, within) => {
      const root = scope(within); if (!root) return '';
      const item = [...root.querySelectorAll('nz-form-item')].filter(e => visible(e) &&
        [...e.querySelectorAll('nz-form-label')].some(l => text(l) === label)).pop();
      return mark(item && [...item.querySelectorAll('input, textarea')].filter(visible)[0]);
    },
    clear: s => { const e = document.querySelector(s); if (!e) return false; e.focus(); e.select && e.select(); return true; },
    // select marks the visible nz-select whose placeholder (or current
    // label) reads t: its selector box, to open it.
    select: (t, within, nth) => {
      const root = scope(within); if (!root) return '';
      const all = [...root.querySelectorAll('nz-select')].filter(e => visible(e) &&
        [...e.querySelectorAll('.ant-select-selection-placeholder, .ant-select-selection-item')].some(p => text(p) === t));
      return mark(all[nth || 0] && all[nth || 0].querySelector('.ant-select-selector'));
    },
    selectInput: s => { const e = document.querySelector(s); const sel = e && e.closest('nz-select'); return mark(sel && sel.querySelector('input')); },
    css: (s, within) => { const root = scope(within); return mark(root && [...root.querySelectorAll(s)].filter(visible).pop()); },
    enabled: s => { const e = document.querySelector(s); return !!e && !e.disabled && !e.closest('[disabled]'); },
    path: () => location.pathname + location.search,
  };
})()`

// do runs actions, each call bounded by the step limit: an action whose
// element went away would otherwise wait for ever.
func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(b.ctx, b.limit)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// eval runs expr after the helpers, into out.
func (b *browser) eval(expr string, out any) error {
	ctx, cancel := context.WithTimeout(b.ctx, b.limit)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](helpers)); err != nil {
		return err
	}
	v, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr))
	if err != nil {
		return err
	}
	if len(v) == 0 || out == nil {
		return nil
	}
	return json.Unmarshal(v, out)
}

// js quotes values for an expression.
func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// poll evaluates expr until it gives a non-empty string or true, for the
// step's limit; what names the wait in the error.
func (b *browser) poll(what, expr string) (string, error) {
	deadline := time.Now().Add(b.limit)
	for {
		var v any
		err := b.eval(expr, &v)
		if err == nil {
			switch v := v.(type) {
			case string:
				if v != "" {
					return v, nil
				}
			case bool:
				if v {
					return "", nil
				}
			}
		}
		if time.Now().After(deadline) {
			var path string
			b.eval(`window.__walk.path()`, &path)
			if err != nil {
				return "", fmt.Errorf("%s: %v (page %s)", what, err, path)
			}
			return "", fmt.Errorf("%s: not there after %s (page %s)", what, b.limit, path)
		}
		select {
		case <-b.ctx.Done():
			return "", b.ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (b *browser) open(path string) error {
	return b.do(chromedp.Navigate(b.ui + path))
}

func (b *browser) waitText(t string) error {
	_, err := b.poll(fmt.Sprintf("text %q", t), `window.__walk.has(`+js(t)+`)`)
	return err
}

func (b *browser) waitPath(prefix string) error {
	_, err := b.poll("page "+prefix, `window.__walk.path().startsWith(`+js(prefix)+`)`)
	return err
}

// click clicks, with the mouse, the element the page-side expression marks.
func (b *browser) clickMarked(what, expr string) error {
	sel, err := b.poll(what, expr)
	if err != nil {
		return err
	}
	return b.onMarked(what, expr, sel, func(sel string) chromedp.Action[chromedp.Void] {
		return chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)
	})
}

// onMarked runs act on the element sel, which expr marked. Angular may
// re-render the element between the mark and the action (a component
// re-created when its input changes); the action would then wait for ever
// on a node that is gone. A person would act on the new element: so when
// the marked node leaves the page, onMarked marks it again and retries.
func (b *browser) onMarked(what, expr, sel string, act func(sel string) chromedp.Action[chromedp.Void]) error {
	deadline := time.Now().Add(b.limit)
	for {
		// A dialog zooming in or a panel unfolding moves what is under the
		// pointer: act once Angular's animations are over.
		if _, err := b.poll("the page's animations to end", `!document.querySelector(".ng-animating")`); err != nil {
			return err
		}
		ctx, cancel := context.WithDeadline(b.ctx, deadline)
		done := make(chan error, 1)
		go func() { done <- chromedp.Do(ctx, act(sel)) }()
		gone := false
	wait:
		for {
			select {
			case err := <-done:
				cancel()
				if err != nil && !gone {
					// The node may have left while the action ran ("Could not
					// find node"): that is the same re-render.
					var there bool
					gone = b.eval(`!!document.querySelector(`+js(sel)+`)`, &there) == nil && !there
				}
				if err != nil && gone {
					break wait
				}
				if err != nil {
					return fmt.Errorf("%s: %w", what, err)
				}
				return nil
			case <-time.After(300 * time.Millisecond):
				var there bool
				if b.eval(`!!document.querySelector(`+js(sel)+`)`, &there) == nil && !there {
					gone = true
					cancel()
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: the element kept going away for %s", what, b.limit)
		}
		var err error
		if sel, err = b.poll(what, expr); err != nil {
			return err
		}
	}
}

// click clicks the last visible button (or, with sel, element) labelled t.
func (b *browser) click(t string, sel ...string) error {
	s := "button"
	if len(sel) > 0 {
		s = sel[0]
	}
	return b.clickMarked(fmt.Sprintf("%s %q", s, t), `window.__walk.byText(`+js(t)+`, `+js(s)+`)`)
}

// clickWhenEnabled waits for the button labelled t to be enabled, then clicks it.
func (b *browser) clickWhenEnabled(t string) error {
	sel, err := b.poll(fmt.Sprintf("button %q", t), `window.__walk.byText(`+js(t)+`, "button")`)
	if err != nil {
		return err
	}
	if _, err := b.poll(fmt.Sprintf("button %q enabled", t), `window.__walk.enabled(`+js(sel)+`)`); err != nil {
		return err
	}
	return b.onMarked(fmt.Sprintf("button %q", t), `window.__walk.byText(`+js(t)+`, "button")`, sel, func(sel string) chromedp.Action[chromedp.Void] {
		return chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)
	})
}

// typeInto types v, with the keyboard, into the input whose placeholder is ph,
// replacing what it held.
func (b *browser) typeInto(ph, v string) error {
	return b.typeMarked(fmt.Sprintf("input %q", ph), `window.__walk.input(`+js(ph)+`)`, v)
}

// typeIntoField types v into the input of the form item labelled label,
// replacing what it held.
func (b *browser) typeIntoField(label, v string) error {
	return b.typeMarked(fmt.Sprintf("field %q", label), `window.__walk.field(`+js(label)+`)`, v)
}

// typeMarked types v, with the keyboard, into the input expr marks.
func (b *browser) typeMarked(what, expr, v string) error {
	sel, err := b.poll(what, expr)
	if err != nil {
		return err
	}
	return b.onMarked(what, expr, sel, func(sel string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
			// Select-all then type: the keyboard replaces the selection, as a person's would.
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](`window.__walk.clear(`+js(sel)+`)`)); err != nil {
				return chromedp.Void{}, err
			}
			return chromedp.Void{}, chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(sel), "\b"), chromedp.SendKeys(chromedp.CSS(sel), v))
		}
	})
}

// choose opens the select showing placeholder (the nth such, from 0),
// types search into it when given, and picks the option reading option
// (partial: containing it).
func (b *browser) choose(placeholder string, nth int, search, option string, partial bool) error {
	what, expr := fmt.Sprintf("select %q", placeholder), `window.__walk.select(`+js(placeholder)+`, "", `+js(nth)+`)`
	box, err := b.poll(what, expr)
	if err != nil {
		return err
	}
	if err := b.onMarked(what, expr, box, func(sel string) chromedp.Action[chromedp.Void] {
		box = sel
		return chromedp.Click(chromedp.CSS(sel))
	}); err != nil {
		return err
	}
	if search != "" {
		in, err := b.poll("the select's search box", `window.__walk.selectInput(`+js(box)+`)`)
		if err != nil {
			return err
		}
		if err := b.do(chromedp.SendKeys(chromedp.CSS(in), search)); err != nil {
			return err
		}
	}
	if err := b.clickMarked(fmt.Sprintf("option %q", option),
		`window.__walk.byText(`+js(option)+`, "nz-option-item, .ant-select-item-option", `+js(partial)+`)`); err != nil {
		return err
	}
	return b.settle()
}

// settle waits until Angular has nothing pending: no timer (a component's
// debounce after a choice) and no request. A person's pace gives the page
// that time between two actions; a walk faster than the page sees it undo
// a choice (FeatBit's rule re-emits its condition 500ms after a property is
// chosen, as it was then) or close a dialog opened during a late start-up.
func (b *browser) settle() error {
	ctx, cancel := context.WithTimeout(b.ctx, b.limit)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`new Promise(done => {
		const ts = window.getAllAngularTestabilities ? window.getAllAngularTestabilities() : [];
		let n = ts.length;
		if (!n) return done(true);
		ts.forEach(t => t.whenStable(() => { if (--n === 0) done(true); }));
	})`, chromedp.EvalAwaitPromise))
	if err != nil && ctx.Err() != nil && b.ctx.Err() == nil {
		return fmt.Errorf("the page kept working for %s (Angular never stable)", b.limit)
	}
	return err
}

// expect waits for the UI to send a request matching method and the path
// pattern (after mark, the number of exchanges seen before the action) and
// returns its exchange; a 4xx or 5xx answer is an error naming it.
func (b *browser) expect(mark int, method, pattern string) (*exchange, error) {
	re := regexp.MustCompile(`^/api/v[12]` + pattern + `$`)
	deadline := time.After(b.limit)
	for {
		seen, changed := b.rec.since(mark)
		for _, e := range seen {
			if e.Method == method && re.MatchString(e.Path) {
				if e.Status >= 400 {
					return e, fmt.Errorf("%s %s answered %d %s", e.Method, e.Path, e.Status, errorCodes(e.Answer))
				}
				return e, nil
			}
		}
		select {
		case <-changed:
		case <-deadline:
			return nil, fmt.Errorf("the UI sent no %s %s within %s", method, pattern, b.limit)
		case <-b.ctx.Done():
			return nil, b.ctx.Err()
		}
	}
}

// errorCodes gives the envelope's error codes of an answer, for messages.
func errorCodes(answer json.RawMessage) string {
	var env struct {
		Errors []string `json:"errors"`
	}
	if json.Unmarshal(answer, &env) == nil && len(env.Errors) > 0 {
		return strings.Join(env.Errors, ", ")
	}
	return ""
}

// field reads a dotted path (data.items.0.id) from an exchange's answer.
func field(answer json.RawMessage, path string) (any, bool) {
	var v any
	if json.Unmarshal(answer, &v) != nil {
		return nil, false
	}
	return lookup(v, path)
}
