// Package api serves the JSON management API under /api/v1: it decodes
// requests, calls the store, and encodes answers in the envelope. The server
// (cmd/internal/server) mounts it with Register beside the SDK endpoints and
// the pages, and answers every failure under /api/ with WriteError.
package api

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/web/actorcache"
	"github.com/bunting-flags/bunting/web/httpx"
	"github.com/bunting-flags/bunting/web/limit"
	"github.com/bunting-flags/bunting/web/oidcflow"
	"github.com/bunting-flags/bunting/web/sdk"
	"github.com/bunting-flags/bunting/web/webhook"
)

// Handler serves the JSON API.
type Handler struct {
	store    *store.Store
	log      *slog.Logger
	limits   *limit.Edge
	webhooks *webhook.Sender
	// actors keeps the actors credentials resolved to, while access holds.
	actors *actorcache.Cache
	// sso calls OIDC providers for single sign-on from FeatBit's UI.
	sso *oidcflow.Client
	// relays syncs relay proxies' manual agents and knows the agent quota.
	relays *sdk.Server
}

// Shared is what the API shares with the pages in one process; a nil field
// gets one of its own.
type Shared struct {
	// Limits are the rate limits of token minting and trigger calls.
	Limits *limit.Edge
	// Actors keeps the actors credentials resolved to, while access holds.
	// It needs the store's change listener (feed.Listener) running; without
	// it every request asks the database.
	Actors *actorcache.Cache
	// SDK is the process's SDK server, which builds what relays are sent.
	SDK *sdk.Server
}

// New returns the API handler over s.
func New(s *store.Store, log *slog.Logger, shared Shared) *Handler {
	if shared.Limits == nil {
		shared.Limits = limit.NewEdge()
	}
	if shared.Actors == nil {
		shared.Actors = actorcache.New(s)
	}
	if shared.SDK == nil {
		shared.SDK = sdk.New(s, log, sdk.Options{})
	}
	return &Handler{store: s, log: log, limits: shared.Limits, webhooks: webhook.NewSender(s), actors: shared.Actors,
		sso: oidcflow.New(s.Projects().AllowPrivateNetworks()), relays: shared.SDK}
}

// Register adds every /api/v1 route, and FeatBit's one /api/v2 route, to e.
// Every route but sign-in (with FeatBit's sign-in page's and the refresh
// cookie's), the OpenAPI document and a trigger's run URL requires credentials, given to the group; the store checks each
// operation's permission. Where a route needs a permission whatever its
// body says, its group checks it first (with the store's check), so a
// caller without it is refused before the body is read. Every
// route here is described in openapi.yaml, and the tests fail when the two
// differ (README.md beside this file, "Changing the API").
func (h *Handler) Register(e *echo.Echo) {
	public := e.Group("/api/v1")
	// The document describing every route here (openapi.yaml), and sign-in.
	public.GET("/openapi.json", h.openAPI)
	public.POST("/identity/login-by-email", h.login)
	// FeatBit's UI: a new session token from the refresh-token cookie (or,
	// without one, in place of the bearer token, which it then requires).
	public.POST("/identity/refresh-token", h.refreshToken)
	// FeatBit's sign-in page: whether to offer SSO, its social providers,
	// and single sign-on through the workspace's OIDC provider.
	public.GET("/sso/pre-check", h.ssoPreCheck)
	public.GET("/sso/oidc-authorize-url", h.oidcAuthorizeURL)
	public.POST("/sso/oidc/login", h.oidcLogin)
	public.GET("/social/providers", h.socialProviders)
	// A flag trigger's URL: its token is the credential (alerting systems call it).
	public.POST("/triggers/run/:token", h.runTrigger)

	// Every other route needs credentials.
	g := httpx.Guarded(public, h.authenticate)
	g.POST("/identity/logout", h.logout)
	g.PUT("/identity/reset-password", h.resetPassword)

	g.GET("/user/profile", h.profile)
	g.PUT("/user/profile", h.updateProfile)
	g.GET("/user/workspaces", h.userWorkspaces)
	g.POST("/user/join-organization", h.joinOrganization)
	g.GET("/organizations", h.listOrganizations)
	g.GET("/workspaces", h.getWorkspace)
	g.GET("/workspaces/is-key-used", h.isWorkspaceKeyUsed)
	g.GET("/workspaces/usages", h.workspaceUsages)
	g.PUT("/workspaces", h.updateWorkspace)
	g.PUT("/workspaces/sso-oidc", h.updateWorkspaceSSO)
	g.GET("/workspaces/license-quota", h.licenseQuota)

	g.GET("/access-tokens", h.listAccessTokens)
	g.GET("/access-tokens/is-name-used", h.isAccessTokenNameUsed)
	g.POST("/access-tokens", h.createAccessToken)
	g.PUT("/access-tokens/:id", h.updateAccessToken)
	g.PUT("/access-tokens/:id/toggle", h.toggleAccessToken)
	g.DELETE("/access-tokens/:id", h.deleteAccessToken)

	// Webhooks: FeatBit's WebhookController.
	g.GET("/webhooks", h.listWebhooks)
	g.GET("/webhooks/is-name-used", h.isWebhookNameUsed)
	g.POST("/webhooks", h.createWebhook)
	g.POST("/webhooks/send", h.sendWebhook)
	g.GET("/webhooks/:id", h.getWebhook)
	g.PUT("/webhooks/:id", h.updateWebhook)
	g.DELETE("/webhooks/:id", h.deleteWebhook)
	g.GET("/webhooks/:id/deliveries", h.listWebhookDeliveries)

	// Relay proxies: FeatBit's RelayProxyController (relay_proxies.go).
	// Every change needs ManageRelayProxies, checked before a body is read.
	relays := g.With(httpx.Before(h.managesRelayProxies))
	g.GET("/relay-proxies", h.listRelayProxies)
	g.GET("/relay-proxies/is-name-used", h.isRelayProxyNameUsed)
	g.GET("/relay-proxies/agent-availability", h.relayAgentAvailability)
	relays.POST("/relay-proxies", h.createRelayProxy)
	relays.PUT("/relay-proxies/:id", h.updateRelayProxy)
	relays.DELETE("/relay-proxies/:id", h.deleteRelayProxy)
	relays.PUT("/relay-proxies/:rpId/agents/:agentId/sync", h.syncRelayAgent)

	// IAM: policies, groups, members and organization settings. Every
	// policy, group and member route needs CanManageIAM, checked before a
	// body is read.
	iam := g.With(httpx.Before(h.managesIAM))
	iam.GET("/policies", h.listPolicies)
	iam.POST("/policies", h.createPolicy)
	iam.GET("/policies/is-key-used", h.isPolicyKeyUsed)
	iam.POST("/policies/clone/:key", h.clonePolicy)
	iam.GET("/policies/:policyId", h.getPolicy)
	iam.PUT("/policies/:policyId/settings", h.updatePolicySettings)
	iam.PUT("/policies/:policyId/statements", h.updatePolicyStatements)
	iam.DELETE("/policies/:policyId", h.deletePolicy)
	iam.GET("/policies/:policyId/members", h.listPolicyMembers)
	iam.GET("/policies/:policyId/groups", h.listPolicyGroups)
	iam.GET("/groups", h.listGroups)
	iam.POST("/groups", h.createGroup)
	iam.GET("/groups/is-name-used", h.isGroupNameUsed)
	iam.GET("/groups/:groupId", h.getGroup)
	iam.PUT("/groups/:groupId", h.updateGroup)
	iam.DELETE("/groups/:groupId", h.deleteGroup)
	iam.GET("/groups/:groupId/members", h.listGroupMembers)
	iam.PUT("/groups/:groupId/add-member/:memberId", h.addGroupMember)
	iam.PUT("/groups/:groupId/remove-member/:memberId", h.removeGroupMember)
	iam.GET("/groups/:groupId/policies", h.listGroupPolicies)
	iam.PUT("/groups/:groupId/add-policy/:policyId", h.addGroupPolicy)
	iam.PUT("/groups/:groupId/remove-policy/:policyId", h.removeGroupPolicy)
	iam.GET("/members", h.listMembers)
	iam.POST("/members/add", h.addMember)
	iam.GET("/members/:memberId", h.getMember)
	iam.DELETE("/members/remove-from-org/:memberId", h.removeMember)
	iam.DELETE("/members/remove-from-workspace/:memberId", h.removeFromWorkspace)
	iam.GET("/members/:memberId/policies", h.listMemberPolicies)
	iam.GET("/members/:memberId/groups", h.listMemberGroups)
	iam.GET("/members/:memberId/direct-policies", h.listMemberDirectPolicies)
	iam.GET("/members/:memberId/inherited-policies", h.listMemberInheritedPolicies)
	iam.PUT("/members/:memberId/add-policy/:policyId", h.addMemberPolicy)
	iam.PUT("/members/:memberId/remove-policy/:policyId", h.removeMemberPolicy)
	g.PUT("/organizations", h.updateOrganization)

	// Organizations of the workspace: several are an ordinary feature.
	g.GET("/organizations/is-key-used", h.isOrganizationKeyUsed)
	g.GET("/organizations/members", h.listOrganizationMembers)
	g.GET("/organizations/:id", h.getOrganization)
	g.POST("/organizations", h.createOrganization)
	g.POST("/organizations/onboarding", h.onboardOrganization)
	g.DELETE("/organizations", h.deleteOrganization)

	// Resource names for the policy editor (v1) and segment scopes (v2).
	g.GET("/resources", h.listResources)
	httpx.Guarded(e.Group("/api/v2"), h.authenticate).GET("/resources", h.listResourcesV2)
	g.GET("/user/policies", h.userPolicies)
	g.GET("/iam/actions", h.iamActions)

	g.GET("/projects", h.listProjects)
	g.POST("/projects", h.createProject)
	g.GET("/projects/is-key-used", h.isProjectKeyUsed)
	g.GET("/projects/:id", h.getProject)
	g.PUT("/projects/:id", h.renameProject)
	g.DELETE("/projects/:id", h.deleteProject)

	g.POST("/projects/:projectId/envs", h.createEnvironment)
	g.GET("/projects/:projectId/envs/is-key-used", h.isEnvironmentKeyUsed)
	g.GET("/projects/:projectId/envs/:id", h.getEnvironment)
	g.PUT("/projects/:projectId/envs/:id", h.updateEnvironment)
	g.DELETE("/projects/:projectId/envs/:id", h.deleteEnvironment)

	g.POST("/envs/:envId/secrets", h.createSecret)
	g.PUT("/envs/:envId/secrets/:id", h.updateSecret)
	g.DELETE("/envs/:envId/secrets/:id", h.deleteSecret)

	// Routes that read an environment's end users, or change them, check
	// so before reading a body; so do flag and segment creation.
	userReaders := g.With(httpx.Before(h.readsEndUsers))
	userWriters := g.With(httpx.Before(h.changesEndUsers))

	g.GET("/envs/:envId/feature-flags", h.listFlags)
	g.With(httpx.Before(h.createsFlags)).POST("/envs/:envId/feature-flags", h.createFlag)
	g.GET("/envs/:envId/feature-flags/all-tags", h.flagTags)
	g.GET("/envs/:envId/feature-flags/is-key-used", h.flagKeyUsed)
	g.GET("/envs/:envId/feature-flags/insights", h.flagStatsByVariation)
	g.POST("/envs/:envId/feature-flags/clone/:key", h.cloneFlag)
	g.POST("/envs/:envId/feature-flags/compare-overview", h.compareOverview)
	g.POST("/envs/:envId/feature-flags/copy-to-env-precheck/:targetEnvId", h.copyToEnvPrecheck)
	g.POST("/envs/:envId/feature-flags/copy-to-env/:targetEnvId", h.copyToEnv)
	g.GET("/envs/:envId/feature-flags/:key/compare-with/:targetEnvId", h.compareFlag)
	g.PUT("/envs/:envId/feature-flags/:key/copy-settings-to/:targetEnvId", h.copyFlagSettings)
	g.GET("/envs/:envId/feature-flags/:key", h.getFlag)
	g.PATCH("/envs/:envId/feature-flags/:key", h.patchFlag)
	g.DELETE("/envs/:envId/feature-flags/:key", h.deleteFlag)
	g.PUT("/envs/:envId/feature-flags/:key/description", h.updateFlagDescription)
	g.PUT("/envs/:envId/feature-flags/:key/toggle/:status", h.toggleFlag)
	g.PUT("/envs/:envId/feature-flags/:key/archive", h.archiveFlag)
	g.PUT("/envs/:envId/feature-flags/:key/restore", h.restoreFlag)
	g.PUT("/envs/:envId/feature-flags/:key/name", h.renameFlag)
	g.PUT("/envs/:envId/feature-flags/:key/tags", h.setFlagTags)
	g.PUT("/envs/:envId/feature-flags/:key/variations", h.setFlagVariations)
	g.PUT("/envs/:envId/feature-flags/:key/off-variation", h.setFlagOffVariation)
	g.PUT("/envs/:envId/feature-flags/:key/targeting", h.setFlagTargeting)
	g.GET("/envs/:envId/feature-flags/:key/revisions", h.flagRevisions)
	g.GET("/envs/:envId/feature-flags/:key/pending-changes", h.flagPendingChanges)
	g.POST("/envs/:envId/feature-flags/:key/schedules", h.createFlagSchedule)
	g.DELETE("/envs/:envId/feature-flags/schedules/:id", h.deleteFlagSchedule)
	g.POST("/envs/:envId/feature-flags/:key/change-requests", h.createFlagChangeRequest)
	g.PUT("/envs/:envId/feature-flags/change-requests/:id/approve", h.approveFlagChangeRequest)
	g.PUT("/envs/:envId/feature-flags/change-requests/:id/decline", h.declineFlagChangeRequest)
	g.PUT("/envs/:envId/feature-flags/change-requests/:id/apply", h.applyFlagChangeRequest)
	g.DELETE("/envs/:envId/feature-flags/change-requests/:id", h.deleteFlagChangeRequest)
	userReaders.POST("/envs/:envId/feature-flags/:key/evaluate", h.evaluateFlag)
	g.GET("/envs/:envId/feature-flags/:key/insights", h.flagInsights)
	g.GET("/envs/:envId/flag-insights", h.staleFlags)

	g.GET("/envs/:envId/segments", h.listSegments)
	g.With(httpx.Before(h.createsSegments)).POST("/envs/:envId/segments", h.createSegment)
	g.GET("/envs/:envId/segments/by-ids", h.segmentsByIDs)
	g.GET("/envs/:envId/segments/all-tags", h.segmentTags)
	g.GET("/envs/:envId/segments/is-key-used", h.segmentKeyUsed)
	g.GET("/envs/:envId/segments/:segmentId", h.getSegment)
	g.PATCH("/envs/:envId/segments/:segmentId", h.patchSegment)
	g.DELETE("/envs/:envId/segments/:segmentId", h.deleteSegment)
	g.PUT("/envs/:envId/segments/:segmentId/archive", h.archiveSegment)
	g.PUT("/envs/:envId/segments/:segmentId/restore", h.restoreSegment)
	g.PUT("/envs/:envId/segments/:segmentId/name", h.renameSegment)
	g.PUT("/envs/:envId/segments/:segmentId/description", h.setSegmentDescription)
	g.PUT("/envs/:envId/segments/:segmentId/tags", h.setSegmentTags)
	g.PUT("/envs/:envId/segments/:segmentId/targeting", h.setSegmentTargeting)
	g.GET("/envs/:envId/segments/:segmentId/flag-references", h.segmentFlagReferences)

	// Flags as code: export and import (flags_as_code.go).
	g.GET("/envs/:envId/export", h.exportEnv)
	g.GET("/projects/:projectId/export", h.exportProject)
	g.With(httpx.Before(h.importsFlags)).POST("/envs/:envId/import", h.importEnv)

	// Code references (code_refs.go): bunting coderefs uploads them.
	g.With(httpx.Before(h.uploadsCodeRefs)).PUT("/envs/:envId/code-references", h.uploadCodeRefs)
	g.GET("/envs/:envId/feature-flags/:key/code-references", h.flagCodeRefs)

	g.GET("/envs/:envId/audit-logs", h.listAuditLogs)
	g.With(httpx.Before(h.comparesChanges)).POST("/envs/:envId/audit-logs/compare", h.compareChange)

	g.GET("/envs/:envId/end-users/get-by-featureflag", h.flagEndUsers)
	g.GET("/envs/:envId/end-users/:id", h.getEndUser)
	userReaders.POST("/envs/:envId/end-users/search", h.searchEndUsers)
	userReaders.POST("/envs/:envId/end-users/list", h.listEndUsers)
	userWriters.PUT("/envs/:envId/end-users", h.upsertEndUser)
	userReaders.POST("/envs/:envId/end-users/by-keyIds", h.endUsersByKeys)
	userWriters.POST("/envs/:envId/end-users/upload", h.uploadEndUsers)
	userReaders.POST("/envs/:envId/end-users/download", h.downloadEndUsers)
	g.GET("/envs/:envId/end-users/:id/flags", h.endUserFlags)
	g.GET("/envs/:envId/end-users/:id/segments", h.endUserSegments)
	g.GET("/envs/:envId/end-user-properties", h.listEndUserProperties)
	userWriters.PUT("/envs/:envId/end-user-properties/:propertyId/upsert", h.upsertEndUserProperty)
	userWriters.DELETE("/envs/:envId/end-user-properties/:id", h.deleteEndUserProperty)

	// Flag triggers (FeatBit's TriggerController); the run route is public, above.
	g.GET("/triggers", h.listTriggers)
	g.POST("/triggers", h.createTrigger)
	g.PUT("/triggers/:id", h.updateTrigger)
	g.PUT("/triggers/:id/reset-token", h.resetTriggerToken)
	g.DELETE("/triggers/:id", h.deleteTrigger)
}

const actorKey = "actor"

// authenticate resolves the request's credentials to an Actor.
func (h *Handler) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		a, err := h.actors.Authenticate(r.Context(), iam.Credentials{
			Authorization: r.Header.Get(echo.HeaderAuthorization),
			Organization:  r.Header.Get("Organization"),
			Workspace:     r.Header.Get("Workspace"),
			Address:       c.RealIP(),
		})
		if err != nil {
			return err
		}
		c.Set(actorKey, a)
		httpx.SetPrincipal(c, httpx.Member, principalKey(a), a.OrgID)
		return next(c)
	}
}

// principalKey names who the body budget charges a request to: the access
// token that authenticated it, or the signed-in user.
func principalKey(a *core.Actor) string {
	if a.TokenID != uuid.Nil {
		return "token:" + a.TokenID.String()
	}
	return "user:" + a.UserID.String()
}

// actor is the caller, set by authenticate.
func actor(c echo.Context) *core.Actor { return c.Get(actorKey).(*core.Actor) }

// The checks before: each asks the store for what the route's operation
// requires whatever its body says.

func (h *Handler) managesIAM(c echo.Context) error { return h.store.IAM().AuthorizeIAM(actor(c)) }

func (h *Handler) readsEndUsers(c echo.Context) error {
	return h.inEnv(c, h.store.SDK().AuthorizeEndUserReads)
}

func (h *Handler) changesEndUsers(c echo.Context) error {
	return h.inEnv(c, h.store.SDK().AuthorizeEndUserChanges)
}

func (h *Handler) createsFlags(c echo.Context) error {
	return h.inEnv(c, h.store.Flags().AuthorizeFlagCreation)
}

func (h *Handler) createsSegments(c echo.Context) error {
	return h.inEnv(c, h.store.Flags().AuthorizeSegmentCreation)
}

// inEnv runs a check on the environment the path names, and keeps that
// environment for the route's operation (core.RememberEnvironment).
func (h *Handler) inEnv(c echo.Context, check func(context.Context, *core.Actor, uuid.UUID) error) error {
	envID, err := httpx.PathID(c, "envId")
	if err != nil {
		return err
	}
	r := c.Request()
	ctx := core.RememberEnvironment(r.Context())
	c.SetRequest(r.WithContext(ctx))
	return check(ctx, actor(c), envID)
}
