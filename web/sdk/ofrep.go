package sdk

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/sql/targeting"
	"github.com/bunting-flags/bunting/web/httpx"
	"github.com/bunting-flags/bunting/web/metrics"
)

// OFREP error codes (open-feature/protocol, service/openapi.yaml).
const (
	errParse          = "PARSE_ERROR"
	errTargetingKey   = "TARGETING_KEY_MISSING"
	errInvalidContext = "INVALID_CONTEXT"
	errGeneral        = "GENERAL"
	errFlagNotFound   = "FLAG_NOT_FOUND"
)

// ofrepResult is one flag's evaluation: success fields, or an error code.
type ofrepResult struct {
	Key          string         `json:"key"`
	Value        any            `json:"value,omitempty"`
	Reason       string         `json:"reason,omitempty"`
	Variant      string         `json:"variant,omitempty"`
	Metadata     map[string]any `json:"metadata,omitempty"`
	ErrorCode    string         `json:"errorCode,omitempty"`
	ErrorDetails string         `json:"errorDetails,omitempty"`
}

// ofrepError answers an OFREP error. Bodies name the flag when there is one,
// since OFREP providers accept error bodies only with a key.
func ofrepError(c echo.Context, status int, key, code, details string) error {
	return c.JSON(status, ofrepResult{Key: key, ErrorCode: code, ErrorDetails: details})
}

// ofrepAuth resolves the request's secret. When it cannot, it answers the
// failure itself (401, 403, 429 with Retry-After, 500) and returns false.
func (s *Server) ofrepAuth(c echo.Context, key string, allowClient bool) (sdkdata.SDKEnv, bool) {
	env, err := s.authenticated(c)
	var status int
	var details string
	switch {
	case err != nil:
		// OFREP's answers to the store's classes: a missing or unknown
		// secret and a limit are the client's to fix; anything else is ours.
		switch class := core.Classify(err); class.Code() {
		case "Unauthorized":
			status, details = class.Status, "an environment secret is required"
		case "TooManyRequests":
			status, details = class.Status, "too many requests"
		default:
			s.failed(c, "ofrep: looking up a secret", err, func() error {
				return ofrepError(c, http.StatusInternalServerError, key, errGeneral, "service unavailable")
			})
			return env, false
		}
	case env.SecretType != core.SecretServer && !allowClient:
		status, details = http.StatusForbidden, "single-flag evaluation needs a server secret"
	default:
		return env, true
	}
	ofrepDetails(c, status, details)
	return env, false
}

// failed answers a failure with answer and logs it as an error, unless the
// client went away meanwhile: that is no server failure, and is logged at
// debug and answered 499 for the request log.
func (s *Server) failed(c echo.Context, what string, err error, answer func() error) error {
	if err = httpx.ClientGone(c, err); core.Classify(err).Status == core.StatusClientClosedRequest {
		s.log.DebugContext(c.Request().Context(), what, "err", err)
		return c.NoContent(core.StatusClientClosedRequest)
	}
	s.log.ErrorContext(c.Request().Context(), what, "err", err)
	return answer()
}

func ofrepDetails(c echo.Context, status int, details string) error {
	return c.JSON(status, map[string]string{"errorDetails": details})
}

// ofrepFlag evaluates one flag: POST /ofrep/v1/evaluate/flags/{key} with
// {"context": {...}}. It needs a server secret.
func (s *Server) ofrepFlag(c echo.Context) error {
	key := c.Param("key")
	env, ok := s.ofrepAuth(c, key, false)
	if !ok {
		return nil
	}
	snap, err := s.cache.get(c.Request().Context(), env)
	if err != nil {
		return s.failed(c, "ofrep: reading an environment", err, func() error {
			return ofrepError(c, http.StatusInternalServerError, key, errGeneral, "service unavailable")
		})
	}
	served := servedBuffers.Get().(*[]runner.Served)
	err = ofrepFlagAnswer(c, snap, key, served)
	if s.metrics != nil {
		s.metrics.Evaluated(metrics.OFREPSingle, singleOutcome(len(*served), c.Response().Status), 1)
	}
	s.served(served)
	return err
}

// singleOutcome is the metrics' kind of a single evaluation's answer.
func singleOutcome(served, status int) metrics.Outcome {
	switch {
	case served > 0:
		return metrics.Served
	case status == http.StatusNotFound:
		return metrics.FlagNotFound
	case status == http.StatusBadRequest:
		return metrics.InvalidContext
	}
	return metrics.Failed
}

// ofrepFlagAnswer evaluates one flag of a snapshot for the request's context
// and answers it, appending the variation it served to served (when not nil).
func ofrepFlagAnswer(c echo.Context, snap *snapshot, key string, served *[]runner.Served) error {
	u, status, code, details := ofrepContext(c)
	if code != "" {
		return ofrepError(c, status, key, code, details)
	}
	f := snap.flags[key]
	if f == nil || f.IsArchived {
		return ofrepError(c, http.StatusNotFound, key, errFlagNotFound, "flag not found")
	}
	body, code, variation := snap.compiled(f).appendAnswer(make([]byte, 0, 256), u, snap.preparedSegment)
	if code == "" && served != nil {
		*served = append(*served, runner.Served{Flag: f, Variation: variation})
	}
	return ofrepJSON(c, ofrepStatus(code), append(body, '\n'))
}

// ofrepBulk evaluates every flag of the environment that is not archived:
// POST /ofrep/v1/evaluate/flags, for static-context (browser) providers,
// which may use a client secret. The ETag is the answer's hash, so an
// unchanged answer is 304 to If-None-Match.
func (s *Server) ofrepBulk(c echo.Context) error {
	env, ok := s.ofrepAuth(c, "", true)
	if !ok {
		return nil
	}
	snap, err := s.cache.get(c.Request().Context(), env)
	if err != nil {
		return s.failed(c, "ofrep: reading an environment", err, func() error {
			return ofrepDetails(c, http.StatusInternalServerError, "service unavailable")
		})
	}
	served := servedBuffers.Get().(*[]runner.Served)
	failed, err := ofrepBulkAnswer(c, snap, served)
	if s.metrics != nil {
		// One count per outcome and request: a bulk answer is counted
		// together, never flag by flag.
		if c.Response().Status == http.StatusBadRequest {
			s.metrics.Evaluated(metrics.OFREPBulk, metrics.InvalidContext, 1)
		}
		s.metrics.Evaluated(metrics.OFREPBulk, metrics.Served, len(*served))
		s.metrics.Evaluated(metrics.OFREPBulk, metrics.Failed, failed)
	}
	s.served(served)
	return err
}

// ofrepBulkAnswer evaluates a snapshot's flags for the request's context and
// answers them, appending the variations served to served (when not nil).
// An answer of 304 (the client has it) was evaluated all the same, so it
// counts. failed is how many flags could not be served.
func ofrepBulkAnswer(c echo.Context, snap *snapshot, served *[]runner.Served) (failed int, err error) {
	u, status, code, details := ofrepContext(c)
	if code != "" {
		return 0, c.JSON(status, map[string]string{"errorCode": code, "errorDetails": details})
	}
	buf := bulkBuffers.Get().(*[]byte)
	body := append((*buf)[:0], `{"flags":[`...)
	first := true
	snap.each(func(f *flagstore.Flag) {
		if f.IsArchived {
			return
		}
		if !first {
			body = append(body, ',')
		}
		first = false
		var code string
		var variation int
		body, code, variation = snap.compiled(f).appendAnswer(body, u, snap.preparedSegment)
		if code != "" {
			failed++
		} else if served != nil {
			*served = append(*served, runner.Served{Flag: f, Variation: variation})
		}
	})
	body = append(body, "]}"...)
	err = writeTagged(c, body)
	if cap(body) <= maxPooledBuffer {
		*buf = body
		bulkBuffers.Put(buf)
	}
	return failed, err
}

// typedValue is a variation's value as the JSON of its type.
func typedValue(typ, value string) (any, bool) {
	switch typ {
	case targeting.VariationBoolean:
		switch {
		case strings.EqualFold(value, "true"):
			return true, true
		case strings.EqualFold(value, "false"):
			return false, true
		}
		return nil, false
	case targeting.VariationNumber:
		n, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		return n, err == nil
	case targeting.VariationJSON:
		if !json.Valid([]byte(value)) {
			return nil, false
		}
		return json.RawMessage(value), true
	}
	return value, true
}

// ofrepContext reads an OFREP request's evaluation context as a FeatBit
// end user: targetingKey is the key, name the name, and every other
// attribute a customized property (strings as they are, anything else as
// its JSON text). It answers an OFREP error code when it cannot.
func ofrepContext(c echo.Context) (eval.EndUser, int, string, string) {
	body, err := httpx.ReadBody(c, maxOFREPBody)
	if err != nil {
		// A body not read whole is answered by the class the server gives it
		// everywhere (413, 408, 503): the client is to send less, faster or
		// later, not to mend its context.
		if class, ok := httpx.Classify(err); ok {
			return eval.EndUser{}, class.Status, errGeneral, class.Code() + ": the request body could not be read whole"
		}
		return eval.EndUser{}, http.StatusBadRequest, errInvalidContext, "the request body is unreadable"
	}
	var req struct {
		Context map[string]json.RawMessage `json:"context"`
	}
	if len(bytes.TrimSpace(body)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		if dec.Decode(&req) != nil || dec.More() {
			return eval.EndUser{}, http.StatusBadRequest, errInvalidContext, "the body must be {\"context\": {...}}"
		}
	}
	var u eval.EndUser
	if raw, ok := req.Context["targetingKey"]; ok && len(raw) > 0 && raw[0] == '"' {
		if s, plain := plainJSON(raw); plain {
			u.KeyID = s
		} else if json.Unmarshal(raw, &u.KeyID) != nil {
			return eval.EndUser{}, http.StatusBadRequest, errInvalidContext, "targetingKey must be a string"
		}
	} else if ok && json.Unmarshal(raw, &u.KeyID) != nil {
		return eval.EndUser{}, http.StatusBadRequest, errInvalidContext, "targetingKey must be a string"
	}
	if strings.TrimSpace(u.KeyID) == "" {
		return eval.EndUser{}, http.StatusBadRequest, errTargetingKey, "the context has no targetingKey"
	}
	names := make([]string, 0, len(req.Context))
	for name := range req.Context {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		raw := req.Context[name]
		switch {
		case name == "targetingKey" || string(bytes.TrimSpace(raw)) == "null":
		case name == "name":
			n := text(raw)
			u.Name = &n
		default:
			u.CustomizedProperties = append(u.CustomizedProperties, eval.UserProperty{Name: name, Value: compact(raw)})
		}
	}
	if err := sdkdata.CheckEndUser(u); err != nil {
		return eval.EndUser{}, http.StatusBadRequest, errInvalidContext, err.Error()
	}
	return u, 0, "", ""
}

// compact is a JSON value as text: a string as it is, anything else as its
// compact JSON.
func compact(raw json.RawMessage) string {
	if s, ok := plainJSON(raw); ok {
		return s
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// plainJSON is the text of a JSON value that needs no decoding, without
// the decoder's allocations: a string without escapes (its contents), or a
// number, true or false (its text, compact already). raw is a value the
// request's decoder accepted.
func plainJSON(raw json.RawMessage) (string, bool) {
	switch {
	case len(raw) == 0:
		return "", false
	case raw[0] == '"':
		inner := raw[1 : len(raw)-1]
		if bytes.IndexByte(inner, '\\') >= 0 || !utf8.Valid(inner) {
			return "", false
		}
		return string(inner), true
	case raw[0] == '{' || raw[0] == '[' || raw[0] == 'n':
		return "", false
	}
	return string(raw), true
}

// servedBuffers keep the lists of variations a request served, which are
// handed to the evaluation tally, between requests.
var servedBuffers = sync.Pool{New: func() any { return new([]runner.Served) }}

// served hands the variations a request served to the evaluation tally,
// when there is one, and keeps the list for the next request. It never
// waits for the database.
func (s *Server) served(list *[]runner.Served) {
	if s.evaluations != nil {
		s.evaluations.Served(*list, s.now())
	}
	if cap(*list) <= maxPooledServed {
		*list = (*list)[:0]
		servedBuffers.Put(list)
	}
}

// maxPooledServed is the longest list kept for the next request.
const maxPooledServed = 1 << 16
