package web

import (
	"log/slog"
	"net/http"
	"net/url"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/static"
	"github.com/bunting-flags/bunting/web/actorcache"
	"github.com/bunting-flags/bunting/web/httpx"
	"github.com/bunting-flags/bunting/web/limit"
	"github.com/bunting-flags/bunting/web/sdk"
	"github.com/bunting-flags/bunting/web/webhook"
)

// pages serves the admin application: server-rendered pages that decode forms
// into the store's input types (through web's form structs), call the same
// store methods as the API, and render views.
type pages struct {
	store    *store.Store
	log      *slog.Logger
	sessions *sessions.CookieStore
	assets   *assets
	csrf     *csrfGuard
	sso      *ssoClient
	limits   *limit.Edge
	actors   *actorcache.Cache
	hooks    *webhook.Sender
	// relays builds what relays are sent, for a manual agent's sync.
	relays *sdk.Server
	// baseURL is this instance's public URL, which the first-run guide's
	// snippets connect SDKs to.
	baseURL *url.URL
}

func newPages(cfg Config, s *store.Store, log *slog.Logger) (*pages, error) {
	as, err := newAssets(static.FS)
	if err != nil {
		return nil, err
	}
	secure := cfg.BaseURL.Scheme == "https"
	return &pages{store: s, log: log, assets: as,
		sessions: newSessionStore(s.Projects().Keys(), secure),
		csrf:     newCSRFGuard(s.Projects().Keys().CSRF, secure),
		sso:      newSSOClient(cfg.BaseURL, s.Projects().AllowPrivateNetworks()), limits: cfg.Limits, actors: cfg.Actors, hooks: webhook.NewSender(s), baseURL: cfg.BaseURL, relays: cfg.SDK}, nil
}

// register adds every page route to e. Every page but sign-in needs a
// session, given to the group; every page checks the CSRF token of
// state-changing requests. Forms post to POST routes (HTML forms know no other methods), so each
// action works with and without script.
//
// A route whose right does not depend on its form declares that right
// here, in its row of the table: the right is checked after the session and
// before the CSRF guard reads the form (authorize.go), so a caller without
// it costs one query and no byte of the body.
func (p *pages) register(e *echo.Echo) {
	root := e.Group("")
	root.GET("/static/:name", p.assets.serve)
	root.GET("/docs", p.apiReference) // the API reference; public, like the document
	root.GET("/sso/callback", p.ssoCallback)

	public := httpx.Guarded(root, p.csrf.protect(publicFormBytes))
	public.GET("/login", p.loginPage)
	public.POST("/login", p.login)
	public.POST("/logout", p.logout)
	public.POST("/sso/start", p.startSSO)

	// Every other page needs a session, checked before a posted form is
	// read: a stranger's form takes nothing of the body budget. Then the
	// route's right, when it has one, then the CSRF guard.
	session := httpx.Guarded(root, p.signedIn)
	needs := func(right func(echo.Context) error) httpx.Routes {
		var mw []echo.MiddlewareFunc
		if right != nil {
			mw = append(mw, httpx.Before(right))
		}
		return session.With(append(mw, p.csrf.protect(httpx.MaxBodyBytes))...)
	}

	// The rights the routes check before their form, each the store's own
	// check, which the operation makes again. anyMember is none: the
	// route's right depends on what it is asked (a flag's tags, a token's
	// type), or any member may use it; the store checks each operation.
	iamStore, projects, tokens := p.store.IAM(), p.store.Projects(), p.store.Tokens()
	var (
		anyMember            func(echo.Context) error
		createsProjects      = actorRight(projects.AuthorizeProjectCreation)
		renamesProject       = p.pathIDRight("id", projects.AuthorizeProjectRename)
		deletesProject       = p.pathIDRight("id", projects.AuthorizeProjectDeletion)
		createsEnvironments  = p.pathIDRight("id", projects.AuthorizeEnvironmentCreation)
		updatesEnvironment   = p.projectEnvRight(projects.AuthorizeEnvironmentUpdate)
		deletesEnvironment   = p.projectEnvRight(projects.AuthorizeEnvironmentDeletion)
		createsSecrets       = p.pathIDRight("envId", projects.AuthorizeSecretCreation)
		renamesSecrets       = p.pathIDRight("envId", projects.AuthorizeSecretRename)
		deletesSecrets       = p.pathIDRight("envId", projects.AuthorizeSecretDeletion)
		listsRelays          = actorRight(p.store.RelayProxies().AuthorizeList)
		managesRelays        = actorRight(p.store.RelayProxies().AuthorizeManage)
		managesWebhooks      = orgRight(p.store.Webhooks().AuthorizeWebhooks)
		createsAccessTokens  = actorRight(tokens.AuthorizeAccessTokenCreation)
		editsAccessToken     = p.pathIDRight("id", tokens.AuthorizeAccessTokenUpdate)
		togglesAccessToken   = p.pathIDRight("id", tokens.AuthorizeAccessTokenToggle)
		deletesAccessToken   = p.pathIDRight("id", tokens.AuthorizeAccessTokenDeletion)
		managesIAM           = actorRight(iamStore.AuthorizeIAM)
		changesOrganization  = orgRight(iamStore.AuthorizeOrganizationUpdate)
		deletesOrganization  = orgRight(iamStore.AuthorizeOrganizationDeletion)
		createsOrganizations = actorRight(iamStore.AuthorizeOrganizationCreation)
		changesWorkspace     = orgRight(iamStore.AuthorizeWorkspaceUpdate)
		changesSSO           = orgRight(iamStore.AuthorizeWorkspaceSSO)
		createsFlags         = p.workEnvRight(p.store.Flags().AuthorizeFlagCreation)
		createsSegments      = p.workEnvRight(p.store.Flags().AuthorizeSegmentCreation)
		changesExperiments   = p.workEnvRight(p.store.Experiments().AuthorizeExperimentChange)
		changesMetrics       = p.workEnvRight(p.store.Experiments().AuthorizeMetricChange)
	)

	for _, r := range []pageRoute{
		{http.MethodGet, "/", anyMember, p.home},
		{http.MethodGet, "/search", anyMember, p.search}, // flags, segments and pages by name; the search dialog asks it too
		{http.MethodPost, "/context", anyMember, p.switchContext},
		{http.MethodGet, "/profile", anyMember, p.profile},
		{http.MethodPost, "/profile", anyMember, p.updateProfile},
		{http.MethodPost, "/profile/password", anyMember, p.changePassword},

		// Projects, environments and secrets: each change needs its right on
		// the project or environment the path names.
		{http.MethodGet, "/projects", anyMember, p.projects},
		{http.MethodPost, "/projects", createsProjects, p.createProject},
		{http.MethodGet, "/projects/:id", anyMember, p.project},
		{http.MethodPost, "/projects/:id", renamesProject, p.renameProject},
		{http.MethodGet, "/projects/:id/delete", anyMember, p.confirmDeleteProject},
		{http.MethodPost, "/projects/:id/delete", deletesProject, p.deleteProject},

		{http.MethodPost, "/projects/:id/envs", createsEnvironments, p.createEnvironment},
		{http.MethodGet, "/projects/:id/envs/:envId", anyMember, p.environment},
		{http.MethodPost, "/projects/:id/envs/:envId", updatesEnvironment, p.updateEnvironment},
		{http.MethodGet, "/projects/:id/envs/:envId/delete", anyMember, p.confirmDeleteEnvironment},
		{http.MethodPost, "/projects/:id/envs/:envId/delete", deletesEnvironment, p.deleteEnvironment},

		{http.MethodPost, "/projects/:id/envs/:envId/secrets", createsSecrets, p.createSecret},
		{http.MethodPost, "/projects/:id/envs/:envId/secrets/:secretId", renamesSecrets, p.renameSecret},
		{http.MethodPost, "/projects/:id/envs/:envId/secrets/:secretId/delete", deletesSecrets, p.deleteSecret},

		// Relay proxies (relay_proxies.go): seeing them needs ListRelayProxies,
		// every change ManageRelayProxies.
		{http.MethodGet, "/relay-proxies", listsRelays, p.relayProxies},
		{http.MethodGet, "/relay-proxies/new", managesRelays, p.newRelayProxy},
		{http.MethodPost, "/relay-proxies", managesRelays, p.createRelayProxy},
		{http.MethodGet, "/relay-proxies/:id", listsRelays, p.relayProxy},
		{http.MethodPost, "/relay-proxies/:id", managesRelays, p.updateRelayProxy},
		{http.MethodPost, "/relay-proxies/:id/agents", managesRelays, p.addRelayAgent},
		{http.MethodPost, "/relay-proxies/:id/agents/:agentId/sync", managesRelays, p.syncRelayAgent},
		{http.MethodPost, "/relay-proxies/:id/agents/:agentId/remove", managesRelays, p.removeRelayAgent},
		{http.MethodPost, "/relay-proxies/:id/auto-agents/:agentId/remove", managesRelays, p.removeAutoAgent},
		{http.MethodGet, "/relay-proxies/:id/delete", managesRelays, p.confirmDeleteRelayProxy},
		{http.MethodPost, "/relay-proxies/:id/delete", managesRelays, p.deleteRelayProxy},

		// Webhooks: every page needs managing the organization's webhooks.
		{http.MethodGet, "/webhooks", managesWebhooks, p.webhooks},
		{http.MethodGet, "/webhooks/new", managesWebhooks, p.newWebhook},
		{http.MethodPost, "/webhooks", managesWebhooks, p.createWebhook},
		{http.MethodGet, "/webhooks/:id", managesWebhooks, p.webhook},
		{http.MethodPost, "/webhooks/:id", managesWebhooks, p.updateWebhook},
		{http.MethodPost, "/webhooks/:id/test", managesWebhooks, p.testWebhook},
		{http.MethodGet, "/webhooks/:id/delete", managesWebhooks, p.confirmDeleteWebhook},
		{http.MethodPost, "/webhooks/:id/delete", managesWebhooks, p.deleteWebhook},

		// Access tokens: any member may list them; creating one needs managing
		// tokens of some type (which type is in the form); renaming, turning
		// off or on, and deleting one what the person may do with it.
		{http.MethodGet, "/access-tokens", anyMember, p.accessTokens},
		{http.MethodPost, "/access-tokens", createsAccessTokens, p.createAccessToken},
		{http.MethodGet, "/access-tokens/:id", anyMember, p.accessToken},
		{http.MethodPost, "/access-tokens/:id", editsAccessToken, p.updateAccessToken},
		{http.MethodPost, "/access-tokens/:id/toggle", togglesAccessToken, p.toggleAccessToken},
		{http.MethodPost, "/access-tokens/:id/delete", deletesAccessToken, p.deleteAccessToken},

		// IAM: members, groups and policies. Every page needs CanManageIAM.
		{http.MethodGet, "/members", managesIAM, p.members},
		{http.MethodPost, "/members", managesIAM, p.addMember},
		{http.MethodGet, "/members/:id", managesIAM, p.member},
		{http.MethodPost, "/members/:id/groups/:groupId/add", managesIAM, p.addMemberGroup},
		{http.MethodPost, "/members/:id/groups/:groupId/remove", managesIAM, p.removeMemberGroup},
		{http.MethodPost, "/members/:id/policies/:policyId/add", managesIAM, p.addMemberPolicy},
		{http.MethodPost, "/members/:id/policies/:policyId/remove", managesIAM, p.removeMemberPolicy},
		{http.MethodGet, "/groups", managesIAM, p.groups},
		{http.MethodPost, "/groups", managesIAM, p.createGroup},
		{http.MethodGet, "/groups/:id", managesIAM, p.group},
		{http.MethodPost, "/groups/:id", managesIAM, p.updateGroup},
		{http.MethodPost, "/groups/:id/members/:memberId/add", managesIAM, p.addGroupMember},
		{http.MethodPost, "/groups/:id/members/:memberId/remove", managesIAM, p.removeGroupMember},
		{http.MethodPost, "/groups/:id/policies/:policyId/add", managesIAM, p.addGroupPolicy},
		{http.MethodPost, "/groups/:id/policies/:policyId/remove", managesIAM, p.removeGroupPolicy},
		{http.MethodGet, "/policies", managesIAM, p.policies},
		{http.MethodPost, "/policies", managesIAM, p.createPolicy},
		{http.MethodGet, "/policies/key-check", managesIAM, p.policyKeyCheck},
		{http.MethodGet, "/policies/:id", managesIAM, p.policy},
		{http.MethodPost, "/policies/:id/statements", managesIAM, p.savePolicyStatements},
		{http.MethodPost, "/policies/:id/check", managesIAM, p.checkPolicy},
		{http.MethodPost, "/policies/:id/settings", managesIAM, p.updatePolicySettings},
		{http.MethodGet, "/policies/:id/clone", managesIAM, p.clonePolicyForm},
		{http.MethodPost, "/policies/:id/clone", managesIAM, p.clonePolicy},
		{http.MethodPost, "/policies/:id/members/:memberId/add", managesIAM, p.addPolicyMember},
		{http.MethodPost, "/policies/:id/members/:memberId/remove", managesIAM, p.removePolicyMember},
		{http.MethodPost, "/policies/:id/groups/:groupId/add", managesIAM, p.addPolicyGroup},
		{http.MethodPost, "/policies/:id/groups/:groupId/remove", managesIAM, p.removePolicyGroup},

		// The organization: its settings need one of the rights to change
		// them (which one is checked on what the form changes).
		{http.MethodGet, "/organization", anyMember, p.organization},
		{http.MethodPost, "/organization", changesOrganization, p.updateOrganization},
		{http.MethodGet, "/organization/delete", anyMember, p.confirmDeleteOrganization},
		{http.MethodPost, "/organization/delete", deletesOrganization, p.deleteOrganization},
		{http.MethodGet, "/organizations/new", anyMember, p.newOrganization},
		{http.MethodPost, "/organizations", createsOrganizations, p.createOrganization},

		// The first-run guide: its first project and its first flag.
		{http.MethodGet, guidePath, anyMember, p.guide},
		{http.MethodPost, guidePath + "/project", createsProjects, p.createFirstProject},
		{http.MethodPost, guidePath + "/flag", createsFlags, p.createFirstFlag},
		{http.MethodGet, guidePath + "/check", anyMember, p.guideCheck},
		{http.MethodPost, guidePath + "/skip", anyMember, p.skipGuide},

		// The workspace: its general and its single sign-on settings.
		{http.MethodGet, "/workspace", anyMember, p.workspace},
		{http.MethodPost, "/workspace", changesWorkspace, p.updateWorkspace},
		{http.MethodPost, "/workspace/sso", changesSSO, p.updateWorkspaceSSO},
		{http.MethodPost, "/workspace/sso/test", changesSSO, p.testWorkspaceSSO},

		// Feature flags, segments and history.
		// They work in the environment chosen in the context switcher; creating
		// one needs the right to there.
		{http.MethodGet, "/flags", anyMember, p.flags},
		{http.MethodPost, "/flags", createsFlags, p.createFlag},
		{http.MethodGet, "/flags/compare", anyMember, p.compareEnvs},
		{http.MethodGet, "/flags/copy", anyMember, p.copyFlags},
		{http.MethodPost, "/flags/copy", anyMember, p.copyFlagsConfirm},
		{http.MethodGet, "/flags/:key", anyMember, p.flag},
		{http.MethodGet, "/flags/:key/compare", anyMember, p.flagCompare},
		{http.MethodPost, "/flags/:key/copy-settings", anyMember, p.copyFlagSettings},
		{http.MethodPost, "/flags/:key/toggle", anyMember, p.toggleFlag},
		{http.MethodPost, "/flags/:key/off-variation", anyMember, p.setFlagOffVariation},
		{http.MethodPost, "/flags/:key/targeting", anyMember, p.setFlagTargeting},
		{http.MethodPost, "/flags/:key/schedules/:id/cancel", anyMember, p.cancelSchedule},
		{http.MethodPost, "/flags/:key/test", anyMember, p.testFlag},
		{http.MethodGet, "/flags/:key/variations", anyMember, p.flagVariations},
		{http.MethodPost, "/flags/:key/variations", anyMember, p.setFlagVariations},
		{http.MethodGet, "/flags/:key/settings", anyMember, p.flagSettings},
		{http.MethodPost, "/flags/:key/name", anyMember, p.renameFlag},
		{http.MethodPost, "/flags/:key/description", anyMember, p.describeFlag},
		{http.MethodPost, "/flags/:key/tags", anyMember, p.tagFlag},
		{http.MethodPost, "/flags/:key/clone", anyMember, p.cloneFlag},
		{http.MethodGet, "/flags/:key/history", anyMember, p.flagHistory},
		{http.MethodGet, "/flags/:key/insights", anyMember, p.flagInsights},
		{http.MethodGet, "/flags/:key/code", anyMember, p.flagCode},
		{http.MethodGet, "/flags/:key/triggers", anyMember, p.flagTriggers},
		{http.MethodPost, "/flags/:key/triggers", anyMember, p.createTrigger},
		{http.MethodPost, "/flags/:key/triggers/:id/status", anyMember, p.setTriggerStatus},
		{http.MethodPost, "/flags/:key/triggers/:id/reset", anyMember, p.resetTrigger},
		{http.MethodPost, "/flags/:key/triggers/:id/delete", anyMember, p.deleteTrigger},
		{http.MethodGet, "/reviews", anyMember, p.reviews},
		{http.MethodGet, "/reviews/:id", anyMember, p.review},
		{http.MethodGet, "/change-requests", anyMember, p.changeRequests},
		{http.MethodGet, "/change-requests/:id", anyMember, p.changeRequest},
		{http.MethodPost, "/change-requests/:id/approve", anyMember, p.reviewChangeRequest(true)},
		{http.MethodPost, "/change-requests/:id/decline", anyMember, p.reviewChangeRequest(false)},
		{http.MethodPost, "/change-requests/:id/apply", anyMember, p.applyChangeRequest},
		{http.MethodPost, "/change-requests/:id/withdraw", anyMember, p.withdrawChangeRequest},

		{http.MethodGet, "/end-users", anyMember, p.endUsers},
		{http.MethodGet, "/end-users/suggest", anyMember, p.suggestEndUsers},
		{http.MethodGet, "/end-users/:id", anyMember, p.endUser},

		{http.MethodGet, "/segments", anyMember, p.segments},
		{http.MethodPost, "/segments", createsSegments, p.createSegment},
		{http.MethodGet, "/segments/:id", anyMember, p.segment},
		{http.MethodPost, "/segments/:id/targeting", anyMember, p.setSegmentTargeting},
		{http.MethodGet, "/segments/:id/flags", anyMember, p.segmentUsage},
		{http.MethodGet, "/segments/:id/settings", anyMember, p.segmentSettings},
		{http.MethodPost, "/segments/:id/name", anyMember, p.renameSegment},
		{http.MethodPost, "/segments/:id/description", anyMember, p.describeSegment},
		{http.MethodPost, "/segments/:id/tags", anyMember, p.tagSegment},
		{http.MethodPost, "/segments/:id/scopes", anyMember, p.setSegmentScopes},
		{http.MethodGet, "/segments/:id/history", anyMember, p.segmentHistory},

		{http.MethodGet, "/audit-log", anyMember, p.auditLog},

		// Experiments and their metrics, in the working environment. Changing
		// either needs the right to change some flag's targeting there,
		// checked before the form is read; each operation checks its own flag.
		{http.MethodGet, "/experiments", anyMember, p.experiments},
		{http.MethodGet, "/experiments/new", anyMember, p.newExperiment},
		{http.MethodGet, "/flags/:key/experiments", anyMember, p.flagExperiments},
		{http.MethodPost, "/flags/:key/experiments", changesExperiments, p.createExperiment},
		{http.MethodGet, "/experiments/:id", anyMember, p.experiment},
		{http.MethodPost, "/experiments/:id/start", changesExperiments, p.startExperiment},
		{http.MethodPost, "/experiments/:id/stop", changesExperiments, p.stopExperiment},
		{http.MethodGet, "/experiment-metrics", anyMember, p.metrics},
		{http.MethodPost, "/experiment-metrics", changesMetrics, p.createMetric},
		{http.MethodGet, "/experiment-metrics/:id", anyMember, p.metric},
		{http.MethodPost, "/experiment-metrics/:id", changesMetrics, p.updateMetric},
		{http.MethodGet, "/experiment-metrics/:id/archive", anyMember, p.confirmArchiveMetric},
		{http.MethodPost, "/experiment-metrics/:id/archive", changesMetrics, p.archiveMetric},
	} {
		needs(r.right).Add(r.method, r.path, r.handler)
	}

	// The confirmations and the changes they confirm, one pair a step.
	p.memberRemoval().routes(p, needs(managesIAM), "/members/:id/remove")
	p.groupRemoval().routes(p, needs(managesIAM), "/groups/:id/delete")
	p.policyRemoval().routes(p, needs(managesIAM), "/policies/:id/delete")
	lifecycleRoutes(needs(anyMember), "/flags/:key", p.confirmFlag, p.changeFlagLifecycle, archiveFlag, restoreFlag, deleteFlag)
	lifecycleRoutes(needs(anyMember), "/segments/:id", p.confirmSegment, p.changeSegmentLifecycle, archiveSegment, restoreSegment, deleteSegment)
	for _, r := range []experimentRemoval{archiveExperimentData, archiveExperiment} {
		needs(anyMember).GET("/experiments/:id"+r.path, p.confirmExperiment(r))
		needs(changesExperiments).POST("/experiments/:id"+r.path, p.removeExperiment(r))
	}
}

// pageRoute is one route of the pages: its method and path, the right it
// checks before its form is read, and its handler.
type pageRoute struct {
	method, path string
	right        func(echo.Context) error
	handler      echo.HandlerFunc
}

// lifecycleRoutes registers each lifecycle step's confirmation page (GET)
// and the change it confirms (POST), below base.
func lifecycleRoutes[L interface{ path(string) string }](r httpx.Routes, base string, confirm, change func(L) echo.HandlerFunc, steps ...L) {
	for _, l := range steps {
		r.GET(l.path(base), confirm(l))
		r.POST(l.path(base), change(l))
	}
}

// home is the landing page: the feature flags of the working environment,
// or the first-run guide while the organization has no project.
func (p *pages) home(c echo.Context) error {
	if greet, err := p.greeted(c); err != nil || greet {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/flags")
}
