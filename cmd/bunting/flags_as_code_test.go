package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bunting-flags/bunting/api"
	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/storetest"
	"github.com/bunting-flags/bunting/web/sdk"
)

// TestExportImportCommands: bunting export writes Prod's flags as YAML
// through the API of a running Bunting (the real handler), bunting import
// --dry-run says what it would change in Dev and changes nothing, the
// import makes the change, and a file breaking a rule is refused with its
// path in the file. Without a token the commands say what to set.
func TestExportImportCommands(t *testing.T) {
	t.Parallel()
	st, owner, _ := storetest.New(t)
	ctx := context.Background()
	prod, dev := storetest.ProdAndDev(t, st, owner)
	_, err := st.Flags().CreateFlag(ctx, owner, prod.ID, flagstore.FlagInput{Name: "Checkout", Key: "checkout", IsEnabled: true, Tags: []string{"web"}})
	storetest.Must(t, err)
	token, err := st.Tokens().MintAccessToken(ctx, "owner@example.com", "ci", core.TokenService)
	storetest.Must(t, err)

	srv := httptest.NewUnstartedServer(nil)
	srv.Start()
	t.Cleanup(srv.Close)
	base, _ := url.Parse(srv.URL)
	srv.Config.Handler, _ = server.NewHandler(server.Config{BaseURL: base}, st, slog.New(slog.DiscardHandler), sdk.Options{})
	vars := env(map[string]string{"BUNTING_URL": srv.URL, "BUNTING_TOKEN": token.Token})

	if err := run(ctx, []string{"export", "--env", prod.ID.String()}, env(nil), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "BUNTING_TOKEN") {
		t.Fatalf("export without a token: got %v, want BUNTING_TOKEN named", err)
	}
	file := filepath.Join(t.TempDir(), "prod.yaml")
	storetest.Must(t, run(ctx, []string{"export", "--env", prod.ID.String(), "--out", file}, vars, &bytes.Buffer{}))
	text, err := os.ReadFile(file)
	storetest.Must(t, err)
	if !bytes.HasPrefix(text, []byte("version: 1\n")) || !bytes.Contains(text, []byte("  - key: checkout\n")) {
		t.Fatalf("export wrote:\n%s", text)
	}
	var out bytes.Buffer
	storetest.Must(t, run(ctx, []string{"export", "--project", prod.ProjectID.String(), "--format", "json"}, vars, &out))
	if !strings.HasPrefix(out.String(), "{\n  \"version\": 1,") || !strings.Contains(out.String(), `"key": "dev"`) {
		t.Fatalf("project export wrote:\n%.400s", out.String())
	}

	out.Reset()
	storetest.Must(t, run(ctx, []string{"import", "--env", dev.ID.String(), "--dry-run", file}, vars, &out))
	if !strings.Contains(out.String(), "flag checkout: create\n  Created the flag Checkout\n") || !strings.Contains(out.String(), "Dry run, nothing changed") {
		t.Fatalf("dry run said:\n%s", out.String())
	}
	if _, err := st.Flags().GetFlag(ctx, owner, dev.ID, "checkout"); err == nil {
		t.Fatal("a dry run created the flag")
	}
	out.Reset()
	storetest.Must(t, run(ctx, []string{"import", "--env", dev.ID.String(), "--comment", "from git", file}, vars, &out))
	if !strings.Contains(out.String(), "Applied: 1 created") {
		t.Fatalf("import said:\n%s", out.String())
	}
	f, err := st.Flags().GetFlag(ctx, owner, dev.ID, "checkout")
	storetest.Must(t, err)
	if !f.IsEnabled {
		t.Fatal("the imported flag is off")
	}

	broken := filepath.Join(t.TempDir(), "broken.yaml")
	storetest.Must(t, os.WriteFile(broken, bytes.Replace(text, []byte("variationType: boolean"), []byte("variationType: colour"), 1), 0o644))
	err = run(ctx, []string{"import", "--env", dev.ID.String(), broken}, vars, &out)
	if err == nil || !strings.Contains(err.Error(), "flags[0].variationType: variationType_is_invalid") {
		t.Fatalf("broken file: got %v, want its path named", err)
	}
}

// TestImportCommandBounds: a file larger than the server takes is refused
// before it is sent, a YAML file is read by the command (a broken one named
// with its line, unsent) and sent as JSON, which the server takes larger
// than YAML, and an import whose answer never came does not claim that
// nothing changed.
func TestImportCommandBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var calls atomic.Int32
	var sent atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		sent.Store(r.Header.Get("Content-Type"))
		panic(http.ErrAbortHandler) // the connection drops without an answer
	}))
	t.Cleanup(srv.Close)
	vars := env(map[string]string{"BUNTING_URL": srv.URL, "BUNTING_TOKEN": "token"})

	big := filepath.Join(t.TempDir(), "big.yaml")
	storetest.Must(t, os.WriteFile(big, bytes.Repeat([]byte("#"), api.MaxImportBytes+1), 0o644))
	err := run(ctx, []string{"import", "--env", "e", big}, vars, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "an import takes at most 4 MiB") || calls.Load() != 0 {
		t.Fatalf("a file over the bound: %v after %d requests, want it refused before sending", err, calls.Load())
	}

	broken := filepath.Join(t.TempDir(), "broken.yaml")
	storetest.Must(t, os.WriteFile(broken, []byte("version: 1\nflags: [\n"), 0o644))
	err = run(ctx, []string{"import", "--env", "e", broken}, vars, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "broken.yaml: yaml: line") || calls.Load() != 0 {
		t.Fatalf("a broken YAML file: %v after %d requests, want its line named before sending", err, calls.Load())
	}

	// Larger than the server takes YAML, within what it takes as JSON.
	large := filepath.Join(t.TempDir(), "large.yaml")
	text := "version: 1\nsegments: [{key: big, name: Big, included: [" + strings.Repeat("user-00000,", api.MaxYAMLImportBytes/11) + "user-00000]}]\n"
	storetest.Must(t, os.WriteFile(large, []byte(text), 0o644))
	err = run(ctx, []string{"import", "--env", "e", large}, vars, &bytes.Buffer{})
	if err == nil || strings.Contains(err.Error(), "nothing changed") || !strings.Contains(err.Error(), "not known") {
		t.Fatalf("an import without an answer: %v, want its outcome unknown", err)
	}
	if got := sent.Load(); got != "application/json" {
		t.Fatalf("a YAML file was sent as %v, want application/json", got)
	}
}
