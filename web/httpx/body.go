package httpx

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/jsonbody"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// MaxBodyBytes is the largest request body accepted (1 MiB), by the API
// and by the pages' forms; a larger one is answered 413 RequestTooLarge.
const MaxBodyBytes = 1 << 20

// AnonymousBodyBytes is the most any request without credentials may send,
// whatever its route allows a signed-in caller: signing in (an email and a
// password), refreshing a session, single sign-on's code, the pages'
// sign-in and sign-out forms. A stranger has nothing larger to say.
const AnonymousBodyBytes = 4 << 10

// ErrTooLarge is a request body over its route's limit, or one whose
// decoding would take more memory than jsonbody allows for its size.
var ErrTooLarge = errors.New("request body too large")

// ErrSlowBody is a request body that arrived slower than the body rate: it
// is cut, answered 408 RequestTimeout, and its connection closed.
var ErrSlowBody = errors.New("request body arrived too slowly")

// BodyRate is how fast a body must arrive. A body is read under a read
// deadline that moves as its bytes arrive: by Grace after its reading
// began, plus one second for every Min bytes received, and never later
// than Max after it began; time the reading waited for the body budget is
// not the sender's, and moves the deadline on. A sender holding a
// connection open with a byte now and then is cut after Grace, holding
// only what it sent.
type BodyRate struct {
	Min   int64         // bytes per second, on average after Grace
	Grace time.Duration // before which no rate is asked
	Max   time.Duration // the longest a body may take (the server's ReadTimeout)
}

// DefaultBodyRate is the server's: 16 KiB/s after 2 s, so a 1 MiB body
// has 66 s (cut to 30 s, the server's read timeout: 36 KiB/s for it), and a
// form or a sign-in arrives in one packet anyway.
var DefaultBodyRate = BodyRate{Min: 16 << 10, Grace: 2 * time.Second, Max: 30 * time.Second}

func (r BodyRate) orDefaults() BodyRate {
	if r.Min <= 0 {
		r.Min = DefaultBodyRate.Min
	}
	if r.Grace <= 0 {
		r.Grace = DefaultBodyRate.Grace
	}
	if r.Max <= 0 {
		r.Max = DefaultBodyRate.Max
	}
	return r
}

// BodyCost is what reading and decoding a JSON body of n bytes may take:
// the body, what jsonbody may allocate decoding it, and its walk.
func BodyCost(n int64) int64 { return (jsonbody.Factor+2)*n + jsonbody.Slack }

// receivedCost is what a body's bytes take while they arrive: the buffer
// they are read into, which grows by doubling.
const receivedCost = 2

// bodyReader is the one way a request's body is read: at most limit bytes
// (ErrTooLarge past them), each chunk charged to the body budget, at
// perByte times its size, once it has arrived, and the whole cut with
// ErrSlowBody when it arrives slower than the budget's rate.
type bodyReader struct {
	c        echo.Context
	body     io.Reader
	acc      *account // nil outside the server
	rc       *http.ResponseController
	deadline bool // whether the connection takes read deadlines
	rate     BodyRate
	start    time.Time
	limit    int64
	perByte  int64
	read     int64
	begun    bool
	done     bool
	err      error
}

// requestBody is the request's body as Hold left it: the body reader
// every request with a body reads through, whatever reads it.
type requestBody struct {
	*bodyReader
	io.Closer
}

// wrapBody puts a body reader in front of the request's body, if it has
// one: at most MaxBodyBytes, charged at receivedCost, until a reader of
// the route's (ReadBody, ReadForm, BodyReader) says otherwise. A route that
// reads c.Request().Body itself is bound all the same.
func wrapBody(c echo.Context, acc *account) {
	r := c.Request()
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return
	}
	br := &bodyReader{c: c, body: r.Body, limit: MaxBodyBytes, perByte: receivedCost, rate: acc.budget.rate, acc: acc}
	r.Body = requestBody{br, r.Body}
	// A body not read to its end when the answer goes (a refusal before
	// reading it, a route that reads none) is read by net/http before it
	// answers, up to 256 KiB, so that the connection can serve the next
	// request and a client still sending is not reset; it may take the
	// body rate's grace for that, not the server's read timeout. A slower
	// sender's connection is closed once answered.
	c.Response().Before(func() {
		if !br.done {
			http.NewResponseController(c.Response()).SetReadDeadline(time.Now().Add(br.rate.Grace))
		}
	})
}

// newBodyReader is the request's body reader (a new one outside the
// server), for a body of at most limit bytes charged perByte.
func newBodyReader(c echo.Context, limit, perByte int64) *bodyReader {
	// A stranger's limit is applied when the reading begins (begin).
	if rb, ok := c.Request().Body.(requestBody); ok && !rb.begun {
		rb.limit, rb.perByte = limit, perByte
		return rb.bodyReader
	}
	br := &bodyReader{c: c, body: c.Request().Body, limit: limit, perByte: perByte, rate: DefaultBodyRate}
	if acc, ok := c.Get(accountKey).(*account); ok {
		br.acc, br.rate = acc, acc.budget.rate
	}
	return br
}

// begin starts the body's clock and its read deadline, at its first read.
func (b *bodyReader) begin() {
	b.begun, b.start = true, time.Now()
	if anonymous(b.c) { // whoever reads it, a stranger's body is small
		b.limit = min(b.limit, AnonymousBodyBytes)
	}
	b.rc = http.NewResponseController(b.c.Response())
	b.deadline = b.rc.SetReadDeadline(b.next()) == nil
}

// next is the deadline for the next byte: Grace after the reading began,
// plus a second for every Min bytes received, at most Max after it began,
// both moved on by the time the request waited for the budget.
func (b *bodyReader) next() time.Time {
	d := b.rate.Grace + time.Duration(float64(b.read)/float64(b.rate.Min)*float64(time.Second))
	start := b.start
	if b.acc != nil { // the request's waits for the budget were not the sender's
		start = start.Add(b.acc.waited)
	}
	return start.Add(min(d, b.rate.Max))
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if !b.begun {
		b.begin()
	}
	// Never more than one byte past the limit: that one tells it is over.
	if left := b.limit + 1 - b.read; int64(len(p)) > left {
		p = p[:left]
	}
	if b.done { // read to its end already
		return 0, io.EOF
	}
	if b.deadline && b.read > 0 {
		b.rc.SetReadDeadline(b.next())
	}
	n, err := b.body.Read(p)
	b.read += int64(n)
	switch {
	case b.read > b.limit:
		b.fail(ErrTooLarge)
		return 0, b.err
	case errors.Is(err, os.ErrDeadlineExceeded):
		b.fail(ErrSlowBody)
		return 0, b.err
	case errors.As(err, new(*http.MaxBytesError)):
		b.fail(ErrTooLarge)
		return 0, b.err
	}
	if n > 0 && b.perByte > 0 {
		if _, rerr := Reserve(b.c, b.perByte*int64(n)); rerr != nil {
			b.fail(rerr)
			return 0, b.err
		}
	}
	if err == io.EOF {
		b.finish()
		return n, err
	}
	if err != nil {
		b.fail(core.Invalid("body_is_invalid"))
		return n, b.err
	}
	if !b.deadline && time.Now().After(b.next()) { // no deadlines (a test's recorder): checked as bytes come
		b.fail(ErrSlowBody)
		return 0, b.err
	}
	return n, nil
}

// finish lifts the body's deadline once it is read: the request's work,
// and the server's watching for the client to go, are not the body's.
func (b *bodyReader) finish() {
	if !b.done && b.deadline {
		b.rc.SetReadDeadline(time.Time{})
	}
	b.done = true
}

// fail ends the reading with err. A body left unread closes its
// connection once answered: net/http would otherwise read what is left of
// it first, at its sender's pace. Its deadline stays.
func (b *bodyReader) fail(err error) {
	b.err = err
	b.c.Response().Header().Set(echo.HeaderConnection, "close")
	b.done = true
	if errors.Is(err, ErrSlowBody) {
		// net/http cancels the request's context when its read deadline
		// passes, as if the client had gone; it has not, and is answered
		// 408 (a page renders nothing for a canceled context).
		r := b.c.Request()
		b.c.SetRequest(r.WithContext(context.WithoutCancel(r.Context())))
	}
}

// BodyReader returns the request's body as the one reader every body is
// read through: at most limit bytes (ErrTooLarge past them; AnonymousBodyBytes
// for a caller without credentials), ErrSlowBody when it arrives slower than
// the body rate, and perByte times each chunk charged to the body budget as
// it arrives. For a body read as a stream (the end-user upload); whole
// bodies are read by ReadBody and ReadForm.
func BodyReader(c echo.Context, limit, perByte int64) io.Reader {
	return newBodyReader(c, limit, perByte)
}

// readAll reads the body whole through a bodyReader, into a buffer grown
// as bytes arrive, never to the size the request announces before they
// have: ErrTooLarge when it announces more than limit.
func readAll(c echo.Context, limit int64) ([]byte, error) {
	r := c.Request()
	if anonymous(c) {
		limit = min(limit, AnonymousBodyBytes)
	}
	if r.ContentLength > limit {
		return nil, ErrTooLarge // not read; what net/http reads of it is bounded (wrapBody)
	}
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	br := newBodyReader(c, limit, receivedCost)
	buf := make([]byte, 0, min(int64(512), limit+1))
	for {
		if len(buf) == cap(buf) {
			grown := min(2*int64(cap(buf)), limit+1)
			if r.ContentLength > 0 { // not past what it announced: the last growth is exact
				grown = min(grown, r.ContentLength+1)
			}
			buf = append(make([]byte, 0, grown), buf...)
		}
		n, err := br.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// ReadBody reads a JSON body of at most limit bytes (AnonymousBodyBytes for
// a caller without credentials), charging the body budget for what arrives
// as it arrives, then BodyCost of its size once it is read:
// ErrTooLarge past the limit, ErrSlowBody when it arrives too slowly,
// body_is_invalid when it cannot be read whole, nil when there is none.
// Run the route's permission check first: a caller refused there never has
// their body read.
func ReadBody(c echo.Context, limit int64) ([]byte, error) {
	body, err := readAll(c, limit)
	if err != nil || body == nil {
		return body, err
	}
	return body, topUp(c, BodyCost(int64(len(body))))
}

// topUp reserves what a read body costs beyond what its reading took.
func topUp(c echo.Context, cost int64) error {
	if acc, ok := c.Get(accountKey).(*account); ok {
		cost -= acc.held
	}
	_, err := Reserve(c, cost)
	return err
}
