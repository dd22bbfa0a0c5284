package sdk_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/experiments"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/web/httpx"
	"github.com/bunting-flags/bunting/web/sdk/sdktest"
)

// nodeDir holds the npm project of real clients, pinned by its package-lock.json.
const nodeDir = "testdata/node"

// TestNodeClients runs FeatBit's and OpenFeature's published npm clients
// against a real Bunting: @featbit/node-server-sdk, @featbit/js-client-sdk,
// and @openfeature/server-sdk with @openfeature/ofrep-provider. Each script
// asserts what it sees and prints a RESULT line this test checks too.
// Without node or the installed packages (npm ci --prefix web/sdk/testdata/node)
// it is skipped, except under CI=true, where it fails.
func TestNodeClients(t *testing.T) {
	node := sdktest.Node(t, nodeDir)
	t.Parallel()
	in := newServer(t)
	in.serveManagement()
	splitUsers := make([]string, 20)
	for i := range splitUsers {
		splitUsers[i] = fmt.Sprint("user-", i)
	}
	for _, script := range []string{"server-sdk", "client-sdk", "ofrep"} {
		t.Run(script, func(t *testing.T) {
			t.Parallel()
			prod, _ := in.project("node-" + script)
			fx := seed(prod)
			// The FeatBit SDKs' track() calls count in an experiment of ft-bool.
			var expt *experiments.Experiment
			if script != "ofrep" {
				x := prod.experiment(fx.flags["ft-bool"], "purchase", true)
				expt = &x
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, script+".js")
			cmd.Dir = nodeDir
			cmd.Env = append(os.Environ(), "BUNTING_URL="+in.url, "SERVER_SECRET="+prod.server, "CLIENT_SECRET="+prod.client,
				"UNKNOWN_SECRET="+core.NewSecretValue(prod.id), "API_AUTH="+in.owner, "ENV_ID="+prod.id.String(),
				"SPLIT_USERS="+strings.Join(splitUsers, ","))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("node %s.js: %v\n%s%s", script, err, out, stderr.String())
			}
			var res struct {
				Split  []bool
				PushMs int
			}
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				if line, ok := strings.CutPrefix(sc.Text(), "RESULT "); ok {
					if err := json.Unmarshal([]byte(line), &res); err != nil {
						t.Fatalf("RESULT %s: %v", line, err)
					}
				}
			}
			t.Logf("%s: %s", script, bytes.TrimSpace(out))
			if expt != nil {
				// One exposed user (u1 for the server SDK, u-seg for the
				// client SDK) served true, whose track() sent 2 or 3.
				want := map[string]float64{"server-sdk": 2, "client-sdk": 3}[script]
				var got experiments.VariationAnalysis
				waitFor(t, "track() counted in the experiment", func() bool {
					got = prod.analysis(*expt)["true"]
					return got.Users == 1 && got.Conversions == 1 && got.Total == want
				})
			}
			// The clients split users exactly as Bunting's engine (and FeatBit) does.
			if script != "client-sdk" {
				split := fx.flags["ft-split"]
				want := make([]bool, len(splitUsers))
				for i, k := range splitUsers {
					want[i] = eval.Evaluate(&split, eval.EndUser{KeyID: k}, nil).Variation.Value == "true"
				}
				if !slices.Equal(res.Split, want) {
					t.Errorf("%s split %v, want %v", script, res.Split, want)
				}
			}
		})
	}
}

// serveManagement answers the management API's two calls the scripts make
// (turning a flag on or off, reading its evaluation counts) with the store,
// in the API's envelope: these tests serve the SDK endpoints alone.
func (in *instance) serveManagement() {
	owner := in.actor()
	answer := func(c echo.Context, data any, err error) error {
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"success": true, "errors": []string{}, "data": data})
	}
	flags := in.echo.Group("/api/v1/envs/:envId/feature-flags/:key")
	flags.PUT("/toggle/:status", func(c echo.Context) error {
		envID, err := httpx.PathID(c, "envId")
		if err != nil {
			return err
		}
		f, err := in.store.Flags().ToggleFlag(c.Request().Context(), owner, envID, c.Param("key"), c.Param("status") == "true", flagstore.Change{})
		return answer(c, f.Revision, err)
	})
	flags.GET("/insights", func(c echo.Context) error {
		envID, err := httpx.PathID(c, "envId")
		if err != nil {
			return err
		}
		insight, err := in.store.SDK().FlagInsights(c.Request().Context(), owner, envID, c.Param("key"))
		return answer(c, insight, err)
	})
}
