package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/cmd/internal/server"
)

// relay-fanout measures `bunting relay`: a relay proxy of the streaming
// environment is made through the management API, a relay (this
// executable as bench-relay: server.ServeRelay, what `bunting relay` runs)
// syncs from the server, and -streams SDK connections, server and client
// alternately, connect to the relay. Then -stream-changes changes are made
// on the server, one after the other, and each is timed from sending it
// until each connection had it (server SDKs read the change's marker;
// client SDKs the flag evaluated for their user). It also measures what the
// relay costs the server: its memory with the relay connected, and the
// processor time and statements a change costs it with every SDK behind the
// relay. There is no floor: the relay is compared with the server's own
// stream-fanout.
const (
	scenarioRelayFanout = "relay-fanout"
	benchRelayCommand   = "bench-relay"
)

// Targets of relay-fanout.
const (
	relayRSSLimitMB     = 200
	relayKBPerStreamMax = 8
	relayFanoutP99Ms    = 300
)

// relayResult is what relay-fanout measured beyond the streaming columns
// (streamResult holds the relay's memory and deliveries).
type relayResult struct {
	ServerSDKs int `json:"serverSdks"`
	ClientSDKs int `json:"clientSdks"`
	// RelayCPUMs is the relay's processor time a change.
	RelayCPUMs float64 `json:"relayCpuMs"`
	// RSSSettledMB is the relay's resident size with the streams open
	// after a forced GC that returns freed memory: what the streams hold,
	// without the garbage of setting them up (stream.rssOpenMB has it);
	// KBPerStreamSettled is (settled − before) / streams.
	RSSSettledMB       float64 `json:"rssSettledMB"`
	KBPerStreamSettled float64 `json:"kbPerStreamSettled"`
	// What the relay costs the upstream: its connections (one WebSocket),
	// its resident size before the relay and with it synced (after a forced
	// GC each), and a change's processor time and statements.
	UpstreamConnections   int     `json:"upstreamConnections"`
	UpstreamRSSBeforeMB   float64 `json:"upstreamRssBeforeMB"`
	UpstreamRSSRelayMB    float64 `json:"upstreamRssRelayMB"`
	UpstreamCPUMs         float64 `json:"upstreamCpuMs"`
	UpstreamStatements    float64 `json:"upstreamStatementsPerChange"`
	RelayReadySeconds     float64 `json:"relayReadySeconds"`
	RelayStreamsPerSecond float64 `json:"relayStreamsPerSecond"`
}

// relayChild is the relay process.
type relayChild struct {
	*child
	url       string // the relay's SDK endpoints
	statsURL  string // its memory and GC handlers
	readyTook time.Duration
}

// startRelay starts this executable as bench-relay against the server with
// key, and waits until it is ready (synced).
func (w *benchWorld) startRelay(ctx context.Context, key string, streams int) (*relayChild, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	statsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	env := append(childEnv(), "BUNTING_ADDR="+addr, "BUNTING_RELAY_UPSTREAM="+w.buntingURL, "BUNTING_RELAY_KEY="+key,
		"BUNTING_RELAY_AGENT_ID=bench-relay", "BUNTING_METRICS_ADDR="+server.MetricsOff, "BUNTING_LOG_LEVEL=warn",
		"BUNTING_SDK_CONNECTIONS="+strconv.Itoa(streams+100))
	logPath := w.o.ServerLog
	if logPath == "" {
		logPath = os.DevNull
	} else {
		logPath += ".relay"
	}
	start := time.Now()
	started, err := startChild("relay", logPath, env, benchRelayCommand, "--stats", statsAddr)
	if err != nil {
		return nil, err
	}
	c := &relayChild{child: started, url: "http://" + addr, statsURL: "http://" + statsAddr}
	var last string // the last readiness answer, for the error
	err = c.awaitReady(ctx, time.Now().Add(time.Minute), 20*time.Millisecond, func() bool {
		resp, err := http.Get(c.url + "/health/readiness")
		if err != nil {
			last = err.Error()
			return false
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		return resp.StatusCode == http.StatusOK && string(body) == "Healthy"
	}, func(err error) error {
		return fmt.Errorf("the relay exited while starting (%v); run with -server-log FILE to see why (FILE.relay)", err)
	}, func() error {
		return fmt.Errorf("the relay did not sync within a minute (readiness: %s)%s", last, logTail(logPath))
	})
	if err != nil {
		return nil, err
	}
	c.readyTook = time.Since(start)
	return c, nil
}

// logTail is the end of a log file, for an error; nothing for /dev/null.
func logTail(path string) string {
	if path == os.DevNull {
		return ""
	}
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return "; the relay's log ends:\n" + string(b)
}

// memory is the relay process's memory now.
func (c *relayChild) memory(ctx context.Context, w *benchWorld) serverMemory {
	m := serverMemory{RSSMB: round(float64(procStatusKB(c.pid, "VmRSS"))/1024, 1)}
	var r runtimeMemory
	if w.call(ctx, "GET", c.statsURL+"/_bench/memory", nil, false, &r) == nil {
		m.HeapMB, m.StacksMB, m.Goroutines = round(float64(r.HeapBytes)/(1<<20), 1), round(float64(r.StackBytes)/(1<<20), 1), r.Goroutines
	}
	return m
}

// benchRelay is the relay child: `bunting relay` (server.ServeRelay), with
// the memory and GC handlers on a second address, until standard input
// closes.
func benchRelay(ctx context.Context, getenv func(string) string, args []string) error {
	fs := flag.NewFlagSet(benchRelayCommand, flag.ContinueOnError)
	statsAddr := fs.String("stats", "", "address of the memory and GC handlers")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, rc, err := server.LoadRelayConfig(getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	registerRuntimeHandlers(e)
	// The relay's CPU profile, on the same loopback address:
	// `go tool pprof http://STATS/debug/pprof/profile?seconds=10`.
	registerProfiles(e)
	srv := &http.Server{Addr: *statsAddr, Handler: e, ReadHeaderTimeout: 10 * time.Second}
	go srv.ListenAndServe()
	defer srv.Close()
	return server.ServeRelay(ctx, cfg, rc, log)
}

// relayKey makes a relay proxy of the streaming environment through the
// management API (FeatBit's route) and returns its key, shown once.
func (w *benchWorld) relayKey(ctx context.Context, s *streamWorld) (string, error) {
	var out struct {
		Data struct {
			Key string `json:"key"`
		} `json:"data"`
	}
	body := jsonBody(map[string]any{"name": fmt.Sprintf("bench relay %d", time.Now().UnixNano()), "description": "",
		"isAllEnvs": false, "scopes": []string{s.envID.String()}, "agents": []any{}})
	if err := w.call(ctx, "POST", w.buntingURL+"/api/v1/relay-proxies", body, true, &out); err != nil {
		return "", err
	}
	if !strings.HasPrefix(out.Data.Key, "rp-") {
		return "", fmt.Errorf("no relay proxy key in the answer")
	}
	return out.Data.Key, nil
}

// clientSecret is the streaming environment's client secret.
func (w *benchWorld) streamClientSecret(ctx context.Context, s *streamWorld) (string, error) {
	var secret string
	err := w.pool.QueryRow(ctx, `SELECT value FROM env_secrets WHERE env_id = $1 AND type = 'client' ORDER BY created_at LIMIT 1`, s.envID).Scan(&secret)
	return secret, err
}

// runRelayFanout is relay-fanout (Bunting only).
func runRelayFanout(ctx context.Context, w *benchWorld, _ string) (benchResult, error) {
	o := w.o.Stream
	s, err := w.streamSetup(ctx)
	if err != nil {
		return benchResult{}, err
	}
	clientSecret, err := w.streamClientSecret(ctx, s)
	if err != nil {
		return benchResult{}, fmt.Errorf("the streaming environment's client secret: %w", err)
	}
	key, err := w.relayKey(ctx, s)
	if err != nil {
		return benchResult{}, fmt.Errorf("a relay proxy (the upstream needs the relay proxy routes): %w", err)
	}
	if err := w.settleServer(ctx); err != nil {
		return benchResult{}, err
	}
	upBefore := w.serverMemory(ctx)
	relay, err := w.startRelay(ctx, key, o.Streams)
	if err != nil {
		return benchResult{}, err
	}
	defer relay.stop()
	if err := w.settleServer(ctx); err != nil {
		return benchResult{}, err
	}
	upRelay := w.serverMemory(ctx)
	if err := w.call(ctx, "POST", relay.statsURL+"/_bench/gc", nil, false, nil); err != nil {
		return benchResult{}, err
	}
	before := relay.memory(ctx, w)

	s.runs++
	markerStem := []byte(fmt.Sprintf("relay-%d-", s.runs))
	host := hostOf(relay.url)
	var current atomic.Int64
	current.Store(-1)
	m := w.openMarkedWith(ctx, o.Streams, o.Changes, func(i int) (string, string, []byte) {
		if i%2 == 1 {
			return host, clientStreamPath(clientSecret, i), clientSyncRequest(i)
		}
		return host, streamPath(s.secret, i), dataSyncRequest
	}, func(m *markedConns, i int, msg []byte) {
		if i%2 == 0 {
			m.mark(i, msg, markerStem)
			return
		}
		// A client SDK's patch holds the flag evaluated for its user, not
		// the marker: changes are made one at a time, so a patch is the
		// current one's.
		if k := current.Load(); k >= 0 && bytes.HasPrefix(msg, patchPrefix) {
			m.markAt(int(k), i)
		}
	})
	open := relay.memory(ctx, w)
	if err := w.call(ctx, "POST", relay.statsURL+"/_bench/gc", nil, false, nil); err != nil {
		return benchResult{}, err
	}
	settled := relay.memory(ctx, w)

	upQueries, err := w.queryStats(ctx)
	if err != nil {
		return benchResult{}, err
	}
	upCPU, relayCPU, benchCPU := procCPU(w.childPID), procCPU(relay.pid), procCPU(os.Getpid())
	all, reached, firsts, busy := w.changeEach(ctx, s, m, targetBunting, o.Changes, markerStem, func(k int) { current.Store(int64(k)) })
	current.Store(-1)
	upCPU, relayCPU, benchCPU = procCPU(w.childPID)-upCPU, procCPU(relay.pid)-relayCPU, procCPU(os.Getpid())-benchCPU
	upQueriesAfter, err := w.queryStats(ctx)
	if err != nil {
		return benchResult{}, err
	}
	after := relay.memory(ctx, w)
	m.clients.closeAll()

	r := streamResultRow(scenarioRelayFanout, targetBunting, o.Flags, m.clients, busy, all)
	r.RSSMB = max(open.RSSMB, after.RSSMB)
	st := &streamResult{Connections: int(m.connected.Load()), ConnectSeconds: round(m.connectTime.Seconds(), 2),
		RSSBeforeMB: before.RSSMB, RSSOpenMB: open.RSSMB, RSSAfterMB: after.RSSMB, HeapMB: open.HeapMB, StacksMB: open.StacksMB,
		Goroutines: open.Goroutines, AllReachedMs: reached}
	if st.Connections > 0 {
		st.KBPerConnection = round((open.RSSMB-before.RSSMB)*1024/float64(st.Connections), 1)
	}
	st.summarize(reached, firsts)
	st.FullBytes, st.ChangeBytes = len(s.full), len(s.patch)
	st.ServerCPUMs, st.BenchCPUMs = perItemMs(relayCPU, o.Changes), perItemMs(benchCPU, o.Changes)
	r.Stream = st
	rr := &relayResult{ServerSDKs: (st.Connections + 1) / 2, ClientSDKs: st.Connections / 2, RelayCPUMs: st.ServerCPUMs, RSSSettledMB: settled.RSSMB,
		UpstreamConnections: 1, UpstreamRSSBeforeMB: upBefore.RSSMB, UpstreamRSSRelayMB: upRelay.RSSMB,
		UpstreamCPUMs: perItemMs(upCPU, o.Changes), RelayReadySeconds: round(relay.readyTook.Seconds(), 2)}
	if st.Connections > 0 {
		rr.KBPerStreamSettled = round((settled.RSSMB-before.RSSMB)*1024/float64(st.Connections), 1)
	}
	if m.connectTime > 0 {
		rr.RelayStreamsPerSecond = round(float64(st.Connections)/m.connectTime.Seconds(), 0)
	}
	rr.UpstreamStatements = round(float64(upQueriesAfter.Statements-upQueries.Statements)/float64(o.Changes), 1)
	r.Relay = rr
	perChange(&r, upQueries, upQueriesAfter, int64(o.Changes))
	return r, nil
}

// clientStreamPath is a client SDK's streaming URL path with a fresh token.
func clientStreamPath(secret string, i int) string {
	return strings.Replace(streamPath(secret, i), "type=server", "type=client", 1)
}

// clientSyncRequest is a client SDK's full data-sync request, for user i.
func clientSyncRequest(i int) []byte {
	return []byte(`{"messageType":"data-sync","data":{"timestamp":0,"user":{"keyId":"relay-user-` + strconv.Itoa(i) +
		`","name":"","customizedProperties":[{"name":"country","value":"us"}]}}}`)
}

// relayChecks are relay-fanout's targets.
func relayChecks(r benchReport) []benchCheck {
	var checks []benchCheck
	for _, res := range r.Results {
		if res.Scenario != scenarioRelayFanout || res.Stream == nil || res.Relay == nil {
			continue
		}
		add := func(target, value string, ok bool) {
			checks = append(checks, benchCheck{Target: target, Scenario: res.Scenario, Flags: res.Flags, Value: value, OK: ok})
		}
		st, rr := res.Stream, res.Relay
		add(fmt.Sprintf("relay process < %d MB with %d streams", relayRSSLimitMB, st.Connections),
			fmt.Sprintf("%.1f MB resident at most (%d server, %d client streams)", res.RSSMB, rr.ServerSDKs, rr.ClientSDKs), res.RSSMB < relayRSSLimitMB)
		add(fmt.Sprintf("≤ %d KB a stream, settled", relayKBPerStreamMax),
			fmt.Sprintf("%.1f KB a stream settled (%.1f MB), %.1f KB as opened", rr.KBPerStreamSettled, rr.RSSSettledMB, st.KBPerConnection),
			rr.KBPerStreamSettled <= relayKBPerStreamMax)
		add(fmt.Sprintf("a change made on the server reaches every stream of the relay, p99 < %d ms", relayFanoutP99Ms),
			fmt.Sprintf("deliveries p99 %.1f ms; all reached p50 %.1f ms, p99 %.1f ms over %d changes; the first in %.1f ms (p50); relay CPU %.0f ms, server CPU %.0f ms and %.1f statements a change",
				res.P99Ms, st.AllReachedP50Ms, st.AllReachedP99Ms, len(st.AllReachedMs), st.FirstReachedP50Ms, rr.RelayCPUMs, rr.UpstreamCPUMs, rr.UpstreamStatements),
			res.P99Ms < relayFanoutP99Ms && st.AllReachedP99Ms < relayFanoutP99Ms)
	}
	return checks
}
