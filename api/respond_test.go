package api

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// TestBindRefusesAmbiguousAndEmptyBodies: a member named twice, in any case
// and at any depth, and a body naming none of the route's fields are
// body_is_invalid; an empty object and no body are accepted as "nothing".
func TestBindRefusesAmbiguousAndEmptyBodies(t *testing.T) {
	e := echo.New()
	for _, c := range []struct {
		body string
		ok   bool
	}{
		{`{"name":"a","key":"k"}`, true},
		{`{"NAME":"a"}`, true}, // encoding/json matches fields in any case
		{`{"name":"a","unknownField":1}`, true},
		{`{"comment":"why"}`, true}, // a promoted field of the embedded Change
		{`{}`, true},
		{``, true},
		{` `, true},
		{`{"name":"a","Name":"b"}`, false},
		{`{"name":"a","name":"b"}`, false},
		{`{"name":"a","\u004eame":"b"}`, false},
		{`{"key":"k","name":"a","comment":"x","COMMENT":"y"}`, false},
		{`{"variations":[{"id":"1","value":"a","Value":"b"}]}`, false},
		{`{"variations":[{"id":"1"},{"id":"2"}],"tags":[{"a":1,"b":{"c":1,"C":2}}]}`, false},
		{`{"name":"ſ","nameſ":1,"NAMES":2}`, false}, // ſ folds to s, as encoding/json matches it
		{`{"unknownField":1}`, false},
		{`{"Unknown":{"name":"a"}}`, false}, // a nested name is not a top-level field
		{`{"-":1}`, false},
	} {
		c2 := e.NewContext(httptest.NewRequest(http.MethodPut, "/", bytes.NewReader([]byte(c.body))), httptest.NewRecorder())
		var in flagstore.FlagInput
		err := bind(c2, &in)
		var verr *core.ValidationError
		switch {
		case c.ok && err != nil:
			t.Errorf("bind(%s) = %v, want accepted", c.body, err)
		case !c.ok && !(errors.As(err, &verr) && len(verr.Codes) == 1 && verr.Codes[0] == "body_is_invalid"):
			t.Errorf("bind(%s) = %v, want body_is_invalid", c.body, err)
		}
	}

	// Targets without a fixed set of fields take any member, but never a
	// member named twice.
	for body, ok := range map[string]bool{`{"anything":1}`: true, `{"a":1,"A":2}`: false} {
		c2 := e.NewContext(httptest.NewRequest(http.MethodPost, "/", bytes.NewReader([]byte(body))), httptest.NewRecorder())
		var m map[string]any
		if err := bind(c2, &m); (err == nil) != ok {
			t.Errorf("bind(%s) into a map = %v, want ok=%v", body, err, ok)
		}
	}
	c2 := e.NewContext(httptest.NewRequest(http.MethodPatch, "/", bytes.NewReader([]byte(`[{"op":"add","Op":"remove","path":"/x"}]`))), httptest.NewRecorder())
	if _, err := rawBody(c2); err == nil {
		t.Errorf("a patch operation naming op twice was accepted")
	}
}
