package sdk

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store"
)

// compiledFlag is a flag ready for evaluating many users: its conditions
// parsed (eval.Prepared) and its OFREP answers encoded but for the parts an
// evaluation chooses. Every string of an answer is the flag's own (its key,
// its variations, its rules' names), so an evaluation only appends bytes
// encoded here once, by encoding/json, and the answers stay byte for byte
// what encoding ofrepResult gives.
type compiledFlag struct {
	prepared *eval.Prepared
	// key is `{"key":"…"`, the start of every answer.
	key []byte
	// variations are by id, the first of each id, as evaluation finds them.
	variations map[string]*ofrepVariation
	// reasons are the match reasons the flag can give, encoded.
	reasons map[string][]byte
}

// ofrepVariation is a variation's parts of an answer.
type ofrepVariation struct {
	// value is `,"value":…`; nil when the value is not of the flag's type,
	// and parseError is the whole answer then.
	value, parseError []byte
	// variant is `,"variant":"…","metadata":{"matchReason":` (without the
	// variant when the id is empty, as omitempty leaves it out), name is
	// `,"variationName":"…"}}`.
	variant, name []byte
}

// compile prepares a flag and encodes its answers' parts.
func compile(f *store.Flag) *compiledFlag {
	c := &compiledFlag{prepared: eval.Prepare(f), key: append([]byte(`{"key":`), jsonString(f.Key)...),
		variations: make(map[string]*ofrepVariation, len(f.Variations)), reasons: make(map[string][]byte, len(f.Rules)+3)}
	for _, v := range f.Variations {
		if c.variations[v.ID] != nil {
			continue
		}
		ov := &ofrepVariation{name: append(append([]byte(`,"variationName":`), jsonString(v.Name)...), "}}"...)}
		if value, ok := typedValue(f.VariationType, v.Value); ok {
			ov.value = append([]byte(`,"value":`), mustJSON(value)...)
		} else {
			ov.parseError = mustJSON(ofrepResult{Key: f.Key, ErrorCode: errParse, ErrorDetails: "the variation's value is not a " + f.VariationType})
		}
		if v.ID != "" {
			ov.variant = append(append([]byte(`,"variant":`), jsonString(v.ID)...), ","...)
		} else {
			ov.variant = []byte(",")
		}
		ov.variant = append(ov.variant, `"metadata":{"matchReason":`...)
		c.variations[v.ID] = ov
	}
	for _, r := range []string{eval.MatchDisabled, eval.MatchTargeted, eval.MatchFallthrough} {
		c.reasons[r] = jsonString(r)
	}
	for _, r := range f.Rules {
		c.reasons[r.Name] = jsonString(r.Name)
	}
	return c
}

// noVariation is the answer for a user a flag's rollout serves nothing.
const noVariation = `,"errorCode":"GENERAL","errorDetails":"the flag's rollout serves no variation to this user"}`

// appendAnswer evaluates the flag for a user and appends its OFREP answer,
// reporting its error code ("" on success).
func (c *compiledFlag) appendAnswer(b []byte, u eval.EndUser, segments eval.PreparedSegments) ([]byte, string) {
	ev := c.prepared.Evaluate(u, segments)
	if ev.Variation == nil {
		return append(append(b, c.key...), noVariation...), errGeneral
	}
	v := c.variations[ev.Variation.ID]
	if v.value == nil {
		return append(b, v.parseError...), errParse
	}
	reason := `,"reason":"STATIC"`
	switch {
	case ev.Kind == eval.MatchDisabled:
		reason = `,"reason":"DISABLED"`
	case ev.Kind == eval.MatchTargeted || ev.Kind == eval.MatchRule:
		reason = `,"reason":"TARGETING_MATCH"`
	case ev.Split:
		reason = `,"reason":"SPLIT"`
	}
	b = append(append(append(append(b, c.key...), v.value...), reason...), v.variant...)
	if r, ok := c.reasons[ev.Reason]; ok {
		b = append(b, r...)
	} else {
		b = append(b, jsonString(ev.Reason)...)
	}
	return append(b, v.name...), ""
}

// jsonString is s as encoding/json writes it.
func jsonString(s string) []byte { return mustJSON(s) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only strings, numbers, booleans and valid JSON are encoded.
		panic("sdk: encode an OFREP answer: " + err.Error())
	}
	return b
}

// compiled returns a snapshot flag's compiled form, compiling it on first
// use: a snapshot never changes, and a change makes a new snapshot.
func (s *snapshot) compiled(f *store.Flag) *compiledFlag {
	if c, ok := s.compiledFlags.Load(f); ok {
		return c.(*compiledFlag)
	}
	c, _ := s.compiledFlags.LoadOrStore(f, compile(f))
	return c.(*compiledFlag)
}

// preparedSegment is the snapshot's eval.PreparedSegments.
func (s *snapshot) preparedSegment(id uuid.UUID) (*eval.PreparedSegment, bool) {
	sg, ok := s.segments[id]
	if !ok {
		return nil, false
	}
	if p, ok := s.preparedSegments.Load(sg); ok {
		return p.(*eval.PreparedSegment), true
	}
	p, _ := s.preparedSegments.LoadOrStore(sg, eval.PrepareSegment(sg))
	return p.(*eval.PreparedSegment), true
}

// pretty indents an answer as echo's JSON does for ?pretty and in debug mode.
func pretty(body []byte) []byte {
	var b bytes.Buffer
	if json.Indent(&b, body, "", "  ") != nil {
		return body
	}
	return b.Bytes()
}

// ofrepJSON answers encoded JSON as c.JSON would have answered it.
func ofrepJSON(c echo.Context, status int, body []byte) error {
	if c.Echo().Debug || (c.Request().URL.RawQuery != "" && c.QueryParams().Has("pretty")) {
		body = pretty(body)
	}
	return c.Blob(status, echo.MIMEApplicationJSON, body)
}

// ofrepStatus is the status of an answer with an error code.
func ofrepStatus(code string) int {
	switch code {
	case "":
		return http.StatusOK
	case errParse:
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// bulkBuffers keep bulk answers' buffers between requests: an answer is
// about 160 bytes per flag, which allocated anew each time would be most of
// what a bulk evaluation allocates.
var bulkBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBuffer is the largest buffer kept for the next answer.
const maxPooledBuffer = 4 << 20
