package api

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/web/httpx"
	"github.com/bunting-flags/bunting/web/oidcflow"
)

// envelope wraps every answer under /api/. Details, only on a validation
// failure, say for each error code where exactly the input is wrong and why.
type envelope struct {
	Success bool                `json:"success"`
	Errors  []string            `json:"errors"`
	Data    any                 `json:"data"`
	Details []core.FieldProblem `json:"details,omitempty"`
}

// respond writes data in a success envelope, or hands err to the error handler.
func respond(c echo.Context, data any, err error) error {
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, envelope{Success: true, Errors: []string{}, Data: data})
}

// respondJSON is respond for data already encoded (a stored document): it
// writes the success envelope around it rather than decoding and encoding
// it again. With ?pretty (or Echo's debug mode) it is indented as respond
// indents.
func respondJSON(c echo.Context, data json.RawMessage, err error) error {
	if err != nil {
		return err
	}
	if _, pretty := c.QueryParams()["pretty"]; pretty || c.Echo().Debug {
		return respond(c, data, nil)
	}
	body := make([]byte, 0, len(successHead)+len(data)+len(successTail))
	body = append(append(append(body, successHead...), data...), successTail...)
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, body)
}

// The success envelope around encoded data, as respond's encoder writes it
// (a newline after the value).
const (
	successHead = `{"success":true,"errors":[],"data":`
	successTail = "}\n"
)

// errorResponse maps an error to its status and error codes: the store's
// classification, and for what it does not know, the errors of HTTP itself
// (a body too large, a route or method that does not exist).
func errorResponse(err error) (int, []string) {
	class := core.Classify(err)
	if class.Status == http.StatusInternalServerError {
		if c, ok := httpx.Classify(err); ok {
			class = c
		} else if c, ok := oidcflow.Classify(err); ok {
			class = c
		}
	}
	return class.Status, class.Codes
}

// WriteError answers err in the envelope. Unexpected errors are logged here,
// once, and never shown to the client.
func WriteError(c echo.Context, log *slog.Logger, err error) {
	// The request logger hands errors to the error handler before Echo does;
	// the second call finds the answer written and must not log it again.
	if c.Response().Committed {
		return
	}
	status, codes := errorResponse(httpx.ClientGone(c, err))
	if status >= http.StatusInternalServerError {
		log.ErrorContext(c.Request().Context(), "request failed", "status", status, "err", err,
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
	}
	if status == http.StatusUnauthorized {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, "Bearer")
	}
	if errors.Is(err, httpx.ErrBusy) {
		c.Response().Header().Set(echo.HeaderRetryAfter, httpx.BusyRetryAfter)
	}
	answer := envelope{Success: false, Errors: codes}
	var verr *core.ValidationError
	if errors.As(err, &verr) {
		answer.Details = verr.Details
	}
	if err := c.JSON(status, answer); err != nil {
		log.Debug("write error response", "err", err)
	}
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
func iamFilter(c echo.Context, search, all string) (iam.IAMFilter, error) {
	f := iam.IAMFilter{Search: query(c, search), Page: page(c)}
	var err error
	if all != "" {
		f.All, err = queryBool(c, all)
	}
	return f, err
}

// page reads PageIndex and PageSize.
func page(c echo.Context) core.Page {
	return core.Page{Index: queryInt(c, "PageIndex", 0), Size: queryInt(c, "PageSize", core.DefaultPageSize)}
}

// queryOptionalBool reads a true/false query parameter; absent is nil.
func queryOptionalBool(c echo.Context, name string) (*bool, error) {
	s := query(c, name)
	if s == "" {
		return nil, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return nil, core.Invalid(name + "_is_invalid")
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
		return nil, core.Invalid(name + "_is_invalid")
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
		return nil, core.Invalid(name + "_is_invalid")
	}
	return &t, nil
}
