package web_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/bunting-flags/bunting/sql/eval"
)

// nodeClients is the npm project of FeatBit's and OpenFeature's published
// clients, pinned by its package-lock.json (make sdk-clients installs it).
const nodeClients = "sdk/testdata/node"

// TestGuideSnippetsRun pastes the first-run guide's snippets as a newcomer
// would and runs them with the real npm clients against this server: each
// prints what the flag serves the snippet's user, and the guide's live check
// turns to Received. Without node or the installed clients it is skipped,
// except under CI=true, where it fails.
func TestGuideSnippetsRun(t *testing.T) {
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(nodeClients, "node_modules", "@featbit", "node-server-sdk"))
	}
	if err != nil {
		msg := fmt.Sprintf("the guide's snippets need node and `make sdk-clients`: %v", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Parallel()
	a := startApp(t, appOptions{selfAddressed: true})
	b := a.signedIn(ownerEmail, ownerPassword)
	b.post("/organizations", url.Values{"name": {"Acme"}, "key": {"acme"}}).at("/get-started")
	b.post("/get-started/project", url.Values{"projectName": {"Shop"}, "projectKey": {"shop"}, "environments": {"Dev, Prod"}}).at("/get-started")
	b.post("/get-started/flag", url.Values{"name": {"New checkout"}, "key": {"new-checkout"}}).at("/get-started")
	guide := b.last
	if got := b.get("/get-started/check").text("guide-check-state"); got != "Waiting for the first evaluation…" {
		t.Fatalf("check before any snippet ran: %q", got)
	}

	// What the flag serves the snippets' user, by Bunting's own engine.
	org := organizationByKey(t, a, "acme")
	act, err := a.st.UserActor(t.Context(), a.owner, a.wsID.String(), org.ID.String())
	must(t, err)
	uc, err := a.st.UserContext(t.Context(), a.owner)
	must(t, err)
	wp, err := a.st.Workplace(t.Context(), act, uc)
	must(t, err)
	served, err := a.st.EvaluateFlag(t.Context(), act, wp.Env.ID, "new-checkout", eval.EndUser{KeyID: "user-1"})
	must(t, err)
	want := "new-checkout is " + served.Variation.Value

	for _, s := range []struct{ id, file string }{{"node", "guide-node.cjs"}, {"ofrep", "guide-ofrep.cjs"}, {"js", "guide-js.cjs"}} {
		t.Run(s.id, func(t *testing.T) {
			code := preformatted(find(guide.must("snippet-"+s.id), "snippet-code"))
			script := code
			if s.id == "js" {
				script = asNodeScript(t, code)
			}
			dir := filepath.Join(nodeClients, fmt.Sprintf("guide-%d-%s", os.Getpid(), s.id))
			must(t, os.Mkdir(dir, 0o755))
			t.Cleanup(func() { os.RemoveAll(dir) })
			must(t, os.WriteFile(filepath.Join(dir, s.file), []byte(script), 0o644))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, s.file)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("node %s: %v\n%s\nsnippet:\n%s", s.file, err, out, code)
			}
			if !strings.Contains(string(out), want) {
				t.Errorf("the %s snippet printed %q, want a line %q", s.id, out, want)
			}
		})
	}

	// The server snippet reported its evaluation: the guide says Received.
	if got := b.get("/get-started/check").text("guide-check-state"); got != "Received" {
		t.Errorf("check after the snippets ran: %q", got)
	}
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
