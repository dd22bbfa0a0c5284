package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// chrome is a headless Chromium driven for one test, with the launch flags
// and console watch of TestBrowser.
type chrome struct {
	t        *testing.T
	ctx      context.Context
	mu       sync.Mutex
	problems []string
}

// browsers bounds how many Chromiums the parallel tests run at once: each is
// several processes and hundreds of megabytes, and a test's timeout starts
// only once it has its turn. One at a time: with two beside the other
// parallel tests on a 2-core machine, a page load once outlasted a test's
// 10 s wait in a CI run; the other web tests still run in parallel.
var browsers = make(chan struct{}, 1)

// headless starts Chromium; CSP violations and script errors it reports fail
// the test at its end.
func headless(t *testing.T, timeout time.Duration) *chrome {
	t.Helper()
	bin := chromium(t)
	browsers <- struct{}{}
	t.Cleanup(func() { <-browsers }) // registered first, so it runs after the browser has closed
	allocCtx, cancel := chromedp.NewExecAllocator(t.Context(),
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, timeout)
	t.Cleanup(cancel)
	b := &chrome{t: t, ctx: ctx}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || strings.Contains(m.Text, "Content Security Policy") || strings.Contains(m.Text, "Refused to") {
				b.mu.Lock()
				b.problems = append(b.problems, m.String())
				b.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, p := range b.problems {
			t.Errorf("browser console: %s", p)
		}
	})
	return b
}

func (b *chrome) do(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", step, err)
	}
}

func (b *chrome) eval(js string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

func (b *chrome) value(sel string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Value(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("value of %s: %v", sel, err)
	}
	return v
}

// signIn signs in through the sign-in page and waits for the signed-in shell.
func (b *chrome) signIn(base, email, password string) {
	b.t.Helper()
	b.do("sign in as "+email,
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-form]`)),
		chromedp.SendKeys(chromedp.CSS(`#login-email`), email),
		chromedp.SendKeys(chromedp.CSS(`#login-password`), password),
		chromedp.Click(chromedp.CSS(`[data-testid=login-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=user-email]`)),
	)
}

// shoot saves screenshots of the page at path at desktop and phone widths,
// into $BUNTING_SCREENSHOTS when set, and fails when the page scrolls sideways.
func (b *chrome) shoot(base, path, name, ready string) {
	b.t.Helper()
	dir := os.Getenv("BUNTING_SCREENSHOTS")
	for _, width := range []int64{1280, 390} {
		viewport := chromedp.EmulateViewport(width, 900)
		if width < 600 {
			viewport = chromedp.EmulateViewport(width, 844, chromedp.EmulateMobile, chromedp.EmulatePortrait)
		}
		b.do(name, viewport, chromedp.Navigate(base+path), chromedp.WaitVisible(chromedp.CSS(ready)))
		if overflow := b.eval(`String(document.documentElement.scrollWidth > document.documentElement.clientWidth)`); overflow != "false" {
			b.t.Errorf("%s scrolls sideways at %d px", path, width)
		}
		if dir == "" {
			continue
		}
		var height int64
		fmt.Sscan(b.eval(`String(document.documentElement.scrollHeight)`), &height)
		full := chromedp.EmulateViewport(width, height)
		if width < 600 {
			full = chromedp.EmulateViewport(width, height, chromedp.EmulateMobile, chromedp.EmulatePortrait)
		}
		b.do("fit the viewport", full)
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		must(b.t, err)
		must(b.t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, width)), png, 0o644))
	}
	b.do("desktop again", chromedp.EmulateViewport(1280, 900))
}

// TestBrowserIAM drives the IAM pages in headless Chromium: edit a policy's
// statements and save them, clone the policy, add a member and read their
// initial password, then sign in as that member (a Developer) and find the
// restricted controls missing and a forbidden action refused.
func TestBrowserIAM(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	ctx := t.Context()
	owner := a.ownerActor()
	_, err := a.st.Projects().CreateProject(ctx, owner, core.ProjectInput{Name: "Web shop", Key: "web-shop"})
	must(t, err)
	pol, err := a.st.IAM().CreatePolicy(ctx, owner, iam.PolicyInput{Name: "Flag editors", Key: "flag-editors", Description: "Edits flags in production."})
	must(t, err)
	b := headless(t, 120*time.Second)
	base := a.srv.URL
	b.do("viewport", chromedp.EmulateViewport(1280, 900))
	b.signIn(base, ownerEmail, ownerPassword)

	// A new policy's key is suggested from its name and checked as it is typed.
	b.do("type a policy name",
		chromedp.Navigate(base+"/policies"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=policy-create]`)),
		chromedp.SendKeys(chromedp.CSS(`#policy-create-name`), "Flag editors"),
		chromedp.WaitVisible(chromedp.CSS(`#policy-create-key-check.used`)),
	)
	if got := b.value(`#policy-create-key`); got != "flag-editors" {
		t.Errorf("suggested key %q, want flag-editors", got)
	}

	// Edit the statements: add one, change its type back and forth, tick
	// actions, build a pattern with the helper, type another, save.
	editor := `[data-testid=statement-editor]`
	b.do("open the policy",
		chromedp.Navigate(base+"/policies/"+pol.ID.String()),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=no-statements]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=statement-add]`)),
		chromedp.WaitVisible(chromedp.CSS(editor+` [data-testid=statement]`)),
	)
	changeType := func(to, wantAction string) {
		t.Helper()
		b.eval(`(() => { const s = document.querySelector('[data-testid=statement-type]'); s.value = '` + to + `';
			s.dispatchEvent(new Event('change', {bubbles: true})); return "" })()`)
		b.do("type "+to, chromedp.WaitVisible(chromedp.CSS(`[data-testid=statement-action][value=`+wantAction+`]`)))
	}
	changeType("segment", "CreateSegment")
	changeType("flag", "UpdateFlagName")
	if n := b.eval(`String(document.querySelectorAll('[data-testid=statement-problem]').length)`); n != "0" {
		t.Errorf("changing the type tried to save the statements")
	}
	b.do("tick actions, build a pattern",
		chromedp.Click(chromedp.CSS(`[data-testid=statement-action][value=UpdateFlagName]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=statement-action][value=ToggleFlag]`)),
		chromedp.SetValue(chromedp.CSS(`[data-testid=resource-scope]`), "project/web-shop:env/prod:flag/*"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=resource-tags]`), "beta, team-a"),
		chromedp.Click(chromedp.CSS(`[data-testid=resource-add]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=statement-resource]`)),
	)
	if got := b.value(`[data-testid=statement-resource]`); got != "project/web-shop:env/prod:flag/*;beta,team-a" {
		t.Errorf("built pattern %q", got)
	}
	if got := b.eval(`String(document.querySelector('[data-testid=statement-action][value=ToggleFlag]').checked)`); got != "true" {
		t.Errorf("the ticked action was lost when the pattern was added")
	}
	b.do("type a pattern and save",
		chromedp.SendKeys(chromedp.CSS(`[data-testid=statement-resource-new]`), "project/web-shop:env/dev:flag/*"),
		chromedp.Click(chromedp.CSS(`[data-testid=statements-save]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash-success]`)),
	)
	saved, err := a.st.IAM().GetPolicy(ctx, owner, pol.ID)
	must(t, err)
	if len(saved.Statements) != 1 {
		t.Fatalf("saved %d statements, want 1: %+v", len(saved.Statements), saved.Statements)
	}
	st := saved.Statements[0]
	if st.ResourceType != "flag" || st.Effect != "allow" || !slices.Equal(st.Actions, []string{"ToggleFlag", "UpdateFlagName"}) ||
		!slices.Equal(st.Resources, []string{"project/web-shop:env/prod:flag/*;beta,team-a", "project/web-shop:env/dev:flag/*"}) {
		t.Errorf("saved statement %+v", st)
	}
	b.shoot(base, "/policies/"+pol.ID.String(), "policy-editor", `[data-testid=statement]`)

	// A statement without actions is refused, and the statement is marked.
	b.do("refuse an empty statement",
		chromedp.Navigate(base+"/policies/"+pol.ID.String()),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=statement]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=statement-add]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=statement][data-index="1"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=statements-save]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=statement][data-index="1"] [data-testid=statement-problem]`)),
	)

	// Clone it: the key is suggested from the new name.
	b.do("clone",
		chromedp.Navigate(base+"/policies/"+pol.ID.String()),
		chromedp.Click(chromedp.CSS(`[data-testid=policy-clone]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=policy-clone-form]`)),
		chromedp.Clear(chromedp.CSS(`#policy-clone-name`)),
		chromedp.Clear(chromedp.CSS(`#policy-clone-key`)),
		chromedp.SendKeys(chromedp.CSS(`#policy-clone-name`), "Flag editors EU"),
	)
	if got := b.value(`#policy-clone-key`); got != "flag-editors-eu" {
		t.Errorf("suggested clone key %q", got)
	}
	b.do("create the clone",
		chromedp.Click(chromedp.CSS(`[data-testid=policy-clone-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=policy-heading]`)),
	)
	if got := b.eval(`document.querySelector('[data-testid=policy-heading]').textContent.trim()`); got != "Flag editors EU" {
		t.Errorf("after cloning the page shows %q", got)
	}
	if n := b.eval(`String(document.querySelectorAll('[data-testid=statement]').length)`); n != "1" {
		t.Errorf("the clone shows %s statements, want 1", n)
	}

	// Add a member with the Developer policy; the initial password is shown once.
	b.do("add a member",
		chromedp.Navigate(base+"/members"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=member-add]`)),
		chromedp.SendKeys(chromedp.CSS(`#member-add-email`), "dev@example.com"),
		chromedp.Click(chromedp.CSS(`[data-testid=member-add-access] summary`)),
		chromedp.Click(chromedp.CSS(`[data-testid=member-add-policies] input[value="`+core.DeveloperPolicyID.String()+`"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=member-add-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=initial-password]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=member-row][data-email="dev@example.com"]`)),
	)
	password := b.value(`[data-testid=initial-password]`)
	if len(password) != 16 {
		t.Fatalf("initial password %q", password)
	}
	for _, email := range []string{"ana@example.com", "bo@example.com", "chen@example.com"} {
		_, err := a.st.IAM().AddMember(ctx, owner, iam.MemberInput{Email: email})
		must(t, err)
	}
	b.shoot(base, "/members", "members", `[data-testid=member-list]`)
	b.shoot(base, "/members/"+memberID(t, a, "dev@example.com"), "member", `[data-testid=member-groups]`)

	// A Service token is created with the same editor.
	b.do("create a Service token",
		chromedp.Navigate(base+"/access-tokens"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=token-create]`)),
		chromedp.SendKeys(chromedp.CSS(`#token-create-name`), "ci"),
		chromedp.SetValue(chromedp.CSS(`#token-create-type`), "Service"),
	)
	b.eval(`(() => { document.querySelector('#token-create-type').dispatchEvent(new Event('change', {bubbles: true})); return "" })()`)
	b.do("fill its statement",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=token-permissions] [data-testid=statement]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=token-permissions] [data-testid=statement-action][value=ToggleFlag]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=token-permissions] [data-testid=resource-add]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=token-permissions] [data-testid=statement-resource]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=token-create-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=token-value]`)),
	)
	tokens, err := a.st.Tokens().ListAccessTokens(ctx, owner, accesstokens.AccessTokenFilter{Name: "ci", Page: core.Page{Size: 10}})
	must(t, err)
	if len(tokens.Items) != 1 || len(tokens.Items[0].Permissions) != 1 ||
		!slices.Equal(tokens.Items[0].Permissions[0].Resources, []string{"project/*:env/*:flag/*"}) {
		t.Errorf("Service token %+v", tokens.Items)
	}

	// The other IAM pages fit a phone too.
	g, err := a.st.IAM().CreateGroup(ctx, owner, iam.GroupInput{Name: "Release team", Description: "Ships the web shop."})
	must(t, err)
	tok, err := a.st.Tokens().CreateAccessToken(ctx, owner, accesstokens.AccessTokenInput{Name: "deploy", Type: core.TokenService, Permissions: saved.Statements})
	must(t, err)
	for name, path := range map[string]string{
		"groups":       "/groups",
		"group":        "/groups/" + g.ID.String() + "?mall=true",
		"policies":     "/policies",
		"policy-owner": "/policies/" + core.OwnerPolicyID.String(),
		"organization": "/organization",
		"token":        "/access-tokens/" + tok.ID.String(),
	} {
		b.shoot(base, path, name, `main`)
	}

	// Sign out, sign in as the new member.
	b.do("sign out",
		chromedp.Click(chromedp.CSS(`[data-testid=logout]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-form]`)),
	)
	b.signIn(base, "dev@example.com", password)
	b.do("open the projects", chromedp.Navigate(base+"/projects"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=project-list]`)))
	for _, id := range []string{"nav-members", "nav-groups", "nav-policies", "nav-organization", "project-create"} {
		if n := b.eval(`String(document.querySelectorAll('[data-testid=` + id + `]').length)`); n != "0" {
			t.Errorf("a Developer is offered %s", id)
		}
	}
	b.do("open the project",
		chromedp.Click(chromedp.CSS(`[data-testid=project-name]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=env-list]`)),
	)
	for _, id := range []string{"project-delete", "env-delete", "env-create", "project-rename"} {
		if n := b.eval(`String(document.querySelectorAll('[data-testid=` + id + `]').length)`); n != "0" {
			t.Errorf("a Developer is offered %s", id)
		}
	}

	// Posting a forbidden action anyway is refused with the 403 page.
	got := b.eval(`(async () => {
		const body = new URLSearchParams({email: "intruder@example.com"});
		const r = await fetch("/members", {method: "POST", body,
			headers: {"X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content}});
		const page = new DOMParser().parseFromString(await r.text(), "text/html");
		return r.status + " " + page.querySelector('[data-testid=error-heading]').textContent;
	})()`)
	if got != "403 Not allowed" {
		t.Errorf("a Developer adding a member: got %q, want 403 Not allowed", got)
	}
	b.do("open a policy by its address",
		chromedp.Navigate(base+"/policies/"+pol.ID.String()),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=error-heading]`)),
	)
	if got := b.eval(`document.querySelector('[data-testid=error-heading]').textContent`); got != "Not allowed" {
		t.Errorf("a Developer opening a policy sees %q", got)
	}
	if _, err := a.q.GetUserByEmail(ctx, "intruder@example.com"); err == nil {
		t.Errorf("the Developer's forbidden post added a member")
	}
}
