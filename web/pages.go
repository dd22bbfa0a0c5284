package web

import (
	"log/slog"
	"net/http"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/static"
)

// pages serves the admin application: server-rendered pages that decode forms
// into the store's input types, call the same store methods as the API, and
// render views.
type pages struct {
	store    *store.Store
	log      *slog.Logger
	sessions *sessions.CookieStore
	assets   *assets
	csrf     *csrfGuard
	sso      *ssoClient
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
		sso:      newSSOClient(cfg.BaseURL, s.AllowPrivateNetworks())}, nil
}

// register adds every page route to e. Every page but sign-in needs a
// session; every page checks the CSRF token of state-changing requests.
// Forms post to POST routes (HTML forms know no other methods), so each
// action works with and without script.
func (p *pages) register(e *echo.Echo) {
	page := []echo.MiddlewareFunc{p.csrf.protect, p.signedIn}
	public := []echo.MiddlewareFunc{p.csrf.protect}

	e.GET("/static/:name", p.assets.serve)
	e.GET("/docs", p.apiReference) // the API reference; public, like the document

	e.GET("/login", p.loginPage, public...)
	e.POST("/login", p.login, public...)
	e.POST("/logout", p.logout, public...)
	e.POST("/sso/start", p.startSSO, public...)
	e.GET("/sso/callback", p.ssoCallback)

	e.GET("/", p.home, page...)
	e.POST("/context", p.switchContext, page...)
	e.GET("/profile", p.profile, page...)
	e.POST("/profile/password", p.changePassword, page...)

	e.GET("/projects", p.projects, page...)
	e.POST("/projects", p.createProject, page...)
	e.GET("/projects/:id", p.project, page...)
	e.POST("/projects/:id", p.renameProject, page...)
	e.GET("/projects/:id/delete", p.confirmDeleteProject, page...)
	e.POST("/projects/:id/delete", p.deleteProject, page...)

	e.POST("/projects/:id/envs", p.createEnvironment, page...)
	e.GET("/projects/:id/envs/:envId", p.environment, page...)
	e.POST("/projects/:id/envs/:envId", p.updateEnvironment, page...)
	e.GET("/projects/:id/envs/:envId/delete", p.confirmDeleteEnvironment, page...)
	e.POST("/projects/:id/envs/:envId/delete", p.deleteEnvironment, page...)

	e.POST("/projects/:id/envs/:envId/secrets", p.createSecret, page...)
	e.POST("/projects/:id/envs/:envId/secrets/:secretId", p.renameSecret, page...)
	e.POST("/projects/:id/envs/:envId/secrets/:secretId/delete", p.deleteSecret, page...)

	e.GET("/access-tokens", p.accessTokens, page...)
	e.POST("/access-tokens", p.createAccessToken, page...)
	e.POST("/access-tokens/:id/toggle", p.toggleAccessToken, page...)
	e.POST("/access-tokens/:id/delete", p.deleteAccessToken, page...)

	// IAM: members, groups and policies.
	e.GET("/members", p.members, page...)
	e.POST("/members", p.addMember, page...)
	e.GET("/members/:id", p.member, page...)
	e.GET("/members/:id/remove", p.confirmRemoveMember, page...)
	e.POST("/members/:id/remove", p.removeMember, page...)
	e.POST("/members/:id/groups/:groupId/add", p.addMemberGroup, page...)
	e.POST("/members/:id/groups/:groupId/remove", p.removeMemberGroup, page...)
	e.POST("/members/:id/policies/:policyId/add", p.addMemberPolicy, page...)
	e.POST("/members/:id/policies/:policyId/remove", p.removeMemberPolicy, page...)
	e.GET("/groups", p.groups, page...)
	e.POST("/groups", p.createGroup, page...)
	e.GET("/groups/:id", p.group, page...)
	e.POST("/groups/:id", p.updateGroup, page...)
	e.GET("/groups/:id/delete", p.confirmDeleteGroup, page...)
	e.POST("/groups/:id/delete", p.deleteGroup, page...)
	e.POST("/groups/:id/members/:memberId/add", p.addGroupMember, page...)
	e.POST("/groups/:id/members/:memberId/remove", p.removeGroupMember, page...)
	e.POST("/groups/:id/policies/:policyId/add", p.addGroupPolicy, page...)
	e.POST("/groups/:id/policies/:policyId/remove", p.removeGroupPolicy, page...)
	e.GET("/policies", p.policies, page...)
	e.POST("/policies", p.createPolicy, page...)
	e.GET("/policies/key-check", p.policyKeyCheck, page...)
	e.GET("/policies/:id", p.policy, page...)
	e.POST("/policies/:id/statements", p.savePolicyStatements, page...)
	e.POST("/policies/:id/settings", p.updatePolicySettings, page...)
	e.GET("/policies/:id/clone", p.clonePolicyForm, page...)
	e.POST("/policies/:id/clone", p.clonePolicy, page...)
	e.GET("/policies/:id/delete", p.confirmDeletePolicy, page...)
	e.POST("/policies/:id/delete", p.deletePolicy, page...)
	e.POST("/policies/:id/members/:memberId/add", p.addPolicyMember, page...)
	e.POST("/policies/:id/members/:memberId/remove", p.removePolicyMember, page...)
	e.POST("/policies/:id/groups/:groupId/add", p.addPolicyGroup, page...)
	e.POST("/policies/:id/groups/:groupId/remove", p.removePolicyGroup, page...)
	e.GET("/organization", p.organization, page...)
	e.POST("/organization", p.updateOrganization, page...)
	e.GET("/access-tokens/:id", p.accessToken, page...)
	e.POST("/access-tokens/:id", p.updateAccessToken, page...)

	e.GET("/workspace", p.workspace, page...)
	e.POST("/workspace", p.updateWorkspace, page...)
	e.POST("/workspace/sso", p.updateWorkspaceSSO, page...)
	e.POST("/workspace/sso/test", p.testWorkspaceSSO, page...)

	// Feature flags, segments and history.
	// They work in the environment chosen in the context switcher.
	e.GET("/flags", p.flags, page...)
	e.POST("/flags", p.createFlag, page...)
	e.GET("/flags/:key", p.flag, page...)
	e.POST("/flags/:key/toggle", p.toggleFlag, page...)
	e.POST("/flags/:key/off-variation", p.setFlagOffVariation, page...)
	e.POST("/flags/:key/targeting", p.setFlagTargeting, page...)
	e.POST("/flags/:key/test", p.testFlag, page...)
	e.GET("/flags/:key/variations", p.flagVariations, page...)
	e.POST("/flags/:key/variations", p.setFlagVariations, page...)
	e.GET("/flags/:key/settings", p.flagSettings, page...)
	e.POST("/flags/:key/name", p.renameFlag, page...)
	e.POST("/flags/:key/description", p.describeFlag, page...)
	e.POST("/flags/:key/tags", p.tagFlag, page...)
	e.POST("/flags/:key/clone", p.cloneFlag, page...)
	e.GET("/flags/:key/archive", p.confirmFlag(archiveFlag), page...)
	e.POST("/flags/:key/archive", p.changeFlagLifecycle(archiveFlag), page...)
	e.GET("/flags/:key/restore", p.confirmFlag(restoreFlag), page...)
	e.POST("/flags/:key/restore", p.changeFlagLifecycle(restoreFlag), page...)
	e.GET("/flags/:key/delete", p.confirmFlag(deleteFlag), page...)
	e.POST("/flags/:key/delete", p.changeFlagLifecycle(deleteFlag), page...)
	e.GET("/flags/:key/history", p.flagHistory, page...)

	e.GET("/segments", p.segments, page...)
	e.POST("/segments", p.createSegment, page...)
	e.GET("/segments/:id", p.segment, page...)
	e.POST("/segments/:id/targeting", p.setSegmentTargeting, page...)
	e.GET("/segments/:id/flags", p.segmentUsage, page...)
	e.GET("/segments/:id/settings", p.segmentSettings, page...)
	e.POST("/segments/:id/name", p.renameSegment, page...)
	e.POST("/segments/:id/description", p.describeSegment, page...)
	e.POST("/segments/:id/tags", p.tagSegment, page...)
	e.GET("/segments/:id/archive", p.confirmSegment(archiveSegment), page...)
	e.POST("/segments/:id/archive", p.changeSegmentLifecycle(archiveSegment), page...)
	e.GET("/segments/:id/restore", p.confirmSegment(restoreSegment), page...)
	e.POST("/segments/:id/restore", p.changeSegmentLifecycle(restoreSegment), page...)
	e.GET("/segments/:id/delete", p.confirmSegment(deleteSegment), page...)
	e.POST("/segments/:id/delete", p.changeSegmentLifecycle(deleteSegment), page...)
	e.GET("/segments/:id/history", p.segmentHistory, page...)

	e.GET("/audit-log", p.auditLog, page...)
}

// home is the landing page: the feature flags of the working environment.
func (p *pages) home(c echo.Context) error {
	return c.Redirect(http.StatusSeeOther, "/flags")
}
