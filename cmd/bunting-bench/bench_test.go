package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/sql/dbtest"
)

// TestMain lets this test binary be the benchmark's server and relay:
// `bunting-bench` starts its own executable as `bench-server` and
// `bench-relay`, and under go test that executable is this binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == benchServerCommand || os.Args[1] == benchRelayCommand || os.Args[1] == "serve") {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestBenchShort runs the benchmark's short mode (with shorter measurements)
// and checks that it works, not how fast anything is: every scenario ran
// against both targets without an error, every write recorded its audit
// entry (and flag writes their revision) on both, the table and the JSON
// were written, and the database was dropped.
func TestBenchShort(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds and drives a server for half a minute")
	}
	ctx := context.Background()
	before := benchDatabases(t)
	dir := t.TempDir()
	jsonPath, logPath := filepath.Join(dir, "bench.json"), filepath.Join(dir, "server.log")
	var out bytes.Buffer
	vars := func(name string) string {
		return map[string]string{"BUNTING_DATABASE_URL": dbtest.ServerURL()}[name]
	}
	err := run(ctx, []string{"-short", "-duration", "500ms", "-warmup", "100ms", "-json", jsonPath, "-server-log", logPath}, vars, &out)
	if err != nil {
		log, _ := os.ReadFile(logPath)
		if len(log) > 4000 {
			log = log[len(log)-4000:]
		}
		t.Fatalf("bench: %v\noutput:\n%s\nend of the server's log:\n%s", err, out.String(), log)
	}

	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var report struct {
		Version int
		Options struct{ FlagCounts []int }
		Results []struct {
			Scenario, Kind, Target string
			Flags, Requests        int
			Errors                 int64
			RPS, P99Ms             float64
			RatioToFloor           *float64
			StatementsPerRequest   float64
			AuditEntriesPerRequest float64
			RevisionsPerRequest    float64
			ErrorSamples           []string
			Stream                 *struct{ Connections int }
		}
		Database  string
		PeakRSSMB float64
		Checks    []struct{ Target string }
	}
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatalf("results are not JSON: %v", err)
	}
	if report.Version != 1 || !slices.Equal(report.Options.FlagCounts, []int{1000}) {
		t.Errorf("version %d, flag counts %v; want 1 and [1000]", report.Version, report.Options.FlagCounts)
	}
	ran := map[string]bool{}
	for _, r := range report.Results {
		ran[r.Scenario+"/"+r.Target] = true
		if r.Kind == "stream" { // connections, not requests: they ran, every connection synced, nothing failed
			if r.Requests == 0 || r.P99Ms <= 0 || r.Stream == nil || r.Stream.Connections == 0 || r.Errors != 0 {
				t.Errorf("%s against %s: %+v, errors such as %q", r.Scenario, r.Target, r, r.ErrorSamples)
			}
			continue
		}
		// Evaluations are served from memory: no statement is needed.
		if r.Requests == 0 || r.RPS <= 0 || r.P99Ms <= 0 || (r.StatementsPerRequest < 1 && r.Kind != "evaluate") {
			t.Errorf("%s against %s measured nothing: %+v", r.Scenario, r.Target, r)
		}
		if r.Errors != 0 {
			t.Errorf("%s against %s: %d errors, such as %q", r.Scenario, r.Target, r.Errors, r.ErrorSamples)
		}
		if (r.Target == targetBunting) != (r.RatioToFloor != nil) {
			t.Errorf("%s against %s: ratio to the floor %v", r.Scenario, r.Target, r.RatioToFloor)
		}
		wantAudit, wantRevisions := 0.0, 0.0
		if r.Kind == "write" {
			wantAudit = 1
			if strings.HasPrefix(r.Scenario, "flag-") || r.Scenario == "create-flag" {
				wantRevisions = 1
			}
		}
		if r.AuditEntriesPerRequest != wantAudit || r.RevisionsPerRequest != wantRevisions {
			t.Errorf("%s against %s: %.2f audit entries and %.2f revisions per request, want %v and %v",
				r.Scenario, r.Target, r.AuditEntriesPerRequest, r.RevisionsPerRequest, wantAudit, wantRevisions)
		}
	}
	for _, sc := range benchScenarios {
		name := sc.name
		for _, target := range []string{targetFloor, targetBunting} {
			if target == targetFloor && sc.noFloor {
				continue // relay-fanout: Bunting only
			}
			if !ran[name+"/"+target] {
				t.Errorf("%s did not run against %s", name, target)
			}
		}
		if !strings.Contains(out.String(), "| "+name+" ") {
			t.Errorf("the table has no row for %s:\n%s", name, out.String())
		}
	}
	if report.PeakRSSMB <= 0 || len(report.Checks) == 0 {
		t.Errorf("peak RSS %v MB and %d target checks, want both", report.PeakRSSMB, len(report.Checks))
	}
	// Only this run's database is checked: another run on the same server
	// may have its own open meanwhile.
	if !strings.HasPrefix(report.Database, "bunting_bench_") || slices.Contains(before, report.Database) {
		t.Errorf("the report names the database %q, want this run's own", report.Database)
	} else if slices.Contains(benchDatabases(t), report.Database) {
		t.Errorf("database %s was left behind", report.Database)
	}
}

// benchDatabases lists the benchmark databases on the test server.
func benchDatabases(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbtest.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, _ := conn.Query(ctx, `SELECT datname FROM pg_database WHERE datname LIKE 'bunting\_bench\_%'`)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestParseCounts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"1k,10k,100k,1m", []int{1000, 10_000, 100_000, 1_000_000}},
		{"5000, 1_000,1000", []int{1000, 5000}},
	} {
		got, err := parseCounts(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("parseCounts(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "ten", "10", "20m"} {
		if _, err := parseCounts(bad); err == nil {
			t.Errorf("parseCounts(%q) accepted", bad)
		}
	}
}
