package flagstore

import (
	"context"
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
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

// RequireInEnvs checks the actions on every version of a segment in every
// environment it is visible in: a shared segment changes what each of them
// serves, so a caller allowed only some of them may not change it.
func RequireInEnvs(a *core.Actor, actions []access.Action, envs []core.EnvRow, versions ...Segment) error {
	for _, act := range actions {
		for _, e := range envs {
			for _, sg := range versions {
				if err := a.Require(act, SegmentRNIn(e, sg.Key, sg.Tags)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
