package sdkdata_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/sql/store/storetest"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// TestDocumentsHaveTheMembersOfTheirTypes: a document type lists the JSON
// members of Flag or Segment, in their order, so an answer built from the
// row reads like one encoded from the struct.
func TestDocumentsHaveTheMembersOfTheirTypes(t *testing.T) {
	t.Parallel()
	names := func(typ reflect.Type) []string {
		var out []string
		for i := range typ.NumField() {
			out = append(out, typ.Field(i).Tag.Get("json"))
		}
		return out
	}
	for _, c := range []struct{ doc, of reflect.Type }{
		{reflect.TypeFor[sdkdata.FlagDocument](), reflect.TypeFor[flagstore.Flag]()},
		{reflect.TypeFor[sdkdata.SegmentDocument](), reflect.TypeFor[flagstore.Segment]()},
	} {
		if got, want := names(c.doc), names(c.of); !reflect.DeepEqual(got, want) {
			t.Errorf("%v has members %v, want those of %v: %v", c.doc, got, c.of, want)
		}
	}
}

// TestDocumentsMatchTheirStructs: a flag and segments served as stored
// documents are the JSON of the Flag and the Segments the store returns,
// member for member, with targeting that has every part.
func TestDocumentsMatchTheirStructs(t *testing.T) {
	s, a, _ := storetest.New(t)
	ctx := context.Background()
	p, err := s.Projects().CreateProject(ctx, a, core.ProjectInput{Name: "Web", Key: "web"})
	storetest.Must(t, err)
	envID := p.Environments[0].ID
	sg, err := s.Segments().CreateSegment(ctx, a, envID, segments.SegmentInput{Name: "Beta <testers>", Key: "beta", Type: flagstore.SegmentEnvironmentSpecific,
		Included: []string{"alice"}, Rules: []flagstore.SegmentRule{{ID: "r", Name: "Staff", Conditions: []flagstore.Condition{
			{ID: "c", Property: "email", Op: "EndsWith", Value: "@example.com"}}}}})
	storetest.Must(t, err)
	created, err := s.Flags().CreateFlag(ctx, a, envID, flagstore.FlagInput{Name: "Checkout & pay", Key: "checkout", Tags: []string{"web"}})
	storetest.Must(t, err)
	on, off := created.Variations[0].ID, created.Variations[1].ID
	split := "keyId"
	_, err = s.Flags().SetFlagTargeting(ctx, a, envID, "checkout", flagstore.TargetingInput{Targeting: &flagstore.FlagTargeting{
		TargetUsers: []flagstore.TargetUser{{KeyIDs: []string{"bob"}, VariationID: on}},
		Rules: []flagstore.FlagRule{{ID: "r1", Name: "In beta", DispatchKey: &split, IncludedInExpt: true,
			Conditions: []flagstore.Condition{{ID: "c1", Property: targeting.SegmentIn, Value: `["` + sg.ID.String() + `"]`}},
			Variations: []flagstore.RolloutVariation{{ID: on, Rollout: []float64{0, 0.35}, ExptRollout: 1}, {ID: off, Rollout: []float64{0.35, 1}, ExptRollout: 1}}}},
		Fallthrough: created.Fallthrough,
	}})
	storetest.Must(t, err)

	flag, err := s.Flags().GetFlag(ctx, a, envID, "checkout")
	storetest.Must(t, err)
	doc, err := s.SDK().GetFlagJSON(ctx, a, envID, "checkout")
	storetest.Must(t, err)
	sameJSON(t, "flag", doc, flag)

	segments, err := s.Segments().SegmentsByIDs(ctx, a, envID, []string{sg.ID.String(), uuid.NewString()})
	storetest.Must(t, err)
	docs, err := s.SDK().SegmentsByIDsJSON(ctx, a, envID, []string{sg.ID.String(), uuid.NewString()})
	storetest.Must(t, err)
	sameJSON(t, "segments", docs, segments)

	// A list decodes only what says which variations a flag serves.
	list, err := s.Flags().ListFlags(ctx, a, envID, flagstore.FlagFilter{Page: core.Page{Size: 10}})
	storetest.Must(t, err)
	if len(list.Items) != 1 || !reflect.DeepEqual(list.Items[0].Serves, flag.Serves()) ||
		!reflect.DeepEqual(list.Items[0].Variations, flag.Variations) || !reflect.DeepEqual(list.Items[0].Tags, flag.Tags) {
		t.Errorf("listed %+v, want the serves %+v, variations and tags of %+v", list.Items, flag.Serves(), flag)
	}

	if _, err := s.SDK().GetFlagJSON(ctx, a, envID, "missing"); err != core.ErrNotFound {
		t.Errorf("a missing flag: got %v, want ErrNotFound", err)
	}
}

// sameJSON fails unless doc is, as JSON, what encoding v gives: the same
// values, and the same top-level members in the same order.
func sameJSON(t *testing.T, what string, doc json.RawMessage, v any) {
	t.Helper()
	want, err := json.Marshal(v)
	storetest.Must(t, err)
	var got, wanted any
	storetest.Must(t, json.Unmarshal(doc, &got))
	storetest.Must(t, json.Unmarshal(want, &wanted))
	if !reflect.DeepEqual(got, wanted) {
		t.Errorf("%s: got %s, want %s", what, doc, want)
	}
	if !json.Valid(doc) || bytes.Contains(doc, []byte("<")) {
		t.Errorf("%s: %s is not compact JSON with HTML escaped, as encoding/json writes it", what, doc)
	}
	if got, want := topLevelNames(t, doc), topLevelNames(t, want); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: members %v, want %v", what, got, want)
	}
}

// topLevelNames lists the member names of an object, or of an array's
// first object, in order.
func topLevelNames(t *testing.T, doc []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	tok, err := dec.Token()
	if tok == json.Delim('[') {
		tok, err = dec.Token()
	}
	if err != nil || tok != json.Delim('{') {
		t.Fatalf("%s is neither an object nor an array of objects", doc)
	}
	var names []string
	for dec.More() {
		name, err := dec.Token()
		storetest.Must(t, err)
		names = append(names, name.(string))
		var value json.RawMessage
		storetest.Must(t, dec.Decode(&value))
	}
	return names
}
