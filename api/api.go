// Package api serves the JSON management API under /api/v1: it decodes
// requests, calls the store, and encodes answers in the envelope.
package api

import (
	"log/slog"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store"
)

// Handler serves the JSON API.
type Handler struct {
	store *store.Store
	log   *slog.Logger
}

// New returns the API handler over s.
func New(s *store.Store, log *slog.Logger) *Handler {
	return &Handler{store: s, log: log}
}

// Register adds every /api/v1 route, and FeatBit's one /api/v2 route, to e. Every route but sign-in and the
// OpenAPI document requires credentials; the store checks each operation's
// permission. Every route here is described in openapi.yaml, and the tests
// fail when the two differ (README, "Changing the API").
func (h *Handler) Register(e *echo.Echo) {
	g := e.Group("/api/v1")
	auth := h.authenticate

	// The document describing every route here (openapi.yaml); public.
	g.GET("/openapi.json", h.openAPI)

	g.POST("/identity/login-by-email", h.login)
	g.POST("/identity/logout", h.logout, auth)
	g.POST("/identity/refresh-token", h.refreshToken, auth)
	g.PUT("/identity/reset-password", h.resetPassword, auth)

	g.GET("/user/profile", h.profile, auth)
	g.PUT("/user/profile", h.updateProfile, auth)
	g.GET("/user/workspaces", h.userWorkspaces, auth)
	g.GET("/organizations", h.listOrganizations, auth)
	g.GET("/workspaces", h.getWorkspace, auth)
	g.GET("/workspaces/is-key-used", h.isWorkspaceKeyUsed, auth)
	g.PUT("/workspaces", h.updateWorkspace, auth)
	g.PUT("/workspaces/sso-oidc", h.updateWorkspaceSSO, auth)

	g.GET("/access-tokens", h.listAccessTokens, auth)
	g.GET("/access-tokens/is-name-used", h.isAccessTokenNameUsed, auth)
	g.POST("/access-tokens", h.createAccessToken, auth)
	g.PUT("/access-tokens/:id", h.updateAccessToken, auth)
	g.PUT("/access-tokens/:id/toggle", h.toggleAccessToken, auth)
	g.DELETE("/access-tokens/:id", h.deleteAccessToken, auth)

	// IAM: policies, groups, members and organization settings.
	g.GET("/policies", h.listPolicies, auth)
	g.POST("/policies", h.createPolicy, auth)
	g.GET("/policies/is-key-used", h.isPolicyKeyUsed, auth)
	g.POST("/policies/clone/:key", h.clonePolicy, auth)
	g.GET("/policies/:policyId", h.getPolicy, auth)
	g.PUT("/policies/:policyId/settings", h.updatePolicySettings, auth)
	g.PUT("/policies/:policyId/statements", h.updatePolicyStatements, auth)
	g.DELETE("/policies/:policyId", h.deletePolicy, auth)
	g.GET("/policies/:policyId/members", h.listPolicyMembers, auth)
	g.GET("/policies/:policyId/groups", h.listPolicyGroups, auth)
	g.GET("/groups", h.listGroups, auth)
	g.POST("/groups", h.createGroup, auth)
	g.GET("/groups/is-name-used", h.isGroupNameUsed, auth)
	g.GET("/groups/:groupId", h.getGroup, auth)
	g.PUT("/groups/:groupId", h.updateGroup, auth)
	g.DELETE("/groups/:groupId", h.deleteGroup, auth)
	g.GET("/groups/:groupId/members", h.listGroupMembers, auth)
	g.PUT("/groups/:groupId/add-member/:memberId", h.addGroupMember, auth)
	g.PUT("/groups/:groupId/remove-member/:memberId", h.removeGroupMember, auth)
	g.GET("/groups/:groupId/policies", h.listGroupPolicies, auth)
	g.PUT("/groups/:groupId/add-policy/:policyId", h.addGroupPolicy, auth)
	g.PUT("/groups/:groupId/remove-policy/:policyId", h.removeGroupPolicy, auth)
	g.GET("/members", h.listMembers, auth)
	g.POST("/members/add", h.addMember, auth)
	g.GET("/members/:memberId", h.getMember, auth)
	g.DELETE("/members/remove-from-org/:memberId", h.removeMember, auth)
	g.DELETE("/members/remove-from-workspace/:memberId", h.removeFromWorkspace, auth)
	g.GET("/members/:memberId/policies", h.listMemberPolicies, auth)
	g.GET("/members/:memberId/groups", h.listMemberGroups, auth)
	g.GET("/members/:memberId/direct-policies", h.listMemberDirectPolicies, auth)
	g.GET("/members/:memberId/inherited-policies", h.listMemberInheritedPolicies, auth)
	g.PUT("/members/:memberId/add-policy/:policyId", h.addMemberPolicy, auth)
	g.PUT("/members/:memberId/remove-policy/:policyId", h.removeMemberPolicy, auth)
	g.PUT("/organizations", h.updateOrganization, auth)

	// Organizations of the workspace: several are an ordinary feature.
	g.GET("/organizations/is-key-used", h.isOrganizationKeyUsed, auth)
	g.GET("/organizations/:id", h.getOrganization, auth)
	g.POST("/organizations", h.createOrganization, auth)
	g.POST("/organizations/onboarding", h.onboardOrganization, auth)
	g.DELETE("/organizations", h.deleteOrganization, auth)

	// Resource names for the policy editor (v1) and segment scopes (v2).
	g.GET("/resources", h.listResources, auth)
	e.GET("/api/v2/resources", h.listResourcesV2, auth)
	g.GET("/user/policies", h.userPolicies, auth)
	g.GET("/iam/actions", h.iamActions, auth)

	g.GET("/projects", h.listProjects, auth)
	g.POST("/projects", h.createProject, auth)
	g.GET("/projects/is-key-used", h.isProjectKeyUsed, auth)
	g.GET("/projects/:id", h.getProject, auth)
	g.PUT("/projects/:id", h.renameProject, auth)
	g.DELETE("/projects/:id", h.deleteProject, auth)

	g.POST("/projects/:projectId/envs", h.createEnvironment, auth)
	g.GET("/projects/:projectId/envs/is-key-used", h.isEnvironmentKeyUsed, auth)
	g.GET("/projects/:projectId/envs/:id", h.getEnvironment, auth)
	g.PUT("/projects/:projectId/envs/:id", h.updateEnvironment, auth)
	g.DELETE("/projects/:projectId/envs/:id", h.deleteEnvironment, auth)

	g.POST("/envs/:envId/secrets", h.createSecret, auth)
	g.PUT("/envs/:envId/secrets/:id", h.updateSecret, auth)
	g.DELETE("/envs/:envId/secrets/:id", h.deleteSecret, auth)

	g.GET("/envs/:envId/feature-flags", h.listFlags, auth)
	g.POST("/envs/:envId/feature-flags", h.createFlag, auth)
	g.GET("/envs/:envId/feature-flags/all-tags", h.flagTags, auth)
	g.GET("/envs/:envId/feature-flags/is-key-used", h.flagKeyUsed, auth)
	g.GET("/envs/:envId/feature-flags/insights", h.flagStatsByVariation, auth)
	g.POST("/envs/:envId/feature-flags/clone/:key", h.cloneFlag, auth)
	g.GET("/envs/:envId/feature-flags/:key", h.getFlag, auth)
	g.PATCH("/envs/:envId/feature-flags/:key", h.patchFlag, auth)
	g.DELETE("/envs/:envId/feature-flags/:key", h.deleteFlag, auth)
	g.PUT("/envs/:envId/feature-flags/:key/description", h.updateFlagDescription, auth)
	g.PUT("/envs/:envId/feature-flags/:key/toggle/:status", h.toggleFlag, auth)
	g.PUT("/envs/:envId/feature-flags/:key/archive", h.archiveFlag, auth)
	g.PUT("/envs/:envId/feature-flags/:key/restore", h.restoreFlag, auth)
	g.PUT("/envs/:envId/feature-flags/:key/name", h.renameFlag, auth)
	g.PUT("/envs/:envId/feature-flags/:key/tags", h.setFlagTags, auth)
	g.PUT("/envs/:envId/feature-flags/:key/variations", h.setFlagVariations, auth)
	g.PUT("/envs/:envId/feature-flags/:key/off-variation", h.setFlagOffVariation, auth)
	g.PUT("/envs/:envId/feature-flags/:key/targeting", h.setFlagTargeting, auth)
	g.GET("/envs/:envId/feature-flags/:key/revisions", h.flagRevisions, auth)
	g.GET("/envs/:envId/feature-flags/:key/pending-changes", h.flagPendingChanges, auth)
	g.POST("/envs/:envId/feature-flags/:key/evaluate", h.evaluateFlag, auth)
	g.GET("/envs/:envId/feature-flags/:key/insights", h.flagInsights, auth)
	g.GET("/envs/:envId/flag-insights", h.staleFlags, auth)

	g.GET("/envs/:envId/segments", h.listSegments, auth)
	g.POST("/envs/:envId/segments", h.createSegment, auth)
	g.GET("/envs/:envId/segments/by-ids", h.segmentsByIDs, auth)
	g.GET("/envs/:envId/segments/all-tags", h.segmentTags, auth)
	g.GET("/envs/:envId/segments/is-key-used", h.segmentKeyUsed, auth)
	g.GET("/envs/:envId/segments/:segmentId", h.getSegment, auth)
	g.PATCH("/envs/:envId/segments/:segmentId", h.patchSegment, auth)
	g.DELETE("/envs/:envId/segments/:segmentId", h.deleteSegment, auth)
	g.PUT("/envs/:envId/segments/:segmentId/archive", h.archiveSegment, auth)
	g.PUT("/envs/:envId/segments/:segmentId/restore", h.restoreSegment, auth)
	g.PUT("/envs/:envId/segments/:segmentId/name", h.renameSegment, auth)
	g.PUT("/envs/:envId/segments/:segmentId/description", h.setSegmentDescription, auth)
	g.PUT("/envs/:envId/segments/:segmentId/tags", h.setSegmentTags, auth)
	g.PUT("/envs/:envId/segments/:segmentId/targeting", h.setSegmentTargeting, auth)
	g.GET("/envs/:envId/segments/:segmentId/flag-references", h.segmentFlagReferences, auth)

	g.GET("/envs/:envId/audit-logs", h.listAuditLogs, auth)
}

const actorKey = "actor"

// authenticate resolves the request's credentials to an Actor.
func (h *Handler) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		a, err := h.store.Authenticate(r.Context(), store.Credentials{
			Authorization: r.Header.Get(echo.HeaderAuthorization),
			Organization:  r.Header.Get("Organization"),
			Workspace:     r.Header.Get("Workspace"),
			Address:       c.RealIP(),
		})
		if err != nil {
			return err
		}
		c.Set(actorKey, a)
		return next(c)
	}
}

// actor is the caller, set by authenticate.
func actor(c echo.Context) *store.Actor { return c.Get(actorKey).(*store.Actor) }
