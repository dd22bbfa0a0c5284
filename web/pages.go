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
		sessions: newSessionStore(s.Keys(), secure),
		csrf:     newCSRFGuard(s.Keys().CSRF, secure),
		sso:      newSSOClient(cfg.BaseURL, s.AllowPrivateNetworks()), limits: cfg.Limits, actors: cfg.Actors, hooks: webhook.NewSender(s), baseURL: cfg.BaseURL}, nil
}

// register adds every page route to e. Every page but sign-in needs a
// session, given to the group; every page checks the CSRF token of
// state-changing requests. Forms post to POST routes (HTML forms know no other methods), so each
// action works with and without script.
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
	// read: a stranger's form takes nothing of the body budget.
	g := httpx.Guarded(root, p.signedIn, p.csrf.protect(httpx.MaxBodyBytes))

	g.GET("/", p.home)
	g.GET("/search", p.search) // flags, segments and pages by name; the search dialog asks it too
	g.POST("/context", p.switchContext)
	g.GET("/profile", p.profile)
	g.POST("/profile", p.updateProfile)
	g.POST("/profile/password", p.changePassword)

	g.GET("/projects", p.projects)
	g.POST("/projects", p.createProject)
	g.GET("/projects/:id", p.project)
	g.POST("/projects/:id", p.renameProject)
	g.GET("/projects/:id/delete", p.confirmDeleteProject)
	g.POST("/projects/:id/delete", p.deleteProject)

	g.POST("/projects/:id/envs", p.createEnvironment)
	g.GET("/projects/:id/envs/:envId", p.environment)
	g.POST("/projects/:id/envs/:envId", p.updateEnvironment)
	g.GET("/projects/:id/envs/:envId/delete", p.confirmDeleteEnvironment)
	g.POST("/projects/:id/envs/:envId/delete", p.deleteEnvironment)

	g.POST("/projects/:id/envs/:envId/secrets", p.createSecret)
	g.POST("/projects/:id/envs/:envId/secrets/:secretId", p.renameSecret)
	g.POST("/projects/:id/envs/:envId/secrets/:secretId/delete", p.deleteSecret)

	g.GET("/webhooks", p.webhooks)
	g.GET("/webhooks/new", p.newWebhook)
	g.POST("/webhooks", p.createWebhook)
	g.GET("/webhooks/:id", p.webhook)
	g.POST("/webhooks/:id", p.updateWebhook)
	g.POST("/webhooks/:id/test", p.testWebhook)
	g.GET("/webhooks/:id/delete", p.confirmDeleteWebhook)
	g.POST("/webhooks/:id/delete", p.deleteWebhook)
	g.GET("/access-tokens", p.accessTokens)
	g.POST("/access-tokens", p.createAccessToken)
	g.POST("/access-tokens/:id/toggle", p.toggleAccessToken)
	g.POST("/access-tokens/:id/delete", p.deleteAccessToken)

	// IAM: members, groups and policies.
	g.GET("/members", p.members)
	g.POST("/members", p.addMember)
	g.GET("/members/:id", p.member)
	g.GET("/members/:id/remove", p.confirmRemoveMember)
	g.POST("/members/:id/remove", p.removeMember)
	g.POST("/members/:id/groups/:groupId/add", p.addMemberGroup)
	g.POST("/members/:id/groups/:groupId/remove", p.removeMemberGroup)
	g.POST("/members/:id/policies/:policyId/add", p.addMemberPolicy)
	g.POST("/members/:id/policies/:policyId/remove", p.removeMemberPolicy)
	g.GET("/groups", p.groups)
	g.POST("/groups", p.createGroup)
	g.GET("/groups/:id", p.group)
	g.POST("/groups/:id", p.updateGroup)
	g.GET("/groups/:id/delete", p.confirmDeleteGroup)
	g.POST("/groups/:id/delete", p.deleteGroup)
	g.POST("/groups/:id/members/:memberId/add", p.addGroupMember)
	g.POST("/groups/:id/members/:memberId/remove", p.removeGroupMember)
	g.POST("/groups/:id/policies/:policyId/add", p.addGroupPolicy)
	g.POST("/groups/:id/policies/:policyId/remove", p.removeGroupPolicy)
	g.GET("/policies", p.policies)
	g.POST("/policies", p.createPolicy)
	g.GET("/policies/key-check", p.policyKeyCheck)
	g.GET("/policies/:id", p.policy)
	g.POST("/policies/:id/statements", p.savePolicyStatements)
	g.POST("/policies/:id/check", p.checkPolicy)
	g.POST("/policies/:id/settings", p.updatePolicySettings)
	g.GET("/policies/:id/clone", p.clonePolicyForm)
	g.POST("/policies/:id/clone", p.clonePolicy)
	g.GET("/policies/:id/delete", p.confirmDeletePolicy)
	g.POST("/policies/:id/delete", p.deletePolicy)
	g.POST("/policies/:id/members/:memberId/add", p.addPolicyMember)
	g.POST("/policies/:id/members/:memberId/remove", p.removePolicyMember)
	g.POST("/policies/:id/groups/:groupId/add", p.addPolicyGroup)
	g.POST("/policies/:id/groups/:groupId/remove", p.removePolicyGroup)
	g.GET("/organization", p.organization)
	g.POST("/organization", p.updateOrganization)
	g.GET("/organization/delete", p.confirmDeleteOrganization)
	g.POST("/organization/delete", p.deleteOrganization)
	g.GET("/organizations/new", p.newOrganization)
	g.POST("/organizations", p.createOrganization)

	// The first-run guide.
	g.GET(guidePath, p.guide)
	g.POST(guidePath+"/project", p.createFirstProject)
	g.POST(guidePath+"/flag", p.createFirstFlag)
	g.GET(guidePath+"/check", p.guideCheck)
	g.POST(guidePath+"/skip", p.skipGuide)
	g.GET("/access-tokens/:id", p.accessToken)
	g.POST("/access-tokens/:id", p.updateAccessToken)

	g.GET("/workspace", p.workspace)
	g.POST("/workspace", p.updateWorkspace)
	g.POST("/workspace/sso", p.updateWorkspaceSSO)
	g.POST("/workspace/sso/test", p.testWorkspaceSSO)

	// Feature flags, segments and history.
	// They work in the environment chosen in the context switcher.
	g.GET("/flags", p.flags)
	g.POST("/flags", p.createFlag)
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
	g.POST("/segments", p.createSegment)
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
}

// home is the landing page: the feature flags of the working environment,
// or the first-run guide while the organization has no project.
func (p *pages) home(c echo.Context) error {
	if greet, err := p.greeted(c); err != nil || greet {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/flags")
}
