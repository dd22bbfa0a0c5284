package httpx

import (
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/jsonbody"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// MaxBodyBytes is the largest request body accepted (1 MiB), by the API
// and by the pages' forms; a larger one is answered 413 RequestTooLarge.
const MaxBodyBytes = 1 << 20

// ErrTooLarge is a request body over its route's limit, or one whose
// decoding would take more memory than jsonbody allows for its size.
var ErrTooLarge = errors.New("request body too large")

// BodyCost is what reading and decoding a JSON body of n bytes may take:
// the body, what jsonbody may allocate decoding it, and its walk.
func BodyCost(n int64) int64 { return (jsonbody.Factor+2)*n + jsonbody.Slack }

// ReadBody reads a JSON body of at most limit bytes, once BodyCost of its
// size is reserved from the body budget: ErrTooLarge past the limit,
// body_is_invalid when it cannot be read whole, nil when there is none.
// Run the route's permission check first: a caller refused there never has
// their body read.
func ReadBody(c echo.Context, limit int64) ([]byte, error) {
	r := c.Request()
	if r.ContentLength > limit {
		return nil, ErrTooLarge
	}
	if r.ContentLength == 0 {
		return nil, nil
	}
	size := r.ContentLength
	if size < 0 { // not announced: the most it may be
		size = limit
	}
	if _, err := Reserve(c, BodyCost(size)); err != nil {
		return nil, err
	}
	var body []byte
	var err error
	if r.ContentLength > 0 { // read into its exact size, not a buffer doubled on the way
		body = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, limit))
	}
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, ErrTooLarge
		}
		return nil, core.Invalid("body_is_invalid")
	}
	return body, nil
}
