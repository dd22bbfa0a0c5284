package flagsascode_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagsascode"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/sql/store/storetest"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// fixture fills env with a random set of segments and flags, from seed:
// flags of every variation type, individual targets, rules using every
// operator and segments, percentage rollouts, flags off and archived.
func fixture(t *testing.T, s *store.Store, a *core.Actor, envID uuid.UUID, seed uint64) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	var segs []flagstore.Segment
	for i := range 3 {
		in := segments.SegmentInput{Name: fmt.Sprintf("Segment %d", i), Key: fmt.Sprintf("seg-%d", i),
			Type: flagstore.SegmentEnvironmentSpecific, Tags: []string{"z", "a"},
			Included: []string{fmt.Sprintf("u%d", rng.IntN(50)), fmt.Sprintf("u%d", rng.IntN(50))},
			Excluded: []string{fmt.Sprintf("u%d", 50+rng.IntN(50))},
			Rules: []flagstore.SegmentRule{{ID: uuid.NewString(), Name: "Country",
				Conditions: []flagstore.Condition{randomCondition(rng, i)}}}}
		sg, err := s.Segments().CreateSegment(ctx, a, envID, in)
		storetest.Must(t, err)
		segs = append(segs, sg)
	}
	// A shared segment, visible in every environment of the organization:
	// the file names it by key and does not carry it.
	shared, err := s.Segments().CreateSegment(ctx, a, envID, segments.SegmentInput{Name: "VIP", Key: fmt.Sprintf("vip-%d", seed),
		Type: flagstore.SegmentShared, Scopes: []string{"organization/default-organization"},
		Included: []string{"u3", "u7", "u11", "u13"}})
	storetest.Must(t, err)
	segs = append(segs, shared)
	types := []string{targeting.VariationBoolean, targeting.VariationString, targeting.VariationNumber, targeting.VariationJSON}
	ops := targeting.Operators()
	opAt := 0
	for i := range 20 {
		typ := types[i%len(types)]
		key := fmt.Sprintf("flag-%02d", i)
		variations := flagstore.DefaultVariations(typ)
		if typ != targeting.VariationBoolean && rng.IntN(2) == 0 {
			third := map[string]string{targeting.VariationString: "variation-c", targeting.VariationNumber: "3",
				targeting.VariationJSON: `{"c":1}`}[typ]
			variations = append(variations, flagstore.Variation{ID: uuid.NewString(), Name: "Third", Value: third})
		}
		f, err := s.Flags().CreateFlag(ctx, a, envID, flagstore.FlagInput{Name: "Flag " + key, Key: key, VariationType: typ,
			Variations: variations, Tags: []string{"t" + strconv.Itoa(i%3), "common"}, Description: "about " + key})
		storetest.Must(t, err)
		pick := func() string { return f.Variations[rng.IntN(len(f.Variations))].ID }
		tg := f.Targeting()
		tg.TargetUsers = []flagstore.TargetUser{{VariationID: pick(), KeyIDs: []string{fmt.Sprintf("u%d", rng.IntN(100))}}}
		for r := range 1 + rng.IntN(3) {
			var conds []flagstore.Condition
			for range 1 + rng.IntN(2) {
				c := randomCondition(rng, opAt)
				c.Op = ops[opAt%len(ops)]
				c.Value = operand(rng, c.Op)
				opAt++
				conds = append(conds, c)
			}
			if rng.IntN(3) == 0 {
				prop := targeting.SegmentIn
				if rng.IntN(2) == 0 {
					prop = targeting.SegmentNotIn
				}
				conds = append(conds, flagstore.Condition{ID: uuid.NewString(), Property: prop,
					Value: `["` + segs[rng.IntN(len(segs))].ID.String() + `"]`})
			}
			tg.Rules = append(tg.Rules, flagstore.FlagRule{ID: uuid.NewString(), Name: fmt.Sprintf("Rule %d", r),
				Conditions: conds, Variations: randomServe(rng, f.Variations)})
		}
		tg.Fallthrough.Variations = randomServe(rng, f.Variations)
		_, err = s.Flags().SetFlagTargeting(ctx, a, envID, key, flagstore.TargetingInput{Targeting: &tg})
		storetest.Must(t, err)
		if rng.IntN(4) != 0 {
			_, err = s.Flags().ToggleFlag(ctx, a, envID, key, true, flagstore.Change{})
			storetest.Must(t, err)
		}
		if i%9 == 8 {
			_, err = s.Flags().ArchiveFlag(ctx, a, envID, key, flagstore.Change{})
			storetest.Must(t, err)
		}
	}
}

// randomCondition tests one of the users' properties.
func randomCondition(rng *rand.Rand, i int) flagstore.Condition {
	props := []string{"country", "plan", "age", "keyId", "name", "beta"}
	c := flagstore.Condition{ID: uuid.NewString(), Property: props[i%len(props)], Op: "IsOneOf"}
	c.Value = operand(rng, c.Op)
	return c
}

// operand is a value op accepts.
func operand(rng *rand.Rand, op string) string {
	countries := []string{"NL", "DE", "FR", "u1", "u2", "pro", "30"}
	switch op {
	case "LessThan", "BiggerThan", "LessEqualThan", "BiggerEqualThan":
		return strconv.Itoa(rng.IntN(100))
	case "MatchRegex", "NotMatchRegex":
		return "^(u1|pro|N)"
	case "IsOneOf", "NotOneOf":
		v, _ := json.Marshal([]string{countries[rng.IntN(len(countries))], countries[rng.IntN(len(countries))]})
		return string(v)
	case "IsTrue", "IsFalse":
		return ""
	}
	return countries[rng.IntN(len(countries))]
}

// randomServe serves one variation, or a percentage rollout of two or more.
func randomServe(rng *rand.Rand, vs []flagstore.Variation) []flagstore.RolloutVariation {
	if rng.IntN(2) == 0 {
		return []flagstore.RolloutVariation{{ID: vs[rng.IntN(len(vs))].ID, Rollout: []float64{0, 1}, ExptRollout: 1}}
	}
	cut := float64(1+rng.IntN(99)) / 100
	return []flagstore.RolloutVariation{{ID: vs[0].ID, Rollout: []float64{0, cut}, ExptRollout: 1},
		{ID: vs[1].ID, Rollout: []float64{cut, 1}, ExptRollout: 1}}
}

// randomUsers are end users with the properties the fixture's rules test.
func randomUsers(rng *rand.Rand, n int) []eval.EndUser {
	out := make([]eval.EndUser, n)
	for i := range out {
		u := eval.EndUser{KeyID: fmt.Sprintf("u%d", rng.IntN(120))}
		if rng.IntN(2) == 0 {
			name := []string{"pro", "Ann", "u1"}[rng.IntN(3)]
			u.Name = &name
		}
		u.CustomizedProperties = []eval.UserProperty{
			{Name: "country", Value: []string{"NL", "DE", "FR", "US"}[rng.IntN(4)]},
			{Name: "plan", Value: []string{"pro", "free"}[rng.IntN(2)]},
			{Name: "age", Value: strconv.Itoa(rng.IntN(100))},
			{Name: "beta", Value: []string{"true", "false"}[rng.IntN(2)]},
		}
		out[i] = u
	}
	return out
}

// evaluations is what every flag of a document gives every user in env,
// as stored there: the variation's id and value, or "none".
func evaluations(t *testing.T, s *store.Store, a *core.Actor, envID uuid.UUID, doc flagsascode.Document, users []eval.EndUser) []string {
	t.Helper()
	ctx := context.Background()
	var segs []flagstore.Segment
	for _, archived := range []bool{false, true} {
		page, err := s.Segments().ListSegments(ctx, a, envID, segments.SegmentFilter{IsArchived: archived, Page: core.Page{Size: 100}})
		storetest.Must(t, err)
		segs = append(segs, page.Items...)
	}
	var out []string
	for _, df := range doc.Flags {
		f, err := s.Flags().GetFlag(ctx, a, envID, df.Key)
		storetest.Must(t, err)
		for _, u := range users {
			ev := eval.Evaluate(&f, u, eval.SegmentMap(segs))
			got := "none"
			if ev.Variation != nil {
				got = ev.Variation.ID + "=" + ev.Variation.Value
			}
			out = append(out, df.Key+"/"+u.KeyID+": "+got)
		}
	}
	return out
}

// withoutIDs is a document as it compares across environments: without the
// flags' and segments' ids (new ones are made where an import creates
// them) and without the project and environment it came from.
func withoutIDs(t *testing.T, doc flagsascode.Document) string {
	t.Helper()
	doc.Project, doc.Environment = nil, flagsascode.DocEnv{}
	for i := range doc.Flags {
		doc.Flags[i].ID = ""
	}
	for i := range doc.Segments {
		doc.Segments[i].ID = ""
	}
	b, err := flagsascode.EncodeDocument(doc, flagsascode.FormatYAML)
	storetest.Must(t, err)
	return string(b)
}

// TestExportImportRoundTrip: a random environment exported as YAML and
// imported into a fresh environment of another project evaluates the same
// for every flag and a few hundred random users, and exports the same but
// for ids; importing it again changes nothing. A dry run before changes
// nothing.
func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	s, owner, _ := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, s, owner)
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			src, err := s.Projects().CreateProject(ctx, owner, core.ProjectInput{Name: fmt.Sprint("Source ", seed), Key: fmt.Sprint("source-", seed)})
			storetest.Must(t, err)
			srcEnv := src.Environments[0].ID
			fixture(t, s, owner, srcEnv, seed)
			doc, err := s.FlagsAsCode().ExportEnv(ctx, owner, srcEnv)
			storetest.Must(t, err)
			text, err := flagsascode.EncodeDocument(doc, flagsascode.FormatYAML)
			storetest.Must(t, err)
			if strings.Contains(string(text), "revision") || strings.Contains(string(text), "createdAt") || strings.Contains(string(text), "null") {
				t.Errorf("the export holds revisions, timestamps or nulls:\n%s", text)
			}
			read, err := flagsascode.DecodeDocument(text, flagsascode.FormatYAML)
			storetest.Must(t, err)

			dst, err := s.Projects().CreateProject(ctx, owner, core.ProjectInput{Name: fmt.Sprint("Copy ", seed), Key: fmt.Sprint("copy-", seed)})
			storetest.Must(t, err)
			dstEnv := dst.Environments[0].ID
			dry, err := s.FlagsAsCode().Import(ctx, owner, dstEnv, flagsascode.ImportInput{Document: read, DryRun: true})
			storetest.Must(t, err)
			if dry.Applied || len(dry.Changes) != len(doc.Flags)+len(doc.Segments) {
				t.Fatalf("dry run: applied %v, %d changes, want false and %d", dry.Applied, len(dry.Changes), len(doc.Flags)+len(doc.Segments))
			}
			empty, err := s.FlagsAsCode().ExportEnv(ctx, owner, dstEnv)
			storetest.Must(t, err)
			if len(empty.Flags) != 0 || len(empty.Segments) != 0 {
				t.Fatalf("a dry run left %d flags and %d segments", len(empty.Flags), len(empty.Segments))
			}

			plan, err := s.FlagsAsCode().Import(ctx, owner, dstEnv, flagsascode.ImportInput{Document: read})
			storetest.Must(t, err)
			if !plan.Applied {
				t.Fatal("the import was not applied")
			}
			for i, c := range plan.Changes {
				if c.Action != flagsascode.ImportCreate || !slices.Equal(c.Words, dry.Changes[i].Words) && c.Kind == "flag" {
					t.Errorf("change %d: %+v, want a creation as the dry run said (%+v)", i, c, dry.Changes[i])
				}
			}
			users := randomUsers(rand.New(rand.NewPCG(seed, 7)), 300)
			want, got := evaluations(t, s, owner, srcEnv, doc, users), evaluations(t, s, owner, dstEnv, doc, users)
			diffs := 0
			for i := range want {
				if want[i] != got[i] {
					if diffs++; diffs <= 10 {
						t.Errorf("got %s, want %s", got[i], want[i])
					}
				}
			}
			if diffs > 0 {
				t.Fatalf("%d of %d evaluations differ", diffs, len(want))
			}

			again, err := s.FlagsAsCode().ExportEnv(ctx, owner, dstEnv)
			storetest.Must(t, err)
			if !strings.Contains(string(text), fmt.Sprintf("- vip-%d\n", seed)) || strings.Contains(string(text), fmt.Sprintf("key: vip-%d\n", seed)) {
				t.Errorf("the export should name the shared segment in rules and not carry it:\n%s", text)
			}
			if a, b := withoutIDs(t, doc), withoutIDs(t, again); a != b {
				t.Fatalf("export of the imported environment differs:\n%s\nwant\n%s", b, a)
			}
			same, err := s.FlagsAsCode().Import(ctx, owner, dstEnv, flagsascode.ImportInput{Document: again})
			storetest.Must(t, err)
			for _, c := range same.Changes {
				if c.Action != flagsascode.ImportUnchanged {
					t.Errorf("importing an environment's own export: %+v, want unchanged", c)
				}
			}
		})
	}
	_ = prod
}

// TestImportDryRunChangesNothing: a dry run of a change to an existing
// flag says what would change and leaves the flag's revision and history
// as they were.
func TestImportDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	s, owner, _ := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, s, owner)
	f, err := s.Flags().CreateFlag(ctx, owner, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	storetest.Must(t, err)
	_, err = s.Segments().CreateSegment(ctx, owner, prod.ID, segments.SegmentInput{Name: "Beta", Key: "beta", Type: flagstore.SegmentEnvironmentSpecific,
		Included: []string{"u1"}})
	storetest.Must(t, err)
	doc, err := s.FlagsAsCode().ExportEnv(ctx, owner, prod.ID)
	storetest.Must(t, err)
	doc.Flags[0].IsEnabled, doc.Flags[0].Name = true, "Payments"
	doc.Segments[0].Included = append(doc.Segments[0].Included, "u2")
	history, err := s.Flags().ListFlagRevisions(ctx, owner, prod.ID, "pay", core.Page{Size: 50})
	storetest.Must(t, err)

	plan, err := s.FlagsAsCode().Import(ctx, owner, prod.ID, flagsascode.ImportInput{Document: doc, DryRun: true})
	storetest.Must(t, err)
	want := []string{"Turned the flag on", "Renamed Pay → Payments"}
	if plan.Applied || len(plan.Changes) != 2 || plan.Changes[1].Action != flagsascode.ImportUpdate || !slices.Equal(plan.Changes[1].Words, want) {
		t.Fatalf("dry run: %+v, want an update saying %q", plan, want)
	}
	after, err := s.Flags().GetFlag(ctx, owner, prod.ID, "pay")
	storetest.Must(t, err)
	historyAfter, err := s.Flags().ListFlagRevisions(ctx, owner, prod.ID, "pay", core.Page{Size: 50})
	storetest.Must(t, err)
	if after.Revision != f.Revision || after.IsEnabled || historyAfter.TotalCount != history.TotalCount {
		t.Fatalf("dry run changed the flag: revision %v (was %v), on %v, %d history entries (was %d)",
			after.Revision, f.Revision, after.IsEnabled, historyAfter.TotalCount, history.TotalCount)
	}

	plan, err = s.FlagsAsCode().Import(ctx, owner, prod.ID, flagsascode.ImportInput{Document: doc, Comment: "from git"})
	storetest.Must(t, err)
	if seg := plan.Changes[0]; seg.Kind != "segment" || seg.Action != flagsascode.ImportUpdate || len(seg.Words) == 0 {
		t.Errorf("segment change %+v, want an update in words", seg)
	}
	beta, err := s.Segments().SegmentByKey(ctx, owner, prod.ID, "beta")
	storetest.Must(t, err)
	if !slices.Equal(beta.Included, []string{"u1", "u2"}) {
		t.Errorf("segment includes %q, want u1 and u2", beta.Included)
	}
	after, err = s.Flags().GetFlag(ctx, owner, prod.ID, "pay")
	storetest.Must(t, err)
	historyAfter, err = s.Flags().ListFlagRevisions(ctx, owner, prod.ID, "pay", core.Page{Size: 50})
	storetest.Must(t, err)
	if !plan.Applied || !after.IsEnabled || after.Name != "Payments" || historyAfter.TotalCount != history.TotalCount+1 {
		t.Fatalf("import: applied %v, on %v, name %q, %d history entries (was %d); want one change",
			plan.Applied, after.IsEnabled, after.Name, historyAfter.TotalCount, history.TotalCount)
	}
}

// TestImportRefusesABrokenFileWhole: a file whose flags break the rules is
// refused with each problem named by its path in the file, and nothing of
// it is written, the good parts neither.
func TestImportRefusesABrokenFileWhole(t *testing.T) {
	t.Parallel()
	s, owner, _ := storetest.New(t)
	ctx := context.Background()
	prod, dev := storetest.ProdAndDev(t, s, owner)
	fixture(t, s, owner, prod.ID, 3)
	doc, err := s.FlagsAsCode().ExportEnv(ctx, owner, prod.ID)
	storetest.Must(t, err)
	doc.Flags[3].Rules[0].Conditions[0].Op = "Bogus"
	doc.Flags[1].Rules[0].Conditions = append(doc.Flags[1].Rules[0].Conditions,
		flagsascode.DocCondition{ID: "c9", Property: targeting.SegmentIn, Segments: []string{"no-such-segment"}})
	doc.Flags[5].DisabledVariationID = "nope"

	_, err = s.FlagsAsCode().Import(ctx, owner, dev.ID, flagsascode.ImportInput{Document: doc})
	var verr *core.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("got %v, want a validation error", err)
	}
	var paths []string
	for _, d := range verr.Details {
		paths = append(paths, d.Path)
	}
	unknown := fmt.Sprintf("flags[1].rules[0].conditions[%d].segments[0]", len(doc.Flags[1].Rules[0].Conditions)-1)
	for _, want := range []string{"flags[3].rules[0].conditions[0].value", unknown, "flags[5].disabledVariationId"} {
		if !slices.Contains(paths, want) {
			t.Errorf("problems at %q, want one at %s", paths, want)
		}
	}
	left, err := s.FlagsAsCode().ExportEnv(ctx, owner, dev.ID)
	storetest.Must(t, err)
	if len(left.Flags) != 0 || len(left.Segments) != 0 {
		t.Fatalf("a refused file left %d flags and %d segments", len(left.Flags), len(left.Segments))
	}
}

// TestImportWhereChangesNeedApproval: changes to what existing flags serve
// become change requests, one per flag, and are not applied; a new flag
// that is on is created off with a request to turn it on. Without
// reviewers the file is refused, nothing written.
func TestImportWhereChangesNeedApproval(t *testing.T) {
	t.Parallel()
	s, owner, pool := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, s, owner)
	bob := storetest.OwnerMember(t, s, owner, pool, "bob@example.com")
	_, err := s.Flags().CreateFlag(ctx, owner, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	storetest.Must(t, err)
	storetest.ApprovalEnv(t, s, owner, prod, 1, bob)
	doc, err := s.FlagsAsCode().ExportEnv(ctx, owner, prod.ID)
	storetest.Must(t, err)
	doc.Flags[0].IsEnabled, doc.Flags[0].Description = true, "Checkout payments"
	newFlag := doc.Flags[0]
	newFlag.Key, newFlag.Name, newFlag.ID = "ship", "Ship", ""
	doc.Flags = append(doc.Flags, newFlag)

	_, err = s.FlagsAsCode().Import(ctx, owner, prod.ID, flagsascode.ImportInput{Document: doc})
	storetest.WantInvalid(t, "import without reviewers", err, "reviewers_is_required")
	if _, err := s.Flags().GetFlag(ctx, owner, prod.ID, "ship"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("a refused import created a flag: %v", err)
	}

	plan, err := s.FlagsAsCode().Import(ctx, owner, prod.ID, flagsascode.ImportInput{Document: doc, Reason: "release", Reviewers: []uuid.UUID{bob.UserID}})
	storetest.Must(t, err)
	if len(plan.PendingApproval) != 2 || plan.Changes[0].Action != flagsascode.ImportRequested || plan.Changes[1].Action != flagsascode.ImportCreate {
		t.Fatalf("plan %+v, want pay pending approval and ship created with a request", plan)
	}
	for _, key := range []string{"pay", "ship"} {
		f, err := s.Flags().GetFlag(ctx, owner, prod.ID, key)
		storetest.Must(t, err)
		if f.IsEnabled {
			t.Errorf("%s was turned on without approval", key)
		}
	}
	pay, err := s.Flags().GetFlag(ctx, owner, prod.ID, "pay")
	storetest.Must(t, err)
	if pay.Description != "Checkout payments" {
		t.Errorf("description %q: a change needing no approval was not made", pay.Description)
	}
	for _, p := range plan.PendingApproval {
		cr, err := s.Governance().GetFlagChangeRequest(ctx, owner, prod.ID, p.ChangeRequestID)
		storetest.Must(t, err)
		if cr.FlagKey != p.Key || cr.Status != flagstore.ChangeRequestPendingReview {
			t.Errorf("change request %+v, want %s pending review", cr, p.Key)
		}
	}
}

// TestDecodeDocumentIsStrict: a file that names a member twice, or a field
// the document does not have, is refused in either format rather than read
// with one of its values silently dropped.
func TestDecodeDocumentIsStrict(t *testing.T) {
	for _, tc := range []struct {
		name, format, body string
	}{
		{"JSON member named twice", flagsascode.FormatJSON, `{"version":1,"version":2}`},
		{"JSON member named twice in another case", flagsascode.FormatJSON, `{"version":1,"Version":2}`},
		{"JSON unknown field", flagsascode.FormatJSON, `{"version":1,"flgas":[]}`},
		{"YAML key named twice", flagsascode.FormatYAML, "version: 1\nversion: 2\n"},
		{"YAML unknown field", flagsascode.FormatYAML, "version: 1\nflgas: []\n"},
	} {
		if _, err := flagsascode.DecodeDocument([]byte(tc.body), tc.format); err == nil {
			t.Errorf("%s: %s was read", tc.name, tc.body)
		}
	}
	if doc, err := flagsascode.DecodeDocument([]byte(`{"version":1}`), flagsascode.FormatJSON); err != nil || doc.Version != 1 {
		t.Errorf("a plain document: %+v, %v", doc, err)
	}
}

// TestImportCreatesWithTheRightsOfCreatingByHand: a flag an import creates
// takes CreateFlag for what creating it by hand sets, and the action of
// each part it sets beyond that: a rollout in its default rule takes
// UpdateFlagDefaultRule, as changing it by hand would.
func TestImportCreatesWithTheRightsOfCreatingByHand(t *testing.T) {
	t.Parallel()
	s, owner, _ := storetest.New(t)
	ctx := context.Background()
	prod, dev := storetest.ProdAndDev(t, s, owner)
	f, err := s.Flags().CreateFlag(ctx, owner, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	storetest.Must(t, err)
	_, err = s.Flags().CreateFlag(ctx, owner, prod.ID, flagstore.FlagInput{Name: "Ship", Key: "ship"})
	storetest.Must(t, err)
	plain, err := s.FlagsAsCode().ExportEnv(ctx, owner, prod.ID) // both as created
	storetest.Must(t, err)
	tg := f.Targeting()
	tg.Fallthrough.Variations = []flagstore.RolloutVariation{{ID: f.Variations[0].ID, Rollout: []float64{0, 0.5}, ExptRollout: 1},
		{ID: f.Variations[1].ID, Rollout: []float64{0.5, 1}, ExptRollout: 1}}
	_, err = s.Flags().SetFlagTargeting(ctx, owner, prod.ID, "pay", flagstore.TargetingInput{Targeting: &tg})
	storetest.Must(t, err)
	rollout, err := s.FlagsAsCode().ExportEnv(ctx, owner, prod.ID)
	storetest.Must(t, err)

	as := func(actions ...access.Action) *core.Actor {
		a := *owner
		names := make([]string, len(actions))
		for i, act := range actions {
			names[i] = string(act)
		}
		a.Granted = []access.Statement{
			{ResourceType: access.TypeFlag, Effect: "allow", Actions: names, Resources: []string{"project/*:env/*:flag/*"}},
			{ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: []string{"project/*:env/*"}},
		}
		return &a
	}
	creator := as(access.CreateFlag)
	if _, err := s.FlagsAsCode().Import(ctx, creator, dev.ID, flagsascode.ImportInput{Document: rollout, DryRun: true}); !errors.Is(err, core.ErrForbidden) {
		t.Errorf("a 50/50 default rule with CreateFlag alone: got %v, want ErrForbidden", err)
	}
	if _, err := s.FlagsAsCode().Import(ctx, creator, dev.ID, flagsascode.ImportInput{Document: plain, DryRun: true}); err != nil {
		t.Errorf("flags as created, with CreateFlag: %v", err)
	}
	if _, err := s.FlagsAsCode().Import(ctx, as(access.CreateFlag, access.UpdateFlagDefaultRule), dev.ID, flagsascode.ImportInput{Document: rollout, DryRun: true}); err != nil {
		t.Errorf("a 50/50 default rule with CreateFlag and UpdateFlagDefaultRule: %v", err)
	}
}

// TestImportMatchesTheFileFlagsOnly: an import reads the environment's
// flags the file names, by exact key: of three flags, a file naming one
// changes it and leaves the others alone, and a key differing from a
// flag's only in case is refused as a key in use, as creating it by hand is.
func TestImportMatchesTheFileFlagsOnly(t *testing.T) {
	t.Parallel()
	s, owner, _ := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, s, owner)
	for _, key := range []string{"alpha", "beta", "gamma"} {
		_, err := s.Flags().CreateFlag(ctx, owner, prod.ID, flagstore.FlagInput{Name: key, Key: key})
		storetest.Must(t, err)
	}
	doc, err := s.FlagsAsCode().ExportEnv(ctx, owner, prod.ID)
	storetest.Must(t, err)
	beta := doc.Flags[1]
	beta.Name = "Beta"
	plan, err := s.FlagsAsCode().Import(ctx, owner, prod.ID, flagsascode.ImportInput{Document: flagsascode.Document{Version: 1, Environment: doc.Environment, Flags: []flagsascode.DocFlag{beta}}})
	storetest.Must(t, err)
	if len(plan.Changes) != 1 || plan.Changes[0].Key != "beta" || plan.Changes[0].Action != flagsascode.ImportUpdate {
		t.Fatalf("importing one of three flags: %+v, want beta updated", plan.Changes)
	}
	after, err := s.FlagsAsCode().ExportEnv(ctx, owner, prod.ID)
	storetest.Must(t, err)
	if len(after.Flags) != 3 || after.Flags[0].Name != "alpha" || after.Flags[1].Name != "Beta" || after.Flags[2].Name != "gamma" {
		t.Fatalf("after importing beta: %+v", after.Flags)
	}
	upper := doc.Flags[0]
	upper.Key = "ALPHA"
	_, err = s.FlagsAsCode().Import(ctx, owner, prod.ID, flagsascode.ImportInput{Document: flagsascode.Document{Version: 1, Environment: doc.Environment, Flags: []flagsascode.DocFlag{upper}}})
	if !errors.Is(err, core.ErrKeyUsed) {
		t.Fatalf("importing ALPHA beside alpha: %v, want KeyHasBeenUsed", err)
	}
}
