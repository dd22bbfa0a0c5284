package api

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/jsonbody"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/web/httpx"
)

// maxUploadBytes bounds an end-user file: 50,000 users of about 600 bytes.
const maxUploadBytes = 32 << 20

// uploadReaders is what the upload's readers take whatever the file: the
// multipart reader's buffer and the file's.
const uploadReaders = 64 << 10

// allowanceStep is how much more of the body budget an upload reserves
// each time its users need more: what they take is charged as they are
// decoded, never what the file announces.
const allowanceStep = 256 << 10

// uploadEndUsers imports FeatBit's end-user file (ImportUserData JSON) sent
// as the multipart field "file"; no file, or an empty one, changes nothing,
// as in FeatBit. A JSON body (up to the API's body limit) is taken as the file.
//
// The route checks that the caller may change the environment's end users
// before anything is read. The file is then read as a stream, through the
// one body reader (cut when it arrives too slowly), one user at a time,
// never whole: each user decoded as it comes, their memory reserved from
// the body budget as they are decoded (past the caller's share of it, 413),
// and reading stops past the most users the store takes, which then
// refuses the file by its own rule.
func (h *Handler) uploadEndUsers(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	r := c.Request()
	// The file's JSON may also come as the body itself, for scripts.
	if strings.HasPrefix(r.Header.Get(echo.HeaderContentType), echo.MIMEApplicationJSON) {
		var data sdkdata.ImportUserData
		if err := bind(c, &data); err != nil {
			return err
		}
		_, err = h.store.SDK().ImportEndUsers(r.Context(), actor(c), ids.Env, data)
		return respond(c, true, err)
	}
	if r.ContentLength > maxUploadBytes {
		c.Response().Header().Set(echo.HeaderConnection, "close") // not read, nor waited for
		return httpx.ErrTooLarge
	}
	if _, err := httpx.Reserve(c, uploadReaders); err != nil {
		return err
	}
	r.Body = io.NopCloser(httpx.BodyReader(c, maxUploadBytes, 0))
	mr, err := r.MultipartReader()
	if err != nil {
		return core.Invalid("file_is_invalid")
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return respond(c, true, nil) // no file
		}
		if err != nil {
			return readError(err, "file_is_invalid")
		}
		if part.FormName() != "file" {
			continue
		}
		f := &userFile{r: bufio.NewReader(part), left: &jsonbody.Allowance{},
			more: func(n int64) (int64, error) { return httpx.Reserve(c, n) }}
		data, empty, err := f.read()
		if err != nil {
			return err
		}
		if empty {
			return respond(c, true, nil)
		}
		// Importing takes time; only what the users hold stays reserved.
		httpx.Release(c, uploadReaders+f.buffers+f.left.Bytes)
		_, err = h.store.SDK().ImportEndUsers(r.Context(), actor(c), ids.Env, data)
		return respond(c, true, err)
	}
}

// readError is a failure reading a body: 413 past its limit, otherwise
// invalid as code says.
func readError(err error, code string) error {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return httpx.ErrTooLarge
	case errors.Is(err, httpx.ErrTooLarge), errors.Is(err, httpx.ErrSlowBody), errors.Is(err, httpx.ErrBusy):
		return err
	}
	return core.Invalid(code)
}

// userFile reads FeatBit's end-user file from a stream, one value at a time.
type userFile struct {
	r     *bufio.Reader
	value []byte // the value being read, reused
	left  *jsonbody.Allowance
	// more reserves up to n more bytes of the body budget: what it returns
	// is added to left as the users need it, or pays for value's growth.
	more    func(n int64) (int64, error)
	buffers int64 // what value's growth was charged
}

// ensure tops the allowance up to n at least, reserving in steps of
// allowanceStep: less when the caller's share of the budget is spent, and
// the decoding then finds too little left (413).
func (f *userFile) ensure(n int64) error {
	if f.left.Bytes >= n {
		return nil
	}
	got, err := f.more(max(n-f.left.Bytes, allowanceStep))
	f.left.Bytes += got
	return err
}

// errInvalidFile is a file that is not FeatBit's end-user file.
var errInvalidFile = core.Invalid("file_is_invalid")

// importUserSize is what a user takes in the list of users, itself grown
// as append grows it.
const importUserSize = 3 * 48

// read reads the file: its users and property names, and nothing
// it does not take. It stops after one user more than the store imports,
// or one property name more: the store refuses that by its rule. empty is
// a file of nothing but white space.
func (f *userFile) read() (data sdkdata.ImportUserData, empty bool, err error) {
	if end, err := f.atEnd(); end || err != nil {
		return data, end, err
	}
	c, err := f.peek()
	if err != nil {
		return data, false, err
	}
	if c != '{' { // null, or not the file: decoded as a whole, as the JSON body is
		if err := f.decodeNext(&data); err != nil {
			return data, false, err
		}
		return data, false, f.end()
	}
	f.r.ReadByte()
	var seenUsers, seenProperties bool
	for first := true; ; first = false {
		if c, err := f.peek(); err != nil {
			return data, false, err
		} else if c == '}' {
			f.r.ReadByte()
			return data, false, f.end()
		}
		if !first {
			if err := f.expect(','); err != nil {
				return data, false, err
			}
		}
		var member string
		if err := f.decodeNext(&member); err != nil {
			return data, false, err
		}
		if err := f.expect(':'); err != nil {
			return data, false, err
		}
		// Members match as encoding/json matches fields: in any case.
		var stop bool
		switch {
		case strings.EqualFold(member, "users") && !seenUsers:
			seenUsers = true
			stop, err = list(f, &data.Users, sdkdata.MaxEndUsersPerFile)
		case strings.EqualFold(member, "userProperties") && !seenProperties:
			seenProperties = true
			stop, err = list(f, &data.UserProperties, sdkdata.MaxPropertyNamesPerFile)
		case strings.EqualFold(member, "users"), strings.EqualFold(member, "userProperties"):
			return data, false, errInvalidFile // named twice
		default: // a member the file does not have: checked, and left
			var skipped json.RawMessage
			err = f.decodeNext(&skipped)
		}
		if err != nil || stop {
			return data, false, err
		}
	}
}

// list reads an array (or null) into items, one element at a time, and
// stops after max+1 of them.
func list[T any](f *userFile, items *[]T, max int) (stop bool, err error) {
	c, err := f.peek()
	if err != nil {
		return false, err
	}
	if c == 'n' {
		return false, f.decodeNext(items)
	}
	if err := f.expect('['); err != nil {
		return false, err
	}
	*items = []T{}
	for first := true; ; first = false {
		if c, err := f.peek(); err != nil {
			return false, err
		} else if c == ']' {
			f.r.ReadByte()
			return false, nil
		}
		if !first {
			if err := f.expect(','); err != nil {
				return false, err
			}
		}
		if err := f.ensure(importUserSize); err != nil {
			return false, err
		}
		if f.left.Bytes -= importUserSize; f.left.Bytes < 0 {
			return false, httpx.ErrTooLarge
		}
		var item T
		if err := f.decodeNext(&item); err != nil {
			return false, err
		}
		*items = append(*items, item)
		if len(*items) > max {
			return true, nil
		}
	}
}

// decodeNext decodes the next value into v, drawing on the allowance.
func (f *userFile) decodeNext(v any) error {
	value, err := f.next()
	if err != nil {
		return err
	}
	if err := f.ensure(jsonbody.Factor*int64(len(value)) + jsonbody.Slack); err != nil {
		return err
	}
	switch err := f.left.Decode(value, v); {
	case errors.Is(err, jsonbody.ErrTooCostly):
		return httpx.ErrTooLarge
	case err != nil:
		return errInvalidFile
	}
	return nil
}

// next reads the next value whole, at most httpx.MaxBodyBytes of it: no user,
// and no property name, of a file the store takes is larger. Only its
// bounds are found here; whoever decodes it checks the rest.
func (f *userFile) next() ([]byte, error) {
	if _, err := f.peek(); err != nil {
		return nil, err
	}
	f.value = f.value[:0]
	depth, inString, escaped := 0, false, false
	for {
		c, err := f.r.ReadByte()
		if err != nil {
			return nil, f.failed(err)
		}
		if len(f.value) == httpx.MaxBodyBytes {
			return nil, errInvalidFile
		}
		if len(f.value) == cap(f.value) { // the value's buffer doubles: charged first
			grow := int64(max(2*cap(f.value), 64))
			got, err := f.more(grow)
			if f.buffers += got; err != nil || got < grow {
				return nil, cmp.Or(err, httpx.ErrTooLarge)
			}
			f.value = append(make([]byte, 0, grow), f.value...)
		}
		f.value = append(f.value, c)
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
		switch {
		case depth < 0:
			return nil, errInvalidFile
		case depth > 0 || inString:
			continue
		case c == '}' || c == ']' || c == '"':
			return f.value, nil
		}
		// A number, true, false or null ends before what follows it.
		after, err := f.r.Peek(1)
		if errors.Is(err, io.EOF) || err == nil && strings.IndexByte(",:]} \t\r\n", after[0]) >= 0 {
			return f.value, nil
		}
		if err != nil {
			return nil, f.failed(err)
		}
	}
}

// peek skips white space and returns the next byte, unread; the file
// ending there is invalid.
func (f *userFile) peek() (byte, error) {
	for {
		b, err := f.r.Peek(1)
		if err != nil {
			return 0, f.failed(err)
		}
		if !isSpace(b[0]) {
			return b[0], nil
		}
		f.r.ReadByte()
	}
}

// atEnd skips white space and reports whether the file ends there.
func (f *userFile) atEnd() (bool, error) {
	for {
		b, err := f.r.Peek(1)
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		if err != nil {
			return false, f.failed(err)
		}
		if !isSpace(b[0]) {
			return false, nil
		}
		f.r.ReadByte()
	}
}

// expect reads c, after white space.
func (f *userFile) expect(c byte) error {
	got, err := f.peek()
	if err != nil {
		return err
	}
	if got != c {
		return errInvalidFile
	}
	f.r.ReadByte()
	return nil
}

// end checks that nothing but white space follows the file.
func (f *userFile) end() error {
	end, err := f.atEnd()
	if err == nil && !end {
		err = errInvalidFile
	}
	return err
}

// failed is a read that failed: past the upload's limit, or cut short.
func (f *userFile) failed(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errInvalidFile
	}
	return readError(err, "file_is_invalid")
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
