package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/seed"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
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
//   - stream-schedule (bench_schedule.go) schedules -stream-changes changes
//     and measures the time from each one's scheduled time until each
//     connection received it.
//
// They use their own environment with -stream-flags flags, so what the API
// scenarios write does not change what they send. The management API's
// answers with stream-fanout's connections open are timed too.
const (
	scenarioStreamFanout = "stream-fanout"
	scenarioStreamStorm  = "stream-storm"
)

// Targets of the streaming scenarios.
const (
	streamRSSLimitMB  = 256
	fanoutP99Ms       = 250
	stormSyncP99Ms    = 50
	heldAPIP50Ms      = 1000 // the management API's median with the connections open
	streamSourceAddrs = 64   // loopback addresses the connections come from
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
	fs.IntVar(&o.Streams, "streams", 10_000, "streaming connections of stream-fanout and relay-fanout")
	fs.IntVar(&o.Changes, "stream-changes", 20, "flag changes stream-fanout and relay-fanout send to the connections, one after the other")
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
	// APIP50Ms and APIMaxMs are the median and slowest of apiCalls
	// management API calls made one after the other while stream-fanout's
	// connections are open (Bunting only).
	APIP50Ms float64 `json:"apiP50Ms,omitempty"`
	APIMaxMs float64 `json:"apiMaxMs,omitempty"`
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
	if err := w.streamChange(ctx, s, targetBunting, s.flagKey, streamProbeMarker); err != nil {
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

// markerTargeting is targeting whose only individual target is marker.
func markerTargeting(marker string) *flagstore.FlagTargeting {
	return &flagstore.FlagTargeting{
		TargetUsers: []flagstore.TargetUser{{KeyIDs: []string{marker}, VariationID: "on"}},
		Rules:       []flagstore.FlagRule{},
		Fallthrough: flagstore.Fallthrough{IncludedInExpt: true, Variations: []flagstore.RolloutVariation{{ID: "on", Rollout: []float64{0, 1}, ExptRollout: 1}}},
	}
}

// streamChange changes a flag's individual targets to marker: through the
// API, or as the floor's write followed by its broadcast of the same bytes
// Bunting sends (a change of the probed flag, marked).
func (w *benchWorld) streamChange(ctx context.Context, s *streamWorld, target, key, marker string) error {
	body := jsonBody(flagstore.TargetingInput{Targeting: markerTargeting(marker)})
	if target == targetBunting {
		return w.call(ctx, "PUT", w.buntingURL+"/api/v1/envs/"+s.envID.String()+"/feature-flags/"+key+"/targeting", body, true, nil)
	}
	if err := w.call(ctx, "PUT", w.floorURL+"/floor/envs/"+s.envID.String()+"/flags/"+key+"/targeting", body, false, nil); err != nil {
		return err
	}
	return w.floorPut(ctx, "/floor/stream/broadcast", bytes.ReplaceAll(s.patch, []byte(streamProbeMarker), []byte(marker)))
}

func (w *benchWorld) floorPut(ctx context.Context, path string, body []byte) error {
	return w.call(ctx, "PUT", w.floorURL+path, body, false, nil)
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
	return w.call(ctx, "POST", w.floorURL+"/_bench/gc", nil, false, nil)
}
