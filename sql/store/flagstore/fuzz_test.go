package flagstore

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/targeting"
)

// FuzzApplyPatch: applying any patch to a flag never panics; a patch that
// writes a read-only member is always refused; an accepted patch leaves the
// read-only members as they were.
func FuzzApplyPatch(f *testing.F) {
	for _, seed := range []string{
		`[{"op":"replace","path":"/name","value":"x"}]`, `[{"op":"remove","path":"/id"}]`,
		`[{"op":"move","from":"/tags","path":"/description"}]`, `[{"op":"test","path":"/revision","value":"x"}]`,
		`[{"op":"add","path":"/rules/-","value":{"id":"r"}}]`, `[{"op":"copy","from":"/key","path":"/name"}]`,
		`[]`, `null`, `[{"op":"replace","path":"/~1id","value":1}]`,
		// The copy bomb: each copy doubles the variations (refused past 1 MiB).
		"[" + strings.Repeat(`{"op":"copy","from":"/variations","path":"/variations/-"},`, 21) + `{"op":"copy","from":"/variations","path":"/variations/-"}]`,
	} {
		f.Add([]byte(seed))
	}
	doc := Flag{Name: "Pay", Key: "pay", VariationType: targeting.VariationBoolean, Variations: DefaultVariations(targeting.VariationBoolean),
		Tags: []string{"a"}, TargetUsers: []TargetUser{}, Rules: []FlagRule{}}
	doc.DisabledVariationID = doc.Variations[1].ID
	f.Fuzz(func(t *testing.T, ops []byte) {
		var out Flag
		err := ApplyPatch(doc, ops, flagWritable, &out)
		var parsed []patchOp
		json.Unmarshal(ops, &parsed)
		for _, op := range parsed {
			if op.Op != "test" && op.Path != nil && !slices.Contains(flagWritable, member(*op.Path)) && err == nil {
				t.Fatalf("patch %s wrote the read-only %s", ops, *op.Path)
			}
		}
		if err == nil && (out.Key != doc.Key || out.ID != doc.ID || out.Revision != doc.Revision) {
			t.Fatalf("patch %s changed a read-only member", ops)
		}
	})
}
