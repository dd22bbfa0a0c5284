package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/net/html"

	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/web/httpx"
)

// TestFormsWithoutTheRightAreNotRead: a signed-in member who lacks the
// right a form needs, posting it with a valid form token, is answered the
// 403 page before a byte of the form is read, on every form whose right
// does not depend on what it says. The policy editor's check and save get
// the form that made the editor build millions of strings: statement 0
// named 4,990 times with as many actions.
func TestFormsWithoutTheRightAreNotRead(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	ctx, owner := t.Context(), a.ownerActor()
	_, err := a.st.Projects().CreateProject(ctx, owner, core.ProjectInput{Name: "Web", Key: "web"})
	must(t, err)
	pr := a.project("web")
	token, err := a.st.Tokens().CreateAccessToken(ctx, owner, accesstokens.AccessTokenInput{Name: "laptop", Type: core.TokenPersonal})
	must(t, err)
	a.addMember("dev@example.com", core.DeveloperPolicyID)
	a.addMember("plain@example.com")
	developer := a.signedIn("dev@example.com", memberPassword)
	plain := a.signedIn("plain@example.com", memberPassword)

	attack := strings.Repeat("st=0&", 4990) + strings.Repeat("st-0-actions=a&", 4990)
	large := "name=" + strings.Repeat("x", 1<<20-512) // under the pages' 1 MiB with the token
	policy := "/policies/" + core.DeveloperPolicyID.String()
	env, secret := envPath(pr, 0), envPath(pr, 0)+"/secrets/"+pr.Environments[0].Secrets[0].ID.String()
	for _, tc := range []struct {
		who  *browser
		path string
		form string
	}{
		{developer, policy + "/check", attack},
		{developer, policy + "/statements", attack},
		{developer, "/policies", large},
		{developer, policy + "/settings", large},
		{developer, "/members", large},
		{developer, "/groups", large},
		{developer, "/webhooks", large},
		{developer, "/workspace", large},
		{developer, "/workspace/sso", large},
		{developer, "/workspace/sso/test", large},
		{developer, "/organization", large},
		{developer, "/organization/delete", large},
		{developer, "/organizations", large},
		{developer, "/projects", large},
		{developer, projectPath(pr), large},
		{developer, projectPath(pr) + "/delete", large},
		{developer, projectPath(pr) + "/envs", large},
		{developer, env, large},
		{developer, env + "/delete", large},
		{developer, env + "/secrets", large},
		{developer, secret, large},
		{developer, secret + "/delete", large},
		{developer, "/access-tokens/" + token.ID.String(), large},
		{developer, "/access-tokens/" + token.ID.String() + "/delete", large},
		{plain, "/access-tokens/" + token.ID.String() + "/toggle", large},
		{plain, "/access-tokens", large},
		{plain, "/flags", large},
		{plain, "/segments", large},
		{plain, "/experiment-metrics", large},
		{plain, "/experiment-metrics/" + uuid.NewString(), large},
		{plain, "/experiment-metrics/" + uuid.NewString() + "/archive", large},
		{plain, "/flags/checkout/experiments", large},
		{plain, "/experiments/" + uuid.NewString() + "/start", large},
		{plain, "/experiments/" + uuid.NewString() + "/stop", large},
		{plain, "/experiments/" + uuid.NewString() + "/archive", large},
		{plain, "/experiments/" + uuid.NewString() + "/archive-data", large},
		{plain, "/get-started/project", large},
		{plain, "/get-started/flag", large},
	} {
		tc.who.get("/profile")
		code, heading, read := tc.who.postCounted(tc.path, "_csrf="+url.QueryEscape(tc.who.last.csrf())+"&"+tc.form)
		if code != http.StatusForbidden || heading != "Not allowed" || read > 0 {
			t.Errorf("POST %s: %d %q with %d bytes read, want the 403 page with none read", tc.path, code, heading, read)
		}
	}
}

// TestPolicyEditorReadsWhatAPolicyMayHold: someone who manages IAM posting
// the editor a form naming one statement twice, more statements than a
// policy may hold, or more actions than there are is told so (400), with
// nothing saved, instead of the editor building every copy.
func TestPolicyEditorReadsWhatAPolicyMayHold(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	pol, err := a.st.IAM().CreatePolicy(t.Context(), a.ownerActor(), iam.PolicyInput{Name: "Readers", Key: "readers"})
	must(t, err)
	path := "/policies/" + pol.ID.String()
	var many strings.Builder
	for i := range 1001 {
		many.WriteString("st=" + strconv.Itoa(i) + "&st-" + strconv.Itoa(i) + "-type=flag&st-" + strconv.Itoa(i) + "-effect=allow&st-" + strconv.Itoa(i) + "-actions=CreateFlag&st-" + strconv.Itoa(i) + "-resources=*&")
	}
	for name, form := range map[string]string{
		"one statement twice":   "st=0&st=0&st-0-type=flag&st-0-effect=allow&st-0-actions=CreateFlag&st-0-resources=*&op=save",
		"1,001 statements":      many.String() + "op=save",
		"an action 100 times":   "st=0&st-0-type=flag&st-0-effect=allow&" + strings.Repeat("st-0-actions=CreateFlag&", 100) + "st-0-resources=*&op=save",
		"the attack, as owner":  strings.Repeat("st=0&", 4990) + strings.Repeat("st-0-actions=a&", 4990) + "op=save",
		"a check of 1,001 ones": many.String() + "action=CreateFlag&resource=x",
	} {
		b.get(path)
		target := path + "/statements"
		if strings.HasPrefix(name, "a check") {
			target = path + "/check"
		}
		code, heading, _ := b.postCounted(target, "_csrf="+url.QueryEscape(b.last.csrf())+"&"+form)
		// The attack's 9,981 fields are past what any form may post: refused
		// by the one body reader before the editor sees them.
		want, wantHeading := http.StatusBadRequest, "Invalid request"
		if strings.Count(form, "&") >= httpx.MaxFormFields {
			want, wantHeading = http.StatusRequestEntityTooLarge, "Too many fields"
		}
		if code != want || heading != wantHeading {
			t.Errorf("%s: %d %q, want %d %s", name, code, heading, want, wantHeading)
		}
	}
	got, err := a.st.IAM().GetPolicy(t.Context(), a.ownerActor(), pol.ID)
	must(t, err)
	if len(got.Statements) != 0 {
		t.Errorf("the policy holds %d statements after refused saves, want none", len(got.Statements))
	}
}

// postCounted posts a form through the handler itself (a server would read
// the rest of an unread body to reuse the connection) with the browser's
// cookies, and returns the status, the error page's heading and how many
// bytes of the form were read.
func (b *browser) postCounted(path, form string) (int, string, int64) {
	b.t.Helper()
	var read atomic.Int64
	req := httptest.NewRequest(http.MethodPost, path, &countingReader{r: strings.NewReader(form), n: &read})
	req.ContentLength = int64(len(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	base, err := url.Parse(b.app.srv.URL)
	must(b.t, err)
	for _, c := range b.client.Jar.Cookies(base) {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	b.app.srv.Config.Handler.ServeHTTP(rec, req)
	doc, err := html.Parse(strings.NewReader(rec.Body.String()))
	must(b.t, err)
	p := &page{t: b.t, code: rec.Code, body: rec.Body.String(), doc: doc}
	return rec.Code, p.text("error-heading"), read.Load()
}
