package main

import "strings"

// capture is a value a later request of the UI reuses: the session token,
// the ids of the workspace, organization, project, environment, flag,
// segment, member and change request.
type capture struct{ name, path string }

// captures are named by route (method and documented path); the token's
// and profile's name carry the member ("reviewer.token").
var captures = map[string][]capture{
	"POST /api/v1/identity/login-by-email": {{"token", "data.token"}},
	"GET /api/v1/user/profile":             {{"user.id", "data.id"}},
	"GET /api/v1/user/workspaces":          {{"workspace.id", "data.0.id"}},
	"GET /api/v1/organizations":            {{"org.id", "data.0.id"}},
	"GET /api/v1/projects": {{"project.id", "data.0.id"},
		{"env.id", "data.0.environments.0.id"}, {"env2.id", "data.0.environments.1.id"}},
	"POST /api/v1/envs/{envId}/feature-flags":                       {{"flag.id", "data.id"}, {"flag.revision", "data.revision"}},
	"GET /api/v1/envs/{envId}/feature-flags/{key}":                  {{"flag.revision", "data.revision"}},
	"POST /api/v1/envs/{envId}/segments":                            {{"segment.id", "data.id"}},
	"GET /api/v1/members/{memberId}":                                {{"member.initialPassword", "data.initialPassword"}},
	"POST /api/v1/envs/{envId}/feature-flags/{key}/change-requests": {{"changeRequest.id", "data.id"}},
	"POST /api/v1/relay-proxies":                                    {{"relayProxy.id", "data.id"}},
}

func capturesFor(e *exchange, as string) []capture {
	cs := captures[e.Method+" "+e.Route]
	if as == "" {
		return cs
	}
	out := make([]capture, len(cs))
	for i, c := range cs {
		out[i] = capture{as + "." + c.name, c.path}
	}
	return out
}

// reads are the fields FeatBit's UI reads from each answer, from its
// services and the components that use them (the commit pinned): the
// replay checks these and no others, so Bunting may answer more. The
// recording writes each with the value the walk saw, or, after "=", with
// the matcher written here where the value is the server's own choice
// (a random secret, the ids of built-in policies) or one this walk must not
// pin (initialized: FeatBit's fresh organization is false and goes through
// onboarding; Bunting's bootstrap makes it true).
var reads = map[string][]string{
	// do-login: token; identity.service doLoginUser.
	"POST /api/v1/identity/login-by-email": {"success", "data.token"},
	// IProfile.
	"GET /api/v1/user/profile": {"data.id", "data.email", "data.name", "data.origin"},
	// IWorkspace, auth.guard; the licence (a signed token, new each
	// answer) decides whether the review dialog offers a change request.
	"GET /api/v1/user/workspaces": {"data.0.id", "data.0.key", "data.0.name", "data.0.license=<string>"},
	// IOrganization, auth.guard (initialized decides onboarding).
	"GET /api/v1/organizations": {"data.0.id", "data.0.name", "data.0.key", "data.0.initialized=<bool>",
		"data.0.settings.flagSortedBy", "data.0.defaultPermissions.policyIds=<array>",
		"data.0.defaultPermissions.groupIds=<array>"},
	// permissions.service: the policies' statements.
	"GET /api/v1/user/policies": {"data.0.statements.0.resourceType", "data.0.statements.0.effect",
		"data.0.statements.0.actions", "data.0.statements.0.resources"},
	// onboarding: success only.
	"POST /api/v1/organizations/onboarding": {"success"},
	// IProject with IEnvironment, auth.guard's project and env choice.
	"GET /api/v1/projects": {"data.0.id", "data.0.name", "data.0.key",
		"data.0.environments.0.id", "data.0.environments.0.key", "data.0.environments.0.name",
		"data.0.environments.0.settings.requireChangeComment",
		"data.0.environments.0.secrets.0.type", "data.0.environments.0.secrets.0.value=<string>",
		"data.0.environments.1.id", "data.0.environments.1.name"},
	// IFeatureFlag, get-started's created flag and the details page.
	"POST /api/v1/envs/{envId}/feature-flags": {"data.id", "data.key", "data.name", "data.isEnabled",
		"data.variationType", "data.variations.0.id", "data.variations.0.value", "data.variations.1.value",
		"data.fallthrough.variations.0.id", "data.disabledVariationId", "data.targetUsers", "data.rules"},
	"GET /api/v1/envs/{envId}/feature-flags/{key}": {"data.id", "data.key", "data.name", "data.isEnabled",
		"data.variationType", "data.variations", "data.targetUsers", "data.rules", "data.fallthrough",
		"data.disabledVariationId", "data.revision", "data.tags"},
	// IFeatureFlagListModel, the flag list.
	"GET /api/v1/envs/{envId}/feature-flags": {"data.totalCount", "data.items.0.id", "data.items.0.key",
		"data.items.0.name", "data.items.0.isEnabled", "data.items.0.variationType",
		"data.items.0.serves.enabledVariations", "data.items.0.serves.disabledVariation"},
	"GET /api/v1/envs/{envId}/feature-flags/all-tags":    {"data"},
	"GET /api/v1/envs/{envId}/feature-flags/is-key-used": {"data"},
	// targeting save: the new revision's flag.
	"PUT /api/v1/envs/{envId}/feature-flags/{key}/targeting": {"success", "data"},
	// history: IAuditLog list; its change list draws the instructions.
	"GET /api/v1/envs/{envId}/audit-logs": {"data.totalCount", "data.items.0.refType", "data.items.0.operation",
		"data.items.0.creatorName", "data.items.0.createdAt", "data.items.0.dataChange=<object>", "data.items.0.instructions"},
	// the review dialog's list of changes (IInstruction: kind and value).
	"POST /api/v1/envs/{envId}/audit-logs/compare": {"success", "data"},
	// the targeting page's pending changes (IPendingChanges): the drawer
	// offers Approve to a named reviewer and Apply once approved.
	"GET /api/v1/envs/{envId}/feature-flags/{key}/pending-changes": {"data.0.id", "data.0.type", "data.0.status",
		"data.0.creatorId", "data.0.changeRequestId", "data.0.changeRequestReason", "data.0.reviewers.0.memberId",
		"data.0.reviewers.0.action", "data.0.instructions"},
	"POST /api/v1/envs/{envId}/feature-flags/{key}/change-requests": {"success", "data"},
	// the review dialog's reviewer choice: name || email, not the caller.
	"GET /api/v1/organizations/members": {"data.totalCount", "data.items.0.id", "data.items.0.name",
		"data.items.0.email"},
	// Bunting's own setting, which the walk turns on (FeatBit has none).
	"PUT /api/v1/projects/{projectId}/envs/{id}": {"success", "data.settings.changeRequest.isEnabled",
		"data.settings.changeRequest.approverMemberIds"},
	// end users: the target-user search.
	"POST /api/v1/envs/{envId}/end-users/search":   {"data.totalCount", "data.items"},
	"GET /api/v1/envs/{envId}/end-user-properties": {"data.0.name"},
	// segments.
	"POST /api/v1/envs/{envId}/segments": {"data.id", "data.name", "data.type", "data.scopes"},
	"GET /api/v1/envs/{envId}/segments":  {"data.totalCount", "data.items.0.id", "data.items.0.name"},
	// the member drawer's policy choice.
	"GET /api/v1/policies": {"data.totalCount", "data.items.0.id", "data.items.0.name"},
	// members: the list shows each member's first password to the inviter.
	"GET /api/v1/members": {"data.totalCount", "data.items.0.id", "data.items.0.email", "data.items.0.name"},
	// relay proxies: the drawer shows the new key once (a random secret);
	// the list (RelayProxy) shows it masked, parses serves ("id,path") and
	// fills the edit drawer from scopes, agents and auto agents.
	"POST /api/v1/relay-proxies": {"success", "data.id", "data.key=<string>", "data.name", "data.isAllEnvs",
		"data.scopes"},
	"GET /api/v1/relay-proxies": {"data.totalCount", "data.items.0.id", "data.items.0.name",
		"data.items.0.key=<string>", "data.items.0.description", "data.items.0.isAllEnvs", "data.items.0.scopes",
		"data.items.0.serves", "data.items.0.agents", "data.items.0.autoAgents", "data.items.0.updatedAt"},
	"GET /api/v1/relay-proxies/is-name-used": {"success", "data"},
	"PUT /api/v1/relay-proxies/{id}":         {"success", "data"},
}

func readsFor(e *exchange) []string {
	if r, ok := reads[e.Method+" "+e.Route]; ok {
		return r
	}
	// Every answer the UI reads has the envelope's success flag.
	if strings.HasPrefix(e.Path, "/api/") {
		return []string{"success"}
	}
	return nil
}
