package httpx

import (
	"bytes"
	"errors"
	"io"
	"mime"

	"github.com/labstack/echo/v4"
)

// MaxFormFields is the most fields a posted form may have. The largest the
// pages post are the flag rule editor's and the segment's (a few fields for
// each rule and clause, with lists of values in one field each) and the
// statement editor's: hundreds at most. A form of more is refused 413
// TooManyFields before it is parsed, where net/url's own bound (10,000)
// would have failed it as an error of the server's.
const MaxFormFields = 2000

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
	if formFields(r.Header.Get(echo.HeaderContentType), body) > MaxFormFields {
		return ErrTooManyFields
	}
	if err := topUp(c, cost(int64(len(body)))); err != nil {
		return err
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return nil
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
