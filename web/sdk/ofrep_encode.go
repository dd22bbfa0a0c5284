package sdk

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
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
	// variations are the flag's, in its order; evaluation serves the first
	// of an id.
	variations []ofrepVariation
	// ruleNames are the rules' names as match reasons, in the flag's order.
	ruleNames []string
}

// ofrepVariation is a variation's parts of an answer.
type ofrepVariation struct {
	// value is `,"value":…`; nil when the value is not of the flag's type,
	// and parseError is the whole answer then.
	value, parseError []byte
	// variant is `,"variant":"…","metadata":{"matchReason":` (without the
	// variant when the id is empty, as omitempty leaves it out), name is
	// `,"variationName":"…"}}`; the evaluation puts the match reason and
	// sendToExperiment between them.
	variant, name []byte
}

// compile prepares a flag and encodes its answers' parts.
func compile(f *flagstore.Flag) *compiledFlag {
	c := &compiledFlag{prepared: eval.Prepare(f), key: append([]byte(`{"key":`), jsonString(f.Key)...),
		variations: make([]ofrepVariation, len(f.Variations)), ruleNames: make([]string, len(f.Rules))}
	for i, v := range f.Variations {
		ov := &c.variations[i]
		ov.name = append(append([]byte(`,"variationName":`), jsonString(v.Name)...), "}}"...)
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
	}
	for i, r := range f.Rules {
		c.ruleNames[i] = string(jsonString(r.Name))
	}
	return c
}

// variation is the index of the variation an evaluation served: the first
// of its id, as evaluation finds it.
func (c *compiledFlag) variation(id string) int {
	for i, v := range c.prepared.Flag.Variations {
		if v.ID == id {
			return i
		}
	}
	return -1
}

// matchReason is an evaluation's match reason, encoded.
func (c *compiledFlag) matchReason(ev eval.Evaluation) string {
	switch ev.Kind {
	case eval.MatchDisabled:
		return `"` + eval.MatchDisabled + `"`
	case eval.MatchTargeted:
		return `"` + eval.MatchTargeted + `"`
	case eval.MatchFallthrough:
		return `"` + eval.MatchFallthrough + `"`
	}
	for i, r := range c.prepared.Flag.Rules {
		if r.ID == ev.RuleID && r.Name == ev.Reason {
			return c.ruleNames[i]
		}
	}
	return string(jsonString(ev.Reason))
}

// noVariation is the answer for a user a flag's rollout serves nothing.
const noVariation = `,"errorCode":"GENERAL","errorDetails":"the flag's rollout serves no variation to this user"}`

// appendAnswer evaluates the flag for a user and appends its OFREP answer,
// reporting its error code ("" on success) and the index of the variation
// served (-1 on an error: it serves none).
func (c *compiledFlag) appendAnswer(b []byte, u eval.EndUser, segments eval.PreparedSegments) ([]byte, string, int) {
	ev := c.prepared.Evaluate(u, segments)
	if ev.Variation == nil {
		return append(append(b, c.key...), noVariation...), errGeneral, -1
	}
	vi := c.variation(ev.Variation.ID)
	v := &c.variations[vi]
	if v.value == nil {
		return append(b, v.parseError...), errParse, -1
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
	b = append(b, c.matchReason(ev)...)
	// Always present, false included: OpenFeature's metadata accessors tell
	// an absent key from false, and a hook forwarding events to experiments
	// should not read "this server does not say" as "not in the experiment".
	// It sits between matchReason and variationName, where encoding/json puts
	// a map's keys.
	if ev.SendToExperiment {
		b = append(b, `,"sendToExperiment":true`...)
	} else {
		b = append(b, `,"sendToExperiment":false`...)
	}
	return append(b, v.name...), "", vi
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
func (s *snapshot) compiled(f *flagstore.Flag) *compiledFlag {
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
