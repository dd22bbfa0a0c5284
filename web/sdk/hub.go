package sdk

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"
	"go.opentelemetry.io/otel/trace"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/web/metrics"
)

// hub knows the open streaming connections by environment and pushes
// changes to them. It listens for changes only while connections are open.
type hub struct {
	srv *Server

	mu        sync.Mutex
	envs      map[uuid.UUID]map[*conn]struct{}
	relays    map[*conn]struct{} // relays' connections, which serve many environments
	count     int
	sub       *feed.Subscription
	stopPings chan struct{}
	closing   bool // shutting down: connections are closed, none added
}

func newHub(s *Server) *hub {
	return &hub{srv: s, envs: map[uuid.UUID]map[*conn]struct{}{}, relays: map[*conn]struct{}{}}
}

// add registers a connection, unless the server is shutting down.
func (h *hub) add(c *conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return false
	}
	if c.relay != nil {
		h.relays[c] = struct{}{}
	} else {
		conns := h.envs[c.env.EnvID]
		if conns == nil {
			conns = map[*conn]struct{}{}
			h.envs[c.env.EnvID] = conns
		}
		conns[c] = struct{}{}
	}
	h.count++
	h.srv.metrics.SDKConnectionOpened(c.typ == typeServer)
	if h.sub == nil {
		h.sub = h.srv.src.Changes().Subscribe()
		go h.run(h.sub)
		h.stopPings = make(chan struct{})
		go h.ping(h.stopPings)
	}
	return true
}

func (h *hub) isClosing() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closing
}

// shutdown stops taking connections and closes the open ones with 1001.
func (h *hub) shutdown() {
	h.mu.Lock()
	h.closing = true
	all := h.allLocked()
	h.mu.Unlock()
	for _, c := range all {
		c.close(websocket.CloseGoingAway, goingAway)
	}
}

func (h *hub) remove(c *conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.relay != nil {
		if _, ok := h.relays[c]; !ok {
			return
		}
		delete(h.relays, c)
	} else {
		conns := h.envs[c.env.EnvID]
		if _, ok := conns[c]; !ok {
			return
		}
		delete(conns, c)
		if len(conns) == 0 {
			delete(h.envs, c.env.EnvID)
		}
	}
	h.srv.metrics.SDKConnectionClosed(c.typ == typeServer)
	if h.count--; h.count == 0 {
		h.sub.Close()
		h.sub = nil
		close(h.stopPings)
	}
}

// allLocked is every open connection, relays' too; h.mu is held.
func (h *hub) allLocked() []*conn {
	all := make([]*conn, 0, h.count)
	for _, conns := range h.envs {
		for c := range conns {
			all = append(all, c)
		}
	}
	for c := range h.relays {
		all = append(all, c)
	}
	return all
}

// relayConns is the relays' open connections.
func (h *hub) relayConns() []*conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*conn, 0, len(h.relays))
	for c := range h.relays {
		out = append(out, c)
	}
	return out
}

// connections is the open connections of an environment.
func (h *hub) connections(envID uuid.UUID) []*conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*conn, 0, len(h.envs[envID]))
	for c := range h.envs[envID] {
		out = append(out, c)
	}
	return out
}

// hubTimeout bounds the reads behind one round of pushes.
const hubTimeout = 30 * time.Second

// ping sends every connection a WebSocket ping each pingInterval, until
// stop closes: one goroutine for all of them. A peer that answers nothing
// is closed by its reader.
func (h *hub) ping(stop chan struct{}) {
	t := time.NewTicker(pingInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			h.mu.Lock()
			all := h.allLocked()
			h.mu.Unlock()
			for _, c := range all {
				c.send(outgoing{ping: true})
			}
		}
	}
}

func (h *hub) run(sub *feed.Subscription) {
	for range sub.Ready() {
		h.handle(sub.Take())
	}
}

// envWork is what changed in one environment with connections.
type envWork struct {
	env      sdkdata.SDKEnv
	flags    []uuid.UUID
	segments []uuid.UUID
	secrets  bool
	// written is when the oldest of the changes was written, where the
	// notification delay starts.
	written time.Time
}

// handle pushes a batch of events to the connections they concern.
func (h *hub) handle(events []feed.Event) {
	var reset *time.Time
	work := map[uuid.UUID]*envWork{}
	h.mu.Lock()
	for _, ev := range events {
		if ev.Kind == feed.EventReset {
			if reset == nil || ev.Since.Before(*reset) {
				reset = &ev.Since
			}
			continue
		}
		for envID, conns := range h.envs {
			var env sdkdata.SDKEnv
			for c := range conns {
				env = c.env
				break
			}
			if !ev.Affects(env.OrgID, envID) {
				continue
			}
			w := work[envID]
			if w == nil {
				w = &envWork{env: env}
				work[envID] = w
			}
			if !ev.At.IsZero() && (w.written.IsZero() || ev.At.Before(w.written)) {
				w.written = ev.At
			}
			switch ev.Kind {
			case feed.EventFlag:
				w.flags = append(w.flags, ev.ID)
			case feed.EventSegment:
				w.segments = append(w.segments, ev.ID)
			case feed.EventEnv:
				w.secrets = true
			}
		}
	}
	h.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), hubTimeout)
	defer cancel()
	if h.srv.tracer != nil && len(work) > 0 {
		var span trace.Span
		ctx, span = notifySpan(ctx, h.srv.tracer, events, len(work))
		defer span.End()
	}
	if reset != nil {
		h.catchUp(*reset)
	}
	h.pushRelays(ctx, events)
	for envID, w := range work {
		if w.secrets {
			h.recheck(ctx, envID)
		}
		if len(w.flags)+len(w.segments) > 0 {
			h.pushChanges(ctx, w)
		}
	}
}

// catchUp has every connection patched with what changed since changes may
// have gone unseen.
func (h *hub) catchUp(since time.Time) {
	h.mu.Lock()
	var all []*conn
	for _, conns := range h.envs {
		for c := range conns {
			all = append(all, c)
		}
	}
	h.mu.Unlock()
	req := syncRequest{want: true, since: since.UnixMilli() - catchUpMargin}
	// A few goroutines patch them all, in the background: one each would
	// hold a stack per connection at once (80 MB at 10,000).
	go func() {
		next := make(chan *conn)
		var wg sync.WaitGroup
		for range catchUpWorkers {
			wg.Go(func() {
				for c := range next {
					ctx, cancel := context.WithTimeout(context.Background(), hubTimeout)
					c.sync(ctx, req)
					cancel()
				}
			})
		}
		for _, c := range all {
			next <- c
		}
		close(next)
		wg.Wait()
	}()
}

// catchUpWorkers is how many connections a catch-up patches at once.
const catchUpWorkers = 8

// recheck closes the connections of an environment whose secret no longer
// opens it (removed, or the environment deleted).
func (h *hub) recheck(ctx context.Context, envID uuid.UUID) {
	for _, c := range h.connections(envID) {
		env, err := h.srv.cache.secretEnv(ctx, c.place.secret)
		switch {
		case errors.Is(err, core.ErrUnauthenticated) || (err == nil && env.EnvID != c.env.EnvID):
			c.close(closeInvalid, "invalid request, close by server")
		case err != nil:
			h.srv.log.Warn("streaming: checking a secret", "err", err)
		}
	}
}

// pushChanges sends the changed flags and segments of one environment to
// its connections, as FeatBit does: the items to server SDKs, the changed
// flags evaluated for their user to client SDKs. Deletions send nothing;
// archiving a flag or segment is a change.
func (h *hub) pushChanges(ctx context.Context, w *envWork) {
	snap, err := h.srv.cache.get(ctx, w.env)
	if err != nil {
		h.srv.log.Warn("streaming: reading changes", "env", w.env.EnvID, "err", err)
		return
	}
	var flags []*flagstore.Flag
	seen := map[uuid.UUID]bool{}
	for _, id := range w.flags {
		if f := snap.byID[id]; f != nil && !seen[id] {
			flags, seen[id] = append(flags, f), true
		}
	}
	server := serverPayload{EventType: eventPatch, FeatureFlags: []flagstore.Flag{}, Segments: []sdkSegment{}}
	for _, f := range flags {
		server.FeatureFlags = append(server.FeatureFlags, sdkFlag(f))
	}
	for _, id := range w.segments {
		if sg := snap.segments[id]; sg != nil && !seen[id] {
			server.Segments, seen[id] = append(server.Segments, toSDKSegment(sg)), true
		}
	}
	// The server SDKs' message is encoded and framed once, and its bytes
	// written to each of them.
	var serverMsg *websocket.PreparedMessage
	if len(server.FeatureFlags)+len(server.Segments) > 0 {
		serverMsg = prepare(encode("data-sync", server))
	}
	conns := h.connections(w.env.EnvID)
	// The push is done when its last message is written (or dropped with
	// its connection); the extra one is this loop's, so the push cannot be
	// done before every connection had its message queued.
	var tr *pushTracker
	if h.srv.metrics != nil {
		tr = &pushTracker{m: h.srv.metrics, written: w.written}
		tr.left.Store(int32(len(conns)) + 1)
		defer tr.done()
	}
	var client *clientPatch // made for the first client SDK
	for _, c := range conns {
		if c.typ == typeServer {
			if serverMsg == nil || !c.push(func(*eval.EndUser) (outgoing, bool) { return outgoing{shared: serverMsg, pushed: tr}, true }) {
				tr.done()
			}
			continue
		}
		if len(flags) == 0 {
			tr.done()
			continue // a segment's targeting change also changes the flags that use it
		}
		if client == nil {
			client = newClientPatch(snap, flags)
		}
		sent := c.push(func(u *eval.EndUser) (outgoing, bool) {
			if u == nil {
				return outgoing{}, false
			}
			return outgoing{data: client.message(u), recycle: true, pushed: tr}, true
		})
		if !sent {
			tr.done()
		}
	}
}

// pushTracker reports a change's push to the metrics once every
// connection of the environment has been written its message.
type pushTracker struct {
	m       *metrics.Metrics
	written time.Time
	left    atomic.Int32
}

// done counts one connection done; nil tracks nothing.
func (t *pushTracker) done() {
	if t != nil && t.left.Add(-1) == 0 {
		t.m.ChangePushed(t.written)
	}
}

// maxWriters bounds the goroutines that write to connections. Writes to
// loopback or a LAN take microseconds; a peer that stops reading holds one
// writer until its write times out (writeTimeout), so it takes this many
// stuck peers at once to slow the others down.
const maxWriters = 64

// writers write the connections' queued messages: goroutines are started
// as connections have something to write, up to maxWriters, and end when
// none has; each connection is written by one writer at a time.
type writers struct {
	mu      sync.Mutex
	ready   []*conn
	running int
}

// schedule has c's queue written.
func (w *writers) schedule(c *conn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ready = append(w.ready, c)
	if w.running < maxWriters {
		w.running++
		go w.run()
	}
}

func (w *writers) run() {
	for {
		w.mu.Lock()
		if len(w.ready) == 0 {
			w.ready = nil
			w.running--
			w.mu.Unlock()
			return
		}
		c := w.ready[0]
		w.ready[0] = nil
		w.ready = w.ready[1:]
		w.mu.Unlock()
		c.flush()
	}
}
