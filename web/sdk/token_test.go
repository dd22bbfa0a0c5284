package sdk

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// FeatBit's own test tokens (ES/Domain/Shared/TestData.cs).
func TestParseTokenMatchesFeatBit(t *testing.T) {
	tests := []struct {
		token, secret string
		ms            int64
	}{
		{"QBPBHv3faJy3RCUO8d-QQBDDDQBZZQQXHPEJiVdN6waRfGjfNan02Ms9c0LiTD6w", "v3faJy3RCUO8d-EJiVdN6waRfGjfNan02Ms9c0LiTD6w", 1666018800754},
		{"QWSBHgpnOV3wI3kKAO9q9viC0wQWQQBDDDQBZWPXDQSdKZrVAf2U6gAnxl4lSH3w", "gpnOV3wI3kKAO9q9viC0wQWdKZrVAf2U6gAnxl4lSH3w", 1666018247603},
	}
	for _, tt := range tests {
		secret, at, err := ParseToken(tt.token)
		if err != nil || secret != tt.secret || at.UnixMilli() != tt.ms {
			t.Errorf("ParseToken(%s) = %q, %d, %v; want %q, %d", tt.token, secret, at.UnixMilli(), err, tt.secret, tt.ms)
		}
	}
}

func TestTokenRoundTrip(t *testing.T) {
	secret := "v3faJy3RCUO8d-EJiVdN6waRfGjfNan02Ms9c0LiTD6w"
	now := time.UnixMilli(1795345359520)
	for _, start := range []int{0, 2, 14, 43, 44, 99} {
		got, at, err := ParseToken(Token(secret, now, start))
		if err != nil || got != secret || !at.Equal(now) {
			t.Errorf("start %d: %q %v %v", start, got, at, err)
		}
	}
	// Secrets with "=" padding lose it in the token and get it back.
	padded := strings.Repeat("a", 42) + "=="
	if got, _, err := ParseToken(Token(padded, now, 5)); err != nil || got != padded {
		t.Errorf("padded secret: %q %v", got, err)
	}
}

func TestParseTokenRefusesMalformed(t *testing.T) {
	valid := Token("v3faJy3RCUO8d-EJiVdN6waRfGjfNan02Ms9c0LiTD6w", time.Now(), 14)
	for _, token := range []string{
		"", "QBPB", "QBPBH", "AAAAA" + valid[5:], // letters outside the digit map
		"UUUBH" + valid[5:],               // position beyond a byte
		valid[:5] + "x" + valid[5:],       // the secret one character too long
		valid[:len(valid)-5],              // too short, even padded
		"QQQUU" + strings.Repeat("Q", 10), // length beyond the payload
	} {
		if _, _, err := ParseToken(token); err == nil {
			t.Errorf("ParseToken(%q) succeeded", token)
		}
	}
}

func TestTokenLifetime(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		offset time.Duration
		fresh  bool
	}{{0, true}, {-30 * time.Second, true}, {30 * time.Second, true}, {-31 * time.Second, false}, {31 * time.Second, false}} {
		if got := tokenFresh(now.Add(tt.offset), now); got != tt.fresh {
			t.Errorf("token %v from now: fresh %v, want %v", tt.offset, got, tt.fresh)
		}
	}
}

// A peer that stops reading is closed once its queue is full; sending to it
// never waits.
func TestSlowConnectionIsClosedNotWaitedFor(t *testing.T) {
	accepted := make(chan *websocket.Conn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		accepted <- ws
	}))
	defer srv.Close()
	peer, _, err := websocket.DefaultDialer.DialContext(t.Context(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close() // never reads
	ws := <-accepted
	defer ws.Close()
	c := &conn{srv: &Server{writers: &writers{}}, ws: ws}

	msg := prepare([]byte(`{"messageType":"data-sync","data":"` + strings.Repeat("x", 64<<10) + `"}`))
	// Sending to a peer that never reads would block for good if send
	// waited for it: the sends run apart, and must end.
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i := 0; i < 10_000 && !c.closed.Load(); i++ {
			c.send(outgoing{shared: msg})
		}
	}()
	select {
	case <-sent:
	case <-time.After(time.Minute):
		t.Fatal("sending to a peer that reads nothing waits for it")
	}
	if !c.closed.Load() {
		t.Fatal("a peer that reads nothing is still open after 640 MB")
	}
}
