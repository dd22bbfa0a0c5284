package sdk_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/web/httpx/httpxtest"
	"github.com/bunting-flags/bunting/web/sdk"
)

// from dials from a loopback address of its own (127.0.0.0/8 is all
// loopback), so one test can be several client addresses.
func from(ip string) *websocket.Dialer {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &websocket.Dialer{NetDialContext: d.DialContext}
}

// tryDial opens /streaming for a server SDK with dialer (nil: the default
// one) and returns the connection, or the HTTP status and Retry-After of a
// refused upgrade, which must close its connection.
func (in *instance) tryDial(dialer *websocket.Dialer, secret string) (*websocket.Conn, int, string) {
	in.t.Helper()
	return in.tryDialAs(dialer, "server", secret)
}

// tryDialAs is tryDial for an SDK of type typ (server or client).
func (in *instance) tryDialAs(dialer *websocket.Dialer, typ, secret string) (*websocket.Conn, int, string) {
	in.t.Helper()
	u := "ws" + strings.TrimPrefix(in.url, "http") + "/streaming?type=" + typ + "&token=" + url.QueryEscape(sdk.Token(secret, time.Now(), 10))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if dialer == nil {
		dialer = websocket.DefaultDialer
	}
	ws, res, err := dialer.DialContext(ctx, u, nil)
	if err != nil {
		if res == nil {
			in.t.Fatalf("dial: %v", err)
		}
		if !res.Close {
			// A client retrying in a loop must not pile up idle connections.
			in.t.Errorf("a refused upgrade (%d) keeps its connection open", res.StatusCode)
		}
		return nil, res.StatusCode, res.Header.Get("Retry-After")
	}
	in.t.Cleanup(func() { ws.Close() })
	return ws, http.StatusSwitchingProtocols, ""
}

// pings sends a ping on ws and waits for its pong.
func pings(t *testing.T, ws *websocket.Conn) bool {
	t.Helper()
	ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"messageType":"ping","data":null}`)); err != nil {
		return false
	}
	ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, b, err := ws.ReadMessage()
	return err == nil && string(b) == `{"messageType":"pong","data":{}}`
}

// leave closes ws as an SDK does: a normal close frame, the server's answer
// to it, then the socket.
func leave(ws *websocket.Conn) {
	ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(5*time.Second))
	ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, _, err := ws.ReadMessage(); err != nil {
			break
		}
	}
	ws.Close()
}

// TestStreamingConnectionCaps opens connections past each cap from several
// loopback addresses: the excess is refused before the upgrade (429 past an
// address's or a secret's cap, 503 past the total, with Retry-After), the
// held connections keep working, a closed one frees its place, and other
// requests are answered meanwhile.
func TestStreamingConnectionCaps(t *testing.T) {
	t.Parallel()
	dbURL, _ := dbtest.NewDatabase(t)
	var logs httpxtest.LogBuffer
	in := newInstanceWith(t, dbURL, sdk.Options{Connections: sdk.Connections{Total: 5, PerSecret: 3, PerAddress: 2},
		RefusalLog: 50 * time.Millisecond}, slog.New(slog.NewTextHandler(&logs, nil)))
	prod, dev := in.project("web")
	a, b, c := from("127.0.0.2"), from("127.0.0.3"), from("127.0.0.4")

	var held []*websocket.Conn
	open := func(dialer *websocket.Dialer, secret string, want int, what string) {
		t.Helper()
		ws, status, retry := in.tryDial(dialer, secret)
		if status != want {
			t.Fatalf("%s: upgrade answered %d, want %d", what, status, want)
		}
		if ws != nil {
			held = append(held, ws)
		} else if retry != "1" {
			t.Errorf("%s: Retry-After %q, want 1", what, retry)
		}
	}
	open(a, prod.server, 101, "first from A")
	open(a, prod.server, 101, "second from A")
	open(a, dev.server, 429, "third from A (2 per address)")
	open(b, prod.server, 101, "third with the prod secret")
	open(b, prod.server, 429, "fourth with the prod secret (3 per secret)")
	open(b, dev.server, 101, "fourth in all")
	open(c, dev.server, 101, "fifth in all")
	open(c, dev.server, 503, "sixth in all (5 in all)")

	// Other requests are answered while the cap is reached (the management
	// API's: TestStreamingCapKeepsTheAPIAnswering in cmd/internal/server).
	start := time.Now()
	if res, b := in.request("GET", "/api/public/sdk/server/latest-all?timestamp=0", nil, "Authorization", prod.server); res.StatusCode != http.StatusOK {
		t.Fatalf("polling with the streaming cap reached: %d %s", res.StatusCode, b)
	}
	t.Logf("polling answered in %v with the streaming cap reached", time.Since(start))
	for i, ws := range held {
		if !pings(t, ws) {
			t.Errorf("held connection %d stopped answering", i)
		}
	}
	// A connection that leaves frees its place.
	leave(held[0])
	waitFor(t, "a place after a close", func() bool {
		ws, status, _ := in.tryDial(a, prod.server)
		if ws != nil {
			ws.Close()
		}
		return status == 101
	})
	// Refusals are logged in summary, one line per cap and key.
	waitFor(t, "the refusal summary", func() bool { return strings.Contains(logs.String(), "limit=connections ") })
	for _, limit := range []string{`"connections per address" key=127.0.0.2`, `"connections per secret" key=`, `connections key=all`} {
		if !strings.Contains(logs.String(), "limit="+limit) {
			t.Errorf("no refusal summary for %s in\n%s", limit, logs.String())
		}
	}
	if strings.Contains(logs.String(), prod.server) {
		t.Error("a secret appears in the log")
	}
}

// TestIdentifyBurstAnswersTheLastUser sends 30 data-syncs for different
// users in a burst, as a client SDK's identify() does: past the
// per-connection rate they are not dropped; the newest is answered, so the
// last user gets their own values.
func TestIdentifyBurstAnswersTheLastUser(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	seed(prod)
	c := in.dial("client", prod.client)
	for i := range 29 {
		c.send(fmt.Sprintf(`{"messageType":"data-sync","data":{"timestamp":0,"user":{"keyId":"u-%d"}}}`, i))
	}
	c.send(`{"messageType":"data-sync","data":{"timestamp":0,"user":{"keyId":"u-false"}}}`)
	deadline := time.Now().Add(5 * time.Second)
	for {
		d := c.readSync(time.Until(deadline))
		if d.Data.UserKeyID != "u-false" {
			continue
		}
		for _, raw := range d.Data.FeatureFlags {
			if strings.Contains(string(raw), `"id":"ft-target"`) && !strings.Contains(string(raw), `"variation":"false"`) {
				t.Errorf("u-false's ft-target: %s", raw)
			}
		}
		return
	}
}

// TestShutdownClosesStreamsWithGoingAway: at shutdown every stream is
// closed with 1001, so SDKs reconnect at once, and new upgrades get 503.
func TestShutdownClosesStreamsWithGoingAway(t *testing.T) {
	t.Parallel()
	dbURL, _ := dbtest.NewDatabase(t)
	in := newInstanceWith(t, dbURL, sdk.Options{}, slog.New(slog.DiscardHandler))
	prod, _ := in.project("web")
	server, client := in.dial("server", prod.server), in.dial("client", prod.client)
	server.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
	server.readSync(5 * time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- in.sdk.Shutdown(ctx) }()
	for name, c := range map[string]*sdkConn{"server": server, "client": client} {
		if code := c.closed(); code != websocket.CloseGoingAway {
			t.Errorf("%s SDK: close code %d, want 1001", name, code)
		}
	}
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if ws, status, _ := in.tryDial(nil, prod.server); ws != nil || status != http.StatusServiceUnavailable {
		t.Errorf("an upgrade while shutting down: %d, want 503", status)
	}
}

// TestRefusalsAreLoggedInSummary sends a burst past a secret's limit: one
// summary line counts the refusals, and the request log has none of them.
func TestRefusalsAreLoggedInSummary(t *testing.T) {
	t.Parallel()
	dbURL, _ := dbtest.NewDatabase(t)
	var logs httpxtest.LogBuffer
	in := newInstanceWith(t, dbURL, sdk.Options{RefusalLog: 2 * time.Second,
		Limits: sdk.Limits{PerAddress: 0.001, AddressBurst: 1, PerSecret: 0.001, SecretBurst: 5, Failures: 1, FailureBurst: 20}},
		slog.New(slog.NewTextHandler(&logs, nil)))
	prod, _ := in.project("web")
	seed(prod)
	body := `{"context":{"targetingKey":"u1"}}`
	var ok, refused int
	for range 100 {
		res, _ := in.request("POST", "/ofrep/v1/evaluate/flags/ft-bool", body, "Authorization", prod.server)
		switch res.StatusCode {
		case 200:
			ok++
		case 429:
			refused++
		default:
			t.Fatalf("status %d", res.StatusCode)
		}
	}
	// The address allows one request a millisecond... a thousand seconds:
	// once the secret is known, only the secret's limit counts.
	if ok != 5 || refused != 95 {
		t.Fatalf("%d answered and %d refused, want 5 and 95 (the secret's burst)", ok, refused)
	}
	waitFor(t, "the refusal summary", func() bool { return strings.Contains(logs.String(), "past a limit") })
	// A marker: one more refusal, after the summary, is summed up in a
	// summary of its own, the next one logged; what the first refusals
	// logged is all before it.
	if res, _ := in.request("POST", "/ofrep/v1/evaluate/flags/ft-bool", body, "Authorization", prod.server); res.StatusCode != 429 {
		t.Fatalf("the marker request: %d, want 429", res.StatusCode)
	}
	waitFor(t, "the marker's summary", func() bool { return strings.Contains(logs.String(), " count=1 ") })
	var summaries, requests429 int
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "past a limit") && strings.Contains(line, " count=1 ") {
			continue // the marker's
		}
		if strings.Contains(line, "past a limit") {
			summaries++
			if !strings.Contains(line, `limit="requests per secret"`) || !strings.Contains(line, "count=95") ||
				strings.Contains(line, prod.server) {
				t.Errorf("summary %q, want the secret's limit, its id (never the secret) and count=95", line)
			}
		}
		if strings.Contains(line, "msg=request ") && strings.Contains(line, "status=429") {
			requests429++
		}
	}
	if summaries != 1 || requests429 != 0 {
		t.Errorf("%d summary lines and %d request lines for 95 refusals, want 1 and 0:\n%s", summaries, requests429, logs.String())
	}
}
