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
// here, in the group it is registered with: the right is checked after the
// session and before the CSRF guard reads the form (authorize.go), so a
// caller without it costs one query and no byte of the body.
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
	needs := func(checks ...func(echo.Context) error) httpx.Routes {
		var mw []echo.MiddlewareFunc
		for _, check := range checks {
			mw = append(mw, httpx.Before(check))
		}
		return session.With(append(mw, p.csrf.protect(httpx.MaxBodyBytes))...)
	}
	// g is the routes whose right depends on what they are asked (a flag's
	// tags, a token's type) or that any member may use; the store checks
	// each operation.
	g := needs()
	// The rights the routes below check before their form; each is the
	// store's own check, which the operation makes again.
	iamStore, projects, tokens := p.store.IAM(), p.store.Projects(), p.store.Tokens()
	createsFlags := p.workEnvRight(p.store.Flags().AuthorizeFlagCreation)

	g.GET("/", p.home)
	g.GET("/search", p.search) // flags, segments and pages by name; the search dialog asks it too
	g.POST("/context", p.switchContext)
	g.GET("/profile", p.profile)
	g.POST("/profile", p.updateProfile)
	g.POST("/profile/password", p.changePassword)

	// Projects, environments and secrets: each change needs its right on
	// the project or environment the path names.
	g.GET("/projects", p.projects)
	needs(actorRight(projects.AuthorizeProjectCreation)).POST("/projects", p.createProject)
	g.GET("/projects/:id", p.project)
	needs(p.pathIDRight("id", projects.AuthorizeProjectRename)).POST("/projects/:id", p.renameProject)
	g.GET("/projects/:id/delete", p.confirmDeleteProject)
	needs(p.pathIDRight("id", projects.AuthorizeProjectDeletion)).POST("/projects/:id/delete", p.deleteProject)

	needs(p.pathIDRight("id", projects.AuthorizeEnvironmentCreation)).POST("/projects/:id/envs", p.createEnvironment)
	g.GET("/projects/:id/envs/:envId", p.environment)
	needs(p.projectEnvRight(projects.AuthorizeEnvironmentUpdate)).POST("/projects/:id/envs/:envId", p.updateEnvironment)
	g.GET("/projects/:id/envs/:envId/delete", p.confirmDeleteEnvironment)
	needs(p.projectEnvRight(projects.AuthorizeEnvironmentDeletion)).POST("/projects/:id/envs/:envId/delete", p.deleteEnvironment)

	needs(p.pathIDRight("envId", projects.AuthorizeSecretCreation)).POST("/projects/:id/envs/:envId/secrets", p.createSecret)
	needs(p.pathIDRight("envId", projects.AuthorizeSecretRename)).POST("/projects/:id/envs/:envId/secrets/:secretId", p.renameSecret)
	needs(p.pathIDRight("envId", projects.AuthorizeSecretDeletion)).POST("/projects/:id/envs/:envId/secrets/:secretId/delete", p.deleteSecret)

	// Relay proxies (relay_proxies.go): seeing them needs ListRelayProxies,
	// every change ManageRelayProxies.
	relays, relayChanges := needs(p.listsRelayProxies), needs(p.managesRelayProxies)
	relays.GET("/relay-proxies", p.relayProxies)
	relayChanges.GET("/relay-proxies/new", p.newRelayProxy)
	relayChanges.POST("/relay-proxies", p.createRelayProxy)
	relays.GET("/relay-proxies/:id", p.relayProxy)
	relayChanges.POST("/relay-proxies/:id", p.updateRelayProxy)
	relayChanges.POST("/relay-proxies/:id/agents", p.addRelayAgent)
	relayChanges.POST("/relay-proxies/:id/agents/:agentId/sync", p.syncRelayAgent)
	relayChanges.POST("/relay-proxies/:id/agents/:agentId/remove", p.removeRelayAgent)
	relayChanges.POST("/relay-proxies/:id/auto-agents/:agentId/remove", p.removeAutoAgent)
	relayChanges.GET("/relay-proxies/:id/delete", p.confirmDeleteRelayProxy)
	relayChanges.POST("/relay-proxies/:id/delete", p.deleteRelayProxy)

	// Webhooks: every page needs managing the organization's webhooks.
	webhooks := needs(orgRight(p.store.Webhooks().AuthorizeWebhooks))
	webhooks.GET("/webhooks", p.webhooks)
	webhooks.GET("/webhooks/new", p.newWebhook)
	webhooks.POST("/webhooks", p.createWebhook)
	webhooks.GET("/webhooks/:id", p.webhook)
	webhooks.POST("/webhooks/:id", p.updateWebhook)
	webhooks.POST("/webhooks/:id/test", p.testWebhook)
	webhooks.GET("/webhooks/:id/delete", p.confirmDeleteWebhook)
	webhooks.POST("/webhooks/:id/delete", p.deleteWebhook)

	// Access tokens: any member may list them; creating one needs managing
	// tokens of some type (which type is in the form); renaming, turning
	// off or on, and deleting one what the person may do with it.
	g.GET("/access-tokens", p.accessTokens)
	needs(actorRight(tokens.AuthorizeAccessTokenCreation)).POST("/access-tokens", p.createAccessToken)
	g.GET("/access-tokens/:id", p.accessToken)
	needs(p.pathIDRight("id", tokens.AuthorizeAccessTokenUpdate)).POST("/access-tokens/:id", p.updateAccessToken)
	needs(p.pathIDRight("id", tokens.AuthorizeAccessTokenToggle)).POST("/access-tokens/:id/toggle", p.toggleAccessToken)
	needs(p.pathIDRight("id", tokens.AuthorizeAccessTokenDeletion)).POST("/access-tokens/:id/delete", p.deleteAccessToken)

	// IAM: members, groups and policies. Every page needs CanManageIAM.
	iam := needs(actorRight(iamStore.AuthorizeIAM))
	iam.GET("/members", p.members)
	iam.POST("/members", p.addMember)
	iam.GET("/members/:id", p.member)
	p.memberRemoval().routes(p, iam, "/members/:id/remove")
	iam.POST("/members/:id/groups/:groupId/add", p.addMemberGroup)
	iam.POST("/members/:id/groups/:groupId/remove", p.removeMemberGroup)
	iam.POST("/members/:id/policies/:policyId/add", p.addMemberPolicy)
	iam.POST("/members/:id/policies/:policyId/remove", p.removeMemberPolicy)
	iam.GET("/groups", p.groups)
	iam.POST("/groups", p.createGroup)
	iam.GET("/groups/:id", p.group)
	iam.POST("/groups/:id", p.updateGroup)
	p.groupRemoval().routes(p, iam, "/groups/:id/delete")
	iam.POST("/groups/:id/members/:memberId/add", p.addGroupMember)
	iam.POST("/groups/:id/members/:memberId/remove", p.removeGroupMember)
	iam.POST("/groups/:id/policies/:policyId/add", p.addGroupPolicy)
	iam.POST("/groups/:id/policies/:policyId/remove", p.removeGroupPolicy)
	iam.GET("/policies", p.policies)
	iam.POST("/policies", p.createPolicy)
	iam.GET("/policies/key-check", p.policyKeyCheck)
	iam.GET("/policies/:id", p.policy)
	iam.POST("/policies/:id/statements", p.savePolicyStatements)
	iam.POST("/policies/:id/check", p.checkPolicy)
	iam.POST("/policies/:id/settings", p.updatePolicySettings)
	iam.GET("/policies/:id/clone", p.clonePolicyForm)
	iam.POST("/policies/:id/clone", p.clonePolicy)
	p.policyRemoval().routes(p, iam, "/policies/:id/delete")
	iam.POST("/policies/:id/members/:memberId/add", p.addPolicyMember)
	iam.POST("/policies/:id/members/:memberId/remove", p.removePolicyMember)
	iam.POST("/policies/:id/groups/:groupId/add", p.addPolicyGroup)
	iam.POST("/policies/:id/groups/:groupId/remove", p.removePolicyGroup)

	// The organization: its settings need one of the rights to change
	// them (which one is checked on what the form changes).
	g.GET("/organization", p.organization)
	needs(orgRight(iamStore.AuthorizeOrganizationUpdate)).POST("/organization", p.updateOrganization)
	g.GET("/organization/delete", p.confirmDeleteOrganization)
	needs(orgRight(iamStore.AuthorizeOrganizationDeletion)).POST("/organization/delete", p.deleteOrganization)
	g.GET("/organizations/new", p.newOrganization)
	needs(actorRight(iamStore.AuthorizeOrganizationCreation)).POST("/organizations", p.createOrganization)

	// The first-run guide: its first project and its first flag.
	g.GET(guidePath, p.guide)
	needs(actorRight(projects.AuthorizeProjectCreation)).POST(guidePath+"/project", p.createFirstProject)
	needs(createsFlags).POST(guidePath+"/flag", p.createFirstFlag)
	g.GET(guidePath+"/check", p.guideCheck)
	g.POST(guidePath+"/skip", p.skipGuide)

	// The workspace: its general and its single sign-on settings.
	g.GET("/workspace", p.workspace)
	needs(orgRight(iamStore.AuthorizeWorkspaceUpdate)).POST("/workspace", p.updateWorkspace)
	sso := needs(orgRight(iamStore.AuthorizeWorkspaceSSO))
	sso.POST("/workspace/sso", p.updateWorkspaceSSO)
	sso.POST("/workspace/sso/test", p.testWorkspaceSSO)

	// Feature flags, segments and history.
	// They work in the environment chosen in the context switcher; creating
	// one needs the right to there.
	g.GET("/flags", p.flags)
	needs(createsFlags).POST("/flags", p.createFlag)
	g.GET("/flags/compare", p.compareEnvs)
	g.GET("/flags/copy", p.copyFlags)
	g.POST("/flags/copy", p.copyFlagsConfirm)
	g.GET("/flags/:key", p.flag)
	g.GET("/flags/:key/compare", p.flagCompare)
	g.POST("/flags/:key/copy-settings", p.copyFlagSettings)
	g.POST("/flags/:key/toggle", p.toggleFlag)
	g.POST("/flags/:key/off-variation", p.setFlagOffVariation)
	g.POST("/flags/:key/targeting", p.setFlagTargeting)
	g.POST("/flags/:key/schedules/:id/cancel", p.cancelSchedule)
	g.POST("/flags/:key/test", p.testFlag)
	g.GET("/flags/:key/variations", p.flagVariations)
	g.POST("/flags/:key/variations", p.setFlagVariations)
	g.GET("/flags/:key/settings", p.flagSettings)
	g.POST("/flags/:key/name", p.renameFlag)
	g.POST("/flags/:key/description", p.describeFlag)
	g.POST("/flags/:key/tags", p.tagFlag)
	g.POST("/flags/:key/clone", p.cloneFlag)
	g.GET("/flags/:key/archive", p.confirmFlag(archiveFlag))
	g.POST("/flags/:key/archive", p.changeFlagLifecycle(archiveFlag))
	g.GET("/flags/:key/restore", p.confirmFlag(restoreFlag))
	g.POST("/flags/:key/restore", p.changeFlagLifecycle(restoreFlag))
	g.GET("/flags/:key/delete", p.confirmFlag(deleteFlag))
	g.POST("/flags/:key/delete", p.changeFlagLifecycle(deleteFlag))
	g.GET("/flags/:key/history", p.flagHistory)
	g.GET("/flags/:key/insights", p.flagInsights)
	g.GET("/flags/:key/code", p.flagCode)
	g.GET("/flags/:key/triggers", p.flagTriggers)
	g.POST("/flags/:key/triggers", p.createTrigger)
	g.POST("/flags/:key/triggers/:id/status", p.setTriggerStatus)
	g.POST("/flags/:key/triggers/:id/reset", p.resetTrigger)
	g.POST("/flags/:key/triggers/:id/delete", p.deleteTrigger)
	g.GET("/reviews", p.reviews)
	g.GET("/reviews/:id", p.review)
	g.GET("/change-requests", p.changeRequests)
	g.GET("/change-requests/:id", p.changeRequest)
	g.POST("/change-requests/:id/approve", p.reviewChangeRequest(true))
	g.POST("/change-requests/:id/decline", p.reviewChangeRequest(false))
	g.POST("/change-requests/:id/apply", p.applyChangeRequest)
	g.POST("/change-requests/:id/withdraw", p.withdrawChangeRequest)

	g.GET("/end-users", p.endUsers)
	g.GET("/end-users/suggest", p.suggestEndUsers)
	g.GET("/end-users/:id", p.endUser)

	g.GET("/segments", p.segments)
	needs(p.workEnvRight(p.store.Flags().AuthorizeSegmentCreation)).POST("/segments", p.createSegment)
	g.GET("/segments/:id", p.segment)
	g.POST("/segments/:id/targeting", p.setSegmentTargeting)
	g.GET("/segments/:id/flags", p.segmentUsage)
	g.GET("/segments/:id/settings", p.segmentSettings)
	g.POST("/segments/:id/name", p.renameSegment)
	g.POST("/segments/:id/description", p.describeSegment)
	g.POST("/segments/:id/tags", p.tagSegment)
	g.POST("/segments/:id/scopes", p.setSegmentScopes)
	g.GET("/segments/:id/archive", p.confirmSegment(archiveSegment))
	g.POST("/segments/:id/archive", p.changeSegmentLifecycle(archiveSegment))
	g.GET("/segments/:id/restore", p.confirmSegment(restoreSegment))
	g.POST("/segments/:id/restore", p.changeSegmentLifecycle(restoreSegment))
	g.GET("/segments/:id/delete", p.confirmSegment(deleteSegment))
	g.POST("/segments/:id/delete", p.changeSegmentLifecycle(deleteSegment))
	g.GET("/segments/:id/history", p.segmentHistory)

	g.GET("/audit-log", p.auditLog)

	// Experiments and their metrics, in the working environment. Changing
	// either needs the right to change some flag's targeting there,
	// checked before the form is read; each operation checks its own flag.
	g.GET("/experiments", p.experiments)
	g.GET("/experiments/new", p.newExperiment)
	g.GET("/flags/:key/experiments", p.flagExperiments)
	needs(p.changesExperiments).POST("/flags/:key/experiments", p.createExperiment)
	g.GET("/experiments/:id", p.experiment)
	needs(p.changesExperiments).POST("/experiments/:id/start", p.startExperiment)
	needs(p.changesExperiments).POST("/experiments/:id/stop", p.stopExperiment)
	g.GET("/experiments/:id/archive-data", p.confirmExperiment(archiveExperimentData))
	needs(p.changesExperiments).POST("/experiments/:id/archive-data", p.removeExperiment(archiveExperimentData))
	g.GET("/experiments/:id/archive", p.confirmExperiment(archiveExperiment))
	needs(p.changesExperiments).POST("/experiments/:id/archive", p.removeExperiment(archiveExperiment))
	g.GET("/experiment-metrics", p.metrics)
	needs(p.changesMetrics).POST("/experiment-metrics", p.createMetric)
	g.GET("/experiment-metrics/:id", p.metric)
	needs(p.changesMetrics).POST("/experiment-metrics/:id", p.updateMetric)
	g.GET("/experiment-metrics/:id/archive", p.confirmArchiveMetric)
	needs(p.changesMetrics).POST("/experiment-metrics/:id/archive", p.archiveMetric)
}

// home is the landing page: the feature flags of the working environment,
// or the first-run guide while the organization has no project.
func (p *pages) home(c echo.Context) error {
	if greet, err := p.greeted(c); err != nil || greet {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/flags")
}
