package web_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

func TestSignIn(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.browser()

	// Every page but sign-in needs a session, and sign-in comes back to it.
	b.get("/projects?x=1").status(http.StatusOK).at("/login?next=%2Fprojects%3Fx%3D1").must("login-form")
	b.get("/").at("/login")

	b.post("/login", url.Values{"email": {""}, "password": {""}, "next": {"/projects"}}).status(http.StatusBadRequest)
	if got := b.last.text("error-email"); got != "Enter your email." {
		t.Errorf("email problem %q, want %q", got, "Enter your email.")
	}
	if got := b.last.text("error-password"); got != "Enter your password." {
		t.Errorf("password problem %q, want %q", got, "Enter your password.")
	}

	b.post("/login", url.Values{"email": {ownerEmail}, "password": {"wrong-password"}, "next": {"/workspace"}}).
		status(http.StatusUnauthorized).at("/login")
	if got := b.last.text("form-error"); got != "The email or password is not correct." {
		t.Errorf("form error %q", got)
	}
	if got := attr(input(b.last.must("login-form"), "email"), "value"); got != ownerEmail {
		t.Errorf("email shown again %q, want %q", got, ownerEmail)
	}
	if got := attr(input(b.last.must("login-form"), "next"), "value"); got != "/workspace" {
		t.Errorf("next kept as %q, want /workspace", got)
	}

	b.post("/login", url.Values{"email": {ownerEmail}, "password": {ownerPassword}, "next": {"/workspace"}}).
		status(http.StatusOK).at("/workspace")
	if got := b.last.text("user-email"); got != ownerEmail {
		t.Errorf("signed in as %q, want %q", got, ownerEmail)
	}
	// A signed-in person skips the sign-in page.
	b.get("/login?next=/profile").at("/profile")
}

func TestSignInNextStaysLocal(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	for _, next := range []string{"//evil.example/x", "https://evil.example/", "/\\evil.example", "javascript:alert(1)", "evil"} {
		b := a.browser()
		b.get("/login?next=" + url.QueryEscape(next))
		if got := attr(input(b.last.must("login-form"), "next"), "value"); got != "/" {
			t.Errorf("next %q shown as %q, want /", next, got)
		}
		// The owner's organization has no project yet: the first-run guide greets them.
		b.post("/login", url.Values{"email": {ownerEmail}, "password": {ownerPassword}, "next": {next}}).at("/get-started")
		if b.last.url.Host != strings.TrimPrefix(a.srv.URL, "http://") {
			t.Errorf("next %q led to %s", next, b.last.url)
		}
	}
}

func TestSignInThrottled(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.browser()
	for range 10 {
		b.login(ownerEmail, "wrong-password")
	}
	b.login(ownerEmail, ownerPassword).status(http.StatusTooManyRequests).at("/login")
	if got := b.last.text("form-error"); !strings.Contains(got, "Too many failed attempts") {
		t.Errorf("form error %q, want the throttling message", got)
	}
}

func TestSessionCookie(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		base   string
		secure bool
	}{{"http://bunting.test", false}, {"https://bunting.test", true}} {
		a := newApp(t)
		base, _ := url.Parse(tc.base)
		h := newHandler(base, a.st, slog.New(slog.DiscardHandler))

		get := httptest.NewRequest(http.MethodGet, tc.base+"/login", nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, get)
		page := &page{t: t, code: rec.Code, body: rec.Body.String()}
		page.doc = parse(t, page.body)
		if got := rec.Header().Get("Strict-Transport-Security"); (got != "") != tc.secure {
			t.Errorf("%s: HSTS %q", tc.base, got)
		}

		form := url.Values{"email": {ownerEmail}, "password": {ownerPassword}, "_csrf": {page.csrf()}}
		post := httptest.NewRequest(http.MethodPost, tc.base+"/login", strings.NewReader(form.Encode()))
		post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		post.Header.Set("Referer", tc.base+"/login")
		post.Host = "bunting.test"
		for _, c := range rec.Result().Cookies() {
			post.AddCookie(c)
		}
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, post)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("%s: sign-in got %d, want 303: %s", tc.base, rec.Code, rec.Body)
		}
		var session *http.Cookie
		for _, c := range rec.Result().Cookies() {
			if c.Name == "bunting_session" {
				session = c
			}
		}
		if session == nil {
			t.Fatalf("%s: no session cookie", tc.base)
		}
		if !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Path != "/" ||
			session.Secure != tc.secure || session.MaxAge != 12*60*60 {
			t.Errorf("%s: session cookie %+v, want HttpOnly, SameSite=Lax, Path=/, Secure=%v, Max-Age 12h", tc.base, session, tc.secure)
		}
	}
}

func TestCSRF(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)

	// A form post without the token, or with a forged one, is refused.
	for _, token := range []string{"", "forged"} {
		b.send("/projects", url.Values{"name": {"Web"}, "key": {"web"}, "_csrf": {token}}, nil).status(http.StatusForbidden)
		if got := b.last.text("error-heading"); got != "Form expired" {
			t.Errorf("token %q: heading %q, want the CSRF refusal page", token, got)
		}
	}
	// An htmx request without the header token gets the message in place.
	p := b.send("/projects", url.Values{"name": {"Web"}, "key": {"web"}}, http.Header{"Hx-Request": {"true"}}).status(http.StatusForbidden)
	if !strings.Contains(p.text("flash-error"), "Form expired") || p.header.Get("HX-Reswap") != "none" {
		t.Errorf("htmx refusal: %s %v", p.body, p.header)
	}
	// Sign-in and sign-out need the token too.
	fresh := a.browser()
	fresh.send("/login", url.Values{"email": {ownerEmail}, "password": {ownerPassword}}, nil).status(http.StatusForbidden)
	b.send("/logout", url.Values{}, nil).status(http.StatusForbidden)
	if n := countProjects(a); n != 0 {
		t.Errorf("%d projects created without a token", n)
	}
	// With the token from a page, the same post works; the header works too.
	b.get("/projects")
	b.post("/projects", url.Values{"name": {"Web"}, "key": {"web"}}).status(http.StatusOK).at("/projects")
	b.htmx("/projects", url.Values{"name": {"Shop"}, "key": {"shop"}}).status(http.StatusOK)
	if n := countProjects(a); n != 2 {
		t.Errorf("%d projects, want 2", n)
	}
}

// TestLogout: signing out ends the session on the server, so a copy of the
// cookie taken before signs nobody in; other sessions live on.
func TestLogout(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	other := a.signedIn(ownerEmail, ownerPassword)
	b.get("/profile")
	site, err := url.Parse(a.srv.URL)
	must(t, err)
	cookies := b.client.Jar.Cookies(site)
	if len(cookies) == 0 {
		t.Fatal("no cookie to copy")
	}
	copied := a.browser()
	copied.client.Jar.SetCookies(site, cookies)
	copied.get("/profile").status(http.StatusOK).at("/profile")

	b.post("/logout", nil).status(http.StatusOK).at("/login")
	b.get("/profile").at("/login?next=%2Fprofile")
	copied.get("/profile").status(http.StatusOK).at("/login?next=%2Fprofile")
	// The sign-in page knows the copied cookie's session has ended too.
	replay := a.browser()
	replay.client.Jar.SetCookies(site, cookies)
	replay.get("/login?next=%2Fprofile").status(http.StatusOK).at("/login?next=%2Fprofile")
	other.get("/profile").status(http.StatusOK).at("/profile")
}

func TestPasswordChange(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	other := a.signedIn(ownerEmail, ownerPassword)
	b.get("/profile").status(http.StatusOK)
	if got := b.last.text("profile-email"); got != ownerEmail {
		t.Errorf("profile email %q", got)
	}

	b.post("/profile/password", url.Values{"currentPassword": {"wrong"}, "newPassword": {"new-password"}, "confirmPassword": {"new-password"}}).
		status(http.StatusUnprocessableEntity)
	if got := b.last.text("error-currentPassword"); got != "This is not your current password." {
		t.Errorf("current password problem %q", got)
	}
	b.post("/profile/password", url.Values{"currentPassword": {ownerPassword}, "newPassword": {"short"}, "confirmPassword": {"short"}}).
		status(http.StatusBadRequest)
	if got := b.last.text("error-newPassword"); got != "Use 8 to 72 characters." {
		t.Errorf("new password problem %q", got)
	}

	// The new password is typed twice; two different ones change nothing.
	b.post("/profile/password", url.Values{"currentPassword": {ownerPassword}, "newPassword": {"new-password"}, "confirmPassword": {"new-pasword"}}).
		status(http.StatusBadRequest)
	if got := b.last.text("error-confirmPassword"); got != "The two new passwords differ; type the same one twice." {
		t.Errorf("confirmation problem %q", got)
	}
	a.signedIn(ownerEmail, ownerPassword)

	b.post("/profile/password", url.Values{"currentPassword": {ownerPassword}, "newPassword": {"new-password"}, "confirmPassword": {"new-password"}}).
		status(http.StatusOK).at("/profile")
	if !strings.Contains(b.last.text("flash-success"), "Password changed") {
		t.Errorf("no confirmation: %q", b.last.text("flash-success"))
	}
	// This browser lives on with a new session; every other one has ended.
	b.get("/projects").status(http.StatusOK).at("/projects")
	other.get("/projects").at("/login?next=%2Fprojects")
	a.browser().login(ownerEmail, ownerPassword).status(http.StatusUnauthorized)
	a.signedIn(ownerEmail, "new-password")

	// htmx gets the form region back, and the session stays.
	b.get("/profile")
	p := b.htmx("/profile/password", url.Values{"currentPassword": {"new-password"}, "newPassword": {"newer-password"}, "confirmPassword": {"newer-password"}}).status(http.StatusOK)
	if !p.has("password-form") || !strings.Contains(p.text("flash-success"), "Password changed") || p.has("profile") {
		t.Errorf("htmx answer is not the password region and message: %s", p.body)
	}
	b.get("/profile").status(http.StatusOK).at("/profile")
}

// The profile's name can be changed; a blank or too long one is refused on the field.
func TestProfileName(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := a.signedIn(ownerEmail, ownerPassword)
	p := b.get("/profile").status(http.StatusOK)
	b.post(p.formAction("profile-form"), url.Values{"name": {strings.Repeat("n", 129)}}).status(http.StatusBadRequest)
	if got := b.last.text("error-name"); got == "" || attr(input(b.last.must("profile-form"), "name"), "value") != strings.Repeat("n", 129) {
		t.Errorf("a too long name: problem %q", got)
	}
	b.post("/profile", url.Values{"name": {"Ann Owner"}}).status(http.StatusOK).at("/profile")
	if got := b.last.text("flash-success"); got != "Your name is “Ann Owner” now." {
		t.Errorf("message %q", got)
	}
	if got := attr(input(b.last.must("profile-form"), "name"), "value"); got != "Ann Owner" {
		t.Errorf("name shown %q", got)
	}
	// A form without the name field names nothing to change: refused, the
	// name kept (an empty name would ask for the email's).
	b.post("/profile", url.Values{"nickname": {"x"}}).status(http.StatusBadRequest)
	if got := b.last.text("error-name"); got == "" {
		t.Error("a form without a name: no problem shown on the field")
	}
	if got := attr(input(b.get("/profile").must("profile-form"), "name"), "value"); got != "Ann Owner" {
		t.Errorf("after a form without a name, the name is %q, want it kept", got)
	}
}

func countProjects(a *app) int {
	var n int
	must(a.t, a.pool.QueryRow(a.t.Context(), `SELECT count(*) FROM projects`).Scan(&n))
	return n
}

// TestStrangersFormsAreNotRead: a form posted without a session is sent to
// sign in before a byte of it is read, and the forms a stranger may post
// (signing in) are held to 4 KiB (16 KiB is refused unread), so nobody who has not signed in can
// make the server hold a share of the body budget for a large form.
func TestStrangersFormsAreNotRead(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	post := func(path string, form string) (*httptest.ResponseRecorder, int64) {
		var read atomic.Int64
		req := httptest.NewRequest("POST", path, &countingReader{r: strings.NewReader(form), n: &read})
		req.ContentLength = int64(len(form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		a.srv.Config.Handler.ServeHTTP(rec, req)
		return rec, read.Load()
	}
	rec, read := post("/projects", "name="+strings.Repeat("x", 1<<20-16))
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/login") || read > 0 {
		t.Errorf("a stranger's 1 MiB form: got %d to %q with %d bytes read, want 303 to sign in with none",
			rec.Code, rec.Header().Get("Location"), read)
	}
	if rec, read := post("/login", "email=a&password="+strings.Repeat("p", 16<<10)); rec.Code != http.StatusRequestEntityTooLarge || read > 0 {
		t.Errorf("a sign-in form over 16 KiB: got %d with %d bytes read, want 413 with none", rec.Code, read)
	}
}

// countingReader counts what is read of r.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
