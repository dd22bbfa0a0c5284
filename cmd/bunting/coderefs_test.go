package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/storetest"
	"github.com/bunting-flags/bunting/web/sdk"
)

// TestCodeRefsCommand: bunting coderefs scans a git checkout for the
// environment's flag keys and sends where they are used, with the commit
// and branch, to a running Bunting; a key in a file .gitignore names is
// not reported, nor a key inside another word, nor a binary file. A
// second run replaces the first. The server refuses an upload over its
// bounds by name, and changes nothing then.
func TestCodeRefsCommand(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	st, owner, _ := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, st, owner)
	for _, key := range []string{"new-checkout", "beta"} {
		_, err := st.Flags().CreateFlag(ctx, owner, prod.ID, flagstore.FlagInput{Name: key, Key: key})
		storetest.Must(t, err)
	}
	token, err := st.Tokens().MintAccessToken(ctx, "owner@example.com", "ci", core.TokenService)
	storetest.Must(t, err)
	srv := httptest.NewUnstartedServer(nil)
	srv.Start()
	t.Cleanup(srv.Close)
	base, _ := url.Parse(srv.URL)
	srv.Config.Handler, _ = server.NewHandler(server.Config{BaseURL: base}, st, slog.New(slog.DiscardHandler), sdk.Options{})
	vars := env(map[string]string{"BUNTING_URL": srv.URL, "BUNTING_TOKEN": token.Token})

	repo := filepath.Join(t.TempDir(), "shop-web")
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(repo, filepath.FromSlash(name))
		storetest.Must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		storetest.Must(t, os.WriteFile(p, []byte(text), 0o644))
	}
	write(".gitignore", "secrets.env\nbuild/\n")
	write("src/checkout.ts", "import { client } from './flags'\n\nif (client.boolVariation(\"new-checkout\", false)) {\n  render()\n}\n// betamax is not a key\n")
	write("secrets.env", "FLAG='new-checkout'\n")
	write("build/out.js", "x('beta')\n")
	write("logo.bin", "\x00\x01'beta'")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.email=ci@example.com", "-c", "user.name=CI"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "first")
	head := git("rev-parse", "HEAD")
	// A file not yet added is scanned too: it is about to be.
	write("src/new.go", "on := flags.Bool(`beta`)\n")

	var out bytes.Buffer
	storetest.Must(t, run(ctx, []string{"coderefs", "--env", prod.ID.String(), "--dir", repo}, vars, &out))
	if !strings.Contains(out.String(), "Sent 2 references to 2 flags") || !strings.Contains(out.String(), "shop-web (main at "+head[:12]+")") {
		t.Fatalf("coderefs said:\n%s", out.String())
	}
	refs, err := st.Flags().FlagCodeRefs(ctx, owner, prod.ID, "new-checkout")
	storetest.Must(t, err)
	if len(refs) != 1 {
		t.Fatalf("new-checkout: got %d references %+v, want 1 (secrets.env is ignored)", len(refs), refs)
	}
	r := refs[0]
	if r.Path != "src/checkout.ts" || r.Line != 3 || r.Repository != "shop-web" || r.Branch != "main" || r.Commit != head ||
		!strings.Contains(r.Snippet, "import { client }") || !strings.Contains(r.Snippet, "render()") {
		t.Fatalf("new-checkout's reference: got %+v", r)
	}
	beta, err := st.Flags().FlagCodeRefs(ctx, owner, prod.ID, "beta")
	storetest.Must(t, err)
	if len(beta) != 1 || beta[0].Path != "src/new.go" {
		t.Fatalf("beta: got %+v, want only src/new.go (build/ is ignored, logo.bin is binary, betamax is another word)", beta)
	}

	// The next run replaces what the branch said: the key left the code.
	storetest.Must(t, os.Remove(filepath.Join(repo, "src", "new.go")))
	out.Reset()
	storetest.Must(t, run(ctx, []string{"coderefs", "--env", prod.ID.String(), "--dir", repo}, vars, &out))
	if beta, _ = st.Flags().FlagCodeRefs(ctx, owner, prod.ID, "beta"); len(beta) != 0 {
		t.Fatalf("beta after its use was removed: got %+v, want none", beta)
	}

	// Bounds, named; the stored references stay as they were.
	c, err := newAPIClient(vars)
	storetest.Must(t, err)
	upload := func(n int, key func(i int) string) error {
		in := flagstore.CodeRefsInput{Repository: "shop-web", Branch: "main", Commit: "abc", References: []flagstore.CodeRef{}}
		for i := range n {
			in.References = append(in.References, flagstore.CodeRef{FlagKey: key(i), Path: "a.go", Line: i + 1, Snippet: "x"})
		}
		body, _ := json.Marshal(in)
		_, err := c.do(ctx, http.MethodPut, "/api/v1/envs/"+prod.ID.String()+"/code-references", nil, "application/json", body)
		return err
	}
	var refused *refusal
	err = upload(flagstore.MaxCodeRefsPerFlag+1, func(int) string { return "beta" })
	if !errors.As(err, &refused) || refused.status != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "TooManyCodeReferencesForFlag") {
		t.Fatalf("%d references to one flag: got %v, want 422 TooManyCodeReferencesForFlag", flagstore.MaxCodeRefsPerFlag+1, err)
	}
	err = upload(flagstore.MaxCodeRefsPerUpload+1, func(i int) string { return "k" + string(rune('a'+i%26)) + strings.Repeat("x", i/26%50) })
	if !errors.As(err, &refused) || refused.status != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "TooManyCodeReferences") {
		t.Fatalf("%d references: got %v, want 422 TooManyCodeReferences", flagstore.MaxCodeRefsPerUpload+1, err)
	}
	err = upload(1, func(int) string { return "not a key" })
	if !errors.As(err, &refused) || refused.status != http.StatusBadRequest || !strings.Contains(err.Error(), "references/0/flagKey: flagKey_is_invalid") {
		t.Fatalf("a reference with a wrong key: got %v, want 400 naming references/0/flagKey", err)
	}
	if refs, _ = st.Flags().FlagCodeRefs(ctx, owner, prod.ID, "new-checkout"); len(refs) != 1 {
		t.Fatalf("after refused uploads: got %d references of new-checkout, want the 1 stored before", len(refs))
	}
}

// TestCodeRefsOutsideGit: outside a git checkout the files the root
// .gitignore names (a file, a glob, a directory) are left out, and .git
// is never read.
func TestCodeRefsOutsideGit(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for name, text := range map[string]string{
		".gitignore":         "# generated\n*.log\ndist/\n/local.env\n",
		"main.go":            `flags.Bool("pay")`,
		"debug.log":          `"pay"`,
		"dist/app.js":        `"pay"`,
		"local.env":          `"pay"`,
		"pkg/local.env":      `'pay'`,
		".git/config":        `"pay"`,
		"pkg/sub/handler.ts": "const x = `pay`",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		storetest.Must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		storetest.Must(t, os.WriteFile(p, []byte(text), 0o644))
	}
	files, err := listFiles(context.Background(), root, false)
	storetest.Must(t, err)
	refs, _, err := scanFiles(root, files, map[string]bool{"pay": true})
	storetest.Must(t, err)
	var places []string
	for _, r := range refs {
		places = append(places, r.Path)
	}
	if got := strings.Join(places, ","); got != "main.go,pkg/local.env,pkg/sub/handler.ts" {
		t.Fatalf("found %q, want main.go,pkg/local.env,pkg/sub/handler.ts", got)
	}
}
