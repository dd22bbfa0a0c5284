// Command featbit-ui builds FeatBit's own Angular admin UI from FeatBit's
// source, unchanged, points it at a Bunting it starts on a fresh database,
// and walks it in headless Chromium as a new FeatBit user would, recording
// every request the UI sends and every answer. It prints which steps passed,
// which requests failed and on which routes, and exits non-zero when a step
// fails, the page throws a TypeError, or a route Bunting documents answers
// 4xx. With -record it writes the passing steps' requests as the fixture
// TestFeatBitUIFixtures replays in make test. See README.md beside it.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/bunting-flags/bunting/cmd/internal/scratchdb"
	"github.com/bunting-flags/bunting/sql/dbtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "featbit-ui:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("featbit-ui", flag.ContinueOnError)
	src := fs.String("featbit-src", os.Getenv("FEATBIT_SRC"), "FeatBit's source: a git checkout or mirror (FEATBIT_SRC)")
	commit := fs.String("commit", "", "FeatBit commit to build (default: the pinned "+pinnedCommit[:12]+")")
	other := fs.Bool("allow-other-commit", false, "build a commit other than the pinned one")
	chromium := fs.String("chromium", "/usr/bin/chromium", "the Chromium binary")
	dbServer := fs.String("database-server", dbtest.ServerURL(), "the PostgreSQL server the fresh database is made on")
	keepDB := fs.Bool("keep-database", false, "keep the walk's database afterwards")
	logFile := fs.String("log", "", "write every request and answer, as JSON, to this file")
	shots := fs.String("screenshots", "", "save a screenshot of the page where each failing step stopped into this directory")
	record := fs.String("record", "", "write the passing steps' requests as a fixture to this file (e.g. cmd/featbit-ui/testdata/walk.json)")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	if *src == "" {
		return 2, fmt.Errorf("-featbit-src (or FEATBIT_SRC) names FeatBit's git checkout")
	}
	sha, err := checkCommit(ctx, *src, *commit, *other)
	if err != nil {
		return 2, err
	}
	dist, err := builtUI(ctx, *src, sha, stderr)
	if err != nil {
		return 2, fmt.Errorf("building FeatBit's UI: %w", err)
	}
	routes, err := loadRoutes()
	if err != nil {
		return 2, err
	}

	// Three loopback servers: Bunting, the recording proxy the UI calls as
	// its API, and the UI itself.
	var addrs [3]string
	for i := range addrs {
		if addrs[i], err = freeAddr(); err != nil {
			return 2, err
		}
	}
	buntingAddr, apiAddr, uiAddr := addrs[0], addrs[1], addrs[2]
	uiOrigin := "http://" + uiAddr
	dbURL, dbName, drop, err := scratchdb.Create(ctx, *dbServer, "bunting_featbit_ui_", *keepDB)
	if err != nil {
		return 2, err
	}
	defer drop()
	if *keepDB {
		fmt.Fprintln(stderr, "featbit-ui: keeping database", dbName)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	buntingDone, err := startBunting(runCtx, dbURL, buntingAddr, uiOrigin, log)
	if err != nil {
		return 2, err
	}
	defer func() { cancel(); <-buntingDone }()
	rec := newRecorder(routes)
	if err := serveOn(runCtx, apiAddr, recordingProxy(buntingAddr, rec)); err != nil {
		return 2, err
	}
	ui, err := staticUI(dist, "http://"+apiAddr)
	if err != nil {
		return 2, err
	}
	if err := serveOn(runCtx, uiAddr, ui); err != nil {
		return 2, err
	}
	fmt.Fprintf(stderr, "featbit-ui: FeatBit %s's UI at %s, API (recorded) at %s, Bunting at %s\n", sha[:12], uiOrigin, apiAddr, buntingAddr)

	b, closeBrowser := newBrowser(runCtx, *chromium, uiOrigin, rec)
	defer closeBrowser()
	w := &walker{browser: b, shots: *shots, api: "http://" + apiAddr}
	results := walk(w, rec, stdout)

	exchanges := rec.all()
	if *logFile != "" {
		data, _ := json.MarshalIndent(exchanges, "", "  ")
		if err := os.WriteFile(*logFile, data, 0o644); err != nil {
			return 2, err
		}
	}
	failed := summary(stdout, results, exchanges, b.errors())
	if *record != "" {
		// Every step the walk could do, with its requests Bunting answered
		// (a failed request is left out; the requests after it still
		// depend on what came before, such as the sign-in).
		passed := map[string]bool{}
		for _, r := range results {
			if !r.skipped && r.err == nil {
				passed[r.name] = true
			}
		}
		f := recordFixture(sha, exchanges, passed, w.reviewerAuth)
		var data bytes.Buffer
		enc := json.NewEncoder(&data)
		enc.SetEscapeHTML(false) // matchers such as <uuid> stay legible
		enc.SetIndent("", "  ")
		if err := enc.Encode(f); err != nil {
			return 2, err
		}
		if err := os.WriteFile(*record, data.Bytes(), 0o644); err != nil {
			return 2, err
		}
		fmt.Fprintf(stdout, "\nrecorded %d requests of the %d steps done to %s\n", len(f.Requests), len(passed), *record)
	}
	if failed {
		return 1, nil
	}
	return 0, nil
}

type result struct {
	name    string
	err     error // the step could not be done: the steps that need it are skipped
	soft    []error
	skipped bool
}

func (r result) passed() bool { return !r.skipped && r.err == nil && len(r.soft) == 0 }

// walk runs the steps in order; a step whose prerequisite could not be done
// is skipped. Each step's failures are printed with every request of it
// that Bunting answered 4xx or 5xx.
func walk(w *walker, rec *recorder, out io.Writer) []result {
	done := map[string]bool{}
	var results []result
	for _, s := range steps {
		r := result{name: s.name}
		for _, n := range s.needs {
			if !done[n] && !r.skipped {
				r.skipped, r.err = true, fmt.Errorf("%q could not be done", n)
			}
		}
		mark := rec.count()
		if !r.skipped {
			w.setStep(s.name)
			w.soft = nil
			r.err = s.run(w)
			r.soft = w.soft
			done[s.name] = r.err == nil
			if !r.passed() && w.shots != "" {
				w.screenshot(s.name)
			}
		}
		status := "PASS"
		switch {
		case r.skipped:
			status = "SKIP"
		case !r.passed():
			status = "FAIL"
		}
		fmt.Fprintf(out, "%-4s %s\n", status, s.name)
		if r.skipped {
			fmt.Fprintf(out, "       %v\n", r.err)
			results = append(results, r)
			continue
		}
		for _, err := range append(r.soft, r.err) {
			if err != nil {
				fmt.Fprintf(out, "       %s\n", strings.ReplaceAll(err.Error(), "\n", "\n       "))
			}
		}
		seen, _ := rec.since(mark)
		listed := map[string]bool{}
		for _, e := range seen {
			key := fmt.Sprintf("%s %s %d", e.Method, e.Path, e.Status)
			if e.Status >= 400 && !listed[key] {
				listed[key] = true
				fmt.Fprintf(out, "       answered %d: %s %s %s\n", e.Status, e.Method, e.Path, errorCodes(e.Answer))
			}
		}
		results = append(results, r)
	}
	w.setStep("")
	return results
}

// summary prints the figures and says whether the walk failed.
func summary(out io.Writer, results []result, exchanges []*exchange, console []consoleError) bool {
	var passed, failedSteps, skipped int
	for _, r := range results {
		switch {
		case r.skipped:
			skipped++
		case !r.passed():
			failedSteps++
		default:
			passed++
		}
	}
	type routeCount struct {
		n       int
		claimed bool
		status  map[int]int
		codes   map[string]bool
		steps   map[string]bool
	}
	errorsByRoute := map[string]*routeCount{}
	var fourxx, fivexx, claimed4xx int
	for _, e := range exchanges {
		if e.Status < 400 {
			continue
		}
		if e.Status < 500 {
			fourxx++
		} else {
			fivexx++
		}
		if e.Claimed && e.Status < 500 && e.Status != 401 {
			claimed4xx++
		}
		name := routeName(e)
		rc := errorsByRoute[name]
		if rc == nil {
			rc = &routeCount{claimed: e.Claimed, status: map[int]int{}, codes: map[string]bool{}, steps: map[string]bool{}}
			errorsByRoute[name] = rc
		}
		rc.n++
		rc.status[e.Status]++
		if c := errorCodes(e.Answer); c != "" {
			rc.codes[c] = true
		}
		rc.steps[cmp.Or(e.Step, "(between steps)")] = true
	}
	var typeErrors int
	for _, c := range console {
		if strings.Contains(c.Text, "TypeError") {
			typeErrors++
		}
	}
	fmt.Fprintf(out, "\nsteps: %d passed, %d failed, %d skipped of %d\n", passed, failedSteps, skipped, len(results))
	fmt.Fprintf(out, "requests to Bunting: %d (%d answered 4xx, %d answered 5xx; %d 4xx on routes Bunting documents)\n",
		len(exchanges), fourxx, fivexx, claimed4xx)
	fmt.Fprintf(out, "console errors: %d (%d TypeError)\n", len(console), typeErrors)
	if len(errorsByRoute) > 0 {
		fmt.Fprintln(out, "\nfailed requests by route:")
		for _, name := range slices.Sorted(maps.Keys(errorsByRoute)) {
			rc := errorsByRoute[name]
			where := "not in api/openapi.yaml"
			if rc.claimed {
				where = "DOCUMENTED"
			}
			var st []string
			for _, s := range slices.Sorted(maps.Keys(rc.status)) {
				st = append(st, fmt.Sprintf("%d×%d", rc.status[s], s))
			}
			fmt.Fprintf(out, "  %-70s %s  [%s]  %s  in: %s\n", name, strings.Join(st, " "), where,
				strings.Join(slices.Sorted(maps.Keys(rc.codes)), "; "), strings.Join(slices.Sorted(maps.Keys(rc.steps)), ", "))
		}
	}
	if len(console) > 0 {
		fmt.Fprintln(out, "\nconsole errors:")
		for _, c := range console {
			fmt.Fprintf(out, "  [%s] %s\n", cmp.Or(c.Step, "-"), strings.ReplaceAll(c.Text, "\n", "\n      "))
		}
	}
	return failedSteps > 0 || typeErrors > 0 || claimed4xx > 0 || fivexx > 0
}
