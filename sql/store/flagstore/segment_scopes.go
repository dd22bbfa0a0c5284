package flagstore

import (
	"context"
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// Where a segment is visible (its scopes), and what follows from it: its key
// is unique there, and whoever changes it needs the right in each of those
// environments.

// EnvScopes are the scope names that select an environment: its own, its
// project's and its organization's, with "*" standing for any project or
// environment key.
func EnvScopes(env core.EnvRow) []string {
	org := "organization/" + env.OrganizationKey
	scopes := []string{org}
	for _, p := range []string{env.ProjectKey, "*"} {
		project := org + ":project/" + p
		scopes = append(scopes, project, project+":env/"+env.Environment.Key, project+":env/*")
	}
	return scopes
}

// ProjectScope is the scope of a shared segment visible in every
// environment of the project of r's environment, where the pages start a
// new one.
func (r EnvRights) ProjectScope() string {
	return Scope(r.env.OrganizationKey, r.env.ProjectKey, "")
}

// OrganizationKey is the key of the organization of r's environment, which
// every scope of a segment managed there names.
func (r EnvRights) OrganizationKey() string { return r.env.OrganizationKey }

// Scope names where a shared segment applies, as the store takes it: the
// whole organization (projectKey ""), every environment of a project
// (envKey ""), or one environment.
func Scope(orgKey, projectKey, envKey string) string {
	s := "organization/" + orgKey
	if projectKey == "" {
		return s
	}
	if envKey == "" {
		envKey = "*"
	}
	return s + ":project/" + projectKey + ":env/" + envKey
}

// SameScope reports whether two scope names select the same environments:
// a part left out is "*", so "organization/o:project/web" is
// "organization/o:project/web:env/*".
func SameScope(a, b string) bool { return fullScope(a) == fullScope(b) }

func fullScope(s string) string {
	s = strings.TrimSuffix(s, ":env/*")
	return strings.TrimSuffix(s, ":project/*")
}

// VisibleIn reports whether a segment applies in an environment.
func VisibleIn(sg Segment, env core.EnvRow) bool {
	if sg.Type == SegmentEnvironmentSpecific {
		return sg.EnvID == env.Environment.ID
	}
	scopes := EnvScopes(env)
	return slices.ContainsFunc(sg.Scopes, func(s string) bool { return slices.Contains(scopes, s) })
}

// validScopes checks scope names: the segment's own organization, then
// optionally a project and an environment (keys or "*"); an
// environment-specific segment's only scope is its environment.
func validScopes(sg *Segment, env core.EnvRow) bool {
	own := Scope(env.OrganizationKey, env.ProjectKey, env.Environment.Key)
	if sg.Type == SegmentEnvironmentSpecific {
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
	return VisibleIn(*sg, env)
}

// checkSegmentKey refuses a segment (about to be stored, visible in envs) a
// key that another segment visible in one of those environments has: a
// shared segment's key is unique wherever it is visible.
// It holds a lock on the key until the transaction ends.
func checkSegmentKey(ctx context.Context, q *db.Queries, env core.EnvRow, envs []core.EnvRow, sg Segment) error {
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
func keyClash(rows []db.Segment, sg Segment, envs []core.EnvRow) (bool, error) {
	for _, r := range rows {
		if r.ID == sg.ID {
			continue
		}
		other, err := SegmentFrom(r)
		if err != nil {
			return false, err
		}
		if slices.ContainsFunc(envs, func(e core.EnvRow) bool { return VisibleIn(sg, e) && VisibleIn(other, e) }) {
			return true, nil
		}
	}
	return false, nil
}

// VisibleEnvs lists the environments of env's organization where any of
// versions is visible. Every version of an environment-specific segment is
// visible only in env, the one it is managed from.
func VisibleEnvs(ctx context.Context, q *db.Queries, env core.EnvRow, versions ...Segment) ([]core.EnvRow, error) {
	if !slices.ContainsFunc(versions, func(sg Segment) bool { return sg.Type == SegmentShared }) {
		return []core.EnvRow{env}, nil
	}
	rows, err := q.ListOrganizationEnvironments(ctx, env.OrganizationID)
	if err != nil {
		return nil, core.Translate(err)
	}
	var out []core.EnvRow
	for _, e := range rows {
		other := core.EnvRow{GetEnvironmentRow: db.GetEnvironmentRow{Environment: db.Environment{ID: e.ID, Key: e.Key, ProjectID: e.ProjectID}, ProjectKey: e.ProjectKey,
			OrganizationID: env.OrganizationID, OrganizationKey: env.OrganizationKey}}
		if slices.ContainsFunc(versions, func(sg Segment) bool { return VisibleIn(sg, other) }) {
			out = append(out, other)
		}
	}
	return out, nil
}

// requireInEnvs checks the actions on every version of a segment in every
// environment it is visible in: a shared segment changes what each of them
// serves, so a caller allowed only some of them may not change it.
func requireInEnvs(a *core.Actor, actions []access.Action, envs []core.EnvRow, versions ...Segment) error {
	for _, act := range actions {
		for _, e := range envs {
			for _, sg := range versions {
				if err := a.Require(act, segmentRN(e, sg.Key, sg.Tags)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
