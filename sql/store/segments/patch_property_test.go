package segments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// TestRandomPatchesNeverStoreInvalid applies random JSON Patches, valid and
// not, to a flag and a segment, and after each one checks that what is stored
// passes the same validation as creation: no sequence of patches can leave
// either malformed, and every refused patch leaves them exactly as they were.
func TestRandomPatchesNeverStoreInvalid(t *testing.T) {
	ctx := context.Background()
	s, a, _ := testStore(t)
	p, err := s.core.CreateProject(ctx, a, core.ProjectInput{Name: "Web", Key: "web"})
	if err != nil {
		t.Fatal(err)
	}
	envID := p.Environments[0].ID
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		t.Fatal(err)
	}
	seg, err := s.CreateSegment(ctx, a, envID, SegmentInput{Name: "Beta", Key: "beta", Type: flagstore.SegmentEnvironmentSpecific})
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.CreateSegment(ctx, a, envID, SegmentInput{Name: "Staff", Key: "staff", Type: flagstore.SegmentEnvironmentSpecific})
	if err != nil {
		t.Fatal(err)
	}
	flag, err := s.flags.CreateFlag(ctx, a, envID, flagstore.FlagInput{Name: "Pay", Key: "pay", VariationType: targeting.VariationString})
	if err != nil {
		t.Fatal(err)
	}

	seed := uint64(20261122)
	rng := rand.New(rand.NewPCG(seed, seed))
	gen := patchGenerator{rng: rng, variations: []string{flag.Variations[0].ID, flag.Variations[1].ID, "nope"},
		segments: []string{seg.ID.String(), other.ID.String(), uuid.NewString(), "not-a-uuid"}}

	accepted := map[string]int{}
	for i := range 600 {
		target := "flag"
		if i%3 == 2 {
			target = "segment"
		}
		ops := gen.patch(target)
		before := storedState(t, s, env, flag.Key, seg.ID)
		var err error
		if target == "flag" {
			_, err = s.flags.PatchFlag(ctx, a, envID, flag.Key, ops)
		} else {
			_, err = s.PatchSegment(ctx, a, envID, seg.ID, ops)
		}
		var verr *core.ValidationError
		var rerr *core.RuleError
		if err != nil && !errors.As(err, &verr) && !errors.As(err, &rerr) {
			t.Fatalf("seed %d step %d: patch %s answered %v, want success or a client error", seed, i, ops, err)
		}
		after := storedState(t, s, env, flag.Key, seg.ID)
		if err != nil && after != before {
			t.Fatalf("seed %d step %d: refused patch %s (%v) changed what is stored", seed, i, ops, err)
		}
		if err == nil {
			accepted[target]++
		}
		assertValid(t, s, env, flag.Key, seg.ID, fmt.Sprintf("seed %d step %d after %s", seed, i, ops))
	}
	// The generator must exercise both outcomes, or the test proves little.
	if accepted["flag"] < 10 || accepted["segment"] < 10 {
		t.Fatalf("only %v patches were accepted; the generator no longer makes valid ones", accepted)
	}
}

// storedState is the stored flag and segment as text, to compare before and after.
func storedState(t *testing.T, s *Segments, env core.EnvRow, key string, segID uuid.UUID) string {
	t.Helper()
	f, err := s.core.Q.GetFlag(context.Background(), db.GetFlagParams{EnvID: env.Environment.ID, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	sg, err := s.core.Q.GetSegment(context.Background(), db.GetSegmentParams{OrganizationID: env.OrganizationID, ID: segID})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal([]any{f, sg})
	return string(b)
}

// assertValid re-validates the stored flag and segment from scratch.
func assertValid(t *testing.T, s *Segments, env core.EnvRow, key string, segID uuid.UUID, context_ string) {
	t.Helper()
	ctx := context.Background()
	row, err := s.core.Q.GetFlag(ctx, db.GetFlagParams{EnvID: env.Environment.ID, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	f, err := flagstore.FlagFrom(row)
	if err != nil {
		t.Fatalf("%s: stored flag does not decode: %v", context_, err)
	}
	var v core.Validator
	refs := flagstore.CheckFlag(&v, &f)
	if err := v.Err(); err != nil {
		t.Fatalf("%s: stored flag is invalid: %v", context_, err)
	}
	if !slices.Equal(refs, row.SegmentRefs) && !(len(refs) == 0 && len(row.SegmentRefs) == 0) {
		t.Fatalf("%s: stored segment references %v, rules name %v", context_, row.SegmentRefs, refs)
	}
	if err := s.flags.CheckSegmentRefs(ctx, s.core.Q, env, f.Rules, refs); err != nil {
		t.Fatalf("%s: flag names unusable segments: %v", context_, err)
	}
	srow, err := s.core.Q.GetSegment(ctx, db.GetSegmentParams{OrganizationID: env.OrganizationID, ID: segID})
	if err != nil {
		t.Fatal(err)
	}
	sg, err := SegmentFrom(srow)
	if err != nil {
		t.Fatalf("%s: stored segment does not decode: %v", context_, err)
	}
	var sv core.Validator
	CheckSegment(&sv, &sg, env)
	if err := sv.Err(); err != nil {
		t.Fatalf("%s: stored segment is invalid: %v", context_, err)
	}
	if sg.IsArchived {
		used, _ := s.core.Q.SegmentIsReferenced(ctx, segID)
		if used {
			t.Fatalf("%s: an archived segment is used by a flag", context_)
		}
	}
}

// patchGenerator makes random patches from paths and values that are often,
// but not always, meaningful for flags and segments.
type patchGenerator struct {
	rng        *rand.Rand
	variations []string
	segments   []string
}

func (g patchGenerator) pick(options ...any) any { return options[g.rng.IntN(len(options))] }

func (g patchGenerator) patch(target string) json.RawMessage {
	n := 1
	if g.rng.IntN(4) == 0 {
		n += 1 + g.rng.IntN(2)
	}
	ops := make([]map[string]any, n)
	for i := range ops {
		op := g.pick("add", "add", "replace", "replace", "replace", "remove", "move", "copy", "test", "bogus").(string)
		path := g.path(target)
		o := map[string]any{"op": op, "path": path}
		if op == "move" || op == "copy" {
			o["from"] = g.path(target)
		}
		if op != "remove" {
			o["value"] = g.value(path)
		}
		ops[i] = o
	}
	b, _ := json.Marshal(ops)
	return b
}

func (g patchGenerator) path(target string) string {
	if target == "segment" {
		return g.pick("/name", "/description", "/included/-", "/included/0", "/excluded/-", "/rules", "/rules/-", "/rules/0",
			"/rules/0/conditions/0/op", "/tags/-", "/tags", "/isArchived", "/type", "/scopes", "/scopes/0", "/key", "/id", "/envId",
			"/updatedAt", "/nope").(string)
	}
	return g.pick("/name", "/description", "/isEnabled", "/tags/-", "/tags", "/tags/0", "/variations/-", "/variations/0",
		"/variations/0/value", "/variations/1/id", "/disabledVariationId", "/targetUsers", "/targetUsers/-", "/rules", "/rules/-",
		"/rules/0", "/rules/0/conditions/0/value", "/rules/0/variations/0/rollout/1", "/fallthrough", "/fallthrough/variations/0/id",
		"/fallthrough/variations/0/rollout", "/exptIncludeAllTargets", "/isArchived", "/variationType", "/key", "/revision", "/id",
		"/createdAt", "").(string)
}

func (g patchGenerator) value(path string) any {
	v := g.variations[g.rng.IntN(len(g.variations))]
	segs, _ := json.Marshal([]string{g.segments[g.rng.IntN(len(g.segments))]})
	switch max(0, g.rng.IntN(6)-2) {
	case 0: // something shaped for the path
		switch {
		case path == "/rules/-" || path == "/rules/0":
			if g.rng.IntN(2) == 0 {
				return map[string]any{"id": uuid.NewString(), "name": "r", "conditions": []any{map[string]any{"id": "c", "property": "plan", "op": g.pick("Equal", "IsOneOf", "MatchRegex", "Nope"), "value": g.pick("pro", `["a"]`, "([")}}}
			}
			return map[string]any{"id": uuid.NewString(), "name": "seg", "dispatchKey": "keyId",
				"conditions": []any{map[string]any{"id": "c", "property": g.pick(targeting.SegmentIn, targeting.SegmentNotIn), "op": "", "value": string(segs)}},
				"variations": []any{map[string]any{"id": v, "rollout": g.pick([]float64{0, 1}, []float64{0, 0.5}, []float64{0.2, 1}), "exptRollout": 1}}}
		case path == "/targetUsers/-":
			return map[string]any{"keyIds": []string{g.pick("alice", "bob", "").(string)}, "variationId": v}
		case path == "/fallthrough":
			return map[string]any{"dispatchKey": nil, "includedInExpt": true, "variations": []any{map[string]any{"id": v, "rollout": []float64{0, 1}, "exptRollout": 1}}}
		case path == "/variations/-":
			return map[string]any{"id": uuid.NewString(), "name": "New", "value": g.pick("x", "", "1")}
		case path == "/disabledVariationId" || path == "/fallthrough/variations/0/id":
			return v
		case path == "/type":
			return g.pick(flagstore.SegmentShared, flagstore.SegmentEnvironmentSpecific, "global")
		case path == "/scopes":
			return g.pick([]string{"organization/default-organization"}, []string{"organization/other"}, []string{})
		case path == "/variationType":
			return g.pick("string", "number", "boolean", "json", "color")
		}
		return g.pick("tag", "Name", "New name", "a,b", "")
	case 1:
		return g.pick(true, false, 0, 1, 0.5, -1, 1e9)
	case 2:
		return g.pick(nil, []any{}, map[string]any{}, []any{"x"}, []float64{0, 1})
	default:
		return g.pick("", "x", "<script>", "ünïcødé", "a:b;c", "\x00")
	}
}
