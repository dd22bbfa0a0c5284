package flagstore

import (
	"context"
	"encoding/json"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// DecodeStored decodes JSON the store wrote itself, a flag's or a segment's
// parts, with encoding/json/v2's decoder: every list, search and change
// decodes them, and it takes half the time and allocations of encoding/json
// (2.1 against 4.4 µs for a flag's variations, targets and default rule).
// What it would refuse that encoding/json reads (a member named twice,
// invalid UTF-8) the store never writes. Request bodies go through
// sql/jsonbody instead.
func DecodeStored(parts ...StoredPart) error {
	for _, p := range parts {
		if err := jsonv2.Unmarshal(p.JSON, p.Into); err != nil {
			return err
		}
	}
	return nil
}

// StoredPart is a JSON column of a row and what it decodes into.
type StoredPart struct {
	JSON json.RawMessage
	Into any
}

// listedParts is what a list shows of a flag's stored JSON: its
// variations, which of them it serves (Flag.Serves), and to whom (for the
// admin list, ServingOf).
type listedParts struct {
	variations []Variation
	serves     Serves
	serving    Serving
}

// Lists keep the listed parts of up to maxListedParts flags whose stored
// parts take at most maxListedJSON bytes, by flag and revision: a
// revision's JSON never changes, so an entry is never stale, and each
// server keeps its own. An entry holds about twice the JSON it came from,
// so the whole is at most about 5 MiB. Decoding the parts was the largest
// part of a search's own work (a list reads a page of up to 100 flags, a
// search usually a few, and their owners read them again and again).
const (
	maxListedParts = 2048
	maxListedJSON  = 1 << 10
)

// listedFlag is what a list shows of a flag's stored JSON (listedParts),
// for which it decodes only what the page's statement picks out: the
// variations its individual targets get, the names and variations of its
// rules (leaving who is targeted and the rules' conditions behind), and
// its default rule. The parts are shared with other lists of the same
// revision: their readers only read them.
func (s *Flags) listedFlag(r db.FlagListItemsRow) (listedParts, error) {
	version := [2]uuid.UUID{r.ID, r.Revision}
	if parts, ok := s.listed.Get(version); ok {
		return parts, nil
	}
	f := Flag{DisabledVariationID: r.DisabledVariationID}
	var targeted, names []string
	var variations [][]RolloutVariation
	if err := DecodeStored(StoredPart{r.Variations, &f.Variations}, StoredPart{r.TargetedVariations, &targeted},
		StoredPart{r.RuleNames, &names}, StoredPart{r.RuleVariations, &variations}, StoredPart{r.Fallthrough, &f.Fallthrough}); err != nil {
		return listedParts{}, err
	}
	// Serves and ServingOf count a group of targets only when it has keys,
	// and only groups with keys were picked: one key stands for them all.
	f.TargetUsers = make([]TargetUser, len(targeted))
	for i, id := range targeted {
		f.TargetUsers[i] = TargetUser{KeyIDs: someTargetedKey, VariationID: id}
	}
	if len(names) != len(variations) {
		// A rule stored without a name (jsonpath passes over a missing
		// member) leaves the names unpaired: the list shows the rules
		// unnamed rather than under each other's names.
		names = make([]string, len(variations))
	}
	f.Rules = make([]FlagRule, len(names))
	for i := range names {
		f.Rules[i] = FlagRule{Name: names[i], Variations: variations[i]}
	}
	parts := listedParts{variations: f.Variations, serves: f.Serves(), serving: ServingOf(f)}
	if len(r.Variations)+len(r.TargetedVariations)+len(r.RuleNames)+len(r.RuleVariations)+len(r.Fallthrough) <= maxListedJSON {
		s.listed.Add(version, parts)
	}
	return parts, nil
}

// someTargetedKey stands for the keys of a listed flag's group of targets.
var someTargetedKey = []string{"…"}

// FlagRowIn reads a flag by its exact key, with the keys that name its
// environment, and checks the caller may read that environment: one
// statement.
func (s *Flags) FlagRowIn(ctx context.Context, a *core.Actor, envID uuid.UUID, key string) (db.FeatureFlag, error) {
	orgID, err := a.Org()
	if err != nil {
		return db.FeatureFlag{}, err
	}
	row, err := s.core.Q.GetFlagInOrganization(ctx, db.GetFlagInOrganizationParams{OrganizationID: orgID, EnvID: envID, Key: key})
	if err != nil {
		return db.FeatureFlag{}, core.Translate(err)
	}
	if err := a.Require(access.CanAccessEnv, core.EnvRN(row.ProjectKey, row.EnvKey)); err != nil {
		return db.FeatureFlag{}, err
	}
	return row.FeatureFlag, nil
}
