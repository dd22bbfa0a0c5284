// Package sdktest finds the real SDK clients that tests run against a
// Bunting: FeatBit's and OpenFeature's published npm clients, in the npm
// project web/sdk/testdata/node pinned by its package-lock.json (make
// sdk-clients installs it).
package sdktest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Node is the node executable that runs the clients installed in the npm
// project at dir. Without node or the installed clients the test is skipped,
// except under CI=true, where it fails: there the clients are part of what
// is checked.
func Node(t testing.TB, dir string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@featbit", "node-server-sdk"))
	}
	if err != nil {
		msg := fmt.Sprintf("the real SDK clients need node and `make sdk-clients` (npm ci --prefix web/sdk/testdata/node): %v", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node
}
