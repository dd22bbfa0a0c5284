package httpx_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/web/httpx"
)

// The tests here serve bodies over loopback, through the Echo every
// surface is served by, with a budget they watch. A request names its
// sender in headers, as each surface's authentication would: X-Member
// and X-Org, or X-Secret; neither is an anonymous caller.

func bodyServer(t *testing.T, budget *httpx.BodyBudget) *httptest.Server {
	t.Helper()
	e := httpx.New(slog.New(slog.DiscardHandler), httpx.Options{Budget: budget})
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		class, ok := httpx.Classify(err)
		if !ok {
			class.Status, class.Codes = http.StatusInternalServerError, []string{err.Error()}
		}
		c.String(class.Status, class.Codes[0])
	}
	sender := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Request().Header
			switch {
			case h.Get("X-Member") != "":
				org, _ := uuid.Parse(h.Get("X-Org"))
				httpx.SetPrincipal(c, httpx.Member, h.Get("X-Member"), org)
			case h.Get("X-Secret") != "":
				httpx.SetPrincipal(c, httpx.SDKSecret, h.Get("X-Secret"), uuid.Nil)
			}
			return next(c)
		}
	}
	e.POST("/body", func(c echo.Context) error {
		body, err := httpx.ReadBody(c, httpx.MaxBodyBytes)
		if err != nil {
			return err
		}
		return c.String(http.StatusOK, fmt.Sprint(len(body)))
	}, sender)
	// /raw reads the body itself, as a route forgetting ReadBody would.
	e.POST("/raw", func(c echo.Context) error {
		body, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return err
		}
		return c.String(http.StatusOK, fmt.Sprint(len(body)))
	}, sender)
	// /hold reserves what X-Reserve says and holds it until its client goes.
	e.POST("/hold", func(c echo.Context) error {
		var n int64
		fmt.Sscan(c.Request().Header.Get("X-Reserve"), &n)
		got, err := httpx.Reserve(c, n)
		if err != nil {
			return err
		}
		c.Response().Header().Set("X-Reserved", fmt.Sprint(got))
		c.Response().WriteHeader(http.StatusOK)
		c.Response().Flush()
		<-c.Request().Context().Done()
		return nil
	}, sender)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv
}

// conn is a raw connection that sends a request's body as the test says.
type conn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

// open sends a POST's head announcing length bytes of body, with headers
// (name, value pairs).
func open(t *testing.T, srv *httptest.Server, path string, length int, headers ...string) *conn {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", path, length)
	for i := 0; i+1 < len(headers); i += 2 {
		head += headers[i] + ": " + headers[i+1] + "\r\n"
	}
	if _, err := io.WriteString(c, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
	return &conn{t: t, c: c, r: bufio.NewReader(c)}
}

func (c *conn) send(s string) error { _, err := io.WriteString(c.c, s); return err }

// answer reads the response: its status and body (or the X-Reserved header
// of a hold, which answers before it ends).
func (c *conn) answer() (int, string) {
	c.t.Helper()
	res, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	if r := res.Header.Get("X-Reserved"); r != "" {
		return res.StatusCode, r
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// until waits for cond, checked as the server works; false after 5 s.
func until(cond func() bool) bool {
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}

// TestBodyIsChargedAsItArrives: a member's body announcing 1 MiB that has
// sent 1 KiB holds about 2 KiB of the budget (its buffer), not the 10 MiB
// its announced size is priced at; once it is all there it holds its
// decoding's price, and nothing once answered.
func TestBodyIsChargedAsItArrives(t *testing.T) {
	budget := httpx.NewBodyBudget(64<<20, time.Second)
	srv := bodyServer(t, budget)
	c := open(t, srv, "/body", 1<<20, "X-Member", "ann", "X-Org", uuid.NewString())
	if err := c.send(strings.Repeat("a", 1<<10)); err != nil {
		t.Fatal(err)
	}
	var total int64
	if !until(func() bool { total, _ = budget.Held("principal:ann"); return total >= 1<<10 }) {
		t.Fatalf("1 KiB received: the budget holds %d, want it charged", total)
	}
	t.Logf("a body announcing 1 MiB, 1 KiB received: %d bytes held (its announced price: %d)", total, httpx.BodyCost(1<<20))
	if total > 4<<10 {
		t.Errorf("1 KiB received: the budget holds %d, want at most 4 KiB", total)
	}
	if err := c.send(strings.Repeat("a", 1<<20-1<<10)); err != nil {
		t.Fatal(err)
	}
	if code, body := c.answer(); code != http.StatusOK || body != fmt.Sprint(1<<20) {
		t.Fatalf("the whole body: got %d %q, want 200 and its size", code, body)
	}
	if !until(func() bool { total, _ = budget.Held(""); return total == 0 }) {
		t.Errorf("answered, the request still holds %d", total)
	}
}

// TestSlowBodyIsCut: a body arriving under the body rate is cut with 408
// RequestTimeout once its grace is over, having held only what it sent; a
// body sent whole within the grace is read.
func TestSlowBodyIsCut(t *testing.T) {
	budget := httpx.NewBodyBudget(64<<20, time.Second).WithRate(httpx.BodyRate{Min: 16 << 10, Grace: 300 * time.Millisecond})
	srv := bodyServer(t, budget)
	c := open(t, srv, "/body", 4000, "X-Member", "ann")
	start := time.Now()
	go func() { // a byte every 20 ms: 50 B/s
		for c.send("a") == nil {
			time.Sleep(20 * time.Millisecond)
		}
	}()
	code, body := c.answer()
	took := time.Since(start)
	t.Logf("a body sent at 50 B/s: %d %s after %v", code, body, took.Round(time.Millisecond))
	if code != http.StatusRequestTimeout || body != "RequestTimeout" {
		t.Fatalf("a slow body: got %d %q, want 408 RequestTimeout", code, body)
	}
	if took > 2*time.Second {
		t.Errorf("a slow body was cut after %v, want soon after its 300 ms grace", took)
	}
	// Within its grace, a body may take its time to start.
	paused := open(t, srv, "/body", 1000, "X-Member", "ann")
	time.Sleep(100 * time.Millisecond) // the sender's pause is what is tested
	paused.send(strings.Repeat("a", 1000))
	if code, body := paused.answer(); code != http.StatusOK || body != "1000" {
		t.Errorf("a body sent within its grace: got %d %q, want 200", code, body)
	}
}

// TestSharesBoundEachGroup: with the budget's shares (an eighth for
// anonymous callers together, for each secret and for each principal, a
// quarter for each organization), holding all it can, a principal, a
// secret and the anonymous callers each get no more than their share, a
// second request of theirs waits and is refused 503, another member of the
// principal's organization has the rest of its share, and a member of
// another organization still has their body read at once.
func TestSharesBoundEachGroup(t *testing.T) {
	const size = 128 << 20
	budget := httpx.NewBodyBudget(size, 200*time.Millisecond)
	srv := bodyServer(t, budget)
	orgA := uuid.NewString()
	senders := []struct {
		name    string
		headers []string
		share   int64
	}{
		{"a principal", []string{"X-Member", "ann", "X-Org", orgA}, size / httpx.PrincipalShare},
		{"a secret", []string{"X-Secret", "s1"}, size / httpx.SecretShare},
		{"anonymous callers", nil, size / httpx.AnonymousShare},
	}
	for _, s := range senders {
		c := open(t, srv, "/hold", 0, append([]string{"X-Reserve", fmt.Sprint(size)}, s.headers...)...)
		if code, got := c.answer(); code != http.StatusOK || got != fmt.Sprint(s.share) {
			t.Fatalf("%s asking for the whole budget: got %d, reserved %s, want its share %d", s.name, code, got, s.share)
		}
		// Its next body waits for its share, which does not come back.
		c = open(t, srv, "/body", 100, s.headers...)
		c.send(strings.Repeat("a", 100))
		if code, body := c.answer(); code != http.StatusServiceUnavailable || body != "ServiceUnavailable" {
			t.Errorf("%s past its share: got %d %q, want 503", s.name, code, body)
		}
	}
	// Another member of ann's organization has the rest of its quarter,
	// and no more.
	c := open(t, srv, "/hold", 0, "X-Reserve", fmt.Sprint(size), "X-Member", "bob", "X-Org", orgA)
	if code, got := c.answer(); code != http.StatusOK || got != fmt.Sprint(size/httpx.OrganizationShare-size/httpx.PrincipalShare) {
		t.Errorf("another member of ann's organization: got %d, reserved %s, want the rest of its share", code, got)
	}
	c = open(t, srv, "/body", 100, "X-Member", "dan", "X-Org", orgA)
	c.send(strings.Repeat("a", 100))
	if code, body := c.answer(); code != http.StatusServiceUnavailable {
		t.Errorf("a member of the organization whose share is held: got %d %q, want 503", code, body)
	}
	total, _ := budget.Held("")
	t.Logf("a principal, a secret, the anonymous callers and another member of the principal's organization hold %d of %d", total, size)
	// A member of another organization is served at once.
	c = open(t, srv, "/body", 64<<10, "X-Member", "cy", "X-Org", uuid.NewString())
	start := time.Now()
	c.send(strings.Repeat("a", 64<<10))
	if code, body := c.answer(); code != http.StatusOK || body != fmt.Sprint(64<<10) {
		t.Errorf("another organization's member: got %d %q, want 200", code, body)
	}
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("another organization's member waited %v", took)
	}
}

// TestAnonymousBodiesAreSmall: a caller without credentials may send at
// most 4 KiB on any route; one announcing more is refused 413 unread, and
// one sending more without announcing it is cut at 4 KiB.
func TestAnonymousBodiesAreSmall(t *testing.T) {
	srv := bodyServer(t, httpx.NewBodyBudget(64<<20, time.Second))
	c := open(t, srv, "/body", httpx.AnonymousBodyBytes)
	c.send(strings.Repeat("a", httpx.AnonymousBodyBytes))
	if code, body := c.answer(); code != http.StatusOK {
		t.Errorf("4 KiB from a stranger: got %d %q, want 200", code, body)
	}
	c = open(t, srv, "/body", httpx.AnonymousBodyBytes+1)
	if code, body := c.answer(); code != http.StatusRequestEntityTooLarge || body != "RequestTooLarge" {
		t.Errorf("4 KiB and a byte announced by a stranger: got %d %q, want 413", code, body)
	}
	res, err := http.Post(srv.URL+"/body", "application/json", io.MultiReader(strings.NewReader(strings.Repeat("a", 8<<10))))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("8 KiB unannounced from a stranger: got %d, want 413", res.StatusCode)
	}
}

// TestRoutesReadingTheBodyThemselvesAreBound: a route that reads the
// request's body itself, not through ReadBody, reads it through the same
// reader: a stranger's is cut at 4 KiB, a member's at 1 MiB, a slow one
// with 408, and what arrives is charged to the budget.
func TestRoutesReadingTheBodyThemselvesAreBound(t *testing.T) {
	budget := httpx.NewBodyBudget(64<<20, time.Second).WithRate(httpx.BodyRate{Min: 16 << 10, Grace: 300 * time.Millisecond})
	srv := bodyServer(t, budget)
	for _, c := range []struct {
		name    string
		size    int
		headers []string
		want    int
	}{
		{"a stranger's 4 KiB", 4 << 10, nil, http.StatusOK},
		{"a stranger's 8 KiB", 8 << 10, nil, http.StatusRequestEntityTooLarge},
		{"a member's 1 MiB", 1 << 20, []string{"X-Member", "ann"}, http.StatusOK},
		{"a member's 1 MiB and a byte", 1<<20 + 1, []string{"X-Member", "ann"}, http.StatusRequestEntityTooLarge},
	} {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/raw", io.MultiReader(strings.NewReader(strings.Repeat("a", c.size))))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(c.headers); i += 2 {
			req.Header.Set(c.headers[i], c.headers[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("%s, unannounced, read by the route: got %d, want %d", c.name, res.StatusCode, c.want)
		}
	}
	conn := open(t, srv, "/raw", 1000, "X-Member", "ann")
	go func() {
		for conn.send("a") == nil {
			time.Sleep(20 * time.Millisecond) // the sender's pace: 50 B/s
		}
	}()
	if code, body := conn.answer(); code != http.StatusRequestTimeout {
		t.Errorf("a slow body read by the route: got %d %q, want 408", code, body)
	}
}
