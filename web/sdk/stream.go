package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
)

// Close codes FeatBit's SDKs understand: 4003 stops them for good, any
// other makes them reconnect with back-off.
const (
	closeInvalid     = 4003
	closeUnavailable = websocket.CloseInternalServerErr // 1011
	closeTooSlow     = websocket.CloseTryAgainLater     // 1013
)

// Connection types of the streaming endpoint.
const (
	typeServer = "server"
	typeClient = "client"
)

// Streaming connection tuning.
const (
	sendQueue     = 64               // messages waiting for a connection before it counts as too slow
	writeTimeout  = 10 * time.Second // for one message
	pingInterval  = 30 * time.Second // WebSocket pings that find dead peers
	pingTimeout   = 15 * time.Second // after a ping, how long a peer that sends nothing has to answer
	closeWait     = 5 * time.Second  // for the peer's answer to a close
	messageRate   = 10               // messages a second a connection may send, after a burst
	messageBurst  = 20
	catchUpMargin = 5000 // ms: what a catch-up re-sends from before its start, for commits that overtook others
	// readBuffer is what each connection holds to read with: SDKs send
	// little (pings, a data-sync request with a user), and a larger message
	// is still read whole, in several reads.
	readBuffer = 256
)

// upgrader makes WebSockets that hold little while idle: a small read
// buffer, no write buffer of their own (one is taken from writeBuffers only
// while a message that is not prepared is written; prepared messages, the
// shared ones, are written from their own bytes), no compression.
var upgrader = websocket.Upgrader{
	ReadBufferSize:  readBuffer,
	WriteBufferSize: 4096,
	WriteBufferPool: &sync.Pool{},
	// Browsers connect from any site; the token, not a cookie, authenticates.
	CheckOrigin: func(*http.Request) bool { return true },
}

// streaming serves FeatBit's WebSocket protocol. Like FeatBit, it accepts
// every upgrade and then closes invalid ones with 4003, which SDKs take as
// final; a database failure closes with 1011, after which they retry. Past
// the upgrade rate of its address or a connection cap the upgrade itself is
// refused (429, or 503 past the total or while shutting down), which SDKs
// also retry with back-off.
//
// The handler returns once the connection is set up: the connection then
// lives on in one goroutine of its own (conn.serve, its reader), so it
// keeps neither the HTTP request nor the stack that served it.
func (s *Server) streaming(c echo.Context) error {
	r := c.Request()
	addr := c.RealIP()
	// A refused upgrade also closes its connection: a client retrying in a
	// loop must not pile up idle keep-alive connections, which hold
	// descriptors just as WebSockets do.
	if s.hub.isClosing() {
		s.metrics.SDKRefused(refusalKind(c), "shutting_down")
		c.Response().Header().Set("Retry-After", "1")
		c.Response().Header().Set(echo.HeaderConnection, "close")
		return c.NoContent(http.StatusServiceUnavailable)
	}
	if !s.limits.address.Allow(addr) {
		s.refuse(c, "streaming upgrades per address", addr)
		c.Response().Header().Set(echo.HeaderConnection, "close")
		return c.NoContent(http.StatusTooManyRequests)
	}
	q := r.URL.Query()
	// A relay serves no relays (FeatBit's agent refuses the type too): it
	// is closed with 4003 below, as any unknown type.
	if q.Get("type") == typeRelay && s.store != nil {
		return s.relayStreaming(c)
	}
	typ, ver := q.Get("type"), q.Get("version")
	secret, at, tokenErr := ParseToken(q.Get("token"))
	invalid := (typ != typeServer && typ != typeClient) || (ver != "" && ver != "1" && ver != "2") ||
		tokenErr != nil || !tokenFresh(at, s.now())
	// The secret is looked up before the upgrade, so the connection counts
	// against its environment's and organization's budgets, and against the
	// server or the client share by what the secret is, not what the
	// request claims.
	var env sdkdata.SDKEnv
	var err error
	if !invalid {
		env, err = s.secretEnv(c, secret)
	}
	pl := place{addr: addr, secret: secret}
	if !invalid && err == nil {
		pl.env, pl.org, pl.server = env.EnvID, env.OrgID, env.SecretType == typeServer
	}
	if status, full := s.conns.acquire(pl); status != 0 {
		s.refuse(c, full, s.capKey(full, pl))
		c.Response().Header().Set(echo.HeaderConnection, "close")
		return c.NoContent(status)
	}
	held := true // the place taken, until the connection's reader has it
	defer func() {
		if held {
			s.conns.release(pl)
		}
	}()
	ws, upgradeErr := upgrader.Upgrade(c.Response(), r, nil)
	if upgradeErr != nil {
		return nil // Upgrade has answered
	}
	c.Response().Status = http.StatusSwitchingProtocols // for the request log: Upgrade wrote it on the hijacked connection
	ctx := r.Context()
	if invalid {
		s.limits.failures.Allow(addr)
		closeNow(ws, closeInvalid, "invalid request, close by server")
		return nil
	}
	switch {
	case errors.Is(err, core.ErrUnauthenticated) || (err == nil && env.SecretType != typ):
		closeNow(ws, closeInvalid, "invalid request, close by server")
		return nil
	case errors.Is(err, core.ErrTooManyRequests):
		closeNow(ws, closeTooSlow, "too many requests, close by server")
		return nil
	case err != nil:
		s.log.WarnContext(ctx, "streaming: looking up a secret", "err", err)
		closeNow(ws, closeUnavailable, "service unavailable, close by server")
		return nil
	}
	// The type is kept as the constant, not the query's string, which would
	// hold the whole request line (the token with it) for as long as the
	// connection lives.
	cn := &conn{srv: s, ws: ws, typ: typeClient, env: env, place: pl,
		messages: rate.NewLimiter(messageRate, messageBurst), pending: noSync}
	if typ == typeServer {
		cn.typ = typeServer
	}
	if !s.hub.add(cn) {
		closeNow(ws, websocket.CloseGoingAway, goingAway)
		return nil
	}
	held = false
	go cn.serve()
	return nil
}

// closeNow closes a connection nobody else uses yet: the close frame, a
// moment for the peer's answer, then the socket.
func closeNow(ws *websocket.Conn, code int, reason string) {
	defer ws.Close()
	if ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second)) != nil {
		return
	}
	ws.SetReadDeadline(time.Now().Add(closeWait))
	for {
		if _, _, err := ws.NextReader(); err != nil {
			return
		}
	}
}

// drain reads and drops what the peer still sends until it closes the
// connection or closeWait passes.
func drain(nc net.Conn) {
	nc.SetReadDeadline(time.Now().Add(closeWait))
	io.Copy(io.Discard, nc)
}

// goingAway is the reason of the 1001 close at shutdown.
const goingAway = "server shutting down"

// capKey names what a full connection cap was counted for in the log:
// never the secret itself.
func (s *Server) capKey(full string, at place) string {
	switch full {
	case capAddress:
		return at.addr
	case capSecret:
		if env, ok := s.cache.knownSecret(at.secret); ok {
			return "secret " + env.SecretID.String()
		}
		if envID, ok := core.SecretEnvID(at.secret); ok {
			return "a secret of environment " + envID.String()
		}
		return "a malformed secret"
	case capEnv, capEnvClient:
		return "environment " + at.env.String()
	case capOrg, capOrgClient:
		return "organization " + at.org.String()
	}
	return "all"
}

// conn is one SDK's WebSocket. It has one goroutine, its reader (and, while
// a message from the SDK is answered, that answer's; see aside); messages
// to it wait in a bounded queue that the server's writers (a few goroutines
// shared by every connection, see writers) write out. So whoever sends (the
// hub, its own reader) never waits for the network, an idle connection
// holds no goroutine beyond its reader and no write buffer, and a
// connection whose queue fills up is closed, so one slow or dead peer never
// holds up anything else. The SDK reconnects and catches up.
type conn struct {
	srv      *Server
	ws       *websocket.Conn
	typ      string
	env      sdkdata.SDKEnv
	place    place // what it counts against, secret included
	messages *rate.Limiter
	// relay is set on a relay's connection (relay.go).
	relay  *relayConn
	once   sync.Once
	closed atomic.Bool

	mu      sync.Mutex
	user    *eval.EndUser // a client SDK's user, once it sent one
	syncing bool          // a data-sync answer is being made
	pending syncRequest   // what to send when it is done
	later   []byte        // the newest data-sync past the message rate, answered when it allows

	qmu     sync.Mutex
	queue   []outgoing // waiting to be written
	writing bool       // queued with the writers, or being written
}

// outgoing is a message waiting for a connection: a prepared message (its
// frame encoded once and shared by every connection it goes to), bytes of
// its own, or a ping or close frame.
type outgoing struct {
	shared *websocket.PreparedMessage
	data   []byte
	ping   bool
	close  []byte // a close frame's payload
	// recycle: data is a client patch's buffer, given back once written.
	recycle bool
	// pushed, when set, is told once the message is written or dropped.
	pushed *pushTracker
}

// dropped tells the trackers of messages that will never be written.
func dropped(q []outgoing) {
	for _, m := range q {
		m.pushed.done()
	}
}

// syncRequest is a data-sync answer to make: full, or a patch of what
// changed after since (math.MaxInt64: after what the last answer held,
// less catchUpMargin).
type syncRequest struct {
	want  bool
	full  bool
	since int64
}

var noSync = syncRequest{}

func (r syncRequest) merge(o syncRequest) syncRequest {
	if !r.want {
		return o
	}
	if !o.want {
		return r
	}
	return syncRequest{want: true, full: r.full || o.full, since: min(r.since, o.since)}
}

// serve reads the connection until it ends, then gives back its place.
// Any frame from the peer (a pong included) shows it is there; one that
// sends nothing for a ping interval and its timeout is gone.
func (c *conn) serve() {
	// Answers are made under a context of their own, not the connection's:
	// one being made when the connection ends is bounded by its reads'
	// timeouts, and a context per connection would be held for as long as
	// the connection lives.
	ctx := context.Background()
	defer func() {
		// The request's recovery middleware no longer covers this
		// goroutine: a bug met by one connection ends that connection only.
		c.recovered(recover())
		c.closed.Store(true)
		c.srv.hub.remove(c)
		c.ws.Close()
		c.srv.conns.release(c.place)
	}()
	c.ws.SetReadLimit(maxFrame)
	alive := func() { c.ws.SetReadDeadline(time.Now().Add(pingInterval + pingTimeout)) }
	alive()
	c.ws.SetPongHandler(func(string) error { alive(); return nil })
	for {
		typ, data, err := c.ws.ReadMessage()
		if err != nil {
			var ne net.Error
			switch {
			case errors.As(err, &ne) && ne.Timeout():
				c.close(websocket.CloseGoingAway, "no answer to ping")
			case errors.Is(err, websocket.ErrReadLimit):
				// The library has sent 1009; the rest of the message and the
				// peer's answer are read and dropped, since closing with them
				// unread would reset the connection and lose the close frame.
				c.closed.Store(true)
				drain(c.ws.NetConn())
			}
			return
		}
		alive()
		if typ != websocket.TextMessage {
			continue // FeatBit reads text
		}
		c.aside(func() {
			if c.deferSync(ctx, data) || !c.messages.Allow() {
				return // past the rate: a data-sync waits its turn, anything else is dropped
			}
			c.handle(ctx, data)
		})
	}
}

// aside runs fn on a goroutine of its own while the reader waits, so
// messages are still answered one at a time, in order. What answering
// takes (decoding, the snapshot, encoding) grows that goroutine's stack,
// which ends with it, not the reader's: the reader keeps its starting 4 KB
// for as long as the connection lives, where answering once grew it to 8
// KB for good (40 MB at 10,000 connections).
func (c *conn) aside(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { c.recovered(recover()) }()
		fn()
	}()
	<-done
}

// recovered logs a panic met serving the connection, if r is one, and
// closes the connection: it ends that connection only.
func (c *conn) recovered(r any) {
	if r == nil {
		return
	}
	c.srv.log.Error("streaming: a connection failed", "panic", r, "stack", string(debug.Stack()))
	c.close(closeUnavailable, "service unavailable, close by server")
}

// deferSync holds back a data-sync request past the message rate, or while
// another waits, and answers the newest one when the rate allows: a client
// SDK's identify() sends one per user change, and the last user must get
// their values however fast the changes came. It reports whether it took
// the message.
func (c *conn) deferSync(ctx context.Context, data []byte) bool {
	c.mu.Lock()
	waiting := c.later != nil
	if !waiting && c.messages.Tokens() >= 1 {
		c.mu.Unlock()
		return false
	}
	if !isDataSync(data) {
		c.mu.Unlock()
		return false
	}
	c.later = data
	c.mu.Unlock()
	if waiting {
		return true
	}
	// The reservation takes the answer's token, so messages read meanwhile
	// find none and queue behind it.
	time.AfterFunc(c.messages.Reserve().Delay(), func() {
		c.mu.Lock()
		data := c.later
		c.later = nil
		c.mu.Unlock()
		if !c.closed.Load() {
			c.handle(ctx, data)
		}
	})
	return true
}

// isDataSync reports whether a message is a data-sync request.
func isDataSync(data []byte) bool {
	var m struct {
		MessageType string `json:"messageType"`
	}
	return json.Unmarshal(data, &m) == nil && strings.EqualFold(m.MessageType, "data-sync")
}

// send queues a message; a connection that cannot keep up is closed.
func (c *conn) send(m outgoing) {
	c.qmu.Lock()
	if c.closed.Load() {
		c.qmu.Unlock()
		m.pushed.done()
		return
	}
	if len(c.queue) >= sendQueue {
		c.qmu.Unlock()
		m.pushed.done()
		c.close(closeTooSlow, "too slow, close by server")
		return
	}
	c.enqueue(m)
}

// enqueue adds m to the queue and hands the connection to the writers
// unless they have it; c.qmu is held and released.
func (c *conn) enqueue(m outgoing) {
	c.queue = append(c.queue, m)
	start := !c.writing
	c.writing = true
	c.qmu.Unlock()
	if start {
		c.srv.writers.schedule(c)
	}
}

// close ends the connection once; it never waits for the peer. What waits
// to be written is dropped for the close frame, and the socket is closed
// when the peer answers it, or after closeWait.
func (c *conn) close(code int, reason string) {
	c.once.Do(func() {
		c.qmu.Lock()
		c.closed.Store(true)
		dropped(c.queue)
		c.queue = nil
		c.enqueue(outgoing{close: websocket.FormatCloseMessage(code, reason)})
		time.AfterFunc(closeWait, func() { c.ws.Close() })
	})
}

// flush writes what waits for the connection; one writer at a time does.
func (c *conn) flush() {
	for {
		c.qmu.Lock()
		if len(c.queue) == 0 {
			c.queue, c.writing = nil, false // an idle connection keeps no queue
			c.qmu.Unlock()
			return
		}
		m := c.queue[0]
		c.queue[0] = outgoing{}
		c.queue = c.queue[1:]
		c.qmu.Unlock()
		err := c.write(m)
		m.pushed.done()
		if m.recycle {
			recyclePatch(m.data) // the write copied it into the frame, or failed
		}
		if err != nil {
			c.qmu.Lock()
			dropped(c.queue)
			c.queue, c.writing = nil, false
			c.qmu.Unlock()
			if errors.Is(err, websocket.ErrCloseSent) {
				return // closing already: the reader waits for the peer's answer
			}
			c.close(closeTooSlow, "too slow, close by server")
			c.ws.Close() // it cannot be written to any more
			return
		}
	}
}

func (c *conn) write(m outgoing) error {
	deadline := time.Now().Add(writeTimeout)
	switch {
	case m.close != nil:
		return c.ws.WriteControl(websocket.CloseMessage, m.close, deadline)
	case m.ping:
		return c.ws.WriteControl(websocket.PingMessage, nil, deadline)
	}
	c.ws.SetWriteDeadline(deadline)
	if m.shared != nil {
		return c.ws.WritePreparedMessage(m.shared)
	}
	return c.ws.WriteMessage(websocket.TextMessage, m.data)
}

// handle answers one message as FeatBit does: messages need messageType and
// data (null is fine); unknown types, malformed ones and failures get no
// answer and leave the socket open.
func (c *conn) handle(ctx context.Context, data []byte) {
	var m struct {
		MessageType *string         `json:"messageType"`
		Data        json.RawMessage `json:"data"`
	}
	if json.Unmarshal(data, &m) != nil || m.MessageType == nil || m.Data == nil {
		return
	}
	if c.relay != nil && c.relayHandle(ctx, strings.ToLower(*m.MessageType), m.Data) {
		return
	}
	switch strings.ToLower(*m.MessageType) {
	case "ping":
		c.send(outgoing{shared: pongMessage})
	case "echo":
		c.send(outgoing{data: encode("echo", m.Data)})
	case "data-sync":
		c.dataSync(ctx, m.Data)
	}
}

// dataSync answers an SDK's data-sync request: full when its timestamp is
// 0 (or absent), else a patch of what changed after it. A client SDK's
// request carries its user, who is kept for later pushes.
func (c *conn) dataSync(ctx context.Context, data json.RawMessage) {
	var req struct {
		Timestamp json.RawMessage `json:"timestamp"`
		User      *clientUser     `json:"user"`
	}
	if json.Unmarshal(data, &req) != nil {
		return
	}
	ts, ok := timestamp(req.Timestamp)
	if !ok {
		return
	}
	if c.typ == typeClient {
		u, ok := req.User.endUser()
		if !ok {
			return // FeatBit answers nothing without a user
		}
		c.mu.Lock()
		c.user = &u
		c.mu.Unlock()
		c.srv.sawEndUsers(c.env, []eval.EndUser{u}, c.srv.now())
	}
	c.sync(ctx, syncRequest{want: true, full: ts == 0, since: ts})
}

// timestamp reads a data-sync timestamp: absent or null is 0.
func timestamp(raw json.RawMessage) (int64, bool) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return 0, true
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return int64(f), true
}

// sync makes the answer to req, or, when another is being made, has that
// one follow up with it. Pushes that arrive meanwhile become a follow-up
// patch too, so an SDK never gets a full answer after a newer push.
func (c *conn) sync(ctx context.Context, req syncRequest) {
	c.mu.Lock()
	if c.syncing {
		c.pending = c.pending.merge(req)
		c.mu.Unlock()
		return
	}
	c.syncing = true
	c.mu.Unlock()
	for {
		snap, err := c.srv.cache.get(ctx, c.env)
		if err != nil {
			c.srv.log.WarnContext(ctx, "streaming: reading an environment", "err", err)
			c.mu.Lock()
			c.syncing, c.pending = false, noSync
			c.mu.Unlock()
			c.close(closeUnavailable, "service unavailable, close by server")
			return
		}
		since := req.since
		if since == math.MaxInt64 {
			since = snap.ver - catchUpMargin
		}
		c.mu.Lock()
		user := c.user
		c.mu.Unlock()
		msg, ok := c.answer(snap, user, req.full, since)
		c.mu.Lock()
		if ok {
			c.send(msg)
		}
		req, c.pending = c.pending, noSync
		if !req.want {
			c.syncing = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

// answer is a data-sync answer from snap. A client SDK without a user gets
// none. A server SDK's full answer is the snapshot's, encoded once for all.
func (c *conn) answer(snap *snapshot, user *eval.EndUser, full bool, since int64) (outgoing, bool) {
	switch {
	case c.typ == typeServer && full:
		return outgoing{shared: snap.serverFull().prepared}, true
	case c.typ == typeServer:
		return outgoing{data: encode("data-sync", serverData(snap, eventPatch, since))}, true
	case user == nil:
		return outgoing{}, false
	case full:
		return outgoing{data: encode("data-sync", clientData(snap, eventFull, since, *user))}, true
	}
	return outgoing{data: encode("data-sync", clientData(snap, eventPatch, since, *user))}, true
}

// push sends a change, unless an answer is being made: then the change
// follows that answer as a patch. It reports whether it queued msg's
// message (send tells its tracker if it drops it).
func (c *conn) push(msg func(u *eval.EndUser) (outgoing, bool)) bool {
	if c.closed.Load() {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.syncing {
		c.pending = c.pending.merge(syncRequest{want: true, since: math.MaxInt64})
		return false
	}
	if m, ok := msg(c.user); ok {
		c.send(m)
		return true
	}
	return false
}

// clientUser is a client SDK's user as it sends it; property values may be
// any JSON and are compared as text.
type clientUser struct {
	KeyID                string  `json:"keyId"`
	Name                 *string `json:"name"`
	CustomizedProperties []struct {
		Name  string          `json:"name"`
		Value json.RawMessage `json:"value"`
	} `json:"customizedProperties"`
}

func (cu *clientUser) endUser() (eval.EndUser, bool) {
	if cu == nil || strings.TrimSpace(cu.KeyID) == "" {
		return eval.EndUser{}, false
	}
	u := eval.EndUser{KeyID: cu.KeyID, Name: cu.Name}
	for _, p := range cu.CustomizedProperties {
		u.CustomizedProperties = append(u.CustomizedProperties, eval.UserProperty{Name: p.Name, Value: text(p.Value)})
	}
	return u, sdkdata.CheckEndUser(u) == nil
}

// text is a JSON value as FeatBit compares it: a string as is, anything
// else as its JSON text, null as "".
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if t := strings.TrimSpace(string(raw)); t != "null" {
		return t
	}
	return ""
}
