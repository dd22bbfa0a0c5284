// Package api serves the JSON management API under /api/v1: it decodes
// requests, calls the store, and encodes answers in the envelope. The server
// (cmd/internal/server) mounts it with Register beside the SDK endpoints and
// the pages, and answers every failure under /api/ with WriteError.
package api

import (
	"context"
	"log/slog"
	"net/http"

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
// body says, its row of the table names it and it is checked first (with
// the store's check), so a caller without it is refused before the body is
// read. Every
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

	// Every other route needs credentials, then, where it has one, the right
	// it needs whatever its body says, checked with the store's own check
	// before the body is read (the operation checks it again). anyMember is
	// none: the store checks each operation on what it is asked.
	g := httpx.Guarded(public, h.authenticate)
	var (
		anyMember       func(echo.Context) error
		managesRelays   = actorRight(h.store.RelayProxies().AuthorizeManage)
		managesIAM      = actorRight(h.store.IAM().AuthorizeIAM)
		readsEndUsers   = h.envRight(h.store.SDK().AuthorizeEndUserReads)
		changesEndUsers = h.envRight(h.store.SDK().AuthorizeEndUserChanges)
		createsFlags    = h.envRight(h.store.Flags().AuthorizeFlagCreation)
		createsSegments = h.envRight(h.store.Flags().AuthorizeSegmentCreation)
		// An experiment's change needs the right to change some flag's
		// targeting in the environment; each operation then checks the
		// experiment's own flag.
		changesExperiments = h.envRight(h.store.Experiments().AuthorizeExperimentChange)
		readsExperiments   = h.envRight(h.store.Experiments().AuthorizeExperimentRead)
		changesMetrics     = h.envRight(h.store.Experiments().AuthorizeMetricChange)
		// An import needs the right to read the environment it names; the
		// store checks each change.
		importsFlags = h.envRight(h.store.FlagsAsCode().AuthorizeImport)
		// An upload of code references (up to 4 MiB) needs the right to
		// describe every flag of the environment.
		uploadsCodeRefs = h.envRight(h.store.Flags().AuthorizeCodeRefs)
		// Comparing changes needs nothing more than reading the environment.
		comparesChanges = h.envRight(h.store.Flags().AuthorizeAuditCompare)
	)
	for _, r := range []apiRoute{
		{http.MethodPost, "/identity/logout", anyMember, h.logout},
		{http.MethodPut, "/identity/reset-password", anyMember, h.resetPassword},

		{http.MethodGet, "/user/profile", anyMember, h.profile},
		{http.MethodPut, "/user/profile", anyMember, h.updateProfile},
		{http.MethodGet, "/user/workspaces", anyMember, h.userWorkspaces},
		{http.MethodPost, "/user/join-organization", anyMember, h.joinOrganization},
		{http.MethodGet, "/organizations", anyMember, h.listOrganizations},
		{http.MethodGet, "/workspaces", anyMember, h.getWorkspace},
		{http.MethodGet, "/workspaces/is-key-used", anyMember, h.isWorkspaceKeyUsed},
		{http.MethodGet, "/workspaces/usages", anyMember, h.workspaceUsages},
		{http.MethodPut, "/workspaces", anyMember, h.updateWorkspace},
		{http.MethodPut, "/workspaces/sso-oidc", anyMember, h.updateWorkspaceSSO},
		{http.MethodGet, "/workspaces/license-quota", anyMember, h.licenseQuota},

		{http.MethodGet, "/access-tokens", anyMember, h.listAccessTokens},
		{http.MethodGet, "/access-tokens/is-name-used", anyMember, h.isAccessTokenNameUsed},
		{http.MethodPost, "/access-tokens", anyMember, h.createAccessToken},
		{http.MethodPut, "/access-tokens/:id", anyMember, h.updateAccessToken},
		{http.MethodPut, "/access-tokens/:id/toggle", anyMember, h.toggleAccessToken},
		{http.MethodDelete, "/access-tokens/:id", anyMember, h.deleteAccessToken},

		// Webhooks: FeatBit's WebhookController.
		{http.MethodGet, "/webhooks", anyMember, h.listWebhooks},
		{http.MethodGet, "/webhooks/is-name-used", anyMember, h.isWebhookNameUsed},
		{http.MethodPost, "/webhooks", anyMember, h.createWebhook},
		{http.MethodPost, "/webhooks/send", anyMember, h.sendWebhook},
		{http.MethodGet, "/webhooks/:id", anyMember, h.getWebhook},
		{http.MethodPut, "/webhooks/:id", anyMember, h.updateWebhook},
		{http.MethodDelete, "/webhooks/:id", anyMember, h.deleteWebhook},
		{http.MethodGet, "/webhooks/:id/deliveries", anyMember, h.listWebhookDeliveries},

		// Relay proxies: FeatBit's RelayProxyController (relay_proxies.go).
		// Every change needs ManageRelayProxies, checked before a body is read.
		{http.MethodGet, "/relay-proxies", anyMember, h.listRelayProxies},
		{http.MethodGet, "/relay-proxies/is-name-used", anyMember, h.isRelayProxyNameUsed},
		{http.MethodGet, "/relay-proxies/agent-availability", anyMember, h.relayAgentAvailability},
		{http.MethodPost, "/relay-proxies", managesRelays, h.createRelayProxy},
		{http.MethodPut, "/relay-proxies/:id", managesRelays, h.updateRelayProxy},
		{http.MethodDelete, "/relay-proxies/:id", managesRelays, h.deleteRelayProxy},
		{http.MethodPut, "/relay-proxies/:rpId/agents/:agentId/sync", managesRelays, h.syncRelayAgent},

		// IAM: policies, groups, members and organization settings. Every
		// policy, group and member route needs CanManageIAM, checked before a
		// body is read.
		{http.MethodGet, "/policies", managesIAM, h.listPolicies},
		{http.MethodPost, "/policies", managesIAM, h.createPolicy},
		{http.MethodGet, "/policies/is-key-used", managesIAM, h.isPolicyKeyUsed},
		{http.MethodPost, "/policies/clone/:key", managesIAM, h.clonePolicy},
		{http.MethodGet, "/policies/:policyId", managesIAM, h.getPolicy},
		{http.MethodPut, "/policies/:policyId/settings", managesIAM, h.updatePolicySettings},
		{http.MethodPut, "/policies/:policyId/statements", managesIAM, h.updatePolicyStatements},
		{http.MethodDelete, "/policies/:policyId", managesIAM, h.deletePolicy},
		{http.MethodGet, "/policies/:policyId/members", managesIAM, h.listPolicyMembers},
		{http.MethodGet, "/policies/:policyId/groups", managesIAM, h.listPolicyGroups},
		{http.MethodGet, "/groups", managesIAM, h.listGroups},
		{http.MethodPost, "/groups", managesIAM, h.createGroup},
		{http.MethodGet, "/groups/is-name-used", managesIAM, h.isGroupNameUsed},
		{http.MethodGet, "/groups/:groupId", managesIAM, h.getGroup},
		{http.MethodPut, "/groups/:groupId", managesIAM, h.updateGroup},
		{http.MethodDelete, "/groups/:groupId", managesIAM, h.deleteGroup},
		{http.MethodGet, "/groups/:groupId/members", managesIAM, h.listGroupMembers},
		{http.MethodPut, "/groups/:groupId/add-member/:memberId", managesIAM, h.addGroupMember},
		{http.MethodPut, "/groups/:groupId/remove-member/:memberId", managesIAM, h.removeGroupMember},
		{http.MethodGet, "/groups/:groupId/policies", managesIAM, h.listGroupPolicies},
		{http.MethodPut, "/groups/:groupId/add-policy/:policyId", managesIAM, h.addGroupPolicy},
		{http.MethodPut, "/groups/:groupId/remove-policy/:policyId", managesIAM, h.removeGroupPolicy},
		{http.MethodGet, "/members", managesIAM, h.listMembers},
		{http.MethodPost, "/members/add", managesIAM, h.addMember},
		{http.MethodGet, "/members/:memberId", managesIAM, h.getMember},
		{http.MethodDelete, "/members/remove-from-org/:memberId", managesIAM, h.removeMember},
		{http.MethodDelete, "/members/remove-from-workspace/:memberId", managesIAM, h.removeFromWorkspace},
		{http.MethodGet, "/members/:memberId/policies", managesIAM, h.listMemberPolicies},
		{http.MethodGet, "/members/:memberId/groups", managesIAM, h.listMemberGroups},
		{http.MethodGet, "/members/:memberId/direct-policies", managesIAM, h.listMemberDirectPolicies},
		{http.MethodGet, "/members/:memberId/inherited-policies", managesIAM, h.listMemberInheritedPolicies},
		{http.MethodPut, "/members/:memberId/add-policy/:policyId", managesIAM, h.addMemberPolicy},
		{http.MethodPut, "/members/:memberId/remove-policy/:policyId", managesIAM, h.removeMemberPolicy},
		{http.MethodPut, "/organizations", anyMember, h.updateOrganization},

		// Organizations of the workspace: several are an ordinary feature.
		{http.MethodGet, "/organizations/is-key-used", anyMember, h.isOrganizationKeyUsed},
		{http.MethodGet, "/organizations/members", anyMember, h.listOrganizationMembers},
		{http.MethodGet, "/organizations/:id", anyMember, h.getOrganization},
		{http.MethodPost, "/organizations", anyMember, h.createOrganization},
		{http.MethodPost, "/organizations/onboarding", anyMember, h.onboardOrganization},
		{http.MethodDelete, "/organizations", anyMember, h.deleteOrganization},

		// Resource names for the policy editor (v1) and segment scopes (v2).
		{http.MethodGet, "/resources", anyMember, h.listResources},
		{http.MethodGet, "/user/policies", anyMember, h.userPolicies},
		{http.MethodGet, "/iam/actions", anyMember, h.iamActions},

		{http.MethodGet, "/projects", anyMember, h.listProjects},
		{http.MethodPost, "/projects", anyMember, h.createProject},
		{http.MethodGet, "/projects/is-key-used", anyMember, h.isProjectKeyUsed},
		{http.MethodGet, "/projects/:id", anyMember, h.getProject},
		{http.MethodPut, "/projects/:id", anyMember, h.renameProject},
		{http.MethodDelete, "/projects/:id", anyMember, h.deleteProject},

		{http.MethodPost, "/projects/:projectId/envs", anyMember, h.createEnvironment},
		{http.MethodGet, "/projects/:projectId/envs/is-key-used", anyMember, h.isEnvironmentKeyUsed},
		{http.MethodGet, "/projects/:projectId/envs/:id", anyMember, h.getEnvironment},
		{http.MethodPut, "/projects/:projectId/envs/:id", anyMember, h.updateEnvironment},
		{http.MethodDelete, "/projects/:projectId/envs/:id", anyMember, h.deleteEnvironment},

		{http.MethodPost, "/envs/:envId/secrets", anyMember, h.createSecret},
		{http.MethodPut, "/envs/:envId/secrets/:id", anyMember, h.updateSecret},
		{http.MethodDelete, "/envs/:envId/secrets/:id", anyMember, h.deleteSecret},

		// Routes that read an environment's end users, or change them, check
		// so before reading a body; so do flag and segment creation.

		{http.MethodGet, "/envs/:envId/feature-flags", anyMember, h.listFlags},
		{http.MethodPost, "/envs/:envId/feature-flags", createsFlags, h.createFlag},
		{http.MethodGet, "/envs/:envId/feature-flags/all-tags", anyMember, h.flagTags},
		{http.MethodGet, "/envs/:envId/feature-flags/is-key-used", anyMember, h.flagKeyUsed},
		{http.MethodGet, "/envs/:envId/feature-flags/insights", anyMember, h.flagStatsByVariation},
		{http.MethodPost, "/envs/:envId/feature-flags/clone/:key", anyMember, h.cloneFlag},
		{http.MethodPost, "/envs/:envId/feature-flags/compare-overview", anyMember, h.compareOverview},
		{http.MethodPost, "/envs/:envId/feature-flags/copy-to-env-precheck/:targetEnvId", anyMember, h.copyToEnvPrecheck},
		{http.MethodPost, "/envs/:envId/feature-flags/copy-to-env/:targetEnvId", anyMember, h.copyToEnv},
		{http.MethodGet, "/envs/:envId/feature-flags/:key/compare-with/:targetEnvId", anyMember, h.compareFlag},
		{http.MethodPut, "/envs/:envId/feature-flags/:key/copy-settings-to/:targetEnvId", anyMember, h.copyFlagSettings},
		{http.MethodGet, "/envs/:envId/feature-flags/:key", anyMember, h.getFlag},
		{http.MethodPatch, "/envs/:envId/feature-flags/:key", anyMember, h.patchFlag},
		{http.MethodDelete, "/envs/:envId/feature-flags/:key", anyMember, h.deleteFlag},
		{http.MethodPut, "/envs/:envId/feature-flags/:key/description", anyMember, h.updateFlagDescription},
		{http.MethodPut, "/envs/:envId/feature-flags/:key/toggle/:status", anyMember, h.toggleFlag},
		{http.MethodPut, "/envs/:envId/feature-flags/:key/archive", anyMember, h.archiveFlag},
		{http.MethodPut, "/envs/:envId/feature-flags/:key/restore", anyMember, h.restoreFlag},
		{http.MethodPut, "/envs/:envId/feature-flags/:key/name", anyMember, h.renameFlag},
		{http.MethodPut, "/envs/:envId/feature-flags/:key/tags", anyMember, h.setFlagTags},
		{http.MethodPut, "/envs/:envId/feature-flags/:key/variations", anyMember, h.setFlagVariations},
		{http.MethodPut, "/envs/:envId/feature-flags/:key/off-variation", anyMember, h.setFlagOffVariation},
		{http.MethodPut, "/envs/:envId/feature-flags/:key/targeting", anyMember, h.setFlagTargeting},
		{http.MethodGet, "/envs/:envId/feature-flags/:key/revisions", anyMember, h.flagRevisions},
		{http.MethodGet, "/envs/:envId/feature-flags/:key/pending-changes", anyMember, h.flagPendingChanges},
		{http.MethodPost, "/envs/:envId/feature-flags/:key/schedules", anyMember, h.createFlagSchedule},
		{http.MethodDelete, "/envs/:envId/feature-flags/schedules/:id", anyMember, h.deleteFlagSchedule},
		{http.MethodPost, "/envs/:envId/feature-flags/:key/change-requests", anyMember, h.createFlagChangeRequest},
		{http.MethodPut, "/envs/:envId/feature-flags/change-requests/:id/approve", anyMember, h.approveFlagChangeRequest},
		{http.MethodPut, "/envs/:envId/feature-flags/change-requests/:id/decline", anyMember, h.declineFlagChangeRequest},
		{http.MethodPut, "/envs/:envId/feature-flags/change-requests/:id/apply", anyMember, h.applyFlagChangeRequest},
		{http.MethodDelete, "/envs/:envId/feature-flags/change-requests/:id", anyMember, h.deleteFlagChangeRequest},
		{http.MethodPost, "/envs/:envId/feature-flags/:key/evaluate", readsEndUsers, h.evaluateFlag},
		{http.MethodGet, "/envs/:envId/feature-flags/:key/insights", anyMember, h.flagInsights},
		{http.MethodGet, "/envs/:envId/flag-insights", anyMember, h.staleFlags},

		{http.MethodGet, "/envs/:envId/segments", anyMember, h.listSegments},
		{http.MethodPost, "/envs/:envId/segments", createsSegments, h.createSegment},
		{http.MethodGet, "/envs/:envId/segments/by-ids", anyMember, h.segmentsByIDs},
		{http.MethodGet, "/envs/:envId/segments/all-tags", anyMember, h.segmentTags},
		{http.MethodGet, "/envs/:envId/segments/is-key-used", anyMember, h.segmentKeyUsed},
		{http.MethodGet, "/envs/:envId/segments/:segmentId", anyMember, h.getSegment},
		{http.MethodPatch, "/envs/:envId/segments/:segmentId", anyMember, h.patchSegment},
		{http.MethodDelete, "/envs/:envId/segments/:segmentId", anyMember, h.deleteSegment},
		{http.MethodPut, "/envs/:envId/segments/:segmentId/archive", anyMember, h.archiveSegment},
		{http.MethodPut, "/envs/:envId/segments/:segmentId/restore", anyMember, h.restoreSegment},
		{http.MethodPut, "/envs/:envId/segments/:segmentId/name", anyMember, h.renameSegment},
		{http.MethodPut, "/envs/:envId/segments/:segmentId/description", anyMember, h.setSegmentDescription},
		{http.MethodPut, "/envs/:envId/segments/:segmentId/tags", anyMember, h.setSegmentTags},
		{http.MethodPut, "/envs/:envId/segments/:segmentId/targeting", anyMember, h.setSegmentTargeting},
		{http.MethodGet, "/envs/:envId/segments/:segmentId/flag-references", anyMember, h.segmentFlagReferences},

		// Experiments and their metrics (experiments.go, experiment_metrics.go):
		// a change checks the caller may change some flag's targeting before
		// its body is read.
		{http.MethodGet, "/envs/:envId/experiment-metrics", anyMember, h.listMetrics},
		{http.MethodPost, "/envs/:envId/experiment-metrics", changesMetrics, h.createMetric},
		{http.MethodPut, "/envs/:envId/experiment-metrics/:id", changesMetrics, h.updateMetric},
		{http.MethodPut, "/envs/:envId/experiment-metrics/:id/archive", changesMetrics, h.archiveMetric},
		{http.MethodGet, "/envs/:envId/experiments", anyMember, h.listExperiments},
		{http.MethodPost, "/envs/:envId/experiments", changesExperiments, h.createExperiment},
		{http.MethodGet, "/envs/:envId/experiments/variation-experiment-references", anyMember, h.experimentReferences},
		{http.MethodGet, "/envs/:envId/experiments/status-count", anyMember, h.experimentStatusCounts},
		{http.MethodPut, "/envs/:envId/experiments/iteration-results", readsExperiments, h.iterationResults},
		{http.MethodPost, "/envs/:envId/experiments/:id", changesExperiments, h.startExperiment},
		{http.MethodPut, "/envs/:envId/experiments/:id", changesExperiments, h.stopExperiment},
		{http.MethodDelete, "/envs/:envId/experiments/:id/iterations", changesExperiments, h.archiveExperimentData},
		{http.MethodDelete, "/envs/:envId/experiments/:id", changesExperiments, h.archiveExperiment},
		{http.MethodGet, "/envs/:envId/experiments/:id/analysis", anyMember, h.analyzeExperiment},

		// Flags as code: export and import (flags_as_code.go).
		{http.MethodGet, "/envs/:envId/export", anyMember, h.exportEnv},
		{http.MethodGet, "/projects/:projectId/export", anyMember, h.exportProject},
		{http.MethodPost, "/envs/:envId/import", importsFlags, h.importEnv},

		// Code references (code_refs.go): bunting coderefs uploads them.
		{http.MethodPut, "/envs/:envId/code-references", uploadsCodeRefs, h.uploadCodeRefs},
		{http.MethodGet, "/envs/:envId/feature-flags/:key/code-references", anyMember, h.flagCodeRefs},

		{http.MethodGet, "/envs/:envId/audit-logs", anyMember, h.listAuditLogs},
		{http.MethodPost, "/envs/:envId/audit-logs/compare", comparesChanges, h.compareChange},

		{http.MethodGet, "/envs/:envId/end-users/get-by-featureflag", anyMember, h.flagEndUsers},
		{http.MethodGet, "/envs/:envId/end-users/:id", anyMember, h.getEndUser},
		{http.MethodPost, "/envs/:envId/end-users/search", readsEndUsers, h.searchEndUsers},
		{http.MethodPost, "/envs/:envId/end-users/list", readsEndUsers, h.listEndUsers},
		{http.MethodPut, "/envs/:envId/end-users", changesEndUsers, h.upsertEndUser},
		{http.MethodPost, "/envs/:envId/end-users/by-keyIds", readsEndUsers, h.endUsersByKeys},
		{http.MethodPost, "/envs/:envId/end-users/upload", changesEndUsers, h.uploadEndUsers},
		{http.MethodPost, "/envs/:envId/end-users/download", readsEndUsers, h.downloadEndUsers},
		{http.MethodGet, "/envs/:envId/end-users/:id/flags", anyMember, h.endUserFlags},
		{http.MethodGet, "/envs/:envId/end-users/:id/segments", anyMember, h.endUserSegments},
		{http.MethodGet, "/envs/:envId/end-user-properties", anyMember, h.listEndUserProperties},
		{http.MethodPut, "/envs/:envId/end-user-properties/:propertyId/upsert", changesEndUsers, h.upsertEndUserProperty},
		{http.MethodDelete, "/envs/:envId/end-user-properties/:id", changesEndUsers, h.deleteEndUserProperty},

		// Flag triggers (FeatBit's TriggerController); the run route is public, above.
		{http.MethodGet, "/triggers", anyMember, h.listTriggers},
		{http.MethodPost, "/triggers", anyMember, h.createTrigger},
		{http.MethodPut, "/triggers/:id", anyMember, h.updateTrigger},
		{http.MethodPut, "/triggers/:id/reset-token", anyMember, h.resetTriggerToken},
		{http.MethodDelete, "/triggers/:id", anyMember, h.deleteTrigger},
	} {
		routes := g
		if r.right != nil {
			routes = g.With(httpx.Before(r.right))
		}
		routes.Add(r.method, r.path, r.handler)
	}
	// Resource names for segment scopes, FeatBit's one /api/v2 route.
	httpx.Guarded(e.Group("/api/v2"), h.authenticate).GET("/resources", h.listResourcesV2)
}

// apiRoute is one route of the API: its method and path, the right it
// checks before its body is read, and its handler (whose name is the
// route's operationId in openapi.yaml).
type apiRoute struct {
	method, path string
	right        func(echo.Context) error
	handler      echo.HandlerFunc
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

// actorRight checks a right of the caller alone.
func actorRight(authorize func(*core.Actor) error) func(echo.Context) error {
	return func(c echo.Context) error { return authorize(actor(c)) }
}

// envRight checks a right in the environment the path names (inEnv).
func (h *Handler) envRight(authorize func(context.Context, *core.Actor, uuid.UUID) error) func(echo.Context) error {
	return func(c echo.Context) error { return h.inEnv(c, authorize) }
}

// inEnv runs a check on the environment the path names, and keeps that
// environment for the route's operation (core.RememberEnvironment).
func (h *Handler) inEnv(c echo.Context, check func(context.Context, *core.Actor, uuid.UUID) error) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	r := c.Request()
	ctx := core.RememberEnvironment(r.Context())
	c.SetRequest(r.WithContext(ctx))
	return check(ctx, actor(c), ids.Env)
}
