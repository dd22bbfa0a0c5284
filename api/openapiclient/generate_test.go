package openapiclient

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	// The generated client imports these; importing them here keeps them
	// in go.mod (go mod tidy cannot see the client, which is never
	// committed).
	_ "github.com/oapi-codegen/runtime"
	_ "github.com/oapi-codegen/runtime/types"
)

// TestGeneratedClient generates a client from api/openapi.yaml with the
// pinned oapi-codegen into a fresh package under testdata (which go's ./...
// patterns skip and git ignores), puts testdata/client_test.go beside it, and
// runs that test: the generated client must compile and drive a real server.
func TestGeneratedClient(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and compiles a client of the whole API")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to generate and run the client: %v", err)
	}
	dir, err := os.MkdirTemp("testdata", "generated-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })

	gen := exec.Command(goBin, "tool", "oapi-codegen", "-config", "oapi-codegen.yaml",
		"-o", filepath.Join(dir, "client.gen.go"), "../openapi.yaml")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen: %v\n%s", err, out)
	}
	proof, err := os.ReadFile(filepath.Join("testdata", "client_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "client_test.go"), proof, 0o644); err != nil {
		t.Fatal(err)
	}

	run := exec.Command(goBin, "test", "-count=1", "-run", "^TestClient$", "./"+filepath.ToSlash(dir))
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the generated client's test failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
