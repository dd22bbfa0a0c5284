package server_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/web/sdk"
)

// TestStreamingCapKeepsTheAPIAnswering holds 1,000 connections, the cap,
// while more keep being refused, and calls the management API meanwhile:
// every call is answered, and the held connections keep answering. How
// fast the API answers with the streams held is bunting-bench's
// stream-fanout scenario (apiP50Ms).
func TestStreamingCapKeepsTheAPIAnswering(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,000 WebSockets")
	}
	const n = 1000
	s := newSite(t)
	s.listen()
	base, _ := url.Parse("http://bunting.test")
	h, _ := server.NewHandler(server.Config{BaseURL: base}, s.st, slog.New(slog.DiscardHandler),
		sdk.Options{Connections: sdk.Connections{Total: n, PerSecret: 2 * n, PerAddress: 2 * n}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	prod := secret(s.project("web"), core.SecretServer)
	dial := func() (*websocket.Conn, int) {
		u := "ws" + strings.TrimPrefix(srv.URL, "http") + "/streaming?type=server&token=" + url.QueryEscape(sdk.Token(prod, time.Now(), 10))
		dialer := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
		ws, res, err := dialer.Dial(u, nil)
		if err != nil {
			if res == nil {
				t.Fatalf("dial: %v", err)
			}
			return nil, res.StatusCode
		}
		t.Cleanup(func() { ws.Close() })
		return ws, http.StatusSwitchingProtocols
	}
	projects := func() {
		req, err := http.NewRequest("GET", srv.URL+"/api/v1/projects", nil)
		must(t, err)
		req.Header.Set("Authorization", s.owner)
		res, err := http.DefaultClient.Do(req)
		must(t, err)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET /api/v1/projects: %d", res.StatusCode)
		}
	}

	held := make([]*websocket.Conn, 0, n)
	for range n {
		ws, status := dial()
		if ws == nil {
			t.Fatalf("connection %d refused with %d", len(held), status)
		}
		held = append(held, ws)
	}
	// Refused upgrades keep coming while the API is measured.
	done := make(chan struct{})
	var wg sync.WaitGroup
	var refused int
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			// 503 past the total; 429 once the address's upgrade rate is spent too.
			if ws, status := dial(); ws != nil || (status != 503 && status != 429) {
				t.Errorf("past the cap: %d, want 503 or 429", status)
				return
			}
			refused++
		}
	})
	for range 50 {
		projects() // fails the test unless answered 200
	}
	close(done)
	wg.Wait()
	t.Logf("with %d connections held and %d upgrades refused meanwhile, the management API answered 50 calls", n, refused)
	for _, i := range []int{0, n / 2, n - 1} {
		if !pings(t, held[i]) {
			t.Errorf("held connection %d stopped answering", i)
		}
	}
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
