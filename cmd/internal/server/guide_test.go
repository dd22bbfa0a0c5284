package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/web/sdk"
	"github.com/bunting-flags/bunting/web/sdk/sdktest"
)

// nodeClients is the npm project of FeatBit's and OpenFeature's published
// clients, pinned by its package-lock.json (make sdk-clients installs it).
const nodeClients = "../../../web/sdk/testdata/node"

// TestGuideSnippetsRun pastes the first-run guide's snippets as a newcomer
// would and runs them with the real npm clients against this server: each
// prints what the flag serves the snippet's user, and the guide's live check
// turns to Received. The pages print the snippets and the SDK endpoints
// answer them, so it needs the whole server. Without node or the installed
// clients it is skipped, except under CI=true, where it fails.
func TestGuideSnippetsRun(t *testing.T) {
	node := sdktest.Node(t, nodeClients)
	t.Parallel()
	s := newSite(t)
	s.listen()
	// The snippets connect to the server's own address, as a deployment's do.
	srv := httptest.NewUnstartedServer(nil)
	srv.Start()
	t.Cleanup(srv.Close)
	base, _ := url.Parse(srv.URL)
	srv.Config.Handler, _ = server.NewHandler(server.Config{BaseURL: base}, s.st, slog.New(slog.DiscardHandler), sdk.Options{})

	b := signIn(t, srv.URL)
	b.post("/organizations", url.Values{"name": {"Acme"}, "key": {"acme"}}).at("/get-started")
	b.post("/get-started/project", url.Values{"projectName": {"Shop"}, "projectKey": {"shop"}, "environments": {"Dev, Prod"}}).at("/get-started")
	b.post("/get-started/flag", url.Values{"name": {"New checkout"}, "key": {"new-checkout"}}).at("/get-started")
	if got := b.get("/get-started/check").text("guide-check-state"); got != "Waiting for the first evaluation…" {
		t.Fatalf("check before any snippet ran: %q", got)
	}

	// What the flag serves the snippets' user, by Bunting's own engine.
	served := s.guideFlag(t, "acme", "new-checkout", "user-1")
	want := "new-checkout is " + served.Variation.Value

	for _, sn := range []struct{ id, file string }{{"node", "guide-node.cjs"}, {"ofrep", "guide-ofrep.cjs"}, {"js", "guide-js.cjs"}} {
		t.Run(sn.id, func(t *testing.T) {
			// The guide shows one SDK's snippet at a time, chosen by ?sdk=.
			code := preformatted(find(b.get("/get-started?sdk="+sn.id).must("snippet-"+sn.id), "snippet-code"))
			script := code
			if sn.id == "js" {
				script = asNodeScript(t, code)
			}
			dir := filepath.Join(nodeClients, fmt.Sprintf("guide-%d-%s", os.Getpid(), sn.id))
			must(t, os.Mkdir(dir, 0o755))
			t.Cleanup(func() { os.RemoveAll(dir) })
			must(t, os.WriteFile(filepath.Join(dir, sn.file), []byte(script), 0o644))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, sn.file)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("node %s: %v\n%s\nsnippet:\n%s", sn.file, err, out, code)
			}
			if !strings.Contains(string(out), want) {
				t.Errorf("the %s snippet printed %q, want a line %q", sn.id, out, want)
			}
		})
	}

	// The server snippet reported its evaluation: the guide says Received.
	if got := b.get("/get-started/check").text("guide-check-state"); got != "Received" {
		t.Errorf("check after the snippets ran: %q", got)
	}
}

// guideFlag evaluates flag key for user in the environment the guide made
// current in the organization org.
func (s *site) guideFlag(t *testing.T, org, key, user string) eval.Evaluation {
	t.Helper()
	ctx := context.Background()
	orgs, err := s.st.IAM().ListOrganizations(ctx, s.ownerActor())
	must(t, err)
	for _, o := range orgs {
		if o.Key != org {
			continue
		}
		act, err := s.st.IAM().UserActor(ctx, s.ownerID, o.WorkspaceID.String(), o.ID.String())
		must(t, err)
		uc, err := s.st.IAM().UserContext(ctx, s.ownerID)
		must(t, err)
		wp, err := s.st.Workplace().FrameAt(ctx, iam.PageSession{Actor: act, Context: uc})
		must(t, err)
		served, err := s.st.SDK().EvaluateFlag(ctx, act, wp.Env.ID, key, eval.EndUser{KeyID: user})
		must(t, err)
		return served
	}
	t.Fatalf("no organization %q", org)
	return eval.Evaluation{}
}

// visitor is a browser without script: a cookie jar, and the last page it
// loaded, whose CSRF token its next form carries.
type visitor struct {
	t      *testing.T
	base   string
	client *http.Client
	last   *page
}

// page is a loaded page, parsed.
type page struct {
	t   *testing.T
	url *url.URL
	doc *html.Node
}

// signIn signs the owner in through the sign-in page.
func signIn(t *testing.T, base string) *visitor {
	t.Helper()
	jar, err := cookiejar.New(nil)
	must(t, err)
	v := &visitor{t: t, base: base, client: &http.Client{Jar: jar}}
	v.get("/login")
	if p := v.post("/login", url.Values{"email": {ownerEmail}, "password": {ownerPassword}}); p.url.Path == "/login" {
		t.Fatal("sign-in failed")
	}
	return v
}

func (v *visitor) get(path string) *page {
	v.t.Helper()
	res, err := v.client.Get(v.base + path)
	must(v.t, err)
	return v.read(res)
}

// post submits a form from the last page, with its CSRF token.
func (v *visitor) post(path string, form url.Values) *page {
	v.t.Helper()
	form.Set("_csrf", v.last.csrf())
	return v.send(path, form, nil)
}

// send submits form as it is, with header besides: htmx sends its token
// and what it asks for in headers.
func (v *visitor) send(path string, form url.Values, header http.Header) *page {
	v.t.Helper()
	req, err := http.NewRequest(http.MethodPost, v.base+path, strings.NewReader(form.Encode()))
	must(v.t, err)
	req.Header = header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := v.client.Do(req)
	must(v.t, err)
	return v.read(res)
}

// read parses an answer, which must be 200; a page, unlike the regions
// htmx asks for, becomes the last page.
func (v *visitor) read(res *http.Response) *page {
	v.t.Helper()
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	must(v.t, err)
	if res.StatusCode != http.StatusOK {
		v.t.Fatalf("%s: got status %d, want 200; body:\n%s", res.Request.URL, res.StatusCode, body)
	}
	doc, err := html.Parse(strings.NewReader(string(body)))
	must(v.t, err)
	p := &page{t: v.t, url: res.Request.URL, doc: doc}
	if res.Request.Header.Get("HX-Request") == "" {
		v.last = p
	}
	return p
}

// at asserts where the browser ended up after redirects.
func (p *page) at(path string) *page {
	p.t.Helper()
	if got := p.url.RequestURI(); got != path {
		p.t.Fatalf("got page %s, want %s", got, path)
	}
	return p
}

// csrf is the page's anti-forgery token.
func (p *page) csrf() string {
	p.t.Helper()
	for n := range p.doc.Descendants() {
		if n.Type == html.ElementNode && ((n.Data == "meta" && attr(n, "name") == "csrf-token") ||
			(n.Data == "input" && attr(n, "name") == "_csrf")) {
			return attr(n, map[string]string{"meta": "content", "input": "value"}[n.Data])
		}
	}
	p.t.Fatalf("%s has no CSRF token", p.url)
	return ""
}

// must returns the element marked data-testid=id.
func (p *page) must(id string) *html.Node {
	p.t.Helper()
	n := find(p.doc, id)
	if n == nil {
		p.t.Fatalf("%s has no data-testid=%q", p.url, id)
	}
	return n
}

// form is what the form marked id would post as it stands: its named
// fields but submit buttons and disabled ones; of boxes, the checked; of
// options, the selected.
func (p *page) form(id string) url.Values {
	p.t.Helper()
	vals := url.Values{}
	for n := range p.must(id).Descendants() {
		name, typ := attr(n, "name"), attr(n, "type")
		if n.Type != html.ElementNode || name == "" || hasAttr(n, "disabled") {
			continue
		}
		switch {
		case n.Data == "textarea":
			vals.Add(name, preformatted(n))
		case n.Data == "select":
			for o := range n.Descendants() {
				if o.Type == html.ElementNode && o.Data == "option" && hasAttr(o, "selected") {
					vals.Add(name, attr(o, "value"))
				}
			}
		case n.Data != "input" || typ == "submit":
		case typ == "checkbox" || typ == "radio":
			if hasAttr(n, "checked") {
				vals.Add(name, attr(n, "value"))
			}
		default:
			vals.Add(name, attr(n, "value"))
		}
	}
	return vals
}

// text is the text of the element marked id, whitespace collapsed.
func (p *page) text(id string) string {
	n := find(p.doc, id)
	if n == nil {
		return ""
	}
	var sb strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			sb.WriteString(d.Data + " ")
		}
	}
	return strings.Join(strings.Fields(sb.String()), " ")
}

// find returns the first element under root marked data-testid=id.
func find(root *html.Node, id string) *html.Node {
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && attr(n, "data-testid") == id {
			return n
		}
	}
	return nil
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

// hasAttr tells whether the element carries the attribute at all.
func hasAttr(n *html.Node, name string) bool {
	return slices.ContainsFunc(n.Attr, func(a html.Attribute) bool { return a.Key == name })
}

// preformatted is the text of a <pre> element as written, line breaks kept.
func preformatted(n *html.Node) string {
	var sb strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			sb.WriteString(d.Data)
		}
	}
	return sb.String()
}

// asNodeScript makes the browser snippet, written for a bundler, a Node
// script: its import becomes a require, its top-level code an async
// function, and Node gets the two browser globals the SDK uses. The client
// keeps its connection open, so the script ends once the snippet has run.
func asNodeScript(t *testing.T, snippet string) string {
	t.Helper()
	const imp = "import { FbClientBuilder, UserBuilder } from '@featbit/js-client-sdk';"
	body, ok := strings.CutPrefix(snippet, imp)
	if !ok {
		t.Fatalf("the browser snippet does not start with %s:\n%s", imp, snippet)
	}
	return `globalThis.WebSocket = require('ws');
const memory = new Map();
globalThis.localStorage = { getItem: (k) => memory.get(k) ?? null, setItem: (k, v) => memory.set(k, String(v)),
  removeItem: (k) => memory.delete(k), clear: () => memory.clear() };
const { FbClientBuilder, UserBuilder } = require('@featbit/js-client-sdk');
(async () => {` + body + `
})().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
`
}
