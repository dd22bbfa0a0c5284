package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/chromedp/chromedp"
)

// step is one thing a new FeatBit user does, checked by the requests it
// makes the UI send and by what the page then shows.
type step struct {
	name  string
	needs []string // steps that must have passed first
	run   func(w *walker) error
}

// walker is the walk's state across steps.
type walker struct {
	*browser
	flagName, flagKey string
	segmentName       string
	relayKey          string // the relay proxy's key, as the dialog showed it once
	reviewerID        string
	reviewerPassword  string
	reviewerAuth      string // the reviewer's Authorization header, to tell their requests apart
	// soft are the step's failures the UI carried on after: a request that
	// failed without stopping what the user did. They fail the step but do
	// not skip the steps after it.
	soft  []error
	shots string // the directory for screenshots of failing steps, or ""
	api   string // the UI's API URL (the recording proxy)
}

// screenshot saves the page as it is, named after the step.
func (w *walker) screenshot(name string) {
	ctx, cancel := context.WithTimeout(w.ctx, w.limit)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		os.MkdirAll(w.shots, 0o755)
		err = os.WriteFile(filepath.Join(w.shots, fileName(name)+".png"), png, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "featbit-ui: screenshot:", err)
	}
}

func (w *walker) note(err error) {
	if err != nil {
		w.soft = append(w.soft, err)
	}
}

const (
	orgName     = "Bunting Walk"
	projectName = "Web shop"
	projectKey  = "web-shop"
)

// steps is the walk, in order.
var steps = []step{
	{name: "sign in", run: signIn},
	{name: "onboarding", needs: []string{"sign in"}, run: onboarding},
	{name: "get started: create a flag", needs: []string{"onboarding"}, run: getStartedFlag},
	{name: "flag list", needs: []string{"get started: create a flag"}, run: flagList},
	{name: "flag details", needs: []string{"get started: create a flag"}, run: flagDetails},
	{name: "save individual targets", needs: []string{"flag details"}, run: saveTargets},
	{name: "save a rule", needs: []string{"flag details"}, run: saveRule},
	{name: "save a rollout", needs: []string{"flag details"}, run: saveRollout},
	{name: "history tab", needs: []string{"flag details"}, run: history},
	{name: "create a segment", needs: []string{"onboarding"}, run: createSegment},
	{name: "use the segment in a flag rule", needs: []string{"create a segment", "flag details"}, run: segmentRule},
	{name: "create a relay proxy", needs: []string{"onboarding"}, run: createRelayProxy},
	{name: "relay proxy list", needs: []string{"create a relay proxy"}, run: listRelayProxy},
	{name: "edit the relay proxy", needs: []string{"relay proxy list"}, run: editRelayProxy},
	{name: "add a second member", needs: []string{"onboarding"}, run: addMember},
	{name: "require approval in the environment", needs: []string{"add a second member"}, run: requireApproval},
	{name: "request a change", needs: []string{"require approval in the environment", "flag details"}, run: requestChange},
	{name: "approve and apply as the second member", needs: []string{"request a change"}, run: approveChange},
	{name: "create a metric", needs: []string{"onboarding"}, run: createMetric},
	{name: "create an experiment", needs: []string{"create a metric", "get started: create a flag"}, run: createExperiment},
	{name: "start the experiment and read its results", needs: []string{"create an experiment"}, run: startExperiment},
}

func signIn(w *walker) error {
	mark := w.rec.count()
	if err := w.open("/login"); err != nil {
		return err
	}
	// The sign-in page asks about SSO and social providers; it shows the
	// password form whatever they answer.
	for _, p := range []string{"/social/providers", "/sso/pre-check"} {
		_, err := w.expect(mark, "GET", p)
		w.note(err)
	}
	if err := w.typeInto("Email", ownerEmail); err != nil {
		return err
	}
	if err := w.typeInto("password", ownerPassword); err != nil {
		return err
	}
	mark = w.rec.count()
	if err := w.click("Login"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "POST", "/identity/login-by-email"); err != nil {
		return err
	}
	_, err := w.expect(mark, "GET", "/user/profile")
	return err
}

func onboarding(w *walker) error {
	// A fresh install's organization is not initialized: the guard sends
	// the new user to FeatBit's onboarding.
	if err := w.waitPath("/onboarding"); err != nil {
		return err
	}
	for _, f := range [][2]string{
		{"Organization name. E.g. FeatBit", orgName},
		{"Project name. E.g. Official website", projectName},
		{"Project key. E.g. official-website", projectKey},
	} {
		if err := w.typeInto(f[0], f[1]); err != nil {
			return err
		}
	}
	mark := w.rec.count()
	if err := w.clickWhenEnabled("Complete"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "POST", "/organizations/onboarding"); err != nil {
		return err
	}
	return w.waitPath("/get-started")
}

func getStartedFlag(w *walker) error {
	w.flagName, w.flagKey = "Checkout flow", "checkout-flow"
	// Onboarding's welcome: the project was made with its environments.
	if err := w.click("Get started"); err != nil {
		return err
	}
	// With no flag yet the creation form shows at once.
	if err := w.typeInto("A human-friendly name for your feature flag", w.flagName); err != nil {
		return err
	}
	mark := w.rec.count()
	if err := w.clickWhenEnabled("Next"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "POST", "/envs/[^/]+/feature-flags"); err != nil {
		return err
	}
	return w.waitText("Connect An SDK")
}

func flagList(w *walker) error {
	mark := w.rec.count()
	if err := w.open("/feature-flags"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "GET", "/envs/[^/]+/feature-flags"); err != nil {
		return err
	}
	return w.waitText(w.flagName)
}

func flagDetails(w *walker) error {
	mark := w.rec.count()
	if err := w.open("/feature-flags/" + w.flagKey + "/targeting"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "GET", "/envs/[^/]+/feature-flags/"+w.flagKey); err != nil {
		return err
	}
	if err := w.waitText("Individual targeting"); err != nil {
		return err
	}
	return w.settle()
}

// saveThroughDialog clicks the targeting page's Save, waits for the review
// dialog's list of changes (which the UI asks the server to compute), and
// saves with a comment; the flag's targeting is then PUT.
func saveThroughDialog(w *walker, comment string) error {
	mark := w.rec.count()
	if err := w.clickMarked("the targeting page's Save", `window.__walk.css("button.save")`); err != nil {
		return err
	}
	_, err := w.expect(mark, "POST", "/envs/[^/]+/audit-logs/compare")
	w.note(err)
	// The dialog draws the list of changes from the answer (and may ask
	// for the segments it names): let it finish before acting in it.
	if err := w.settle(); err != nil {
		return err
	}
	if err := w.typeInto("Please describe your changes for auditing and change tracking purposes...", comment); err != nil {
		return err
	}
	if err := w.clickWhenEnabled("Save changes"); err != nil {
		return fmt.Errorf("the review dialog's Save changes: %w", err)
	}
	_, err = w.expect(mark, "PUT", "/envs/[^/]+/feature-flags/"+w.flagKey+"/targeting")
	return err
}

// expandTargets opens the Individual targeting section, folded while the
// flag has no targets.
func expandTargets(w *walker) error {
	if _, err := w.poll("the Individual targeting section", `window.__walk.has("Individual targeting")`); err != nil {
		return err
	}
	var arrow string
	if err := w.eval(`window.__walk.css('.target-users i[nztype="icons:icon-arrow-right"]')`, &arrow); err != nil {
		return err
	}
	if arrow == "" {
		return nil // unfolded already
	}
	return w.do(chromedp.Click(chromedp.CSS(arrow)))
}

// waitTargeted waits for key to show among a variation's targeted users, as
// a person sees it added before saving: a key nobody had is created first
// (PUT end-users), and the flag holds it only once that is answered.
func waitTargeted(w *walker, key string) error {
	_, err := w.poll(fmt.Sprintf("targeted user %q", key),
		`[...document.querySelectorAll(".selected-target-users .inner-box")].some(e => e.innerText.trim() === `+js(key)+`)`)
	return err
}

func saveTargets(w *walker) error {
	if err := flagDetails(w); err != nil {
		return err
	}
	if err := expandTargets(w); err != nil {
		return err
	}
	// The first variation's target list: search a key nobody has and create it.
	mark := w.rec.count()
	if err := w.choose("Select targeting users", 0, "alice", "alice", true); err != nil {
		return err
	}
	if _, err := w.expect(mark, "POST", "/envs/[^/]+/end-users/search"); err != nil {
		return err
	}
	if err := waitTargeted(w, "alice"); err != nil {
		return err
	}
	return saveThroughDialog(w, "target alice")
}

func saveRule(w *walker) error {
	if err := flagDetails(w); err != nil {
		return err
	}
	if err := w.clickMarked("the add-rule icon", `window.__walk.css('.rule-banner i[nztype="icons:icon-add-outline"]')`); err != nil {
		return err
	}
	if err := w.choose("Select property", 0, "", "name", false); err != nil {
		return err
	}
	if err := w.choose("Select operation", 0, "", "equals", false); err != nil {
		return err
	}
	if err := w.typeInto("input string or number", "bob"); err != nil {
		return err
	}
	if err := w.choose("variation", 0, "", "True", true); err != nil {
		return err
	}
	return saveThroughDialog(w, "rule on name")
}

func saveRollout(w *walker) error {
	if err := flagDetails(w); err != nil {
		return err
	}
	// The default rule serves a variation; make it a 50/50 rollout.
	var box string
	if err := w.eval(`window.__walk.css(".find-rule app-serve nz-select")`, &box); err != nil || box == "" {
		return fmt.Errorf("the default rule's serve select is not there")
	}
	if err := w.do(chromedp.Click(chromedp.CSS(box + " .ant-select-selector"))); err != nil {
		return err
	}
	if err := w.click("Rollout percentage", "nz-option-item, .ant-select-item-option"); err != nil {
		return err
	}
	return saveThroughDialog(w, "half and half")
}

func history(w *walker) error {
	mark := w.rec.count()
	if err := w.open("/feature-flags/" + w.flagKey + "/history"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "GET", "/envs/[^/]+/audit-logs"); err != nil {
		return err
	}
	// The flag's creation is in its history whatever else passed.
	return w.waitText(w.flagName)
}

func createSegment(w *walker) error {
	w.segmentName = "Beta testers"
	mark := w.rec.count()
	if err := w.open("/segments"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "GET", "/envs/[^/]+/segments"); err != nil {
		return err
	}
	if err := w.settle(); err != nil {
		return err
	}
	if err := w.click("Add"); err != nil {
		return err
	}
	if err := w.typeInto("A human-friendly name", w.segmentName); err != nil {
		return err
	}
	mark = w.rec.count()
	if err := w.clickWhenEnabled("Save"); err != nil {
		return err
	}
	_, err := w.expect(mark, "POST", "/envs/[^/]+/segments")
	return err
}

func segmentRule(w *walker) error {
	if err := flagDetails(w); err != nil {
		return err
	}
	if err := w.clickMarked("the add-rule icon", `window.__walk.css('.rule-banner i[nztype="icons:icon-add-outline"]')`); err != nil {
		return err
	}
	if err := w.choose("Select property", 0, "", "User is in segment", false); err != nil {
		return err
	}
	mark := w.rec.count()
	if err := w.choose("segments", 0, "", w.segmentName, true); err != nil {
		return err
	}
	if _, err := w.expect(mark, "GET", "/envs/[^/]+/segments"); err != nil {
		return err
	}
	if err := w.choose("variation", 0, "", "True", true); err != nil {
		return err
	}
	return saveThroughDialog(w, "beta testers")
}

func addMember(w *walker) error {
	mark := w.rec.count()
	if err := w.open("/iam/team"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "GET", "/members"); err != nil {
		return err
	}
	if err := w.click("Add"); err != nil {
		return err
	}
	if err := w.typeInto("Email", reviewerEmail); err != nil {
		return err
	}
	if err := w.choose("Policy", 0, "", "Administrator", true); err != nil {
		return err
	}
	mark = w.rec.count()
	if err := w.clickWhenEnabled("Save"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "POST", "/members/add"); err != nil {
		return err
	}
	// The list, reloaded, shows the new member's first password to the
	// inviter, who hands it over.
	e, err := w.expect(mark, "GET", "/members")
	if err != nil {
		return err
	}
	items, _ := field(e.Answer, "data.items")
	list, _ := items.([]any)
	for _, it := range list {
		m, _ := it.(map[string]any)
		if m["email"] == reviewerEmail {
			w.reviewerID, _ = m["id"].(string)
			w.reviewerPassword, _ = m["initialPassword"].(string)
		}
	}
	if w.reviewerPassword == "" {
		return fmt.Errorf("GET %s?%s lists no initialPassword for %s", e.Path, e.Query, reviewerEmail)
	}
	return w.waitText(w.reviewerPassword)
}

// envPath is the UI's read of the current environment.
var envPath = regexp.MustCompile(`^/api/v1/projects/[^/]+/envs/[^/]+$`)

// requireApproval turns on, for the walk's environment, Bunting's setting
// "changes need approval" with the second member as approver. FeatBit has
// no such setting: its UI offers change requests wherever the licence
// grants them, while Bunting takes a change request only where the
// environment asks for approval (web/README.md, Change requests), set on
// Bunting's environment page or, as here, by the owner through the
// documented PUT /api/v1/projects/{projectId}/envs/{id}, with the
// headers the UI sends.
func requireApproval(w *walker) error {
	var env *exchange
	for _, e := range w.rec.all() {
		if e.Method == "GET" && e.Status == 200 && envPath.MatchString(e.Path) {
			env = e
		}
	}
	if env == nil {
		return fmt.Errorf("the UI read no environment to change")
	}
	data, _ := field(env.Answer, "data")
	cur, _ := data.(map[string]any)
	settings, _ := cur["settings"].(map[string]any)
	body, _ := json.Marshal(map[string]any{
		"name": cur["name"], "key": cur["key"], "description": cur["description"],
		"settings": map[string]any{
			"requireChangeComment": settings["requireChangeComment"],
			"changeRequest": map[string]any{"isEnabled": true, "approvalsRequired": 1,
				"approverMemberIds": []string{w.reviewerID}, "approverGroupIds": []string{}},
		},
	})
	ctx, cancel := context.WithTimeout(w.ctx, w.limit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "PUT", w.api+env.Path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", env.Auth)
	req.Header.Set("Organization", env.Org)
	req.Header.Set("Workspace", env.WS)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	answer, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("PUT %s answered %d %s", env.Path, res.StatusCode, errorCodes(answer))
	}
	if on, _ := field(answer, "data.settings.changeRequest.isEnabled"); on != true {
		return fmt.Errorf("PUT %s left changeRequest.isEnabled %v", env.Path, on)
	}
	return nil
}

func requestChange(w *walker) error {
	if err := flagDetails(w); err != nil {
		return err
	}
	if err := expandTargets(w); err != nil {
		return err
	}
	if err := w.choose("Select targeting users", 1, "carol", "carol", true); err != nil {
		return err
	}
	if err := waitTargeted(w, "carol"); err != nil {
		return err
	}
	mark := w.rec.count()
	if err := w.clickMarked("the targeting page's Save", `window.__walk.css("button.save")`); err != nil {
		return err
	}
	_, err := w.expect(mark, "POST", "/envs/[^/]+/audit-logs/compare")
	w.note(err)
	// The dialog offers the Change Request mode only when the workspace's
	// license (user/workspaces' license) grants change-request.
	if err := w.click("Change Request", "button"); err != nil {
		return fmt.Errorf("the review dialog offers no Change Request mode (the workspace's license must grant change-request): %w", err)
	}
	if err := w.typeInto("Describe why this change is needed", "carol needs it"); err != nil {
		return err
	}
	// The option reads the member's name (name || email): FeatBit names a
	// member added by email after the part before "@", as Bunting does.
	reviewerName, _, _ := strings.Cut(reviewerEmail, "@")
	if err := w.choose("Select reviewers to approve", 0, reviewerName, reviewerName, false); err != nil {
		return err
	}
	// The reviewers select takes several, so its list stays open over the
	// dialog's buttons; a person clicks beside it to close it first.
	if err := w.click("Reviewers", "label"); err != nil {
		return err
	}
	if _, err := w.poll("the reviewers list closed", `![...document.querySelectorAll("nz-option-item")]
		.some(e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; })`); err != nil {
		return err
	}
	if err := w.clickWhenEnabled("Submit request"); err != nil {
		return err
	}
	_, err = w.expect(mark, "POST", "/envs/[^/]+/feature-flags/"+w.flagKey+"/change-requests")
	return err
}

func approveChange(w *walker) error {
	// Sign out, and in as the reviewer with the password the inviter saw.
	// The author's page reloads the flag after the request: let it finish
	// first, or its late callbacks find no environment in the cleared
	// storage (TypeErrors of the walk's making).
	if err := w.settle(); err != nil {
		return err
	}
	if err := w.do(chromedp.Evaluate[chromedp.Void](`localStorage.clear()`)); err != nil {
		return err
	}
	if err := w.open("/login"); err != nil {
		return err
	}
	if err := w.typeInto("Email", reviewerEmail); err != nil {
		return err
	}
	if err := w.typeInto("password", w.reviewerPassword); err != nil {
		return err
	}
	mark := w.rec.count()
	if err := w.click("Login"); err != nil {
		return err
	}
	e, err := w.expect(mark, "POST", "/identity/login-by-email")
	if err != nil {
		return err
	}
	if tok, ok := field(e.Answer, "data.token"); ok {
		w.reviewerAuth = fmt.Sprint("Bearer ", tok)
	}
	// The UI keeps the session and leaves the sign-in page once it has the
	// profile; a person waits for that before going anywhere.
	if _, err := w.poll("leaving the sign-in page", `!window.__walk.path().startsWith("/login")`); err != nil {
		return err
	}
	if err := w.settle(); err != nil {
		return err
	}
	if err := flagDetails(w); err != nil {
		return err
	}
	if err := w.clickMarked("the pending changes button", `window.__walk.css("button.pending-changes")`); err != nil {
		return err
	}
	// The drawer lists the request; its actions (Decline, Approve, Apply)
	// are in the menu under its ellipsis, which stays open after a click.
	if err := w.clickMarked("the pending change's actions", `window.__walk.css("i.more-actions")`); err != nil {
		return err
	}
	mark = w.rec.count()
	if err := w.click("Approve", "li"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "PUT", "/envs/[^/]+/feature-flags/change-requests/[^/]+/approve"); err != nil {
		return err
	}
	mark = w.rec.count()
	if err := w.click("Apply", "li"); err != nil {
		return err
	}
	_, err = w.expect(mark, "PUT", "/envs/[^/]+/feature-flags/change-requests/[^/]+/apply")
	return err
}

// fileName makes a step's name a file name: letters, digits and dashes.
func fileName(s string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, s), "-")
}
