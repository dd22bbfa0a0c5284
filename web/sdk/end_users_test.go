package sdk_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/web/sdk"
)

// report is an insight report of n evaluations of one flag variation, by
// the users key(0) … key(n-1).
func report(flag, variation string, n int, key func(i int) string) []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"user":{"keyId":%q,"name":"User %d","customizedProperties":[{"name":"plan","value":"pro"}]},`+
			`"variations":[{"featureFlagKey":%q,"sendToExperiment":false,"timestamp":%d,"variation":{"id":%q,"name":"x","value":"true"}}]}`,
			key(i), i, flag, time.Now().UnixMilli(), variation)
	}
	b.WriteByte(']')
	return []byte(b.String())
}

// sendReports posts the reports, workers at a time.
func sendReports(t *testing.T, in *instance, secret string, reports [][]byte, workers int) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for range workers {
		wg.Go(func() {
			for i := range next {
				req, _ := http.NewRequest("POST", in.url+"/api/public/insight/track", bytes.NewReader(reports[i]))
				req.Header.Set("Authorization", secret)
				req.Header.Set("Content-Type", "application/json")
				res, err := client.Do(req)
				if err != nil || res.StatusCode != 200 {
					mu.Lock()
					failures = append(failures, fmt.Sprint(err, res))
					mu.Unlock()
				}
				if res != nil {
					res.Body.Close()
				}
			}
		})
	}
	for i := range reports {
		next <- i
	}
	close(next)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d reports failed, the first: %s", len(failures), failures[0])
	}
}

// TestInsightFloodOfNewUsers sends 10,000 evaluation events of new users
// (200 reports of 50, as SDKs batch them, 20 at a time), among reports of
// one known user, while the end-user writer runs, and checks that every
// evaluation is counted and every user kept once written. How fast the
// insight endpoint answers a flood of new users, against one known user,
// is bunting-bench's insight-new-users and insight-known-user scenarios.
func TestInsightFloodOfNewUsers(t *testing.T) {
	// Every report goes through one secret: its write limits are lifted
	// here (TestWritesLimitedPerSecret holds them).
	dbURL, _ := dbtest.NewDatabase(t)
	limits := sdk.DefaultLimits
	limits.EndUsersPerSecret, limits.EvaluationsPerSecret = 1<<30, 1<<30
	in := newInstanceWith(t, dbURL, sdk.Options{Limits: limits}, slog.New(slog.DiscardHandler))
	prod, _ := in.project("web")
	fx := seed(prod)
	on := variationID(fx.flags["ft-bool"], "true")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go in.endUsers.Run(ctx)

	const reports, perReport, workers = 200, 50, 20
	same := make([][]byte, reports)
	for i := range same {
		same[i] = report("ft-bool", on, perReport, func(int) string { return "known" })
	}
	fresh := make([][]byte, reports)
	for i := range fresh {
		fresh[i] = report("ft-bool", on, perReport, func(j int) string { return fmt.Sprintf("new-%d-%d", i, j) })
	}
	// One known user, then 10,000 new ones, then the known one again.
	sendReports(t, in, prod.server, same, workers)
	sendReports(t, in, prod.server, fresh, workers)
	sendReports(t, in, prod.server, same, workers)

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(in.endUsers.Flush(context.Background()))
	db, err := pgx.Connect(context.Background(), in.dbURL)
	must(err)
	defer db.Close(context.Background())
	var evaluations, users, withProps int64
	must(db.QueryRow(context.Background(), `SELECT coalesce(sum(e.count), 0) FROM flag_evaluations e JOIN feature_flags f ON f.id = e.flag_id
		WHERE f.env_id = $1`, prod.id).Scan(&evaluations))
	sent := int64(3 * reports * perReport) // the known user, the new ones, the known user again
	if evaluations != sent {
		t.Errorf("%d evaluations counted, %d sent", evaluations, sent)
	}
	must(db.QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE properties = '[{"name":"plan","value":"pro"}]')
		FROM end_users WHERE env_id = $1`, prod.id).Scan(&users, &withProps))
	if want := int64(reports*perReport + 1); users != want || withProps != want {
		t.Errorf("%d end users kept (%d with their properties), want %d", users, withProps, want)
	}
}

// TestDataSyncKeepsTheEndUser: a client SDK's user, polling or streaming,
// becomes an end user of its environment with its name and properties.
func TestDataSyncKeepsTheEndUser(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	seed(prod)
	res, _ := in.request("POST", "/api/public/sdk/client/latest-all?timestamp=0",
		`{"keyId":"poller","name":"Pat","customizedProperties":[{"name":"age","value":42}]}`, "Authorization", prod.client)
	if res.StatusCode != 200 {
		t.Fatalf("client latest-all: %d", res.StatusCode)
	}
	c := in.dial("client", prod.client)
	c.send(`{"messageType":"data-sync","data":{"timestamp":0,"user":{"keyId":"streamer","name":"Sam","customizedProperties":[{"name":"plan","value":"pro"}]}}}`)
	c.readSync(5 * time.Second)
	if err := in.endUsers.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	db, err := pgx.Connect(context.Background(), in.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	for key, want := range map[string][2]string{"poller": {"Pat", `[{"name": "age", "value": "42"}]`}, "streamer": {"Sam", `[{"name": "plan", "value": "pro"}]`}} {
		var name, props string
		if err := db.QueryRow(context.Background(), `SELECT name, properties::text FROM end_users WHERE env_id = $1 AND key_id = $2`, prod.id, key).
			Scan(&name, &props); err != nil || name != want[0] || props != want[1] {
			t.Errorf("%s kept as %q %s (%v), want %q %s", key, name, props, err, want[0], want[1])
		}
	}
}
