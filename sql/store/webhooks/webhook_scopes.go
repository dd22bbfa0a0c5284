package webhooks

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// A webhook's scopes are FeatBit's "{projectId}/{envId},{envId}" strings:
// the environments whose changes it is sent, and which whoever makes it or
// reads its log must be able to read.

// scopeEnvs is an organization's environments by id, with their project.
type scopeEnvs map[uuid.UUID]db.OrganizationEnvironmentsRow

// requireScopes checks that a person may read every environment that
// scopes (and any further ids, such as those a delivery log is about) name:
// a webhook sends what changes there, so making one, or reading what it
// sent, is reading those environments. An environment deleted since is
// passed over: nothing is left to read there.
func (e scopeEnvs) requireScopes(a *core.Actor, scopes []string, more ...uuid.UUID) error {
	ids := slices.Clone(more)
	for _, sc := range scopes {
		_, envs, _ := parseScope(sc)
		ids = append(ids, envs...)
	}
	for _, id := range ids {
		if r, ok := e[id]; ok {
			if err := a.Require(access.CanAccessEnv, core.EnvRN(r.ProjectKey, r.EnvKey)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Webhooks) orgEnvs(ctx context.Context, q *db.Queries, orgID uuid.UUID) (scopeEnvs, error) {
	rows, err := q.OrganizationEnvironments(ctx, orgID)
	if err != nil {
		return nil, core.Translate(err)
	}
	out := make(scopeEnvs, len(rows))
	for _, r := range rows {
		out[r.EnvID] = r
	}
	return out, nil
}

// parseScope reads FeatBit's scope string "{projectId}/{envId},{envId}".
func parseScope(scope string) (uuid.UUID, []uuid.UUID, bool) {
	project, envs, ok := strings.Cut(scope, "/")
	if !ok {
		return uuid.Nil, nil, false
	}
	pid, err := uuid.Parse(project)
	if err != nil {
		return uuid.Nil, nil, false
	}
	var ids []uuid.UUID
	for _, e := range strings.Split(envs, ",") {
		id, err := uuid.Parse(e)
		if err != nil {
			return uuid.Nil, nil, false
		}
		ids = append(ids, id)
	}
	return pid, ids, true
}

// scopeMatches tells whether a scope covers an environment of a project.
func scopeMatches(scope string, projectID, envID uuid.UUID) bool {
	pid, envs, ok := parseScope(scope)
	return ok && pid == projectID && slices.Contains(envs, envID)
}

// name says a scope in words: "Project/Env, Env".
func (e scopeEnvs) name(scope string) string {
	_, envs, ok := parseScope(scope)
	if !ok {
		return scope
	}
	var project string
	var names []string
	for _, id := range envs {
		if r, ok := e[id]; ok {
			project = r.ProjectName
			names = append(names, r.EnvName)
		}
	}
	return project + "/" + strings.Join(names, ",")
}

// WebhookScope is an environment a webhook's scopes can name, for the form.
type WebhookScope struct {
	ProjectID, EnvID     uuid.UUID
	ProjectName, EnvName string
}

// Scope is FeatBit's scope string of this one environment.
func (w WebhookScope) Scope() string { return w.ProjectID.String() + "/" + w.EnvID.String() }

// WebhookScopes lists the environments a webhook can be scoped to, by project and name.
func (s *Webhooks) WebhookScopes(ctx context.Context, a *core.Actor) ([]WebhookScope, error) {
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return nil, err
	}
	rows, err := s.core.Q.OrganizationEnvironments(ctx, orgID)
	if err != nil {
		return nil, core.Translate(err)
	}
	out := make([]WebhookScope, len(rows))
	for i, r := range rows {
		out[i] = WebhookScope{r.ProjectID, r.EnvID, r.ProjectName, r.EnvName}
	}
	return out, nil
}

// Covers tells whether any of a webhook's scopes names an environment.
func (w Webhook) Covers(projectID, envID uuid.UUID) bool {
	return scopesCover(w.Scopes, projectID, envID)
}

// scopesCover tells whether any of a webhook's scopes names an environment.
func scopesCover(scopes []string, projectID, envID uuid.UUID) bool {
	return slices.ContainsFunc(scopes, func(sc string) bool { return scopeMatches(sc, projectID, envID) })
}
