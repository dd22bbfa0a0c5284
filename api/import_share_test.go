package api_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/api"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// TestImportsHoldTheirSendersShare: the owner sends eight YAML imports of
// 1 MiB at once (dry runs, each priced at 144 times its size) over
// loopback, while a developer of the same organization creates six flags:
// the imports hold at most the owner's share of the body budget (an
// eighth, at least 10 MiB), so every one of the developer's writes answers
// 200 within 2 s. Before, the imports were priced up to the whole budget,
// and others got 3 answers of 6 in 25 s.
func TestImportsHoldTheirSendersShare(t *testing.T) {
	s := newServer(t)
	e := s.prodEnv()
	developer, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	srv := httptest.NewServer(s.e)
	defer srv.Close()
	doc := []byte("version: 1\nflags: [" + strings.Repeat("{},", (api.MaxYAMLImportBytes-40)/3) + "{}]\n")

	post := func(path, token, contentType string, body []byte) (int, time.Duration) {
		req, err := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(body))
		must(t, err)
		req.Header.Set("Authorization", token)
		req.Header.Set("Content-Type", contentType)
		start := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0, 0
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode, time.Since(start)
	}
	var wg sync.WaitGroup
	imports := make([]int, 8)
	for i := range imports {
		wg.Go(func() {
			imports[i], _ = post("/api/v1/envs/"+e.env.ID.String()+"/import?dryRun=true", s.owner, "application/yaml", doc)
		})
	}
	var slowest time.Duration
	for i := range 6 {
		code, took := post(e.flags, developer, "application/json", fmt.Appendf(nil, `{"name":"F%d","key":"f%d"}`, i, i))
		slowest = max(slowest, took)
		if code != http.StatusOK || took > 2*time.Second {
			t.Errorf("the developer's write %d: got %d after %v, want 200 within 2 s", i, code, took)
		}
	}
	wg.Wait()
	statuses := map[int]int{}
	for _, code := range imports {
		statuses[code]++
	}
	t.Logf("eight 1 MiB YAML dry runs at once by the owner answered %v; the developer's six writes meanwhile answered 200, the slowest in %v",
		statuses, slowest.Round(time.Millisecond))
	for code := range statuses {
		if code != http.StatusBadRequest && code != http.StatusServiceUnavailable {
			t.Errorf("an import answered %d, want 400 (too many flags) or 503 (its sender's share spent)", code)
		}
	}
}
