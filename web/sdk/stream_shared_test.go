package sdk_test

import (
	"bytes"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// Every server SDK of an environment gets the same full data-sync bytes
// (encoded once per change, and the polling endpoint answers them too), and
// a change makes new ones.
func TestServerFullDataSyncIsSharedUntilAChange(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	seed(prod)
	full := func() []byte {
		c := in.dial("server", prod.server)
		c.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
		return c.read(5 * time.Second)
	}
	a, b := full(), full()
	if !bytes.Equal(a, b) {
		t.Fatalf("two server SDKs got different full data-syncs:\n%s\n%s", a, b)
	}
	res, polled := in.request("GET", "/api/public/sdk/server/latest-all?timestamp=0", nil, "Authorization", prod.server)
	if res.StatusCode != 200 || !bytes.Equal(polled, a) {
		t.Errorf("polling answered %d with other bytes than streaming:\n%s\n%s", res.StatusCode, polled, a)
	}

	prod.put("/ft-bool/toggle/false", map[string]any{})
	in.settle() // the change's event has reached the instance
	c := full()
	if bytes.Equal(c, a) {
		t.Fatal("a change left the full data-sync as it was")
	}
	if !strings.Contains(string(c), `"key":"ft-bool"`) || strings.Count(string(c), `"key":"`) != strings.Count(string(a), `"key":"`) {
		t.Errorf("after a change, the full data-sync is %s", c)
	}
}

// A change reaches every server SDK as the same bytes.
func TestPushedChangeIsTheSameForEveryServerSDK(t *testing.T) {
	t.Parallel()
	in := newServer(t)
	prod, _ := in.project("web")
	seed(prod)
	var conns []*sdkConn
	for range 3 {
		c := in.dial("server", prod.server)
		c.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
		c.readSync(5 * time.Second)
		conns = append(conns, c)
	}
	start := time.Now()
	prod.put("/ft-bool/toggle/false", map[string]any{})
	var first []byte
	for i, c := range conns {
		var got []byte
		for !strings.Contains(string(got), `"key":"ft-bool"`) || !strings.Contains(string(got), `"isEnabled":false`) {
			got = c.read(time.Until(start.Add(pushWait)))
		}
		if i == 0 {
			first = got
		} else if !bytes.Equal(got, first) {
			t.Errorf("connection %d got other bytes:\n%s\n%s", i, got, first)
		}
	}
}

// An idle streaming connection holds one goroutine on the server (its
// reader), with a stack of its starting size even after answering a
// data-sync: no writer and no pinger of its own. Not parallel, so the
// counts are this test's.
func TestIdleStreamingConnectionsHoldOneGoroutineEach(t *testing.T) {
	in := newServer(t)
	prod, _ := in.project("web")
	seed(prod)
	settled := func() int {
		// What other tests and the setup left ending has a moment to end.
		n := runtime.NumGoroutine()
		for range 50 {
			time.Sleep(20 * time.Millisecond)
			m := runtime.NumGoroutine()
			if m == n {
				break
			}
			n = m
		}
		return n
	}
	stacks := func() uint64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/stacks:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before, stacksBefore := settled(), stacks()
	const conns = 100
	for range conns {
		c := in.dial("server", prod.server)
		c.send(`{"messageType":"data-sync","data":{"timestamp":0}}`)
		c.readSync(5 * time.Second)
	}
	// The client side (gorilla/websocket) holds no goroutine while idle, so
	// what grew is the server's.
	if grew := settled() - before; grew > conns+conns/10 {
		t.Errorf("%d idle connections added %d goroutines, want at most one each", conns, grew)
	} else {
		t.Logf("%d idle connections added %d goroutines", conns, grew)
	}
	// Answering runs on a goroutine of its own, so the reader's stack
	// stays at the runtime's starting size (4 KB here; 8 KB if answering
	// had grown it). Stacks that earlier tests freed may be reused, which
	// only lowers the count.
	if per := (int64(stacks()) - int64(stacksBefore)) / conns; per > 7<<10 {
		t.Errorf("goroutine stacks grew by %d bytes a connection, want at most 7 KiB", per)
	} else {
		t.Logf("goroutine stacks grew by %d bytes a connection", per)
	}
}
