package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/cmd/internal/scratchdb"
	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/migrations"
	"github.com/bunting-flags/bunting/sql/seed"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// benchOptions are the benchmark's flags.
type benchOptions struct {
	Short      bool          `json:"short"`
	FlagCounts []int         `json:"flagCounts"`
	Clients    int           `json:"clients"`
	Duration   time.Duration `json:"-"`
	Warmup     time.Duration `json:"-"`
	Scenarios  []string      `json:"scenarios"`
	Projects   int           `json:"projects"`
	EnvsPer    int           `json:"environmentsPerProject"`
	Segments   int           `json:"segments"`
	Members    int           `json:"members"`
	Groups     int           `json:"groups"`
	Policies   int           `json:"policies"`
	BcryptCost int           `json:"bcryptCost"`
	Auth       string        `json:"auth"`
	JSONPath   string        `json:"-"`
	ServerLog  string        `json:"-"`
	Keep       bool          `json:"-"`
	Stream     streamOptions `json:"stream"`
	ProfileDir string        `json:"-"`
	// Metrics runs the server with its Prometheus metrics on (on a free
	// loopback port, scraped by nobody: what counting costs the requests),
	// or off (BUNTING_METRICS_ADDR=off).
	Metrics bool `json:"metrics"`
	// OTLP runs the server with tracing on, every span sent to a sink in
	// this process (bench_otlp.go).
	OTLP bool `json:"otlp"`
}

// MarshalJSON writes durations as Go duration strings.
func (o benchOptions) MarshalJSON() ([]byte, error) {
	type plain benchOptions
	return json.Marshal(struct {
		plain
		Duration string `json:"duration"`
		Warmup   string `json:"warmup"`
	}{plain(o), o.Duration.String(), o.Warmup.String()})
}

const benchUsage = `usage: bunting-bench [flags]

Seeds a fresh database (bunting_bench_…, on BUNTING_DATABASE_URL's server or
the local one), starts the real server as a child process, drives it over
loopback and compares it with a bare floor. See cmd/bunting-bench/README.md.
`

func parseBenchOptions(args []string, out io.Writer) (benchOptions, error) {
	var o benchOptions
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(out, benchUsage)
		fs.PrintDefaults()
	}
	fs.BoolVar(&o.Short, "short", false, "quick run: 1,000 flags, 2s per scenario, smaller seeds (under a minute)")
	flags := fs.String("flags", "1k,10k,100k,1m", "comma-separated flag counts of the measured environment (k and m suffixes allowed)")
	fs.IntVar(&o.Clients, "clients", 32, "concurrent clients")
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "measured time per scenario and target")
	fs.DurationVar(&o.Warmup, "warmup", time.Second, "unmeasured time before each measurement")
	scenarios := fs.String("scenarios", "", "comma-separated scenarios to run (default all: "+strings.Join(scenarioNames(), ",")+")")
	fs.IntVar(&o.Projects, "projects", 10, "projects in the organization")
	fs.IntVar(&o.EnvsPer, "envs", 3, "environments per project")
	fs.IntVar(&o.Segments, "segments", 1000, "segments in the measured environment")
	fs.IntVar(&o.Members, "members", 50_000, "members of the organization")
	fs.IntVar(&o.Groups, "groups", 2_000, "groups of the organization")
	fs.IntVar(&o.Policies, "policies", 200, "custom policies of the organization")
	fs.IntVar(&o.BcryptCost, "bcrypt-cost", 12, "bcrypt cost of the members' passwords (Bunting hashes with 12)")
	fs.StringVar(&o.Auth, "auth", "token", "credential of the API scenarios: token (a Personal access token of the owner) or session")
	fs.StringVar(&o.JSONPath, "json", "bench.json", "where to write the results as JSON")
	fs.StringVar(&o.ServerLog, "server-log", "", "file for the server's log (default: discarded)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the benchmark database")
	fs.BoolVar(&o.Metrics, "metrics", true, "run the server with its Prometheus metrics on (-metrics=false: BUNTING_METRICS_ADDR=off), to measure what they cost")
	finishStream := streamFlags(fs, &o.Stream)
	fs.StringVar(&o.ProfileDir, "profile", "", "directory for the server's CPU profile of each measured Bunting window (SCENARIO-FLAGS.pprof, for go tool pprof)")
	fs.BoolVar(&o.OTLP, "otlp", false, "trace every request of the server over OTLP/HTTP to a receiver that drops the spans (tracing's cost)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("bench: unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.Short { // smaller defaults, for what was not set explicitly
		def := func(name string, apply func()) {
			if !set[name] {
				apply()
			}
		}
		def("flags", func() { *flags = "1k" })
		def("duration", func() { o.Duration = 2 * time.Second })
		def("warmup", func() { o.Warmup = 200 * time.Millisecond })
		def("members", func() { o.Members = 5_000 })
		def("groups", func() { o.Groups = 500 })
		def("bcrypt-cost", func() { o.BcryptCost = bcrypt.MinCost })
	}
	var problems []error
	var err error
	if err := finishStream(o.Short, set); err != nil {
		problems = append(problems, err)
	}
	if o.FlagCounts, err = parseCounts(*flags); err != nil {
		problems = append(problems, err)
	}
	known := scenarioNames()
	for _, s := range strings.Split(*scenarios, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !slices.Contains(known, s) {
			problems = append(problems, fmt.Errorf("-scenarios: unknown scenario %q (known: %s)", s, strings.Join(known, ", ")))
		}
		o.Scenarios = append(o.Scenarios, s)
	}
	if len(o.Scenarios) == 0 {
		o.Scenarios = known
	}
	if o.Clients < 1 || o.Duration <= 0 || o.Warmup < 0 {
		problems = append(problems, errors.New("-clients and -duration must be positive, -warmup not negative"))
	}
	if o.Projects < 1 || o.EnvsPer < 1 || o.Segments < 40 || o.Members < 100 || o.Groups < 20 || o.Policies < 1 {
		problems = append(problems, errors.New("need at least 1 project, 1 environment each, 40 segments, 100 members, 20 groups and 1 policy"))
	}
	if len(o.FlagCounts) > 0 && (o.FlagCounts[0] < 2*o.Clients || o.Segments < 2*o.Clients) {
		// Each client writes flags and segments of its own (see benchClient).
		problems = append(problems, errors.New("need at least twice as many flags and segments as clients"))
	}
	if o.BcryptCost < bcrypt.MinCost || o.BcryptCost > bcrypt.MaxCost {
		problems = append(problems, fmt.Errorf("-bcrypt-cost must be %d to %d", bcrypt.MinCost, bcrypt.MaxCost))
	}
	if o.Auth != "token" && o.Auth != "session" {
		problems = append(problems, errors.New("-auth must be token or session"))
	}
	return o, errors.Join(problems...)
}

// parseCounts reads "1k,10k,1000000" into ascending, distinct counts.
func parseCounts(s string) ([]int, error) {
	var counts []int
	for _, part := range strings.Split(s, ",") {
		part = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(part), "_", ""))
		mult := 1
		if rest, ok := strings.CutSuffix(part, "k"); ok {
			part, mult = rest, 1_000
		} else if rest, ok := strings.CutSuffix(part, "m"); ok {
			part, mult = rest, 1_000_000
		}
		n, err := strconv.Atoi(part)
		if err != nil || n*mult < 100 || n*mult > 9_999_999 {
			return nil, fmt.Errorf("-flags: %q is not a count from 100 to 9,999,999", part)
		}
		counts = append(counts, n*mult)
	}
	slices.Sort(counts)
	return slices.Compact(counts), nil
}

// benchCommand runs the benchmark and writes its table to stdout and its
// results as JSON.
func benchCommand(ctx context.Context, cfg server.Config, args []string, getenv func(string) string, stdout io.Writer) error {
	o, err := parseBenchOptions(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	report := benchReport{Version: 1, StartedAt: time.Now().UTC(), Command: strings.Join(append([]string{"bunting-bench"}, args...), " "),
		Options: o, Machine: machineInfo()}

	serverURL := cfg.DatabaseURL
	if serverURL == "" {
		serverURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	dbURL, dbName, drop, err := scratchdb.Create(ctx, serverURL, "bunting_bench_", o.Keep)
	if err != nil {
		return err
	}
	defer drop()
	report.Database = dbName
	if o.Keep {
		fmt.Fprintf(stdout, "database kept: %s\n", dbURL)
	}
	poolCfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return err
	}
	core.ConfigurePool(poolCfg)
	pool, err := pgxpool.NewWithConfig(ctx, poolCfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := pool.QueryRow(ctx, `SHOW server_version`).Scan(&report.Machine.Postgres); err != nil {
		return err
	}

	start := time.Now()
	w, err := seedBench(ctx, pool, o)
	if err != nil {
		return err
	}
	if err := w.growFlags(ctx, o.FlagCounts[0]); err != nil {
		return err
	}
	report.Seeding = append(report.Seeding, seedTime{Flags: o.FlagCounts[0], Seconds: time.Since(start).Seconds()})
	fmt.Fprintf(stdout, "seeded %d flags, %d segments, %d members, %d groups, %d policies in %.1fs\n",
		o.FlagCounts[0], o.Segments, o.Members, o.Groups, o.Policies, time.Since(start).Seconds())

	var sink *otlpSink
	if o.OTLP {
		if sink, err = startOTLPSink(); err != nil {
			return err
		}
		defer sink.close()
	}
	child, err := startBenchServer(ctx, dbURL, w, o, getenv, sink)
	if err != nil {
		return err
	}
	defer child.stop()
	w.buntingURL, w.floorURL, w.childPID = child.buntingURL, child.floorURL, child.pid
	w.http = &http.Client{Transport: &http.Transport{MaxIdleConns: o.Clients * 2, MaxIdleConnsPerHost: o.Clients * 2,
		IdleConnTimeout: time.Minute, DisableCompression: true},
		// Sign-ins queue behind bcrypt: 32 of them at cost 12 on a busy
		// 2-core machine take tens of seconds, which is slow, not broken.
		Timeout: 5 * time.Minute}
	if err := w.authenticate(ctx); err != nil {
		return err
	}

	for i, n := range o.FlagCounts {
		if i > 0 {
			t := time.Now()
			if err := w.growFlags(ctx, n); err != nil {
				return err
			}
			report.Seeding = append(report.Seeding, seedTime{Flags: n, Seconds: time.Since(t).Seconds()})
			fmt.Fprintf(stdout, "grew the environment to %d flags in %.1fs\n", n, time.Since(t).Seconds())
		}
		for _, sc := range benchScenarios {
			if !slices.Contains(o.Scenarios, sc.name) || (!sc.perSize && i > 0) {
				continue
			}
			var floorRPS float64
			for _, target := range []string{targetFloor, targetBunting} {
				if target == targetFloor && sc.noFloor {
					continue
				}
				r, err := w.measure(ctx, sc, target)
				if err != nil {
					return fmt.Errorf("%s against %s: %w", sc.name, target, err)
				}
				if target == targetFloor {
					floorRPS = r.RPS
				} else if floorRPS > 0 {
					ratio := round(r.RPS/floorRPS, 3)
					r.RatioToFloor = &ratio
				}
				report.Results = append(report.Results, r)
				fmt.Fprintf(stdout, "  %-20s %9d flags  %-7s %8.1f req/s  p99 %7.2f ms  %d errors\n",
					sc.name, n, target, r.RPS, r.P99Ms, r.Errors)
			}
		}
	}
	report.PeakRSSMB = round(float64(procStatusKB(w.childPID, "VmHWM"))/1024, 1)
	if sink != nil {
		report.OTLP = sink.stats()
		fmt.Fprintf(stdout, "the OTLP receiver was sent %d exports, %d bytes\n", report.OTLP.Exports, report.OTLP.Bytes)
	}
	report.Machine.LoadAfter = loadAverage()
	report.Checks = checkTargets(report)
	report.FinishedAt = time.Now().UTC()

	fmt.Fprintln(stdout)
	writeTable(stdout, report)
	data, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.JSONPath, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nresults written to %s\n", o.JSONPath)
	return nil
}

// benchWorld is the seeded data and the means to reach the server and the
// floor, shared by every scenario.
type benchWorld struct {
	o    benchOptions
	pool *pgxpool.Pool

	secret                  string
	ownerEmail, ownerSecret string
	memberPassword          string
	orgID, envID, policyID  uuid.UUID
	projectID               uuid.UUID // the measured environment's
	// refSegments are used by flags' rules; patchSegments by none, so
	// patching them costs the segment's own change.
	allSegments, refSegments, patchSegments []uuid.UUID
	flags                                   int
	creator                                 uuid.UUID
	runs                                    int

	// serverSecret and clientSecret are the measured environment's, for
	// the OFREP scenarios.
	serverSecret, clientSecret string

	buntingURL, floorURL string
	childPID             int
	http                 *http.Client
	auth                 string
	stream               *streamWorld
	webhook              *hangingWebhook // while flag-hanging-webhook runs
	compareEnv           uuid.UUID       // compare-overview's other environment, once seeded
}

// seedBench migrates the database and seeds everything but the flags.
func seedBench(ctx context.Context, pool *pgxpool.Pool, o benchOptions) (*benchWorld, error) {
	if _, err := migrations.Apply(ctx, pool); err != nil {
		return nil, err
	}
	w := &benchWorld{o: o, pool: pool, secret: rand.Text() + rand.Text(), ownerEmail: "bench-owner@example.com",
		ownerSecret: rand.Text(), memberPassword: "bench-" + rand.Text()[:12]}
	keys, err := core.DeriveKeys(w.secret)
	if err != nil {
		return nil, err
	}
	st := store.New(pool, keys, slog.New(slog.DiscardHandler), core.Options{PasswordCost: o.BcryptCost})
	if _, err := st.IAM().Bootstrap(ctx, iam.Owner{Email: w.ownerEmail, Password: w.ownerSecret}); err != nil {
		return nil, fmt.Errorf("bootstrap: %w", err)
	}
	token, err := st.Tokens().MintAccessToken(ctx, w.ownerEmail, "bench", core.TokenPersonal)
	if err != nil {
		return nil, err
	}
	w.auth = token.Token
	a, err := st.IAM().Authenticate(ctx, iam.Credentials{Authorization: token.Token})
	if err != nil {
		return nil, err
	}
	w.orgID, w.creator = a.OrgID, a.UserID

	var orgKey string
	if err := pool.QueryRow(ctx, `SELECT key FROM organizations WHERE id = $1`, a.OrgID).Scan(&orgKey); err != nil {
		return nil, err
	}
	var scope string
	for i := range o.Projects {
		p, err := st.Projects().CreateProject(ctx, a, core.ProjectInput{Name: fmt.Sprintf("Project %02d", i), Key: fmt.Sprintf("project-%02d", i)})
		if err != nil {
			return nil, fmt.Errorf("create project: %w", err)
		}
		for j := len(p.Environments); j < o.EnvsPer; j++ {
			key := fmt.Sprintf("env-%d", j)
			if _, err := st.Projects().CreateEnvironment(ctx, a, p.ID, core.EnvironmentInput{Name: "Env " + key, Key: key}); err != nil {
				return nil, fmt.Errorf("create environment: %w", err)
			}
		}
		if i == 0 {
			w.projectID, w.envID = p.ID, p.Environments[0].ID
			scope = "organization/" + orgKey + ":project/" + p.Key + ":env/" + p.Environments[0].Key
		}
	}
	if w.allSegments, err = seed.InsertSegments(ctx, pool, seed.Segments{WorkspaceID: a.WorkspaceID, OrgID: a.OrgID,
		EnvID: w.envID, Scope: scope, N: o.Segments}); err != nil {
		return nil, err
	}
	half := len(w.allSegments) / 2
	w.refSegments, w.patchSegments = w.allSegments[:half], w.allSegments[half:]

	policies, err := seed.InsertPolicies(ctx, pool, a.OrgID, o.Policies)
	if err != nil {
		return nil, err
	}
	w.policyID = policies[0]
	// Hashed once: every member signs in with the same password.
	hash, err := bcrypt.GenerateFromPassword([]byte(w.memberPassword), o.BcryptCost)
	if err != nil {
		return nil, err
	}
	m, err := seed.InsertMembers(ctx, pool, seed.Organization{WorkspaceID: a.WorkspaceID, OrgID: a.OrgID,
		Members: o.Members, Groups: o.Groups, Domain: benchDomain, BasePolicy: core.DeveloperPolicyID,
		Policy: w.policyID, PasswordHash: string(hash)})
	if err != nil {
		return nil, err
	}
	// Every group holds one of the custom policies too.
	if _, err := pool.Exec(ctx, `
		INSERT INTO group_policies (group_id, policy_id)
		SELECT g, ($2::uuid[])[1 + (n - 1) % cardinality($2::uuid[])]
		FROM unnest($1::uuid[]) WITH ORDINALITY AS t(g, n)
		ON CONFLICT DO NOTHING`, m.Groups, policies); err != nil {
		return nil, fmt.Errorf("seed group policies: %w", err)
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		return nil, err
	}
	return w, nil
}

// benchDomain is the email domain stem of the seeded members.
const benchDomain = "acme"

// growFlags adds flags to the measured environment until it holds n, then
// refreshes the planner's statistics.
func (w *benchWorld) growFlags(ctx context.Context, n int) error {
	if err := seed.InsertFlags(ctx, w.pool, seed.Flags{EnvID: w.envID, Creator: w.creator, From: w.flags, To: n,
		Segments: w.refSegments}); err != nil {
		return err
	}
	w.flags = n
	_, err := w.pool.Exec(ctx, `VACUUM ANALYZE feature_flags`)
	return err
}

// authenticate picks the API credential: the owner's access token, or a
// session token from signing the owner in.
func (w *benchWorld) authenticate(ctx context.Context) error {
	if w.o.Auth == "token" {
		return nil
	}
	body, _ := json.Marshal(map[string]string{"email": w.ownerEmail, "password": w.ownerSecret})
	var out struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	if err := w.call(ctx, "POST", w.buntingURL+"/api/v1/identity/login-by-email", body, false, &out); err != nil {
		return fmt.Errorf("sign in the owner: %w", err)
	}
	w.auth = "Bearer " + out.Data.Token
	return nil
}

// call makes one request outside measurement, with the API credential when
// auth, wants 200 and decodes the answer into out unless it is nil.
func (w *benchWorld) call(ctx context.Context, method, url string, body []byte, auth bool, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if auth {
		req.Header.Set("Authorization", w.auth)
	}
	resp, err := w.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %.4096s", method, url, resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// benchChild is the server process.
type benchChild struct {
	*child
	buntingURL, floorURL string
}

// startBenchServer starts this executable as `bench-server` on two free
// loopback ports and waits until both answer.
func startBenchServer(ctx context.Context, dbURL string, w *benchWorld, o benchOptions, getenv func(string) string, sink *otlpSink) (*benchChild, error) {
	buntingAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	floorAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logLevel := getenv("BUNTING_LOG_LEVEL")
	if logLevel == "" {
		logLevel = "info" // as served: one line per request
	}
	// Tracing is on only with -otlp, so runs without it measure none.
	env := childEnv()
	if sink != nil {
		env = append(env, sink.env()...)
	}
	env = append(env, "BUNTING_ADDR="+buntingAddr, "BUNTING_DATABASE_URL="+dbURL, "BUNTING_SECRET_KEY="+w.secret,
		"BUNTING_ADMIN_EMAIL="+w.ownerEmail, "BUNTING_ADMIN_PASSWORD="+w.ownerSecret, "BUNTING_LOG_LEVEL="+logLevel,
		// OFREP providers ask once per evaluation; the default 10,000 a second
		// per secret would measure the limit.
		"BUNTING_SDK_RATE_PER_SECRET=100000000",
		// The insight scenarios send every report through one secret; the
		// per-secret write limits would measure themselves, not the writes.
		"BUNTING_SDK_END_USERS_PER_SECRET=100000000", "BUNTING_SDK_EVALUATIONS_PER_SECRET=100000000",
		"BUNTING_SDK_EXPERIMENT_EVENTS_PER_SECRET=100000000",
		// flag-hanging-webhook's receiver listens on loopback.
		"BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS=true")
	env = append(env, o.Stream.serverEnv()...)
	metricsAddr := server.MetricsOff
	if o.Metrics {
		if metricsAddr, err = freeAddr(); err != nil {
			return nil, err
		}
	}
	env = append(env, "BUNTING_METRICS_ADDR="+metricsAddr)

	logPath := o.ServerLog
	if logPath == "" {
		logPath = os.DevNull
	}
	started, err := startChild("server", logPath, env, benchServerCommand, "--floor", floorAddr)
	if err != nil {
		return nil, err
	}
	c := &benchChild{child: started, buntingURL: "http://" + buntingAddr, floorURL: "http://" + floorAddr}

	deadline := time.Now().Add(time.Minute)
	for _, u := range []string{c.buntingURL + "/health/readiness", c.floorURL + "/_bench/stats"} {
		err := c.awaitReady(ctx, deadline, 50*time.Millisecond, func() bool {
			resp, err := http.Get(u)
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}, func(err error) error {
			return fmt.Errorf("the server exited while starting (%v); run with -server-log FILE to see why", err)
		}, func() error {
			return fmt.Errorf("the server did not answer %s within a minute", u)
		})
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// procStatusKB reads a kB field (VmRSS, VmHWM) of a process's status; 0
// where /proc is missing.
func procStatusKB(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// loadAverage is the machine's 1, 5 and 15 minute load, to tell a busy
// machine's results from a quiet one's.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	fields := strings.Fields(string(data))
	if len(fields) < 3 {
		return ""
	}
	return strings.Join(fields[:3], " ")
}

func machineInfo() benchMachine {
	return benchMachine{CPUs: runtime.NumCPU(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, Go: runtime.Version(),
		LoadBefore: loadAverage()}
}
