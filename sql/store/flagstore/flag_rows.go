package flagstore

import (
	"context"
	"encoding/json"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// listedFlag is what a list shows of a flag's stored JSON: its variations,
// and which of them it serves (Flag.Serves), for which it decodes only the
// targets' keys and variations, the names and variations of its rules (which
// the page's statement picks out of them, leaving their conditions behind)
// and its default rule.
func listedFlag(r db.FlagListItemsRow) ([]Variation, Serves, Serving, error) {
	f := Flag{DisabledVariationID: r.DisabledVariationID}
	for _, part := range []struct {
		src json.RawMessage
		dst any
	}{{r.Variations, &f.Variations}, {r.TargetUsers, &f.TargetUsers}, {r.RuleVariations, &f.Rules}, {r.Fallthrough, &f.Fallthrough}} {
		if err := json.Unmarshal(part.src, part.dst); err != nil {
			return nil, Serves{}, Serving{}, err
		}
	}
	return f.Variations, f.Serves(), ServingOf(f), nil
}

// FlagRowIn reads a flag by its exact key, with the keys that name its
// environment, and checks the caller may read that environment: one
// statement.
func (s *Flags) FlagRowIn(ctx context.Context, a *core.Actor, envID uuid.UUID, key string) (db.FeatureFlag, error) {
	orgID, err := a.Org()
	if err != nil {
		return db.FeatureFlag{}, err
	}
	row, err := s.Q.GetFlagInOrganization(ctx, db.GetFlagInOrganizationParams{OrganizationID: orgID, EnvID: envID, Key: key})
	if err != nil {
		return db.FeatureFlag{}, core.Translate(err)
	}
	if err := a.Require(access.CanAccessEnv, core.EnvRN(row.ProjectKey, row.EnvKey)); err != nil {
		return db.FeatureFlag{}, err
	}
	return row.FeatureFlag, nil
}
