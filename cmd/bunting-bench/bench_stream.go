package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	_ "net/http/pprof" // the floor address serves /debug/pprof, to profile a run
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/seed"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/web/sdk"
)

// The streaming scenarios hold FeatBit server-SDK connections (the
// /streaming WebSocket) against the server and its floor:
//
//   - stream-fanout connects -streams connections, each waiting for its
//     full data-sync, then makes -stream-changes flag changes one after the
//     other and measures for each the time from sending the change until
//     each connection received it, and the server's memory at N connections.
//   - stream-storm opens -storm-rate new connections a second for
//     -storm-duration against a warm server and measures each connection's
//     time from dialing to its full data-sync.
//
// Both use their own environment with -stream-flags flags, so what the API
// scenarios write does not change what they send.
const (
	scenarioStreamFanout = "stream-fanout"
	scenarioStreamStorm  = "stream-storm"
)

// Targets of issue 19 for streaming.
const (
	streamRSSLimitMB  = 256
	fanoutP99Ms       = 250
	stormSyncP99Ms    = 50
	streamSourceAddrs = 64 // loopback addresses the connections come from
)

// streamOptions are the streaming scenarios' flags.
type streamOptions struct {
	Streams      int     `json:"streams"`
	Changes      int     `json:"changes"`
	StormRate    int     `json:"stormRate"`
	StormSeconds float64 `json:"stormSeconds"`
	Flags        int     `json:"flags"`
	// Profile, when set, is where CPU profiles of Bunting's changes go:
	// PROFILE-server.pprof (the server) and PROFILE-bench.pprof (the
	// benchmark's connections).
	Profile string `json:"-"`
}

// streamFlags registers the streaming flags; the returned function applies
// the short mode's sizes to what was not set and checks the values.
func streamFlags(fs *flag.FlagSet, o *streamOptions) func(short bool, set map[string]bool) error {
	fs.IntVar(&o.Streams, "streams", 10_000, "streaming connections of stream-fanout")
	fs.IntVar(&o.Changes, "stream-changes", 20, "flag changes stream-fanout sends to the connections, one after the other")
	fs.IntVar(&o.StormRate, "storm-rate", 1000, "new streaming connections a second of stream-storm")
	storm := fs.Duration("storm-duration", 5*time.Second, "how long stream-storm opens connections")
	fs.IntVar(&o.Flags, "stream-flags", 100, "flags of the streaming scenarios' environment (what a full data-sync sends)")
	fs.StringVar(&o.Profile, "stream-profile", "", "write CPU profiles of the server and the benchmark during Bunting's stream-fanout changes to `PREFIX`-server.pprof and PREFIX-bench.pprof")
	return func(short bool, set map[string]bool) error {
		if short {
			for name, apply := range map[string]func(){
				"streams": func() { o.Streams = 50 }, "stream-changes": func() { o.Changes = 3 },
				"storm-rate": func() { o.StormRate = 50 }, "storm-duration": func() { *storm = time.Second },
				"stream-flags": func() { o.Flags = 20 },
			} {
				if !set[name] {
					apply()
				}
			}
		}
		o.StormSeconds = storm.Seconds()
		if o.Streams < 1 || o.Changes < 1 || o.StormRate < 1 || *storm <= 0 || o.Flags < 1 {
			return errors.New("-streams, -stream-changes, -storm-rate, -storm-duration and -stream-flags must be positive")
		}
		return nil
	}
}

// serverEnv raises the server's connection caps (settings) to what the
// scenarios hold, so they measure holding connections, not the caps; the
// server still keeps the total below three quarters of its file limit.
func (o streamOptions) serverEnv() []string {
	most := strconv.Itoa(o.Streams + int(float64(o.StormRate)*o.StormSeconds) + 100)
	return []string{"BUNTING_SDK_CONNECTIONS=" + most, "BUNTING_SDK_CONNECTIONS_PER_SECRET=" + most,
		"BUNTING_SDK_CONNECTIONS_PER_ORG=" + most, "BUNTING_SDK_CONNECTIONS_PER_ENV=" + most}
}

// streamResult is what a streaming scenario measured beyond the table's
// columns.
type streamResult struct {
	Connections int `json:"connections"`
	// ConnectSeconds is how long opening them took (stream-fanout).
	ConnectSeconds float64 `json:"connectSeconds,omitempty"`
	// The server process's memory: resident before the connections (after
	// a forced GC that returns freed memory), with them all open, and
	// after the changes; the Go runtime's heap and goroutine stacks and
	// the number of goroutines with them open.
	RSSBeforeMB float64 `json:"rssBeforeMB"`
	RSSOpenMB   float64 `json:"rssOpenMB"`
	RSSAfterMB  float64 `json:"rssAfterMB"`
	HeapMB      float64 `json:"heapMB"`
	StacksMB    float64 `json:"stacksMB"`
	Goroutines  int64   `json:"goroutines"`
	// KBPerConnection is (rssOpen - rssBefore) / connections.
	KBPerConnection float64 `json:"kbPerConnection"`
	// AllReachedMs is, for each change, the time until every connection
	// had it (stream-fanout), with its p50, p99 and max over the changes.
	AllReachedMs    []float64 `json:"allReachedMs,omitempty"`
	AllReachedP50Ms float64   `json:"allReachedP50Ms,omitempty"`
	AllReachedP99Ms float64   `json:"allReachedP99Ms,omitempty"`
	AllReachedMaxMs float64   `json:"allReachedMaxMs,omitempty"`
	// FirstReachedP50Ms is the median over the changes of the time until
	// the first connection had it: the write, its notification and the
	// server's reading of the change, before the fan-out itself.
	FirstReachedP50Ms float64 `json:"firstReachedP50Ms,omitempty"`
	// FullBytes and ChangeBytes are the sizes of the full data-sync and of
	// one change's message.
	FullBytes   int `json:"fullBytes"`
	ChangeBytes int `json:"changeBytes,omitempty"`
	// ServerCPUMs and BenchCPUMs are the processor time (user and system)
	// the server and the benchmark's own connections used per change
	// (stream-fanout) or per connection (stream-storm): on a shared
	// machine, what the work costs whatever else runs.
	ServerCPUMs float64 `json:"serverCpuMs"`
	BenchCPUMs  float64 `json:"benchCpuMs"`
	// SyncP50Ms and SyncP99Ms are stream-storm's times from sending the
	// data-sync request (after the upgrade) to its answer, as FeatBit's own
	// benchmark counts; the table's columns count from dialing.
	SyncP50Ms float64 `json:"syncP50Ms,omitempty"`
	SyncP99Ms float64 `json:"syncP99Ms,omitempty"`
}

// streamWorld is the streaming scenarios' environment, set up once.
type streamWorld struct {
	envID   uuid.UUID
	secret  string
	flagKey string // the flag the changes change
	// full is Bunting's full data-sync message, which the floor sends too;
	// patch is a change's message with streamProbeMarker, which the floor
	// sends with each change's marker instead.
	full, patch []byte
	runs        int
}

const streamProbeMarker = "fanout-probe-00"

var (
	dataSyncRequest = []byte(`{"messageType":"data-sync","data":{"timestamp":0}}`)
	fullPrefix      = []byte(`{"messageType":"data-sync","data":{"eventType":"full"`)
	patchPrefix     = []byte(`{"messageType":"data-sync","data":{"eventType":"patch"`)
)

// streamSetup seeds the streaming environment's flags and records what the
// floor needs to send the same bytes: Bunting's full data-sync, and one
// change's message.
func (w *benchWorld) streamSetup(ctx context.Context) (*streamWorld, error) {
	if w.stream != nil {
		return w.stream, nil
	}
	s := &streamWorld{}
	err := w.pool.QueryRow(ctx, `
		SELECT e.id, s.value FROM environments e JOIN projects p ON p.id = e.project_id
		JOIN env_secrets s ON s.env_id = e.id AND s.type = 'server'
		WHERE p.organization_id = $1 AND e.id <> $2 ORDER BY p.key, e.key, s.created_at LIMIT 1`, w.orgID, w.envID).Scan(&s.envID, &s.secret)
	if err != nil {
		return nil, fmt.Errorf("streaming needs a second environment with a server secret (-projects, -envs): %w", err)
	}
	if err := seed.InsertFlags(ctx, w.pool, seed.Flags{EnvID: s.envID, Creator: w.creator, To: w.o.Stream.Flags}); err != nil {
		return nil, err
	}
	s.flagKey = seed.FlagKey(1)

	host := hostOf(w.buntingURL)
	probe, err := dialStream(ctx, host, streamPath(s.secret, 0), streamSource(0))
	if err != nil {
		return nil, fmt.Errorf("open a stream: %w", err)
	}
	defer probe.close()
	if err := probe.write(opText, dataSyncRequest); err != nil {
		return nil, err
	}
	probe.c.SetReadDeadline(time.Now().Add(time.Minute))
	if s.full, _, err = probe.next(64 << 20); err != nil || !bytes.HasPrefix(s.full, fullPrefix) {
		return nil, fmt.Errorf("the first data-sync: %v %.100q", err, s.full)
	}
	if err := w.streamChange(ctx, s, targetBunting, streamProbeMarker); err != nil {
		return nil, err
	}
	for !bytes.Contains(s.patch, []byte(streamProbeMarker)) {
		if s.patch, _, err = probe.next(1 << 20); err != nil {
			return nil, fmt.Errorf("waiting for a change: %w", err)
		}
	}
	if err := w.floorPut(ctx, "/floor/stream/payload", s.full); err != nil {
		return nil, err
	}
	w.stream = s
	return s, nil
}

// streamChange changes the flag's individual targets to marker: through the
// API, or as the floor's write followed by its broadcast of the same bytes
// Bunting sends.
func (w *benchWorld) streamChange(ctx context.Context, s *streamWorld, target, marker string) error {
	body := jsonBody(store.TargetingInput{Targeting: &store.FlagTargeting{
		TargetUsers: []store.TargetUser{{KeyIDs: []string{marker}, VariationID: "on"}},
		Rules:       []store.FlagRule{},
		Fallthrough: store.Fallthrough{IncludedInExpt: true, Variations: []store.RolloutVariation{{ID: "on", Rollout: []float64{0, 1}, ExptRollout: 1}}},
	}})
	if target == targetBunting {
		return w.send(ctx, "PUT", w.buntingURL+"/api/v1/envs/"+s.envID.String()+"/feature-flags/"+s.flagKey+"/targeting", body, true)
	}
	if err := w.send(ctx, "PUT", w.floorURL+"/floor/envs/"+s.envID.String()+"/flags/"+s.flagKey+"/targeting", body, false); err != nil {
		return err
	}
	return w.floorPut(ctx, "/floor/stream/broadcast", bytes.ReplaceAll(s.patch, []byte(streamProbeMarker), []byte(marker)))
}

func (w *benchWorld) floorPut(ctx context.Context, path string, body []byte) error {
	return w.send(ctx, "PUT", w.floorURL+path, body, false)
}

// send makes one request outside measurement and wants a 200.
func (w *benchWorld) send(ctx context.Context, method, url string, body []byte, auth bool) error {
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
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, data)
	}
	return nil
}

// streamPath is a server SDK's streaming URL path with a fresh token.
func streamPath(secret string, i int) string {
	return "/streaming?type=server&version=2&token=" + url.QueryEscape(sdk.Token(secret, time.Now(), 2+i%10))
}

// streamTarget is where a target's streams connect.
func (w *benchWorld) streamTarget(target string, s *streamWorld, i int) (host, path string) {
	if target == targetFloor {
		return hostOf(w.floorURL), "/floor/streaming"
	}
	return hostOf(w.buntingURL), streamPath(s.secret, i)
}

func hostOf(base string) string {
	u, _ := url.Parse(base)
	return u.Host
}

// streamSource is the loopback address connection i comes from: many
// addresses, as many SDKs have, so the per-address caps and upgrade rates
// (at their defaults) do not refuse them.
func streamSource(i int) net.IP { return net.IPv4(127, 0, 1, byte(1+i%streamSourceAddrs)) }

// serverMemory is the server process's memory now.
type serverMemory struct {
	RSSMB, HeapMB, StacksMB float64
	Goroutines              int64
}

func (w *benchWorld) serverMemory(ctx context.Context) serverMemory {
	m := serverMemory{RSSMB: round(float64(procStatusKB(w.childPID, "VmRSS"))/1024, 1)}
	req, _ := http.NewRequestWithContext(ctx, "GET", w.floorURL+"/_bench/memory", nil)
	if resp, err := w.http.Do(req); err == nil {
		var r runtimeMemory
		json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		m.HeapMB, m.StacksMB, m.Goroutines = round(float64(r.HeapBytes)/(1<<20), 1), round(float64(r.StackBytes)/(1<<20), 1), r.Goroutines
	}
	return m
}

// settleServer has the server collect its garbage and return the freed
// memory, so the next resident size counts what is live.
func (w *benchWorld) settleServer(ctx context.Context) error {
	return w.send(ctx, "POST", w.floorURL+"/_bench/gc", nil, false)
}

// streamClients are open connections being measured.
type streamClients struct {
	mu      sync.Mutex
	conns   []*streamConn
	errors  int64
	samples []string
	closing atomic.Bool
	wg      sync.WaitGroup
}

func (sc *streamClients) fail(msg string) { sc.failN(1, msg) }

// failN counts n errors, described by msg.
func (sc *streamClients) failN(n int64, msg string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.errors += n
	if len(sc.samples) < maxErrorSamples {
		sc.samples = append(sc.samples, msg)
	}
}

func (sc *streamClients) add(c *streamConn) {
	sc.mu.Lock()
	sc.conns = append(sc.conns, c)
	sc.mu.Unlock()
}

// closeAll closes every connection (a close frame, then the socket) and
// waits for their readers.
func (sc *streamClients) closeAll() {
	sc.closing.Store(true)
	sc.mu.Lock()
	conns := sc.conns
	sc.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
	sc.wg.Wait()
}

// open dials connection i, asks for its data-sync and reads it; then
// passes every later message to onMessage until the connection ends. It
// reports the times from dialing and from the request to the full
// data-sync, or an error.
func (sc *streamClients) open(ctx context.Context, host, path string, i int, synced func(fromDial, fromRequest time.Duration, err error),
	onMessage func(msg []byte)) {
	start := time.Now()
	c, err := dialStream(ctx, host, path, streamSource(i))
	if err != nil {
		synced(0, 0, err)
		return
	}
	sc.add(c)
	sent := time.Now()
	if err := c.write(opText, dataSyncRequest); err != nil {
		synced(0, 0, err)
		return
	}
	first := true
	for {
		msg, _, err := c.next(64 << 10)
		if err != nil {
			if first {
				synced(0, 0, fmt.Errorf("before the data-sync: %w", err))
			} else if !sc.closing.Load() {
				sc.fail(fmt.Sprintf("connection %d ended: %v", i, err))
			}
			return
		}
		if first {
			if !bytes.HasPrefix(msg, fullPrefix) {
				synced(0, 0, fmt.Errorf("the first message is not a full data-sync: %.100q", msg))
				return
			}
			first = false
			synced(time.Since(start), time.Since(sent), nil)
			continue
		}
		onMessage(msg)
	}
}

// runFanout is stream-fanout against one target.
func runFanout(ctx context.Context, w *benchWorld, target string) (benchResult, error) {
	o := w.o.Stream
	s, err := w.streamSetup(ctx)
	if err != nil {
		return benchResult{}, err
	}
	s.runs++
	markerStem := []byte(fmt.Sprintf("fanout-%s-%d-", target, s.runs))
	if err := w.settleServer(ctx); err != nil {
		return benchResult{}, err
	}
	before := w.serverMemory(ctx)

	// received[k] counts the connections that have change k; at[k][i] is
	// when connection i got it, after the change began at started[k].
	started := make([]atomic.Int64, o.Changes)
	received := make([]atomic.Int64, o.Changes)
	at := make([][]atomic.Int64, o.Changes)
	for k := range at {
		at[k] = make([]atomic.Int64, o.Streams)
	}
	clients := &streamClients{}
	var connected atomic.Int64
	var connecting sync.WaitGroup
	sem := make(chan struct{}, 256) // dials and data-syncs in flight
	connectStart := time.Now()
	for i := range o.Streams {
		sem <- struct{}{}
		connecting.Add(1)
		clients.wg.Add(1)
		host, path := w.streamTarget(target, s, i)
		go func() {
			defer clients.wg.Done()
			once := sync.OnceFunc(func() { <-sem; connecting.Done() })
			defer once()
			clients.open(ctx, host, path, i, func(_, _ time.Duration, err error) {
				if err != nil {
					clients.fail(fmt.Sprintf("connection %d: %v", i, err))
				} else {
					connected.Add(1)
				}
				once()
			}, func(msg []byte) {
				if !bytes.HasPrefix(msg, patchPrefix) {
					return
				}
				j := bytes.Index(msg, markerStem)
				if j < 0 {
					return
				}
				rest := msg[j+len(markerStem):]
				end := bytes.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
				k, err := strconv.Atoi(string(rest[:max(end, 0)]))
				if err != nil || k < 0 || k >= o.Changes {
					return
				}
				if at[k][i].CompareAndSwap(0, time.Now().UnixNano()-started[k].Load()) {
					received[k].Add(1)
				}
			})
		}()
	}
	connecting.Wait()
	connectTime := time.Since(connectStart)
	open := w.serverMemory(ctx)

	queriesBefore, err := w.queryStats(ctx)
	if err != nil {
		return benchResult{}, err
	}
	stopProfiles := func() error { return nil }
	if o.Profile != "" && target == targetBunting {
		if stopProfiles, err = w.startProfiles(ctx, o.Profile); err != nil {
			return benchResult{}, err
		}
	}
	serverCPU, benchCPU := procCPU(w.childPID), procCPU(os.Getpid())
	all := make([]int64, 0, int(connected.Load())*o.Changes)
	reached, firsts := make([]float64, 0, o.Changes), make([]float64, 0, o.Changes)
	var busy time.Duration
	for k := range o.Changes {
		started[k].Store(time.Now().UnixNano())
		begin := time.Now()
		if err := w.streamChange(ctx, s, target, string(markerStem)+strconv.Itoa(k)); err != nil {
			clients.fail(fmt.Sprintf("change %d: %v", k, err))
			continue
		}
		deadline := time.Now().Add(30 * time.Second)
		for received[k].Load() < connected.Load() && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(200 * time.Microsecond)
		}
		busy += time.Since(begin)
		if missing := connected.Load() - received[k].Load(); missing > 0 {
			clients.failN(missing, fmt.Sprintf("change %d reached %d of %d connections within 30 s", k, received[k].Load(), connected.Load()))
		}
		var slowest int64
		first := int64(math.MaxInt64)
		for i := range at[k] {
			if ns := at[k][i].Load(); ns > 0 {
				all = append(all, ns)
				slowest, first = max(slowest, ns), min(first, ns)
			}
		}
		if slowest > 0 {
			reached, firsts = append(reached, round(float64(slowest)/1e6, 3)), append(firsts, round(float64(first)/1e6, 3))
		}
	}
	serverCPU, benchCPU = procCPU(w.childPID)-serverCPU, procCPU(os.Getpid())-benchCPU
	if err := stopProfiles(); err != nil {
		return benchResult{}, err
	}
	queriesAfter, err := w.queryStats(ctx)
	if err != nil {
		return benchResult{}, err
	}
	after := w.serverMemory(ctx)
	clients.closeAll()

	r := benchResult{Scenario: scenarioStreamFanout, Kind: "stream", Flags: o.Flags, Target: target, Seconds: round(busy.Seconds(), 3),
		Requests: int64(len(all)), Errors: clients.errors, ErrorSamples: clients.samples, RSSMB: max(open.RSSMB, after.RSSMB),
		Statements: map[string]float64{}}
	if r.ErrorSamples == nil {
		r.ErrorSamples = []string{}
	}
	st := &streamResult{Connections: int(connected.Load()), ConnectSeconds: round(connectTime.Seconds(), 2),
		RSSBeforeMB: before.RSSMB, RSSOpenMB: open.RSSMB, RSSAfterMB: after.RSSMB, HeapMB: open.HeapMB, StacksMB: open.StacksMB,
		Goroutines: open.Goroutines, AllReachedMs: reached}
	if st.Connections > 0 {
		st.KBPerConnection = round((open.RSSMB-before.RSSMB)*1024/float64(st.Connections), 1)
	}
	if len(reached) > 0 {
		sorted := slices.Clone(reached)
		slices.Sort(sorted)
		st.AllReachedP50Ms, st.AllReachedP99Ms, st.AllReachedMaxMs = percentileF(sorted, 0.5), percentileF(sorted, 0.99), sorted[len(sorted)-1]
		slices.Sort(firsts)
		st.FirstReachedP50Ms = percentileF(firsts, 0.5)
	}
	st.FullBytes, st.ChangeBytes = len(s.full), len(s.patch)
	st.ServerCPUMs, st.BenchCPUMs = perItemMs(serverCPU, o.Changes), perItemMs(benchCPU, o.Changes)
	r.Stream = st
	fillLatencies(&r, all, busy)
	perChange(&r, queriesBefore, queriesAfter, int64(o.Changes))
	return r, nil
}

// runStorm is stream-storm against one target: connections are opened on a
// fixed schedule (not when earlier ones are done), held until the storm
// ends, then closed.
func runStorm(ctx context.Context, w *benchWorld, target string) (benchResult, error) {
	o := w.o.Stream
	s, err := w.streamSetup(ctx)
	if err != nil {
		return benchResult{}, err
	}
	if err := w.settleServer(ctx); err != nil {
		return benchResult{}, err
	}
	before := w.serverMemory(ctx)
	queriesBefore, err := w.queryStats(ctx)
	if err != nil {
		return benchResult{}, err
	}
	n := max(1, int(float64(o.StormRate)*o.StormSeconds))
	serverCPU, benchCPU := procCPU(w.childPID), procCPU(os.Getpid())
	fromDial, fromRequest := make([]int64, n), make([]int64, n)
	clients := &streamClients{}
	var syncing sync.WaitGroup
	interval := time.Second / time.Duration(o.StormRate)
	start := time.Now()
	for i := range n {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		syncing.Add(1)
		clients.wg.Add(1)
		host, path := w.streamTarget(target, s, i)
		go func() {
			defer clients.wg.Done()
			once := sync.OnceFunc(syncing.Done)
			defer once()
			clients.open(ctx, host, path, i, func(dial, request time.Duration, err error) {
				if err != nil {
					clients.fail(fmt.Sprintf("connection %d: %v", i, err))
				} else {
					fromDial[i], fromRequest[i] = dial.Nanoseconds(), request.Nanoseconds()
				}
				once()
			}, func([]byte) {})
		}()
	}
	syncing.Wait()
	elapsed := time.Since(start)
	serverCPU, benchCPU = procCPU(w.childPID)-serverCPU, procCPU(os.Getpid())-benchCPU
	open := w.serverMemory(ctx)
	queriesAfter, err := w.queryStats(ctx)
	if err != nil {
		return benchResult{}, err
	}
	clients.closeAll()

	var all, requests []int64
	for i := range n {
		if fromDial[i] > 0 {
			all, requests = append(all, fromDial[i]), append(requests, fromRequest[i])
		}
	}
	r := benchResult{Scenario: scenarioStreamStorm, Kind: "stream", Flags: o.Flags, Target: target, Seconds: round(elapsed.Seconds(), 3),
		Requests: int64(len(all)), Errors: clients.errors, ErrorSamples: clients.samples, RSSMB: open.RSSMB, Statements: map[string]float64{}}
	if r.ErrorSamples == nil {
		r.ErrorSamples = []string{}
	}
	st := &streamResult{Connections: len(all), FullBytes: len(s.full), RSSBeforeMB: before.RSSMB, RSSOpenMB: open.RSSMB, RSSAfterMB: open.RSSMB,
		HeapMB: open.HeapMB, StacksMB: open.StacksMB, Goroutines: open.Goroutines}
	if len(all) > 0 {
		st.ServerCPUMs, st.BenchCPUMs = perItemMs(serverCPU, len(all)), perItemMs(benchCPU, len(all))
		st.KBPerConnection = round((open.RSSMB-before.RSSMB)*1024/float64(len(all)), 1)
		slices.Sort(requests)
		st.SyncP50Ms, st.SyncP99Ms = round(float64(percentile(requests, 0.5))/1e6, 3), round(float64(percentile(requests, 0.99))/1e6, 3)
	}
	r.Stream = st
	fillLatencies(&r, all, elapsed)
	perChange(&r, queriesBefore, queriesAfter, int64(max(1, len(all))))
	return r, nil
}

// procCPU is a process's processor time so far (user and system, from
// /proc; 0 where it is missing), in the kernel's clock ticks of 10 ms.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's closing parenthesis: utime and stime
	// are the 12th and 13th.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(fields) < 13 {
		return 0
	}
	user, _ := strconv.ParseInt(fields[11], 10, 64)
	system, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(user+system) * 10 * time.Millisecond
}

func perItemMs(d time.Duration, n int) float64 {
	return round(float64(d.Milliseconds())/float64(max(n, 1)), 3)
}

// fillLatencies sets the table's rate and percentiles from nanoseconds.
func fillLatencies(r *benchResult, all []int64, elapsed time.Duration) {
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	ms := func(ns int64) float64 { return round(float64(ns)/1e6, 3) }
	if elapsed > 0 {
		r.RPS = round(float64(len(all))/elapsed.Seconds(), 1)
	}
	r.P50Ms, r.P95Ms, r.P99Ms, r.MaxMs = ms(percentile(all, 0.50)), ms(percentile(all, 0.95)), ms(percentile(all, 0.99)), ms(all[len(all)-1])
}

// perChange sets the statement columns per change (stream-fanout) or per
// connection (stream-storm).
func perChange(r *benchResult, before, after queryStats, n int64) {
	per := func(d int64) float64 { return round(float64(d)/float64(n), 2) }
	r.StatementsPerRequest = per(after.Statements - before.Statements)
	r.RoundTripsPerRequest = per(after.RoundTrips - before.RoundTrips)
	for name, c := range after.ByName {
		if d := c - before.ByName[name]; d > 0 {
			r.Statements[name] = per(d)
		}
	}
}

func percentileF(sorted []float64, p float64) float64 {
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// streamChecks holds the streaming results to issue 19's targets.
func streamChecks(r benchReport) []benchCheck {
	var checks []benchCheck
	for _, res := range r.Results {
		if res.Target != targetBunting || res.Stream == nil {
			continue
		}
		add := func(target, value string, ok bool) {
			checks = append(checks, benchCheck{Target: target, Scenario: res.Scenario, Flags: res.Flags, Value: value, OK: ok})
		}
		st := res.Stream
		switch res.Scenario {
		case scenarioStreamFanout:
			add(fmt.Sprintf("server process < %d MB with %d connections", streamRSSLimitMB, st.Connections),
				fmt.Sprintf("%.1f MB resident, %.1f KB per connection", res.RSSMB, st.KBPerConnection), res.RSSMB < streamRSSLimitMB)
			add(fmt.Sprintf("a change reaches every connection, p99 < %d ms", fanoutP99Ms),
				fmt.Sprintf("deliveries p99 %.1f ms; all reached p50 %.1f ms, p99 %.1f ms, max %.1f ms over %d changes; the first in %.1f ms (p50); server CPU %.0f ms a change",
					res.P99Ms, st.AllReachedP50Ms, st.AllReachedP99Ms, st.AllReachedMaxMs, len(st.AllReachedMs), st.FirstReachedP50Ms, st.ServerCPUMs),
				res.P99Ms < fanoutP99Ms && st.AllReachedP99Ms < fanoutP99Ms)
		case scenarioStreamStorm:
			add(fmt.Sprintf("full data-sync of a new connection p99 < %d ms while %d connect a second", stormSyncP99Ms, r.Options.Stream.StormRate),
				fmt.Sprintf("p99 %.1f ms from dialing, %.1f ms from the request; %.0f connections/s reached", res.P99Ms, st.SyncP99Ms, res.RPS),
				res.P99Ms < stormSyncP99Ms)
		}
	}
	return checks
}

// The floor of the streaming scenarios, in the server process: a bare
// gorilla/websocket server (the library's default buffers, one goroutine
// per connection, no token, no limits, no queue) that answers a data-sync
// with Bunting's own full data-sync bytes and writes a change's bytes to
// every connection in one loop. A floor change is the floor's targeting
// write (the same SQL as flag-targeting's floor) followed by that
// broadcast, so it costs what any server must: the write, then the same
// bytes to each socket.
type streamFloor struct {
	upgrader websocket.Upgrader
	full     atomic.Pointer[websocket.PreparedMessage]

	mu    sync.Mutex
	conns map[*floorStream]struct{}
}

type floorStream struct {
	mu sync.Mutex // one writer at a time
	ws *websocket.Conn
}

// registerStreamFloor adds the streaming floor and the server's memory
// statistics (and pprof, to profile a run) to the floor's address.
func registerStreamFloor(e *echo.Echo) {
	f := &streamFloor{conns: map[*floorStream]struct{}{}}
	e.GET("/floor/streaming", f.serve)
	e.PUT("/floor/stream/payload", f.setPayload)
	e.PUT("/floor/stream/broadcast", f.broadcast)
	e.GET("/_bench/memory", func(c echo.Context) error { return c.JSON(http.StatusOK, readRuntimeMemory()) })
	e.POST("/_bench/gc", func(c echo.Context) error {
		runtime.GC()
		debug.FreeOSMemory()
		return c.NoContent(http.StatusOK)
	})
	e.GET("/debug/pprof/*", echo.WrapHandler(http.DefaultServeMux))
	var profile bytes.Buffer
	e.POST("/_bench/cpu-profile/start", func(c echo.Context) error {
		profile.Reset()
		if err := pprof.StartCPUProfile(&profile); err != nil {
			return c.String(http.StatusConflict, err.Error())
		}
		return c.NoContent(http.StatusOK)
	})
	e.POST("/_bench/cpu-profile/stop", func(c echo.Context) error {
		pprof.StopCPUProfile()
		return c.Blob(http.StatusOK, "application/octet-stream", profile.Bytes())
	})
}

// startProfiles starts CPU profiles of the server and of this process; the
// function returned stops them and writes them to prefix-server.pprof and
// prefix-bench.pprof.
func (w *benchWorld) startProfiles(ctx context.Context, prefix string) (func() error, error) {
	if err := w.send(ctx, "POST", w.floorURL+"/_bench/cpu-profile/start", nil, false); err != nil {
		return nil, err
	}
	var own bytes.Buffer
	if err := pprof.StartCPUProfile(&own); err != nil {
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := os.WriteFile(prefix+"-bench.pprof", own.Bytes(), 0o644); err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, "POST", w.floorURL+"/_bench/cpu-profile/stop", nil)
		if err != nil {
			return err
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
		return os.WriteFile(prefix+"-server.pprof", data, 0o644)
	}, nil
}

func (f *streamFloor) setPayload(c echo.Context) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return c.NoContent(http.StatusBadRequest)
	}
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, body)
	if err != nil {
		return c.NoContent(http.StatusBadRequest)
	}
	f.full.Store(pm)
	return c.NoContent(http.StatusOK)
}

func (f *streamFloor) serve(c echo.Context) error {
	ws, err := f.upgrader.Upgrade(c.Response(), c.Request(), nil)
	if err != nil {
		return nil
	}
	fs := &floorStream{ws: ws}
	f.mu.Lock()
	f.conns[fs] = struct{}{}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.conns, fs)
		f.mu.Unlock()
		ws.Close()
	}()
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			return nil
		}
		if bytes.Contains(msg, []byte(`"data-sync"`)) {
			fs.mu.Lock()
			err := ws.WritePreparedMessage(f.full.Load())
			fs.mu.Unlock()
			if err != nil {
				return nil
			}
		}
	}
}

func (f *streamFloor) broadcast(c echo.Context) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return c.NoContent(http.StatusBadRequest)
	}
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, body)
	if err != nil {
		return c.NoContent(http.StatusBadRequest)
	}
	f.mu.Lock()
	conns := make([]*floorStream, 0, len(f.conns))
	for fs := range f.conns {
		conns = append(conns, fs)
	}
	f.mu.Unlock()
	for _, fs := range conns {
		fs.mu.Lock()
		fs.ws.WritePreparedMessage(pm)
		fs.mu.Unlock()
	}
	return c.NoContent(http.StatusOK)
}

// runtimeMemory is the Go runtime's view of the server process's memory.
type runtimeMemory struct {
	HeapBytes  uint64 `json:"heapBytes"`
	StackBytes uint64 `json:"stackBytes"`
	TotalBytes uint64 `json:"totalBytes"`
	Goroutines int64  `json:"goroutines"`
}

func readRuntimeMemory() runtimeMemory {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"},
		{Name: "/memory/classes/total:bytes"}, {Name: "/sched/goroutines:goroutines"}}
	metrics.Read(samples)
	return runtimeMemory{HeapBytes: samples[0].Value.Uint64(), StackBytes: samples[1].Value.Uint64(), TotalBytes: samples[2].Value.Uint64(),
		Goroutines: int64(samples[3].Value.Uint64())}
}

// streamConn is the benchmark's side of a streaming connection: a minimal
// WebSocket client (RFC 6455: the upgrade, masked frames out, frames in,
// pings answered) that holds little, so ten thousand fit beside the server.
type streamConn struct {
	c   net.Conn
	br  *bufio.Reader
	wmu sync.Mutex
}

// WebSocket opcodes.
const (
	opContinuation = 0
	opText         = 1
	opClose        = 8
	opPing         = 9
	opPong         = 10
)

func dialStream(ctx context.Context, host, path string, source net.IP) (*streamConn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: source}, Timeout: 30 * time.Second}
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	var key [16]byte
	rand.Read(key[:])
	c.SetDeadline(time.Now().Add(30 * time.Second))
	req := "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + base64.StdEncoding.EncodeToString(key[:]) + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReaderSize(c, 1024)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		c.Close()
		return nil, fmt.Errorf("upgrade answered %s", resp.Status)
	}
	c.SetDeadline(time.Time{})
	return &streamConn{c: c, br: br}, nil
}

// write sends one masked frame.
func (s *streamConn) write(op byte, p []byte) error {
	buf := make([]byte, 0, 14+len(p))
	buf = append(buf, 0x80|op)
	switch n := len(p); {
	case n < 126:
		buf = append(buf, 0x80|byte(n))
	case n < 1<<16:
		buf = append(buf, 0x80|126, byte(n>>8), byte(n))
	default:
		buf = append(buf, 0x80|127)
		buf = binary.BigEndian.AppendUint64(buf, uint64(n))
	}
	var mask [4]byte
	binary.LittleEndian.PutUint32(mask[:], mrand.Uint32())
	buf = append(buf, mask[:]...)
	for i, b := range p {
		buf = append(buf, b^mask[i%4])
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := s.c.Write(buf)
	return err
}

// next reads the next data message, answering pings on the way. It keeps
// at most keep bytes of it (reading and dropping the rest) and returns its
// whole length too.
func (s *streamConn) next(keep int) ([]byte, int, error) {
	var msg []byte
	total := 0
	for {
		var h [2]byte
		if _, err := io.ReadFull(s.br, h[:]); err != nil {
			return nil, 0, err
		}
		fin, op, n := h[0]&0x80 != 0, h[0]&0x0f, uint64(h[1]&0x7f)
		if h[1]&0x80 != 0 {
			return nil, 0, errors.New("the server masked a frame")
		}
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(s.br, b[:]); err != nil {
				return nil, 0, err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(s.br, b[:]); err != nil {
				return nil, 0, err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		if op >= opClose {
			p := make([]byte, n)
			if _, err := io.ReadFull(s.br, p); err != nil {
				return nil, 0, err
			}
			switch op {
			case opPing:
				if err := s.write(opPong, p); err != nil {
					return nil, 0, err
				}
			case opClose:
				code := 1005
				if len(p) >= 2 {
					code = int(binary.BigEndian.Uint16(p))
				}
				return nil, 0, fmt.Errorf("closed by the server: %d %s", code, p[min(2, len(p)):])
			}
			continue
		}
		if op != opText && op != opContinuation {
			return nil, 0, fmt.Errorf("unexpected frame opcode %d", op)
		}
		take := min(int(n), max(0, keep-len(msg)))
		start := len(msg)
		msg = append(msg, make([]byte, take)...)
		if _, err := io.ReadFull(s.br, msg[start:]); err != nil {
			return nil, 0, err
		}
		if err := discard(s.br, int(n)-take); err != nil {
			return nil, 0, err
		}
		total += int(n)
		if fin {
			return msg, total, nil
		}
	}
}

// scratch buffers read what is dropped in large reads (bufio's Discard
// would read it a kilobyte at a time).
var scratch = sync.Pool{New: func() any { return new([64 << 10]byte) }}

func discard(r io.Reader, n int) error {
	buf := scratch.Get().(*[64 << 10]byte)
	defer scratch.Put(buf)
	for n > 0 {
		m, err := io.ReadFull(r, buf[:min(n, len(buf))])
		if err != nil {
			return err
		}
		n -= m
	}
	return nil
}

// close sends a normal close and closes the socket without waiting.
func (s *streamConn) close() {
	s.wmu.Lock()
	s.c.SetWriteDeadline(time.Now().Add(time.Second))
	s.c.Write([]byte{0x80 | opClose, 0x80 | 2, 0, 0, 0, 0, 0x03, 0xe8})
	s.wmu.Unlock()
	s.c.Close()
}
