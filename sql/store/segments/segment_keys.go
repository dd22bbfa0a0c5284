package segments

import (
	"context"
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// validScopes checks scope names: the segment's own organization, then
// optionally a project and an environment (keys or "*"); an
// environment-specific segment's only scope is its environment.
func validScopes(sg *flagstore.Segment, env core.EnvRow) bool {
	own := flagstore.Scope(env.OrganizationKey, env.ProjectKey, env.Environment.Key)
	if sg.Type == flagstore.SegmentEnvironmentSpecific {
		return len(sg.Scopes) == 1 && sg.Scopes[0] == own
	}
	if len(sg.Scopes) == 0 || len(sg.Scopes) > targeting.MaxTags {
		return false
	}
	for _, scope := range sg.Scopes {
		parts := strings.Split(scope, ":")
		if len(parts) > 3 || parts[0] != "organization/"+env.OrganizationKey {
			return false
		}
		for i, prefix := range []string{"project/", "env/"} {
			if len(parts) > i+1 {
				key, ok := strings.CutPrefix(parts[i+1], prefix)
				if !ok || (key != "*" && (len(key) > core.MaxKeyLen || !core.KeyPattern.MatchString(key))) {
					return false
				}
			}
		}
	}
	return flagstore.VisibleIn(*sg, env)
}

// checkSegmentKey refuses a segment (about to be stored, visible in envs) a
// key that another segment visible in one of those environments has: a
// shared segment's key is unique wherever it is visible.
// It holds a lock on the key until the transaction ends.
func checkSegmentKey(ctx context.Context, q *db.Queries, env core.EnvRow, envs []core.EnvRow, sg flagstore.Segment) error {
	if err := q.LockSegmentKey(ctx, sg.Key); err != nil {
		return err
	}
	rows, err := q.SegmentsWithKey(ctx, db.SegmentsWithKeyParams{OrganizationID: env.OrganizationID, Key: sg.Key})
	if err != nil {
		return err
	}
	clash, err := keyClash(rows, sg, envs)
	if err == nil && clash {
		err = core.ErrKeyUsed
	}
	return err
}

// keyClash reports whether a segment other than sg among rows (segments with
// sg's key) is visible in one of envs where sg is.
func keyClash(rows []db.Segment, sg flagstore.Segment, envs []core.EnvRow) (bool, error) {
	for _, r := range rows {
		if r.ID == sg.ID {
			continue
		}
		other, err := SegmentFrom(r)
		if err != nil {
			return false, err
		}
		if slices.ContainsFunc(envs, func(e core.EnvRow) bool { return flagstore.VisibleIn(sg, e) && flagstore.VisibleIn(other, e) }) {
			return true, nil
		}
	}
	return false, nil
}
