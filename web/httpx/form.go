package httpx

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"strings"

	"github.com/labstack/echo/v4"
)

// MaxFormFields is the most fields a posted form (with its URL's query) may
// have. The largest the pages post are the flag rule editor's and the
// segment's (a rule's name, variations and their rollouts, three fields a
// clause, a clause's values in one field) and the statement editor's (a few
// fields a statement): a flag of 300 rules of four clauses each posts
// about 5,000, and a segment's 5,000 scopes refused by the store's own rule
// as many. A form of more than 8,000 is refused 413 TooManyFields before
// it is parsed, where net/url's own bound (10,000) failed it as an error
// of the server's (500).
const MaxFormFields = 8000

// ErrTooManyFields is a posted form of more than MaxFormFields fields.
var ErrTooManyFields = errors.New("request form has too many fields")

// ReadForm reads a posted form, of at most limit bytes (AnonymousBodyBytes
// for a caller without credentials), as ReadBody reads a body: charged to
// the body budget as it arrives and cut when it arrives too slowly, then
// its fields counted (ErrTooManyFields past MaxFormFields) and cost(n) of
// its size reserved for parsing it. The request's body is then the form as
// read, so whatever parses it next (gorilla/csrf for its token, then the
// handler's FormValue) reads it from memory.
func ReadForm(c echo.Context, limit int64, cost func(n int64) int64) error {
	r := c.Request()
	body, err := readAll(c, limit)
	if err != nil || body == nil {
		return err
	}
	if formFields(r.Header.Get(echo.HeaderContentType), body)+queryFields(r.URL.RawQuery) > MaxFormFields {
		return ErrTooManyFields
	}
	if err := topUp(c, cost(int64(len(body)))); err != nil {
		return err
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return nil
}

// queryFields counts a URL query's fields, which the form's parsing adds.
func queryFields(q string) int {
	if q == "" {
		return 0
	}
	return strings.Count(q, "&") + 1
}

// formFields counts a form's fields by their separators: a URL-encoded
// form's &, a multipart form's boundaries. Another body has none.
func formFields(contentType string, body []byte) int {
	media, params, _ := mime.ParseMediaType(contentType)
	switch media {
	case echo.MIMEApplicationForm:
		return bytes.Count(body, []byte("&")) + 1
	case echo.MIMEMultipartForm:
		if b := params["boundary"]; b != "" {
			return bytes.Count(body, []byte("--"+b))
		}
	}
	return 0
}
