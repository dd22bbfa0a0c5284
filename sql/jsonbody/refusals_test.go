package jsonbody_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/jsonbody"
)

// rename is a small route body: a name, a comment, a revision.
type rename struct {
	Name     string  `json:"name"`
	Comment  string  `json:"comment"`
	Revision *string `json:"revision"`
	Tags     []string
}

// What Decode refuses, and with which error: ErrInvalid for a body that is
// not one JSON value, names a member twice or names nothing the route
// reads; a type error for a value of the wrong type.
func TestDecodeRefusals(t *testing.T) {
	tests := []struct {
		name, body string
		err        error // nil: accepted; errType: a type error
		path       string
	}{
		{"a name", `{"name":"a"}`, nil, ""},
		{"an empty object", `{}`, nil, ""},
		{"null", `null`, nil, ""},
		{"a known and an unknown member", `{"name":"a","extra":1}`, nil, ""},
		{"a field matched case-insensitively", `{"NAME":"a"}`, nil, ""},
		{"a field without a tag, by its Go name", `{"tags":["a"]}`, nil, ""},
		{"empty body", ``, jsonbody.ErrInvalid, ""},
		{"only spaces", `   `, jsonbody.ErrInvalid, ""},
		{"truncated", `{"name":"a"`, jsonbody.ErrInvalid, ""},
		{"two values", `{"name":"a"}{"name":"b"}`, jsonbody.ErrInvalid, ""},
		{"trailing comma", `{"name":"a",}`, jsonbody.ErrInvalid, ""},
		{"single quotes", `{'name':'a'}`, jsonbody.ErrInvalid, ""},
		{"invalid UTF-8", "{\"name\":\"a\xff\"}", jsonbody.ErrInvalid, ""},
		{"a name twice", `{"name":"a","name":"b"}`, jsonbody.ErrInvalid, ""},
		{"a name twice in two cases", `{"name":"a","nAmE":"b"}`, jsonbody.ErrInvalid, ""},
		{"a name twice, escaped", `{"comment":"a","\u0063omment":"b"}`, jsonbody.ErrInvalid, ""},
		{"a name twice deep in an unknown member", `{"name":"a","x":[{"k":1,"K":2}]}`, jsonbody.ErrInvalid, ""},
		{"nothing the route reads", `{"title":"a"}`, jsonbody.ErrInvalid, ""},
		{"a string for a list", `{"tags":"a"}`, errType, `"/tags"`},
		{"a number for a string", `{"name":1}`, errType, `"/name"`},
		{"an object for a string", `{"name":{}}`, errType, `"/name"`},
		{"a list for the body", `["name"]`, errType, "JSON array"},
		{"a list of numbers for tags", `{"name":"a","tags":[1,2]}`, errType, `"/tags/0"`},
	}
	for _, tt := range tests {
		var got rename
		err := jsonbody.Decode([]byte(tt.body), &got)
		switch {
		case tt.err == nil && err != nil:
			t.Errorf("%s: refused: %v", tt.name, err)
		case tt.err == errType:
			// The decoder's own error, naming where the wrong value is.
			if err == nil || errors.Is(err, jsonbody.ErrInvalid) || errors.Is(err, jsonbody.ErrTooCostly) || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("%s: got %v, want a type error naming %s", tt.name, err, tt.path)
			}
		case tt.err != nil && !errors.Is(err, tt.err):
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.err)
		}
	}
}

// errType marks the cases refused with the decoder's type error.
var errType = errors.New("a type error")

// Decode takes a non-nil pointer, and decodes what it accepts as
// encoding/json does.
func TestDecodeTargets(t *testing.T) {
	var r rename
	if err := jsonbody.Decode([]byte(`{"name":"a"}`), r); err == nil {
		t.Error("a struct, not a pointer: accepted")
	}
	if err := jsonbody.Decode([]byte(`{"name":"a"}`), (*rename)(nil)); err == nil {
		t.Error("a nil pointer: accepted")
	}
	body := `{"Name":"n","comment":"why","revision":"r1","tags":["a","b"]}`
	if err := jsonbody.Decode([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	if r.Name != "n" || r.Comment != "why" || r.Revision == nil || *r.Revision != "r1" || strings.Join(r.Tags, ",") != "a,b" {
		t.Errorf("decoded %+v", r)
	}
	// Any member is a map's.
	var m map[string]int
	if err := jsonbody.Decode([]byte(`{"a":1,"b":2}`), &m); err != nil || m["a"] != 1 || m["b"] != 2 {
		t.Errorf("a map: %v, %v", m, err)
	}
	if err := jsonbody.Decode([]byte(`{"a":1,"A":2}`), &m); !errors.Is(err, jsonbody.ErrInvalid) {
		t.Errorf("a map's names in two cases: %v, want ErrInvalid", err)
	}
}

// The cost: a body is priced before it is decoded, and one allowance shared
// by the parts of a stream bounds them together.
func TestDecodeCost(t *testing.T) {
	// A list of 20,000 empty objects decoded into structs costs far more
	// than eight times its 60 KB.
	tiny := "[" + strings.Repeat("{},", 19999) + "{}]"
	var many []rename
	if err := jsonbody.Decode([]byte(tiny), &many); !errors.Is(err, jsonbody.ErrTooCostly) {
		t.Errorf("20,000 empty objects into structs: %v, want ErrTooCostly", err)
	}
	// The same count of names is cheap as strings.
	names := "[" + strings.Repeat(`"name-0001",`, 19999) + `"name-0001"]`
	var list []string
	if err := jsonbody.Decode([]byte(names), &list); err != nil || len(list) != 20000 {
		t.Errorf("20,000 names: %d, %v", len(list), err)
	}
	// An allowance spent by the first part refuses the next: one of half
	// again what a part costs takes one part, not two.
	probe := jsonbody.Allowance{Bytes: 1 << 30}
	if err := probe.Decode([]byte(names), &list); err != nil {
		t.Fatal(err)
	}
	price := 1<<30 - probe.Bytes
	if price <= int64(len(names)) || price > jsonbody.Factor*int64(len(names)) {
		t.Errorf("20,000 names of %d bytes priced at %d", len(names), price)
	}
	a := jsonbody.Allowance{Bytes: price * 3 / 2}
	if err := a.Decode([]byte(names), &list); err != nil {
		t.Fatalf("first part: %v", err)
	}
	left := a.Bytes
	if err := a.Decode([]byte(names), &list); !errors.Is(err, jsonbody.ErrTooCostly) {
		t.Errorf("second part over what is left: %v, want ErrTooCostly", err)
	}
	if a.Bytes != left {
		t.Errorf("a refused part drew from the allowance: %d, was %d", a.Bytes, left)
	}
}
