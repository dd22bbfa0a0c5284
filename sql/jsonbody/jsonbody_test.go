package jsonbody_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/jsonbody"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/sql/store/segments"
)

// kitchen has a field of every kind the walk treats apart.
type kitchen struct {
	Name     string            `json:"name"`
	Skip     string            `json:"-"`
	Count    *int              `json:"count"`
	Tags     []string          `json:"tags"`
	Matrix   [][]int           `json:"matrix"`
	Fixed    [2]string         `json:"fixed"`
	Raw      json.RawMessage   `json:"raw"`
	Any      any               `json:"any"`
	Labels   map[string]string `json:"labels"`
	Lists    map[string][]int  `json:"lists"`
	ID       uuid.UUID         `json:"id"`
	IDs      []uuid.UUID       `json:"ids"`
	At       *time.Time        `json:"at"`
	Bytes    []byte            `json:"bytes"`
	Children []*kitchen        `json:"children"`
	flagstore.Change
}

// TestDecodeMatchesEncodingJSON: whatever Decode accepts decodes to exactly
// what encoding/json makes of it.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	bodies := []string{
		`{}`, `null`, `{"name":"a"}`, `{"NAME":"a","count":3}`, `{"name":"\u00e9t\u00e9","tags":["a","b",""]}`,
		`{"name":"x","matrix":[[1,2],[],[3]],"fixed":["a","b","c"]}`,
		`{"name":"x","raw":{"a":[1,{"b":null}]},"any":[1,"two",{"three":3},[true,null]]}`,
		`{"name":"x","labels":{"a":"1","b":"2"},"lists":{"a":[1,2,3],"b":[]}}`,
		`{"name":"x","id":"3e961f0f-6fd4-4cf4-910f-52d356f8cc08","ids":["3e961f0f-6fd4-4cf4-910f-52d356f8cc08"]}`,
		`{"name":"x","at":"2024-01-02T03:04:05Z","bytes":"aGVsbG8=","comment":"why"}`,
		`{"name":"x","children":[{"name":"c1","tags":["t"]},null,{"children":[{"name":"c3"}]}]}`,
		`{"name":"x","unknown":{"deep":[[[{"a":1}]]]},"tags":null}`,
		` {"name" : "spaced" , "tags" : [ "a" , "b" ] } `,
	}
	for _, body := range bodies {
		var got, want kitchen
		err := jsonbody.Decode([]byte(body), &got)
		if wantErr := json.Unmarshal([]byte(body), &want); wantErr != nil {
			t.Fatalf("the test body %s is not valid: %v", body, wantErr)
		}
		if err != nil {
			t.Errorf("Decode(%s) = %v, want accepted", body, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Decode(%s) = %+v, want %+v", body, got, want)
		}
	}
	// Into a value that has elements already, encoding/json decodes into
	// them and appends past them; so does Decode.
	body := `{"tags":["x"],"children":[{"name":"replaced"},{"name":"added"}],"matrix":[[9]]}`
	start := func() kitchen {
		return kitchen{Name: "kept", Tags: []string{"a", "b", "c"}, Children: []*kitchen{{Name: "c0", Tags: []string{"t"}}}, Matrix: [][]int{{1, 2}}}
	}
	got, want := start(), start()
	if err := jsonbody.Decode([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(body), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("into a filled value: got %+v, want %+v", got, want)
	}

	// Top-level slices and statements, as the policy route decodes them.
	body = `[{"id":"s1","resourceType":"flag","effect":"allow","actions":["*"],"resources":["project/*:env/*:flag/*"]},{"effect":"deny"}]`
	var gotStatements, wantStatements []access.Statement
	if err := jsonbody.Decode([]byte(body), &gotStatements); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(body), &wantStatements)
	if !reflect.DeepEqual(gotStatements, wantStatements) {
		t.Errorf("statements: got %+v, want %+v", gotStatements, wantStatements)
	}
}

// TestDecodeRefusesAmbiguousBodies: a member named twice in any case at any
// depth, broken JSON and invalid UTF-8 are ErrInvalid; so is a top-level
// object naming none of a struct's fields.
func TestDecodeRefusesAmbiguousBodies(t *testing.T) {
	for body, ok := range map[string]bool{
		`{"name":"a","Name":"b"}`:                         false,
		`{"name":"a","\u004eame":"b"}`:                    false,
		`{"unknown":{"a":1,"A":2},"name":"x"}`:            false, // in a member no field takes
		`{"name":"x","raw":[{"a":1},{"b":1,"B":2}]}`:      false, // in a raw message
		`{"name":"x","any":{"k":1,"\u212a":2}}`:           false, // the Kelvin sign is K
		`{"name":"x","labels":{"ſ":"1","S":"2"}}`:         false, // long s is S
		`{"name":"x","labels":{"a":"1","b":"2"}}`:         true,
		`{"unknownField":1}`:                              false,
		`{"-":1}`:                                         false,
		`{"comment":"promoted from the embedded Change"}`: true,
		`{"name":"x"} {"name":"y"}`:                       false,
		"{\"name\":\"\xff\"}":                             false,
		`{"name":`:                                        false,
	} {
		var k kitchen
		err := jsonbody.Decode([]byte(body), &k)
		if ok != (err == nil) || (!ok && !errors.Is(err, jsonbody.ErrInvalid)) {
			t.Errorf("Decode(%s) = %v, want ok=%v", body, err, ok)
		}
	}
	// An object with many members is checked as a small one is.
	var b strings.Builder
	b.WriteString(`{"name":"x","unknown":{`)
	for i := range 1000 {
		fmt.Fprintf(&b, `"k%d":"v",`, i)
	}
	b.WriteString(`"K500":"again"}}`)
	var k kitchen
	if err := jsonbody.Decode([]byte(b.String()), &k); !errors.Is(err, jsonbody.ErrInvalid) {
		t.Errorf("an object naming k500 and K500 among 1,001 members: %v, want ErrInvalid", err)
	}
}

// fill repeats elem, separated by commas, between open and close until the
// body is about 1 MiB.
func fill(open, elem, close string) string {
	var b strings.Builder
	b.WriteString(open)
	for b.Len() < 1<<20-len(elem)-len(close)-1 {
		if b.Len() > len(open) {
			b.WriteByte(',')
		}
		b.WriteString(elem)
	}
	b.WriteString(close)
	return b.String()
}

// manyMembers is an object of about 1 MiB of short distinct members.
func manyMembers(value string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; b.Len() < 1<<20-64; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%x":%s`, i, value)
	}
	b.WriteByte('}')
	return b.String()
}

// worstBodies are 1 MiB bodies of the smallest values JSON has, each into
// the target that makes the most of them.
func worstBodies() []struct {
	name   string
	body   string
	target func() any
} {
	statements := func() any { return &[]access.Statement{} }
	return []struct {
		name   string
		body   string
		target func() any
	}{
		{"tiny objects into statements", fill("[", "{}", "]"), statements},
		{"tiny arrays into statements", fill("[", "[]", "]"), statements},
		{"nulls into statements", fill("[", "null", "]"), statements},
		{"short strings into keys", fill("[", `"a"`, "]"), func() any { return &[]string{} }},
		{"empty strings into keys", fill("[", `""`, "]"), func() any { return &[]string{} }},
		{"numbers into ids", fill("[", `0`, "]"), func() any { return &[]uuid.UUID{} }},
		{"tiny objects into raw patch operations", fill("[", "{}", "]"), func() any { return &json.RawMessage{} }},
		{"many members into a struct", manyMembers("0"), func() any { return &flagstore.FlagInput{} }},
		{"many members into a map", manyMembers("0"), func() any { return &map[string]string{} }},
		{"many members into any", manyMembers("{}"), func() any { return new(any) }},
		{"tiny arrays into any", fill("[", "[]", "]"), func() any { return new(any) }},
		{"deep nesting into any", strings.Repeat("[", 9000) + strings.Repeat("]", 9000), func() any { return new(any) }},
		{"deep nesting, repeated", fill("[", strings.Repeat("[", 500)+strings.Repeat("]", 500), "]"), statements},
		{"tiny rules into a segment", fill(`{"rules":[`, "{}", "]}"), func() any { return &segments.SegmentInput{} }},
		{"tiny users into a file", fill(`{"users":[`, "{}", "]}"), func() any { return &sdkdata.ImportUserData{} }},
		{"tiny variations into a flag", fill(`{"variations":[`, "{}", "]}"), func() any { return &flagstore.FlagInput{} }},
		{"tiny conditions", fill(`{"rules":[{"conditions":[`, "{}", "]}]}"), func() any { return &segments.SegmentInput{} }},
	}
}

// TestDecodeCostIsBounded decodes each worst-case body and measures every
// byte allocated meanwhile, freed or not: refused or decoded, it is at most
// Factor times the body plus Slack, and a little for the walk itself and
// for encoding/json's scanner, which keeps 8 bytes a level of nesting (of
// at most 10,000). Before, encoding/json and the duplicate-name check
// allocated 213 times the size of the tiny objects.
//
// Not parallel: the allocation count is the process's.
func TestDecodeCostIsBounded(t *testing.T) {
	for _, c := range worstBodies() {
		body := []byte(c.body)
		v := c.target()
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		err := jsonbody.Decode(body, v)
		runtime.ReadMemStats(&m1)
		allocated := m1.TotalAlloc - m0.TotalAlloc
		t.Logf("%-40s %8d bytes: allocated %5.2f times its size, %v", c.name, len(body), float64(allocated)/float64(len(body)), err)
		if limit := uint64(10*len(body) + jsonbody.Slack + 256<<10); allocated > limit {
			t.Errorf("%s: decoding allocated %d bytes, want at most %d", c.name, allocated, limit)
		}
		runtime.KeepAlive(v)
	}
}

// TestRealBodiesAreAccepted: bodies of the size and shape clients send
// stay well within the bound.
func TestRealBodiesAreAccepted(t *testing.T) {
	keys := func(n int, format string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf(format, i)
		}
		return out
	}
	st := access.Statement{ID: "s", ResourceType: "flag", Effect: "allow", Actions: []string{"UpdateFlagName", "ToggleFlag"},
		Resources: []string{"project/web:env/prod:flag/checkout"}}
	for _, c := range []struct {
		name   string
		value  any
		target func() any
	}{
		{"a segment of 100,000 keys of 4 characters", segments.SegmentInput{Name: "big", Included: keys(100000, "%04x")}, func() any { return &segments.SegmentInput{} }},
		{"a segment of 40,000 user ids", segments.SegmentInput{Name: "big", Included: keys(40000, "user-%08d")}, func() any { return &segments.SegmentInput{} }},
		{"a thousand statements", func() []access.Statement {
			out := make([]access.Statement, 1000)
			for i := range out {
				out[i] = st
			}
			return out
		}(), func() any { return &[]access.Statement{} }},
		{"30,000 keys to look up", keys(30000, "u%d"), func() any { return &[]string{} }},
	} {
		body, _ := json.Marshal(c.value)
		v := c.target()
		a := jsonbody.Allowance{Bytes: 1 << 40}
		if err := a.Decode(body, v); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		cost := 1<<40 - a.Bytes
		t.Logf("%-45s %8d bytes: priced %4.2f times its size", c.name, len(body), float64(cost)/float64(len(body)))
		if cost > jsonbody.Factor*int64(len(body))/2 {
			t.Errorf("%s: priced %d for %d bytes, want well under the bound", c.name, cost, len(body))
		}
	}
}
