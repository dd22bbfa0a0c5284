package server_test

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/web/httpx/httpxtest"
)

const (
	// slowGrace is the body rate's grace in TestEveryRouteRefusesTheLeastPrivileged:
	// a body slower than the rate is cut this long after its reading began.
	slowGrace = 300 * time.Millisecond
	// slowMargin is how long after slowGrace every slow body must have its
	// answer: a route still waiting then hangs on its sender.
	slowMargin = 4 * time.Second
	// slowConcurrency is how many slow bodies are sent at once.
	slowConcurrency = 64
	// slowHeapLimit bounds how far the heap in use may rise during the
	// whole slow sweep.
	slowHeapLimit = 32 << 20
	// slowChunk and slowEvery are the sender's pace: 320 bytes a second,
	// far below the 16 KiB a second the server asks for.
	slowChunk = 16
	slowEvery = 50 * time.Millisecond
)

// slowAnswer is what a route answered one caller's slow body.
type slowAnswer struct {
	route, what string
	class       routeClass
	c           *caller
	code        int // 0: none
	location    string
	took        time.Duration
	err         error
}

// slowSweep serves e over loopback with the timeouts Serve gives the
// server and sends every route, as each caller, a body announcing 64 KiB
// (4,000 bytes from a stranger, under what anyone may send) as JSON and
// as a form, arriving at 320 bytes a second, slowConcurrency at once.
// Each must be answered by what the route's class allows within
// slowGrace+slowMargin, with the heap in use rising by at most
// slowHeapLimit over the whole sweep. Routes that end a session run last.
func slowSweep(t *testing.T, e *echo.Echo, classes map[string]routeClass, keys []string, callers []*caller, env core.Environment) {
	t.Helper()
	srv := serveLoopback(t, e)
	addr := srv.Listener.Addr().String()
	var answers []slowAnswer
	var mu sync.Mutex
	start := time.Now()
	rise := httpxtest.HeapRise(func() {
		for _, last := range []bool{false, true} {
			sem := make(chan struct{}, slowConcurrency)
			var wg sync.WaitGroup
			for _, k := range keys {
				if slices.Contains(bodyIgnored, k) != last {
					continue
				}
				method, pattern, _ := strings.Cut(k, " ")
				path := fillPath(pattern, env)
				for _, c := range callers {
					for _, kind := range []string{"json", "form"} {
						sem <- struct{}{}
						wg.Go(func() {
							defer func() { <-sem }()
							a := sendSlow(addr, method, path, kind, c)
							a.route, a.class, a.c = k, classes[k], c
							a.what = k + " as " + c.name + " with a slow " + kind + " body"
							mu.Lock()
							answers = append(answers, a)
							mu.Unlock()
						})
					}
				}
			}
			wg.Wait()
		}
	})
	took := time.Since(start)
	var slowest time.Duration
	var slowestRoute string
	codes := map[int]int{}
	for _, a := range answers {
		codes[a.code]++
		if a.took > slowest {
			slowest, slowestRoute = a.took, a.what
		}
		if problem := judgeSlow(a); problem != "" {
			t.Errorf("%s (%s): %s", a.what, a.class, problem)
		}
	}
	if rise > slowHeapLimit {
		t.Errorf("the heap in use rose by %d MB during the slow sweep", rise>>20)
	}
	if codes[http.StatusRequestTimeout] == 0 {
		t.Errorf("no slow body was cut with 408: the sweep sent none slowly enough")
	}
	t.Logf("slow bodies: %d requests (%d routes, %d callers, JSON and form), %d at once, in %v: answers by status %v; "+
		"the slowest answered after %v (%s); the heap in use rose by at most %.1f MB",
		len(answers), len(keys), len(callers), slowConcurrency, took.Round(time.Millisecond), codes,
		slowest.Round(time.Millisecond), slowestRoute, float64(rise)/(1<<20))
}

// sendSlow sends one request whose body arrives slowly until the server
// answers, closes the connection, or slowGrace+slowMargin passes.
func sendSlow(addr, method, path, kind string, c *caller) slowAnswer {
	announced := 64 << 10
	if c.bearer == "" {
		announced = 4000
	}
	contentType, first := echo.MIMEApplicationJSON, "["
	if kind == "form" {
		contentType, first = echo.MIMEApplicationForm, "_csrf="+url.QueryEscape(c.csrf)+"&"
	}
	var head strings.Builder
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: bunting.test\r\nContent-Type: %s\r\nContent-Length: %d\r\n", method, path, contentType, announced)
	if c.bearer != "" {
		fmt.Fprintf(&head, "Authorization: %s\r\n", c.bearer)
	}
	if len(c.cookies) > 0 {
		cookies := make([]string, len(c.cookies))
		for i, ck := range c.cookies {
			cookies[i] = ck.Name + "=" + ck.Value
		}
		fmt.Fprintf(&head, "Cookie: %s\r\nX-CSRF-Token: %s\r\n", strings.Join(cookies, "; "), c.csrf)
	}
	head.WriteString("\r\n" + first)

	start := time.Now()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return slowAnswer{err: err}
	}
	defer conn.Close()
	// The client's deadline: no answer by then is a hang.
	conn.SetDeadline(start.Add(slowGrace + slowMargin))
	if _, err := conn.Write([]byte(head.String())); err != nil {
		return slowAnswer{err: err, took: time.Since(start)}
	}
	answered := make(chan slowAnswer, 1)
	go func() {
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- slowAnswer{err: err, took: time.Since(start)}
			return
		}
		res.Body.Close()
		answered <- slowAnswer{code: res.StatusCode, location: res.Header.Get("Location"), took: time.Since(start)}
	}()
	filler := "{},"
	if kind == "form" {
		filler = "f=1&"
	}
	chunk := strings.Repeat(filler, slowChunk/len(filler))
	sent := head.Len()
	tick := time.NewTicker(slowEvery) // the sender's pace
	defer tick.Stop()
	for {
		select {
		case a := <-answered:
			return a
		case <-tick.C:
			if sent+len(chunk) < head.Len()+announced { // never the whole body
				// A write to a connection the server closed fails, and the reader says so.
				conn.Write([]byte(chunk))
				sent += len(chunk)
			}
		}
	}
}

// judgeSlow says what is wrong with a route's answer to a slow body, or "".
func judgeSlow(a slowAnswer) string {
	method, path, _ := strings.Cut(a.route, " ")
	switch {
	case errors.Is(a.err, os.ErrDeadlineExceeded):
		return fmt.Sprintf("no answer after %v: the route waits on its sender", a.took.Round(time.Millisecond))
	case a.err != nil:
		return fmt.Sprintf("no answer (%v) after %v", a.err, a.took.Round(time.Millisecond))
	case a.code >= 500:
		return "answered " + http.StatusText(a.code)
	}
	code := a.code
	switch a.class {
	case fallback:
		if code != http.StatusNotFound {
			return "answered " + http.StatusText(code) + ", want 404"
		}
		return ""
	case sdkSecret:
		if code < 400 {
			return "answered " + http.StatusText(code) + " without an SDK secret"
		}
		return ""
	case anyone:
		if method != http.MethodGet && code < 400 {
			return "answered " + http.StatusText(code) + " to a body it never had whole"
		}
		return ""
	}
	if a.c.bearer == "" {
		if strings.HasPrefix(path, "/api/") {
			if code != http.StatusUnauthorized {
				return "answered " + http.StatusText(code) + " to a stranger, want 401"
			}
		} else if code != http.StatusSeeOther || !strings.HasPrefix(a.location, "/login") {
			return "answered " + http.StatusText(code) + " to a stranger, want 303 to sign in"
		}
		return ""
	}
	if !strings.HasPrefix(path, "/api/") && strings.HasPrefix(a.location, "/login") {
		return "was sent to sign in: the member's session did not hold"
	}
	switch a.class {
	case needsRight:
		if code < 400 {
			return "answered " + http.StatusText(code) + " to a member without the right"
		}
	case anyMember:
		if method != http.MethodGet && code < 400 && !slices.Contains(bodyIgnored, a.route) {
			return "answered " + http.StatusText(code) + " to a body it never had whole"
		}
	}
	return ""
}
