package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store"
)

// MaxBodyBytes is the largest request body accepted (1 MiB); a larger one is
// answered 413 RequestTooLarge.
const MaxBodyBytes = 1 << 20

// envelope wraps every answer under /api/. Details, only on a validation
// failure, say for each error code where exactly the input is wrong and why.
type envelope struct {
	Success bool                 `json:"success"`
	Errors  []string             `json:"errors"`
	Data    any                  `json:"data"`
	Details []store.FieldProblem `json:"details,omitempty"`
}

// errTooLarge is a request body over MaxBodyBytes.
var errTooLarge = errors.New("request body too large")

// respond writes data in a success envelope, or hands err to the error handler.
func respond(c echo.Context, data any, err error) error {
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, envelope{Success: true, Errors: []string{}, Data: data})
}

// errorResponse maps an error to its status and error codes: the store's
// classification, and for what it does not know, the errors of HTTP itself
// (a body too large, a route or method that does not exist).
func errorResponse(err error) (int, []string) {
	if c := store.Classify(err); c.Status != http.StatusInternalServerError {
		return c.Status, c.Codes
	}
	var herr *echo.HTTPError
	switch {
	case errors.Is(err, errTooLarge):
		return http.StatusRequestEntityTooLarge, []string{"RequestTooLarge"}
	case errors.As(err, &herr):
		switch herr.Code {
		case http.StatusNotFound:
			return http.StatusNotFound, []string{"ResourceNotFound"}
		case http.StatusMethodNotAllowed:
			return http.StatusMethodNotAllowed, []string{"MethodNotAllowed"}
		case http.StatusRequestEntityTooLarge:
			return http.StatusRequestEntityTooLarge, []string{"RequestTooLarge"}
		case http.StatusUnauthorized:
			return http.StatusUnauthorized, []string{"Unauthorized"}
		}
	}
	return http.StatusInternalServerError, []string{"InternalServerError"}
}

// ClientGone marks err as the client's going away when the request's
// context was canceled: whatever the request ran into on the way out (a
// query cut short reads as a database failure) is not the server's fault.
func ClientGone(c echo.Context, err error) error {
	if errors.Is(c.Request().Context().Err(), context.Canceled) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: %w", context.Canceled, err)
	}
	return err
}

// WriteError answers err in the envelope. Unexpected errors are logged here,
// once, and never shown to the client.
func WriteError(c echo.Context, log *slog.Logger, err error) {
	// The request logger hands errors to the error handler before Echo does;
	// the second call finds the answer written and must not log it again.
	if c.Response().Committed {
		return
	}
	status, codes := errorResponse(ClientGone(c, err))
	if status >= http.StatusInternalServerError {
		log.ErrorContext(c.Request().Context(), "request failed", "status", status, "err", err,
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
	}
	if status == http.StatusUnauthorized {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, "Bearer")
	}
	answer := envelope{Success: false, Errors: codes}
	var verr *store.ValidationError
	if errors.As(err, &verr) {
		answer.Details = verr.Details
	}
	if err := c.JSON(status, answer); err != nil {
		log.Debug("write error response", "err", err)
	}
}

// bind decodes a JSON body into v. An empty body leaves v unchanged, for
// endpoints whose body is optional; required fields are the store's to check.
//
// Beyond what encoding/json checks, a body is refused with body_is_invalid
// when an object names a member twice, also in another case
// ({"name":"a","Name":"b"}, at any depth): encoding/json would silently keep
// the last, and which one a client meant is a guess. And a body that names
// nothing the route understands is refused: when v is a
// struct and the top-level object has members but none matches one of its
// fields, the client sent something else (a misspelt or other API's field)
// and answering 200 would claim a change that did not happen. An empty
// object {} is still accepted like no body at all: routes whose body is
// optional (archive, restore, delete and toggle with an optional comment)
// are called with {} by clients, and on routes that need a field the store
// refuses it by that field's name (name_is_required …).
func bind(c echo.Context, v any) error {
	r := c.Request()
	if r.ContentLength > MaxBodyBytes {
		return errTooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errTooLarge
		}
		return store.Invalid("body_is_invalid")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	// encoding/json would quietly turn invalid UTF-8 into U+FFFD; refuse it instead.
	if !utf8.Valid(body) {
		return store.Invalid("body_is_invalid")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil || dec.More() {
		return store.Invalid("body_is_invalid")
	}
	// Decode has checked the syntax and the nesting depth, so the walk
	// below only meets well-formed JSON of bounded depth.
	top, err := checkMembers(body)
	if err != nil {
		return err
	}
	if len(top) > 0 && !namesAField(reflect.TypeOf(v), top) {
		return store.Invalid("body_is_invalid")
	}
	return nil
}

// noBody refuses a body on a route that acts on its path alone: a body with
// members names nothing the route understands. No body,
// {} and null are accepted, as clients send them for "nothing".
func noBody(c echo.Context) error { return bind(c, &struct{}{}) }

// foldKey is the form under which encoding/json matches a member name to a
// field: case-insensitively, including the Kelvin sign and long s it folds
// to k and s.
func foldKey(name string) string { return strings.ToLower(strings.ToUpper(name)) }

// checkMembers walks well-formed JSON and refuses an object that names a
// member twice, in any case. It returns the top-level object's member names,
// folded (none when the body is not an object).
func checkMembers(body []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	// One entry per open array (nil) or object (its members so far); in an
	// object, expectKey says whether the next token is a member name.
	type level struct {
		members   map[string]bool
		expectKey bool
	}
	var stack []level
	var top []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return top, nil
		}
		if err != nil {
			return nil, store.Invalid("body_is_invalid")
		}
		if n := len(stack); n > 0 && stack[n-1].members != nil {
			if stack[n-1].expectKey {
				if d, ok := tok.(json.Delim); ok && d == '}' {
					stack = stack[:n-1]
					continue
				}
				key := foldKey(tok.(string))
				if stack[n-1].members[key] {
					return nil, store.Invalid("body_is_invalid")
				}
				stack[n-1].members[key] = true
				stack[n-1].expectKey = false
				if n == 1 {
					top = append(top, key)
				}
				continue
			}
			stack[n-1].expectKey = true // this token is the value
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, level{members: map[string]bool{}, expectKey: true})
		case json.Delim('['):
			stack = append(stack, level{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

// namesAField reports whether one of the folded member names matches a
// field encoding/json would fill in *t. Only structs have a fixed set of
// fields; any other target (a map, a list, a raw message) takes every name.
func namesAField(t reflect.Type, names []string) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return true
	}
	fields := map[string]bool{}
	collectFields(t, fields)
	for _, n := range names {
		if fields[n] {
			return true
		}
	}
	return false
}

// collectFields adds the folded JSON names of t's fields, including those
// promoted from embedded structs.
func collectFields(t reflect.Type, into map[string]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				collectFields(ft, into)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		into[foldKey(tag)] = true
	}
}

// PathID reads a uuid path parameter; a malformed one names nothing, so
// 404. The pages read their ids with it too.
func PathID(c echo.Context, name string) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Param(name))
	if err != nil {
		return uuid.Nil, store.ErrNotFound
	}
	return id, nil
}

// pathIDs reads the two uuid path parameters of a nested resource.
func pathIDs(c echo.Context, parent, child string) (uuid.UUID, uuid.UUID, error) {
	parentID, err := PathID(c, parent)
	if err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	childID, err := PathID(c, child)
	return parentID, childID, err
}

// query reads a query parameter, its name matched case-insensitively.
func query(c echo.Context, name string) string {
	for k, vs := range c.QueryParams() {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

// queryInt reads an integer query parameter; absent is def, unparsable is -1,
// which the store's range checks refuse with the parameter's name.
func queryInt(c echo.Context, name string, def int) int {
	s := query(c, name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// queryBool reads a boolean query parameter; absent is false. name is the
// parameter as error codes spell it, e.g. getAllMembers.
func queryBool(c echo.Context, name string) (bool, error) {
	b, err := queryOptionalBool(c, name)
	return b != nil && *b, err
}

// iamFilter reads an IAM list's search text, its "all" switch (none when
// all is empty) and its page.
func iamFilter(c echo.Context, search, all string) (store.IAMFilter, error) {
	f := store.IAMFilter{Search: query(c, search), Page: page(c)}
	var err error
	if all != "" {
		f.All, err = queryBool(c, all)
	}
	return f, err
}

// page reads PageIndex and PageSize.
func page(c echo.Context) store.Page {
	return store.Page{Index: queryInt(c, "PageIndex", 0), Size: queryInt(c, "PageSize", store.DefaultPageSize)}
}

// queryOptionalBool reads a true/false query parameter; absent is nil.
func queryOptionalBool(c echo.Context, name string) (*bool, error) {
	s := query(c, name)
	if s == "" {
		return nil, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return nil, store.Invalid(name + "_is_invalid")
	}
	return &b, nil
}

// queryUUID reads an optional uuid query parameter; absent is nil.
func queryUUID(c echo.Context, name string) (*uuid.UUID, error) {
	s := query(c, name)
	if s == "" {
		return nil, nil
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return nil, store.Invalid(name + "_is_invalid")
	}
	return &id, nil
}

// queryList reads a list query parameter given repeatedly, comma-separated, or both.
func queryList(c echo.Context, name string) []string {
	var out []string
	for k, vs := range c.QueryParams() {
		if !strings.EqualFold(k, name) {
			continue
		}
		for _, v := range vs {
			for _, item := range strings.Split(v, ",") {
				if item = strings.TrimSpace(item); item != "" {
					out = append(out, item)
				}
			}
		}
	}
	return out
}

// queryTime reads a time given as RFC 3339 or as Unix milliseconds (FeatBit's form).
func queryTime(c echo.Context, name string) (*time.Time, error) {
	s := query(c, name)
	if s == "" {
		return nil, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		t := time.UnixMilli(ms).UTC()
		return &t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, store.Invalid(name + "_is_invalid")
	}
	return &t, nil
}

// rawBody reads a body that the store decodes itself, such as a JSON Patch.
func rawBody(c echo.Context) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := bind(c, &raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, store.Invalid("body_is_invalid")
	}
	return raw, nil
}
