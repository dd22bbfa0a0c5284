package jsonbody_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/bunting-flags/bunting/sql/jsonbody"
)

// FuzzDecode: Decode never panics, and what it accepts decodes to exactly
// what encoding/json makes of it; what encoding/json refuses, it refuses.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{`{"name":"x","tags":["a"]}`, `{`, `[]`, `null`, "\xff", `{"matrix":[[1],[2,3]]}`,
		`{"count":1e400}`, `{"count":"1"}`, `{"fixed":["a","b","c"]}`, `{"raw":{"a":1,"A":2}}`, `{"any":[{"x":[null]}]}`,
		`{"labels":{"a":"1"},"lists":{"b":[1]}}`, `{"id":"not-a-uuid"}`, `{"at":"2024-01-02T03:04:05Z"}`,
		`{"children":[{"children":[null,{}]}]}`, `{"bytes":"aGk="}`, `{"name":"\u017f"}`, `{"unknownField":1}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got, want kitchen
		err := jsonbody.Decode(body, &got)
		wantErr := json.Unmarshal(body, &want)
		if err == nil && wantErr != nil {
			t.Fatalf("Decode(%q) accepted what encoding/json refuses: %v", body, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode(%q) = %+v, encoding/json %+v", body, got, want)
		}
	})
}
