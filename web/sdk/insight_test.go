package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
)

// listFlags lists the flags whose names contain name, first page.
func (e *env) listFlags(name string) core.Paged[flagstore.FlagListItem] {
	e.in.t.Helper()
	list, err := e.in.store.Flags().ListFlags(context.Background(), e.owner, e.id, flagstore.FlagFilter{Name: name, Page: core.Page{Size: core.DefaultPageSize}})
	must(e.in.t, err)
	return list
}

// insights reads a flag's evaluation counts.
func (e *env) insights(key string) sdkdata.FlagInsight {
	e.in.t.Helper()
	insight, err := e.in.store.SDK().FlagInsights(context.Background(), e.owner, e.id, key)
	must(e.in.t, err)
	return insight
}

// track is a node SDK event report: evaluations of (flag key, variation id).
func track(user string, evals ...[2]string) string {
	var items []string
	for _, ev := range evals {
		items = append(items, fmt.Sprintf(`{"user":{"keyId":%q,"name":"","customizedProperties":[]},
			"variations":[{"featureFlagKey":%q,"sendToExperiment":true,"timestamp":%d,"variation":{"id":%q,"name":"x","value":"true"}}]}`,
			user, ev[0], time.Now().UnixMilli(), ev[1]))
	}
	items = append(items, `{"user":{"keyId":"u1"},"metrics":[{"route":"index/metric","timestamp":1,"numericValue":2,"appType":"NodeJS-Server-SDK","eventName":"purchase","type":"CustomEvent"}]}`)
	return "[" + strings.Join(items, ",") + "]"
}

func TestInsightsRecordEvaluations(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, dev := in.project("web")
	fx := seed(prod)
	on, off := variationID(fx.flags["ft-bool"], "true"), variationID(fx.flags["ft-bool"], "false")

	list := prod.listFlags("ft-bool")
	if list.Items[0].LastEvaluatedAt != nil {
		t.Fatalf("a new flag has been evaluated at %v", list.Items[0].LastEvaluatedAt)
	}
	before := time.Now()
	body := track("u1", [2]string{"ft-bool", on}, [2]string{"ft-bool", on}, [2]string{"ft-bool", off},
		[2]string{"no-such-flag", on}, [2]string{"ft-bool", "no-such-variation"})
	res, b := in.request("POST", "/api/public/insight/track", body, "Authorization", prod.server, "X-User-Agent", "NodeJS-Server-SDK/1.3.0")
	if res.StatusCode != 200 || len(b) != 0 {
		t.Fatalf("track: %d %q, want 200 with no body", res.StatusCode, b)
	}
	// Client SDKs report too; events without a user are dropped.
	in.request("POST", "/api/public/insight/track", track("u2", [2]string{"ft-bool", on}), "Authorization", prod.client)
	in.request("POST", "/api/public/insight/track", `[{"variations":[{"featureFlagKey":"ft-bool","variation":{"id":"`+on+`"}}]}]`, "Authorization", prod.server)

	insight := prod.insights("ft-bool")
	if insight.Evaluations != 4 || len(insight.Variations) != 2 || insight.LastEvaluatedAt == nil || insight.LastEvaluatedAt.Before(before.Add(-time.Second)) {
		t.Fatalf("insight %+v, want 4 evaluations of 2 variations, just now", insight)
	}
	for _, v := range insight.Variations {
		want := map[string]int64{"True": 3, "False": 1}[v.Variation.Name]
		if v.Count != want {
			t.Errorf("%s evaluated %d times, want %d", v.Variation.Name, v.Count, want)
		}
	}
	list = prod.listFlags("ft-bool")
	if it := list.Items[0]; it.LastEvaluatedAt == nil || it.Evaluations != 4 {
		t.Errorf("list item: last evaluated %v, %d evaluations; want now and 4", it.LastEvaluatedAt, it.Evaluations)
	}
	stale, err := in.store.SDK().StaleFlags(context.Background(), prod.owner, prod.id, core.Page{Size: 100})
	must(t, err)
	if n := len(stale.Items); n != len(fx.flags) || stale.Items[n-1].Key != "ft-bool" || stale.Items[0].LastEvaluatedAt != nil {
		t.Errorf("stale flags: %+v, want never-evaluated first and ft-bool last", stale.Items)
	}

	// Another environment's secret counts nothing here.
	in.request("POST", "/api/public/insight/track", track("u1", [2]string{"ft-bool", on}), "Authorization", dev.server)
	insight = prod.insights("ft-bool")
	if insight.Evaluations != 4 {
		t.Errorf("dev's report changed prod's counts: %d", insight.Evaluations)
	}

	for _, tt := range []struct {
		body, secret string
		status       int
	}{
		{track("u1"), "", 401},
		{track("u1"), core.NewSecretValue(prod.id), 401},
		{`{"not":"an array"}`, prod.server, 400},
	} {
		if res, b := in.request("POST", "/api/public/insight/track", tt.body, "Authorization", tt.secret); res.StatusCode != tt.status {
			t.Errorf("track with %q: %d %s, want %d", tt.secret, res.StatusCode, b, tt.status)
		}
	}
}

func TestPollingDataSync(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	fx := seed(prod)
	res, b := in.request("GET", "/api/public/sdk/server/latest-all?timestamp=0", nil, "Authorization", prod.server)
	var d dataSync
	if res.StatusCode != 200 || json.Unmarshal(b, &d) != nil || d.Data.EventType != "full" || len(d.Data.FeatureFlags) != len(fx.flags) {
		t.Fatalf("server latest-all: %d %s", res.StatusCode, b)
	}
	if res, _ := in.request("GET", "/api/public/sdk/server/latest-all?timestamp=0", nil, "Authorization", prod.server, "If-None-Match", res.Header.Get("ETag")); res.StatusCode != 304 {
		t.Errorf("same ETag: %d, want 304", res.StatusCode)
	}
	var newest int64
	for _, f := range fx.flags {
		newest = max(newest, f.UpdatedAt.UnixMilli())
	}
	newest = max(newest, fx.segment.UpdatedAt.UnixMilli())
	if res, b := in.request("GET", fmt.Sprintf("/api/public/sdk/server/latest-all?timestamp=%d", newest), nil, "Authorization", prod.server); res.StatusCode != 200 || len(b) != 0 {
		t.Errorf("nothing changed: %d %q, want 200 with no body", res.StatusCode, b)
	}
	if res, _ := in.request("GET", "/api/public/sdk/server/latest-all?timestamp=0", nil, "Authorization", prod.client); res.StatusCode != 403 {
		t.Errorf("client secret on the server endpoint: %d, want 403", res.StatusCode)
	}
	res, b = in.request("POST", "/api/public/sdk/client/latest-all?timestamp=0", `{"keyId":"u-false"}`, "Authorization", prod.client)
	if res.StatusCode != 200 || json.Unmarshal(b, &d) != nil || d.Data.UserKeyID != "u-false" || len(d.Data.FeatureFlags) != len(fx.flags) {
		t.Errorf("client latest-all: %d %s", res.StatusCode, b)
	}
	if res, _ := in.request("POST", "/api/public/sdk/client/latest-all", `{"name":"no key"}`, "Authorization", prod.client); res.StatusCode != 400 {
		t.Errorf("client latest-all without a user key: %d, want 400", res.StatusCode)
	}
}

// TestInsightBodyFlood sends bodies of 1 MiB at once to the insight
// endpoint with a client secret (which every browser bundle carries), each
// of the smallest values JSON has: every one is refused with a 4xx (or,
// past the body budget, 503), and the endpoint answers afterwards. The
// API's routes have theirs, with the heap measured, in api's
// TestBodyFloodHoldsMemory.
func TestInsightBodyFlood(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	body := "[{}" + strings.Repeat(",{}", (1<<20-8)/3) + "]"
	statuses := make([]int, 6)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			res, _ := in.request("POST", "/api/public/insight/track", body, "Authorization", prod.client)
			statuses[i] = res.StatusCode
		})
	}
	wg.Wait()
	for _, status := range statuses {
		if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge && status != http.StatusServiceUnavailable {
			t.Errorf("a 1 MiB body of empty objects: got %d, want 400, 413 or 503", status)
		}
	}
	if res, b := in.request("POST", "/api/public/insight/track", track("u1"), "Authorization", prod.client); res.StatusCode != http.StatusOK {
		t.Errorf("track after the flood: %d %s", res.StatusCode, b)
	}
}
