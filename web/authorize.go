package web

import (
	"context"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/web/httpx"
)

// A page whose right does not depend on what its form says checks that
// right before the form is read: the route table (pages.go) puts the check
// between the session and the CSRF guard, which parses the whole form for
// its token. A caller without the right is answered 403 with no byte of the
// body read and nothing of the body budget taken. Each check is the store's
// (the same check the operation makes first; it still makes it).

func (p *pages) managesIAM(c echo.Context) error { return p.store.IAM().AuthorizeIAM(actor(c)) }

func (p *pages) managesWebhooks(c echo.Context) error {
	return p.store.Webhooks().AuthorizeWebhooks(c.Request().Context(), actor(c))
}

func (p *pages) createsAccessTokens(c echo.Context) error {
	return p.store.Tokens().AuthorizeAccessTokenCreation(actor(c))
}

func (p *pages) editsAccessToken(c echo.Context) error {
	return p.withID(c, "id", p.store.Tokens().AuthorizeAccessTokenUpdate)
}

func (p *pages) togglesAccessToken(c echo.Context) error {
	return p.withID(c, "id", p.store.Tokens().AuthorizeAccessTokenToggle)
}

func (p *pages) deletesAccessToken(c echo.Context) error {
	return p.withID(c, "id", p.store.Tokens().AuthorizeAccessTokenDeletion)
}

func (p *pages) changesWorkspace(c echo.Context) error {
	return p.store.IAM().AuthorizeWorkspaceUpdate(c.Request().Context(), actor(c))
}

func (p *pages) changesSSO(c echo.Context) error {
	return p.store.IAM().AuthorizeWorkspaceSSO(c.Request().Context(), actor(c))
}

func (p *pages) changesOrganization(c echo.Context) error {
	return p.store.IAM().AuthorizeOrganizationUpdate(c.Request().Context(), actor(c))
}

func (p *pages) deletesOrganization(c echo.Context) error {
	return p.store.IAM().AuthorizeOrganizationDeletion(c.Request().Context(), actor(c))
}

func (p *pages) createsOrganizations(c echo.Context) error {
	return p.store.IAM().AuthorizeOrganizationCreation(actor(c))
}

func (p *pages) createsProjects(c echo.Context) error {
	return p.store.Projects().AuthorizeProjectCreation(actor(c))
}

func (p *pages) renamesProject(c echo.Context) error {
	return p.withID(c, "id", p.store.Projects().AuthorizeProjectRename)
}

func (p *pages) deletesProject(c echo.Context) error {
	return p.withID(c, "id", p.store.Projects().AuthorizeProjectDeletion)
}

func (p *pages) createsEnvironments(c echo.Context) error {
	return p.withID(c, "id", p.store.Projects().AuthorizeEnvironmentCreation)
}

func (p *pages) updatesEnvironment(c echo.Context) error {
	return p.inProjectEnv(c, p.store.Projects().AuthorizeEnvironmentUpdate)
}

func (p *pages) deletesEnvironment(c echo.Context) error {
	return p.inProjectEnv(c, p.store.Projects().AuthorizeEnvironmentDeletion)
}

func (p *pages) createsSecrets(c echo.Context) error {
	return p.withID(c, "envId", p.store.Projects().AuthorizeSecretCreation)
}

func (p *pages) renamesSecrets(c echo.Context) error {
	return p.withID(c, "envId", p.store.Projects().AuthorizeSecretRename)
}

func (p *pages) deletesSecrets(c echo.Context) error {
	return p.withID(c, "envId", p.store.Projects().AuthorizeSecretDeletion)
}

// The flag and segment pages work in the working environment (workenv.go),
// which the session chose before the form is read.

func (p *pages) createsFlags(c echo.Context) error {
	return p.inWorkEnv(c, p.store.Flags().AuthorizeFlagCreation)
}

func (p *pages) createsSegments(c echo.Context) error {
	return p.inWorkEnv(c, p.store.Flags().AuthorizeSegmentCreation)
}

// withID runs a check on the id the path names under name.
func (p *pages) withID(c echo.Context, name string, check func(context.Context, *core.Actor, uuid.UUID) error) error {
	id, err := httpx.PathID(c, name)
	if err != nil {
		return err
	}
	return check(c.Request().Context(), actor(c), id)
}

// inProjectEnv runs a check on the project's environment the path names.
func (p *pages) inProjectEnv(c echo.Context, check func(context.Context, *core.Actor, uuid.UUID, uuid.UUID) error) error {
	projectID, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	envID, err := httpx.PathID(c, "envId")
	if err != nil {
		return err
	}
	return check(c.Request().Context(), actor(c), projectID, envID)
}

// inWorkEnv runs a check on the working environment; someone who can open
// none may create nothing (actingEnv).
func (p *pages) inWorkEnv(c echo.Context, check func(context.Context, *core.Actor, uuid.UUID) error) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	// The operation loads the environment again: from memory.
	r := c.Request()
	ctx := core.RememberEnvironment(r.Context())
	c.SetRequest(r.WithContext(ctx))
	return check(ctx, actor(c), w.id)
}
