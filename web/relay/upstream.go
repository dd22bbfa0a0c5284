package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"
)

// Sync states, as FeatBit's agent reports them.
const (
	StateNone        = "None"
	StateStarting    = "Starting"
	StateStable      = "Stable"
	StateInterrupted = "Interrupted"
	StateStopped     = "Stopped"
)

// Protocol timing, FeatBit's agent's.
const (
	pingEvery      = 15 * time.Second
	statusEvery    = 60 * time.Second
	handshakeLimit = 10 * time.Second
	// silenceLimit is how long the upstream may send nothing (it answers
	// every ping) before the connection counts as lost.
	silenceLimit = 2*pingEvery + 5*time.Second
	closeInvalid = 4003
)

// retryDelays are the waits before each reconnection attempt, FeatBit's
// agent's: the last repeats.
var retryDelays = []time.Duration{0, 1 * time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second,
	8 * time.Second, 13 * time.Second, 21 * time.Second, 34 * time.Second, 55 * time.Second}

// Upstream keeps the memory synced with a Bunting (or FeatBit) upstream as
// FeatBit's agent does: it registers, opens the relay-proxy WebSocket, asks
// for everything (an empty memory) or for what changed since the versions
// it holds, applies live patches, pings, and reports its status. When the
// connection is lost it keeps what it has, reconnects with back-off and
// catches up by patch; a 4003 close (the key is bad or revoked) stops it.
type Upstream struct {
	base    *url.URL
	key     string
	agentID string
	mem     *Memory
	log     *slog.Logger
	client  *http.Client

	mu         sync.Mutex
	state      string
	lastSynced time.Time
	// synced is closed at the first data set from the upstream.
	synced     chan struct{}
	syncedOnce sync.Once
}

// NewUpstream returns the client of base (Bunting's base URL) for the relay
// proxy key.
func NewUpstream(base *url.URL, key, agentID string, mem *Memory, log *slog.Logger) *Upstream {
	return &Upstream{base: base, key: key, agentID: agentID, mem: mem, log: log, state: StateNone,
		client: &http.Client{Timeout: 10 * time.Second}, synced: make(chan struct{})}
}

// Synced is closed once the first data set from the upstream is applied.
func (u *Upstream) Synced() <-chan struct{} { return u.synced }

// State is the sync state and when data last arrived.
func (u *Upstream) State() (string, time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.state, u.lastSynced
}

func (u *Upstream) setState(s string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.state = s
}

// Run registers and then syncs until ctx ends or the upstream refuses the
// key for good.
func (u *Upstream) Run(ctx context.Context) {
	u.setState(StateStarting)
	for attempt := 0; ; attempt++ {
		err := u.register(ctx)
		if err == nil {
			break
		}
		var fatal fatalError
		if errors.As(err, &fatal) {
			u.log.Error("relay: the upstream refused to register this relay; serving what it holds", "err", err)
			u.setState(StateStopped)
			return
		}
		u.log.Warn("relay: registering with the upstream", "err", err, "attempt", attempt+1)
		if !wait(ctx, retryDelays[min(attempt+1, len(retryDelays)-1)]) {
			return
		}
	}
	for attempt := 0; ; attempt++ {
		if !wait(ctx, retryDelays[min(attempt, len(retryDelays)-1)]) {
			u.setState(StateStopped)
			return
		}
		connected, err := u.session(ctx)
		if ctx.Err() != nil {
			u.setState(StateStopped)
			return
		}
		var fatal fatalError
		if errors.As(err, &fatal) {
			u.log.Error("relay: the upstream closed the connection for good; serving what it holds", "err", err)
			u.setState(StateStopped)
			return
		}
		u.setState(StateInterrupted)
		u.log.Warn("relay: lost the upstream; serving what it holds and reconnecting", "err", err)
		if connected {
			attempt = -1 // a connection that synced starts the back-off again
		}
	}
}

func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// fatalError is an answer after which FeatBit's agent stops trying.
type fatalError struct{ error }

// register announces the agent: POST /api/public/agent/register with the
// key, the agent's id as a JSON string. 403 and 4xx other than 400, 408 and
// 429 are final, as for FeatBit's agent.
func (u *Upstream) register(ctx context.Context) error {
	body, _ := json.Marshal(u.agentID)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.base.JoinPath("/api/public/agent/register").String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", u.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := u.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	io.Copy(io.Discard, io.LimitReader(res.Body, 4096))
	switch s := res.StatusCode; {
	case s < 300:
		return nil
	case s == http.StatusForbidden || (s >= 400 && s < 500 && s != 400 && s != 408 && s != 429):
		return fatalError{fmt.Errorf("register: %s", res.Status)}
	default:
		return fmt.Errorf("register: %s", res.Status)
	}
}

// streamingURL is the relay-proxy WebSocket's address.
func (u *Upstream) streamingURL() string {
	w := *u.base.JoinPath("/streaming")
	w.Scheme = map[string]string{"https": "wss"}[u.base.Scheme]
	if w.Scheme == "" {
		w.Scheme = "ws"
	}
	w.RawQuery = url.Values{"type": {"relay-proxy"}, "token": {u.key}}.Encode()
	return w.String()
}

// session is one connection: it returns when the connection ends, saying
// whether it synced.
func (u *Upstream) session(ctx context.Context) (synced bool, err error) {
	dialer := websocket.Dialer{HandshakeTimeout: handshakeLimit}
	ws, res, err := dialer.DialContext(ctx, u.streamingURL(), nil)
	if err != nil {
		if res != nil && (res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden) {
			return false, fatalError{fmt.Errorf("streaming: %s", res.Status)}
		}
		return false, err
	}
	defer ws.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { <-ctx.Done(); ws.Close() }()

	var wmu sync.Mutex
	send := func(v any) error {
		b, _ := json.Marshal(v)
		wmu.Lock()
		defer wmu.Unlock()
		ws.SetWriteDeadline(time.Now().Add(handshakeLimit))
		return ws.WriteMessage(websocket.TextMessage, b)
	}
	if err := send(u.syncRequest()); err != nil {
		return false, err
	}
	go u.keepAlive(ctx, send)

	for {
		ws.SetReadDeadline(time.Now().Add(silenceLimit))
		_, data, err := ws.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) && ce.Code == closeInvalid {
				return synced, fatalError{fmt.Errorf("closed with %d: %s", ce.Code, ce.Text)}
			}
			return synced, err
		}
		if u.handle(data) {
			if !synced {
				synced = true
				u.log.Info("relay: synced with the upstream", "serves", u.mem.Serves())
				go send(u.statusMessage())
			}
		}
	}
}

// syncRequest is the data-sync message: timestamp 0 for everything when
// the memory is empty, else the versions held, overall and per environment.
func (u *Upstream) syncRequest() any {
	type envVersion struct {
		EnvID     uuid.UUID `json:"envId"`
		Timestamp int64     `json:"timestamp"`
	}
	data := map[string]any{"timestamp": 0}
	// As FeatBit's agent: holding no item at all (version 0) asks for
	// everything again.
	if all, envs := u.mem.Versions(); all > 0 {
		list := make([]envVersion, 0, len(envs))
		for id, v := range envs {
			list = append(list, envVersion{EnvID: id, Timestamp: v})
		}
		data = map[string]any{"timestamp": all, "envs": list}
	}
	return map[string]any{"messageType": "data-sync", "data": data}
}

// handle applies one message from the upstream, reporting whether it was
// a data set (full, patch, or a live change).
func (u *Upstream) handle(data []byte) bool {
	var m struct {
		MessageType string          `json:"messageType"`
		Data        json.RawMessage `json:"data"`
	}
	if json.Unmarshal(data, &m) != nil || !strings.EqualFold(m.MessageType, "data-sync") {
		return false // pong and anything unknown
	}
	var head struct {
		EventType string `json:"eventType"`
	}
	if json.Unmarshal(m.Data, &head) != nil {
		return false
	}
	var ds DataSet
	switch head.EventType {
	case eventFull, eventPatch:
		var err error
		if ds, err = decodeDataSet(m.Data); err != nil {
			u.log.Warn("relay: an unreadable data set from the upstream", "err", err)
			return false
		}
	case "patch":
		// A live change, the server SDKs' patch: its items name their
		// environment.
		var p struct {
			FeatureFlags []json.RawMessage `json:"featureFlags"`
			Segments     []json.RawMessage `json:"segments"`
		}
		if json.Unmarshal(m.Data, &p) != nil {
			return false
		}
		ds = DataSet{EventType: eventPatch, Items: liveItems(p.FeatureFlags, p.Segments)}
	default:
		return false
	}
	// Stable before the data set is served and Synced() closed: whoever
	// sees its effect (an SDK's push, readiness, the status route) reads
	// the state it put the relay in.
	u.mu.Lock()
	u.lastSynced = time.Now()
	u.state = StateStable
	u.mu.Unlock()
	u.mem.Apply(ds)
	u.syncedOnce.Do(func() { close(u.synced) })
	return true
}

// liveItems groups a live patch's flags and segments by the environment
// each names.
func liveItems(flags, segments []json.RawMessage) []Item {
	byEnv := map[uuid.UUID]*Item{}
	item := func(raw json.RawMessage) *Item {
		var h struct {
			EnvID uuid.UUID `json:"envId"`
		}
		if json.Unmarshal(raw, &h) != nil || h.EnvID == uuid.Nil {
			return nil
		}
		it := byEnv[h.EnvID]
		if it == nil {
			it = &Item{EnvID: h.EnvID}
			byEnv[h.EnvID] = it
		}
		return it
	}
	for _, raw := range flags {
		if it := item(raw); it != nil {
			var f Item
			if json.Unmarshal([]byte(`{"featureFlags":[`+string(raw)+`]}`), &f) == nil {
				it.FeatureFlags = append(it.FeatureFlags, f.FeatureFlags...)
			}
		}
	}
	for _, raw := range segments {
		if it := item(raw); it != nil {
			var s Item
			if json.Unmarshal([]byte(`{"segments":[`+string(raw)+`]}`), &s) == nil {
				it.Segments = append(it.Segments, s.Segments...)
			}
		}
	}
	out := make([]Item, 0, len(byEnv))
	for _, it := range byEnv {
		out = append(out, *it)
	}
	return out
}

// keepAlive pings every pingEvery and reports the status every
// statusEvery, until ctx ends.
func (u *Upstream) keepAlive(ctx context.Context, send func(any) error) {
	ping, status := time.NewTicker(pingEvery), time.NewTicker(statusEvery)
	defer ping.Stop()
	defer status.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ping.C:
			send(map[string]any{"messageType": "ping", "data": map[string]any{}})
		case <-status.C:
			send(u.statusMessage())
		}
	}
}

// Status is the agent's status, as /api/public/proxy/status answers it and
// the upstream keeps it (a JSON string in autoAgents[].status).
type Status struct {
	Serves       string     `json:"serves"`
	DataVersion  int64      `json:"dataVersion"`
	SyncState    string     `json:"syncState"`
	LastSyncedAt *time.Time `json:"lastSyncedAt"`
	ReportedAt   time.Time  `json:"reportedAt"`
}

// Status is the relay's status now.
func (u *Upstream) Status() Status {
	state, last := u.State()
	all, _ := u.mem.Versions()
	st := Status{Serves: u.mem.Serves(), DataVersion: all, SyncState: state, ReportedAt: time.Now().UTC()}
	if !last.IsZero() {
		l := last.UTC()
		st.LastSyncedAt = &l
	}
	return st
}

func (u *Upstream) statusMessage() any {
	b, _ := json.Marshal(u.Status())
	return map[string]any{"messageType": "rp-agent-status", "data": map[string]any{"agentId": u.agentID, "status": string(b)}}
}
