package api_test

import (
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
)

// cases says, for every route, how to call it and what it needs.
func (m *matrix) cases() map[string]func() call {
	flagRN := func(key string) string { return envRN + ":flag/" + key }
	segRN := func(key string) string { return envRN + ":segment/" + key }
	onFlag := func(action access.Action, suffix string, body any) func() call {
		return func() call {
			key := m.flag(action == access.RestoreFlag || action == access.DeleteFlag)
			return call{path: m.flags() + "/" + key + suffix, body: body, grants: []grant{{action, flagRN(key)}}}
		}
	}
	onSegment := func(action access.Action, suffix string, body any) func() call {
		return func() call {
			id, key := m.segment(action == access.RestoreSegment)
			return call{path: m.segs() + "/" + id + suffix, body: body, grants: []grant{{action, segRN(key)}}}
		}
	}
	readEnv := func(path string) func() call {
		return func() call { return call{path: path, grants: []grant{{access.CanAccessEnv, envRN}}} }
	}
	envPath := "/api/v1/projects/" + m.project.ID.String() + "/envs/"
	return map[string]func() call{
		"POST /api/v1/identity/login-by-email": nil, // needs no credentials: TestLogin
		"GET /api/v1/openapi.json":             nil, // public: TestOpenAPIDocument
		// Public: the token is the credential (TestTriggerRun).
		"POST /api/v1/triggers/run/:token":    nil,
		"PUT /api/v1/identity/reset-password": nil, // the caller's own password: TestResetPassword
		// The caller's own session, needing no statement: TestLogout, TestRefreshToken.
		"POST /api/v1/identity/logout":        nil,
		"POST /api/v1/identity/refresh-token": nil,
		// FeatBit's sign-in page, before any credentials: TestSSOPreCheckAndSocialProviders, TestAppSSO.
		"GET /api/v1/sso/pre-check":          nil,
		"GET /api/v1/sso/oidc-authorize-url": nil,
		"POST /api/v1/sso/oidc/login":        nil,
		"GET /api/v1/social/providers":       nil,
		"POST /api/v1/user/join-organization": func() call { // the caller's own organization: TestJoinOrganization
			return call{path: "/api/v1/user/join-organization", body: map[string]any{}, open: true}
		},
		"GET /api/v1/organizations/members": func() call { // also CanManageIAM or CanAccessEnv: TestOrganizationMembers
			return call{path: "/api/v1/organizations/members", grants: []grant{{access.ListAccessTokens, core.AccessTokenRN}}}
		},
		// Needs the permission in every organization, as PUT /workspaces: TestWorkspaceUsages.
		"GET /api/v1/workspaces/usages": nil,
		"GET /api/v1/user/profile":      func() call { return call{path: "/api/v1/user/profile", open: true} },
		"GET /api/v1/user/policies":     func() call { return call{path: "/api/v1/user/policies", open: true} },
		"GET /api/v1/iam/actions":       func() call { return call{path: "/api/v1/iam/actions", open: true} },
		"GET /api/v1/organizations":     func() call { return call{path: "/api/v1/organizations", open: true} },
		"GET /api/v1/workspaces":        func() call { return call{path: "/api/v1/workspaces", open: true} },
		// The matrix has a second organization, and workspace settings need
		// the permission in every one: TestWorkspaceSettingsNeedEveryOrganization,
		// TestWorkspaceSSO (a developer is refused).
		"PUT /api/v1/workspaces":          nil,
		"PUT /api/v1/workspaces/sso-oidc": nil,
		"GET /api/v1/user/workspaces":     func() call { return call{path: "/api/v1/user/workspaces", open: true} },
		"PUT /api/v1/user/profile": func() call { // the caller's own profile
			return call{path: "/api/v1/user/profile", body: map[string]string{"name": "Nobody", "email": "nobody@example.com"}, open: true}
		},
		"GET /api/v1/organizations/:id": func() call { // membership is the check: TestGetOrganization
			return call{path: "/api/v1/organizations/" + m.s.orgID.String(), open: true}
		},
		"POST /api/v1/organizations":   nil, // the creator joins a second organization: TestCreateOrganization
		"DELETE /api/v1/organizations": nil, // deletes the caller's organization: TestDeleteOrganization
		"POST /api/v1/organizations/onboarding": func() call {
			key := fmt.Sprintf("p%d", m.next())
			return call{path: "/api/v1/organizations/onboarding", body: map[string]any{"organizationName": "Onboarded", "organizationKey": "default-organization",
				"projectName": key, "projectKey": key, "environments": []string{"Dev"}},
				grants: []grant{{access.UpdateOrgName, "organization/default-organization"}, {access.CreateProject, "project/*"}}}
		},
		"GET /api/v1/organizations/is-key-used": func() call {
			return call{path: "/api/v1/organizations/is-key-used?key=x", grants: []grant{{access.CreateOrg, "organization/*"}}}
		},
		// Like changing the key, it needs the permission in every organization:
		// TestWorkspaceSettingsNeedEveryOrganization.
		"GET /api/v1/workspaces/is-key-used": nil,
		"GET /api/v1/projects/is-key-used": func() call {
			return call{path: "/api/v1/projects/is-key-used?key=x", grants: []grant{{access.CreateProject, "project/*"}}}
		},
		"GET /api/v1/projects/:projectId/envs/is-key-used": func() call {
			return call{path: envPath + "is-key-used?key=x", grants: []grant{{access.CreateEnv, "project/web:env/*"}}}
		},
		"GET /api/v1/groups/is-name-used": func() call { return iamCall("/api/v1/groups/is-name-used?name=x", nil) },
		"GET /api/v1/access-tokens/is-name-used": func() call {
			return call{path: "/api/v1/access-tokens/is-name-used?name=x", grants: []grant{{access.ManagePersonalAccessTokens, core.AccessTokenRN}}}
		},
		"GET /api/v1/resources": func() call {
			return call{path: "/api/v1/resources?type=project", grants: []grant{{access.CanAccessProject, "project/web"}},
				listed: func(r *reply) bool {
					return slices.ContainsFunc(decode[[]core.Resource](m.s.t, r), func(x core.Resource) bool { return x.RN == "project/web" })
				}}
		},
		"GET /api/v2/resources": func() call {
			return call{path: "/api/v2/resources?spaceLevel=organization&types=env", grants: []grant{{access.CanAccessEnv, envRN}},
				listed: func(r *reply) bool {
					return slices.ContainsFunc(decode[[]core.ResourceV2](m.s.t, r), func(x core.ResourceV2) bool {
						return x.RN == "organization/default-organization:"+envRN
					})
				}}
		},
		"PUT /api/v1/organizations": func() call {
			return call{path: "/api/v1/organizations", body: map[string]string{"name": fmt.Sprintf("Org %d", m.next())},
				grants: []grant{{access.UpdateOrgName, "organization/default-organization"}}}
		},

		"GET /api/v1/access-tokens": func() call {
			return call{path: "/api/v1/access-tokens", grants: []grant{{access.ListAccessTokens, core.AccessTokenRN}}}
		},
		"POST /api/v1/access-tokens": func() call {
			return call{path: "/api/v1/access-tokens", body: map[string]string{"name": fmt.Sprintf("t%d", m.next()), "type": "Personal"},
				grants: []grant{{access.ManagePersonalAccessTokens, core.AccessTokenRN}}}
		},
		"PUT /api/v1/access-tokens/:id": func() call {
			return call{path: "/api/v1/access-tokens/" + m.token(), body: map[string]string{"name": fmt.Sprintf("t%d", m.next())},
				grants: []grant{{access.ManagePersonalAccessTokens, core.AccessTokenRN}}}
		},
		"PUT /api/v1/access-tokens/:id/toggle": func() call {
			return call{path: "/api/v1/access-tokens/" + m.token() + "/toggle", grants: []grant{{access.ManagePersonalAccessTokens, core.AccessTokenRN}}}
		},
		"DELETE /api/v1/access-tokens/:id": func() call {
			return call{path: "/api/v1/access-tokens/" + m.token(), grants: []grant{{access.ManagePersonalAccessTokens, core.AccessTokenRN}}}
		},

		"GET /api/v1/relay-proxies": func() call { return relayCall("/api/v1/relay-proxies", nil, access.ListRelayProxies) },
		"GET /api/v1/relay-proxies/is-name-used": func() call {
			return relayCall("/api/v1/relay-proxies/is-name-used?name=x", nil, access.ListRelayProxies)
		},
		// Loopback is refused by the network rules: the answer is 503, at once.
		"GET /api/v1/relay-proxies/agent-availability": func() call {
			return relayCall("/api/v1/relay-proxies/agent-availability?agentHost=http://127.0.0.1:9", nil, access.ManageRelayProxies)
		},
		"POST /api/v1/relay-proxies": func() call {
			return relayScopedCall("/api/v1/relay-proxies", m.relayBody())
		},
		"PUT /api/v1/relay-proxies/:id": func() call {
			return relayScopedCall("/api/v1/relay-proxies/"+m.relayProxy(), m.relayBody())
		},
		"DELETE /api/v1/relay-proxies/:id": func() call {
			return relayCall("/api/v1/relay-proxies/"+m.relayProxy(), nil, access.ManageRelayProxies)
		},
		"PUT /api/v1/relay-proxies/:rpId/agents/:agentId/sync": func() call {
			return relayScopedCall("/api/v1/relay-proxies/"+m.relayProxy()+"/agents/a1/sync?host=x", map[string]any{})
		},
		// Any member reads the quota, as in FeatBit.
		"GET /api/v1/workspaces/license-quota": func() call { return call{path: "/api/v1/workspaces/license-quota", open: true} },
		"GET /api/v1/webhooks":                 func() call { return orgCall("/api/v1/webhooks", nil) },
		"GET /api/v1/webhooks/is-name-used":    func() call { return orgCall("/api/v1/webhooks/is-name-used?name=x", nil) },
		"POST /api/v1/webhooks":                func() call { return scopedCall("/api/v1/webhooks", m.webhookBody()) },
		"POST /api/v1/webhooks/send": func() call { // loopback is refused here: the answer says so, at once
			return orgCall("/api/v1/webhooks/send", map[string]any{"deliveryId": "d1", "url": "http://127.0.0.1:9/hook",
				"events": "test", "payload": "{}"})
		},
		"GET /api/v1/webhooks/:id":            func() call { return orgCall("/api/v1/webhooks/"+m.webhook(), nil) },
		"PUT /api/v1/webhooks/:id":            func() call { return scopedCall("/api/v1/webhooks/"+m.webhook(), m.webhookBody()) },
		"DELETE /api/v1/webhooks/:id":         func() call { return orgCall("/api/v1/webhooks/"+m.webhook(), nil) },
		"GET /api/v1/webhooks/:id/deliveries": func() call { return scopedCall("/api/v1/webhooks/"+m.webhook()+"/deliveries", nil) },

		"GET /api/v1/projects": func() call {
			return call{path: "/api/v1/projects", grants: []grant{{access.CanAccessProject, "project/web"}},
				listed: func(r *reply) bool { return len(decode[[]core.Project](m.s.t, r)) > 0 }}
		},
		"POST /api/v1/projects": func() call {
			key := fmt.Sprintf("p%d", m.next())
			return call{path: "/api/v1/projects", body: map[string]string{"name": key, "key": key}, grants: []grant{{access.CreateProject, "project/*"}}}
		},
		"GET /api/v1/projects/:id": func() call {
			return call{path: "/api/v1/projects/" + m.project.ID.String(), grants: []grant{{access.CanAccessProject, "project/web"}}}
		},
		"PUT /api/v1/projects/:id": func() call {
			return call{path: "/api/v1/projects/" + m.project.ID.String(), body: map[string]string{"name": fmt.Sprintf("Web %d", m.next())},
				grants: []grant{{access.UpdateProjectSettings, "project/web"}}}
		},
		"DELETE /api/v1/projects/:id": func() call {
			p := m.newProject()
			return call{path: "/api/v1/projects/" + p.ID.String(), grants: []grant{{access.DeleteProject, "project/" + p.Key}}}
		},
		"POST /api/v1/projects/:projectId/envs": func() call {
			key := fmt.Sprintf("e%d", m.next())
			return call{path: "/api/v1/projects/" + m.project.ID.String() + "/envs", body: map[string]string{"name": key, "key": key},
				grants: []grant{{access.CreateEnv, "project/web:env/*"}}}
		},
		"GET /api/v1/projects/:projectId/envs/:id": func() call {
			return call{path: envPath + m.env.ID.String(), grants: []grant{{access.CanAccessEnv, envRN}}}
		},
		"PUT /api/v1/projects/:projectId/envs/:id": func() call {
			return call{path: envPath + m.env.ID.String(), body: map[string]string{"name": fmt.Sprintf("Prod %d", m.next())},
				grants: []grant{{access.UpdateEnvSettings, envRN}}}
		},
		"DELETE /api/v1/projects/:projectId/envs/:id": func() call {
			key := fmt.Sprintf("e%d", m.next())
			env := decode[core.Environment](m.s.t, m.owner("POST", "/api/v1/projects/"+m.project.ID.String()+"/envs", map[string]string{"name": key, "key": key}))
			return call{path: envPath + env.ID.String(), grants: []grant{{access.DeleteEnv, "project/web:env/" + key}}}
		},
		"POST /api/v1/envs/:envId/secrets": func() call {
			return call{path: "/api/v1/envs/" + m.env.ID.String() + "/secrets", body: map[string]string{"name": "k", "type": "server"},
				grants: []grant{{access.CreateEnvSecret, envRN}}}
		},
		"PUT /api/v1/envs/:envId/secrets/:id": func() call {
			sec := decode[core.Secret](m.s.t, m.owner("POST", "/api/v1/envs/"+m.env.ID.String()+"/secrets", map[string]string{"name": "k", "type": "server"}))
			return call{path: "/api/v1/envs/" + m.env.ID.String() + "/secrets/" + sec.ID.String(), body: map[string]string{"name": "renamed"},
				grants: []grant{{access.UpdateEnvSecret, envRN}}}
		},
		"DELETE /api/v1/envs/:envId/secrets/:id": func() call {
			sec := decode[core.Secret](m.s.t, m.owner("POST", "/api/v1/envs/"+m.env.ID.String()+"/secrets", map[string]string{"name": "k", "type": "server"}))
			return call{path: "/api/v1/envs/" + m.env.ID.String() + "/secrets/" + sec.ID.String(), grants: []grant{{access.DeleteEnvSecret, envRN}}}
		},

		"GET /api/v1/envs/:envId/feature-flags":             readEnv(m.flags()),
		"GET /api/v1/envs/:envId/feature-flags/all-tags":    readEnv(m.flags() + "/all-tags"),
		"GET /api/v1/envs/:envId/feature-flags/is-key-used": readEnv(m.flags() + "/is-key-used?key=x"),
		"GET /api/v1/envs/:envId/feature-flags/:key":        func() call { return readEnv(m.flags() + "/" + m.flag(false))() },
		"GET /api/v1/envs/:envId/feature-flags/:key/revisions": func() call {
			return readEnv(m.flags() + "/" + m.flag(false) + "/revisions")()
		},
		"GET /api/v1/envs/:envId/feature-flags/:key/pending-changes": func() call {
			return readEnv(m.flags() + "/" + m.flag(false) + "/pending-changes")()
		},
		// Scheduling and cancelling need the action of the change itself.
		"POST /api/v1/envs/:envId/feature-flags/:key/schedules": onFlag(access.ToggleFlag, "/schedules",
			map[string]any{"title": "Launch", "scheduledTime": time.Now().Add(time.Hour).UTC(), "targetFlag": map[string]any{"isEnabled": true}}),
		"DELETE /api/v1/envs/:envId/feature-flags/schedules/:id": func() call {
			key := m.flag(false)
			m.owner("POST", m.flags()+"/"+key+"/schedules", map[string]any{"title": "Launch",
				"scheduledTime": time.Now().Add(time.Hour).UTC(), "targetFlag": map[string]any{"isEnabled": true}})
			pending := decode[[]governance.PendingChange](m.s.t, m.owner("GET", m.flags()+"/"+key+"/pending-changes", nil))
			return call{path: m.flags() + "/schedules/" + pending[0].ID.String(), grants: []grant{{access.ToggleFlag, flagRN(key)}}}
		},
		"GET /api/v1/envs/:envId/feature-flags/insights": func() call {
			return readEnv(m.flags() + "/insights?featureFlagKey=" + m.flag(false) + "&intervalType=DAY&from=1&to=1900000000000")()
		},
		"POST /api/v1/envs/:envId/feature-flags": func() call {
			key := fmt.Sprintf("f%d", m.next())
			return call{path: m.flags(), body: map[string]string{"name": key, "key": key}, grants: []grant{{access.CreateFlag, flagRN("*")}}}
		},
		"POST /api/v1/envs/:envId/feature-flags/clone/:key": func() call {
			src, key := m.flag(false), fmt.Sprintf("f%d", m.next())
			return call{path: m.flags() + "/clone/" + src, body: map[string]string{"name": key, "key": key},
				grants: []grant{{access.CloneFlag, flagRN(src)}, {access.CreateFlag, flagRN("*")}}}
		},
		// Comparing and copying read the source and the target, and write
		// what the target's own change needs: TestCompareAndCopyNeedBothEnvironments.
		"POST /api/v1/envs/:envId/feature-flags/compare-overview": func() call {
			return call{path: m.flags() + "/compare-overview", body: map[string]any{"targetEnvIds": []uuid.UUID{m.dev().ID}},
				grants: []grant{{access.CanAccessEnv, devRN}, {access.CanAccessEnv, envRN}}}
		},
		"GET /api/v1/envs/:envId/feature-flags/:key/compare-with/:targetEnvId": func() call {
			return call{path: m.flags() + "/" + m.flag(false) + "/compare-with/" + m.dev().ID.String(),
				grants: []grant{{access.CanAccessEnv, devRN}, {access.CanAccessEnv, envRN}}}
		},
		"POST /api/v1/envs/:envId/feature-flags/copy-to-env-precheck/:targetEnvId": func() call {
			return call{path: m.flags() + "/copy-to-env-precheck/" + m.dev().ID.String(), body: []uuid.UUID{m.flagID(m.flag(false))},
				grants: []grant{{access.CanAccessEnv, devRN}, {access.CanAccessEnv, envRN}}}
		},
		"POST /api/v1/envs/:envId/feature-flags/copy-to-env/:targetEnvId": func() call {
			src := m.flag(false)
			return call{path: m.flags() + "/copy-to-env/" + m.dev().ID.String(), body: map[string]any{"flagIds": []uuid.UUID{m.flagID(src)}},
				grants: []grant{{access.CreateFlag, devRN + ":flag/*"}, {access.CopyFlagTo, flagRN(src)}, {access.CanAccessEnv, envRN}, {access.CanAccessEnv, devRN}}}
		},
		"PUT /api/v1/envs/:envId/feature-flags/:key/copy-settings-to/:targetEnvId": func() call {
			key := m.flag(false)
			m.owner("POST", "/api/v1/envs/"+m.dev().ID.String()+"/feature-flags", map[string]string{"name": key, "key": key})
			m.owner("PUT", m.flags()+"/"+key+"/toggle/true", nil)
			return call{path: m.flags() + "/" + key + "/copy-settings-to/" + m.dev().ID.String(), body: map[string]any{"options": map[string]any{"onOffState": true}},
				grants: []grant{{access.ToggleFlag, devRN + ":flag/" + key}, {access.CanAccessEnv, envRN}, {access.CanAccessEnv, devRN}}}
		},
		"PATCH /api/v1/envs/:envId/feature-flags/:key":              onFlag(access.UpdateFlagName, "", `[{"op":"replace","path":"/name","value":"patched"}]`),
		"DELETE /api/v1/envs/:envId/feature-flags/:key":             onFlag(access.DeleteFlag, "", nil),
		"PUT /api/v1/envs/:envId/feature-flags/:key/description":    onFlag(access.UpdateFlagDescription, "/description", map[string]string{"description": "d"}),
		"PUT /api/v1/envs/:envId/feature-flags/:key/toggle/:status": onFlag(access.ToggleFlag, "/toggle/true", nil),
		"PUT /api/v1/envs/:envId/feature-flags/:key/archive":        onFlag(access.ArchiveFlag, "/archive", nil),
		"PUT /api/v1/envs/:envId/feature-flags/:key/restore":        onFlag(access.RestoreFlag, "/restore", nil),
		"PUT /api/v1/envs/:envId/feature-flags/:key/name":           onFlag(access.UpdateFlagName, "/name", map[string]string{"name": "renamed"}),
		"PUT /api/v1/envs/:envId/feature-flags/:key/tags":           onFlag(access.UpdateFlagTags, "/tags", map[string]any{"tags": []string{"t"}}),
		"PUT /api/v1/envs/:envId/feature-flags/:key/variations":     nil, // set per flag below
		"PUT /api/v1/envs/:envId/feature-flags/:key/off-variation":  nil,
		"PUT /api/v1/envs/:envId/feature-flags/:key/targeting":      nil,
		"GET /api/v1/envs/:envId/segments":                          readEnv(m.segs()),
		"GET /api/v1/envs/:envId/segments/all-tags":                 readEnv(m.segs() + "/all-tags"),
		"GET /api/v1/envs/:envId/segments/is-key-used":              readEnv(m.segs() + "/is-key-used?key=x"),
		"GET /api/v1/envs/:envId/segments/by-ids":                   func() call { id, _ := m.segment(false); return readEnv(m.segs() + "/by-ids?ids=" + id)() },
		"GET /api/v1/envs/:envId/segments/:segmentId":               func() call { id, _ := m.segment(false); return readEnv(m.segs() + "/" + id)() },
		"GET /api/v1/envs/:envId/segments/:segmentId/flag-references": func() call {
			id, _ := m.segment(false)
			return readEnv(m.segs() + "/" + id + "/flag-references")()
		},
		"POST /api/v1/envs/:envId/segments": func() call {
			key := fmt.Sprintf("s%d", m.next())
			return call{path: m.segs(), body: map[string]string{"name": key, "key": key, "type": "environment-specific"},
				grants: []grant{{access.CreateSegment, segRN("*")}}}
		},
		"PATCH /api/v1/envs/:envId/segments/:segmentId":           onSegment(access.UpdateSegmentName, "", `[{"op":"replace","path":"/name","value":"patched"}]`),
		"DELETE /api/v1/envs/:envId/segments/:segmentId":          onSegment(access.DeleteSegment, "", nil),
		"PUT /api/v1/envs/:envId/segments/:segmentId/archive":     onSegment(access.ArchiveSegment, "/archive", nil),
		"PUT /api/v1/envs/:envId/segments/:segmentId/restore":     onSegment(access.RestoreSegment, "/restore", nil),
		"PUT /api/v1/envs/:envId/segments/:segmentId/name":        onSegment(access.UpdateSegmentName, "/name", map[string]string{"name": "renamed"}),
		"PUT /api/v1/envs/:envId/segments/:segmentId/description": onSegment(access.UpdateSegmentDescription, "/description", map[string]string{"description": "d"}),
		"PUT /api/v1/envs/:envId/segments/:segmentId/tags":        onSegment(access.UpdateSegmentTags, "/tags", map[string]any{"tags": []string{"t"}}),
		"PUT /api/v1/envs/:envId/segments/:segmentId/targeting":   onSegment(access.UpdateSegmentTargetingUsers, "/targeting", map[string]any{"included": []string{"u"}}),
		"GET /api/v1/triggers": func() call {
			f := decode[flagstore.Flag](m.s.t, m.owner("GET", m.flags()+"/"+m.flag(false), nil))
			return readEnv("/api/v1/triggers?targetId=" + f.ID.String())()
		},
		"POST /api/v1/triggers": func() call {
			key := m.flag(false)
			f := decode[flagstore.Flag](m.s.t, m.owner("GET", m.flags()+"/"+key, nil))
			return call{path: "/api/v1/triggers", body: map[string]any{"targetId": f.ID, "type": "feature-flag-general", "action": "turn-on"},
				grants: []grant{{access.ToggleFlag, flagRN(key)}}}
		},
		"PUT /api/v1/triggers/:id": func() call {
			key, id := m.trigger()
			return call{path: "/api/v1/triggers/" + id, body: map[string]bool{"isEnabled": false}, grants: []grant{{access.ToggleFlag, flagRN(key)}}}
		},
		"PUT /api/v1/triggers/:id/reset-token": func() call {
			key, id := m.trigger()
			return call{path: "/api/v1/triggers/" + id + "/reset-token", grants: []grant{{access.ToggleFlag, flagRN(key)}}}
		},
		"DELETE /api/v1/triggers/:id": func() call {
			key, id := m.trigger()
			return call{path: "/api/v1/triggers/" + id, grants: []grant{{access.ToggleFlag, flagRN(key)}}}
		},
		"GET /api/v1/envs/:envId/export": readEnv("/api/v1/envs/" + m.env.ID.String() + "/export"),
		"GET /api/v1/projects/:projectId/export": func() call {
			return call{path: "/api/v1/projects/" + m.project.ID.String() + "/export", grants: []grant{{access.CanAccessProject, "project/web"}}}
		},
		// An import needs CanAccessEnv, then each change's own action: here creating one flag.
		"POST /api/v1/envs/:envId/import": func() call {
			key := fmt.Sprintf("imported-%d", m.next())
			flag := map[string]any{"key": key, "name": key, "isEnabled": false, "variationType": "boolean",
				"variations":          []map[string]string{{"id": "on", "name": "On", "value": "true"}, {"id": "off", "name": "Off", "value": "false"}},
				"disabledVariationId": "off", "fallthrough": map[string]any{"variations": []map[string]any{{"id": "on", "rollout": []float64{0, 1}}}}}
			return call{path: "/api/v1/envs/" + m.env.ID.String() + "/import",
				body:   map[string]any{"version": 1, "environment": map[string]string{"key": "prod"}, "segments": []any{}, "flags": []any{flag}},
				grants: []grant{{access.CreateFlag, envRN + ":flag/*"}, {access.CanAccessEnv, envRN}}}
		},
		"GET /api/v1/envs/:envId/audit-logs": readEnv("/api/v1/envs/" + m.env.ID.String() + "/audit-logs"),
		"POST /api/v1/envs/:envId/audit-logs/compare": func() call {
			flag := `{"name":"A","variations":[{"id":"v1","name":"On","value":"true"}],"fallthrough":{"variations":[]}}`
			return call{path: "/api/v1/envs/" + m.env.ID.String() + "/audit-logs/compare", body: compareBody("FeatureFlag", flag, flag),
				grants: []grant{{access.CanAccessEnv, envRN}}}
		},
		"GET /api/v1/envs/:envId/flag-insights": readEnv("/api/v1/envs/" + m.env.ID.String() + "/flag-insights"),
		"GET /api/v1/envs/:envId/feature-flags/:key/insights": func() call {
			return readEnv(m.flags() + "/" + m.flag(false) + "/insights")()
		},
		"GET /api/v1/envs/:envId/feature-flags/:key/code-references": func() call {
			return readEnv(m.flags() + "/" + m.flag(false) + "/code-references")()
		},
		// An upload names any flag of the environment: it needs describing every one.
		"PUT /api/v1/envs/:envId/code-references": func() call {
			ref := map[string]any{"flagKey": m.flag(false), "path": "src/app.go", "line": 1, "snippet": "x"}
			return call{path: "/api/v1/envs/" + m.env.ID.String() + "/code-references",
				body:   map[string]any{"repository": "shop", "branch": "main", "commit": "abc", "references": []any{ref}},
				grants: []grant{{access.UpdateFlagDescription, envRN + ":flag/*"}}}
		},
		"POST /api/v1/envs/:envId/feature-flags/:key/evaluate": func() call {
			return call{path: m.flags() + "/" + m.flag(false) + "/evaluate", body: map[string]string{"keyId": "alice"},
				grants: []grant{{access.CanAccessEnv, envRN}}}
		},

		"GET /api/v1/envs/:envId/end-users/:id":          func() call { return readEnv(m.endUsers() + "/" + m.endUser())() },
		"GET /api/v1/envs/:envId/end-users/:id/flags":    func() call { return readEnv(m.endUsers() + "/" + m.endUser() + "/flags")() },
		"GET /api/v1/envs/:envId/end-users/:id/segments": func() call { return readEnv(m.endUsers() + "/" + m.endUser() + "/segments")() },
		"POST /api/v1/envs/:envId/end-users/search": func() call {
			return call{path: m.endUsers() + "/search", body: map[string]any{"searchText": "u"}, grants: []grant{{access.CanAccessEnv, envRN}}}
		},
		"POST /api/v1/envs/:envId/end-users/list": func() call {
			return call{path: m.endUsers() + "/list", body: map[string]any{"pageSize": 5}, grants: []grant{{access.CanAccessEnv, envRN}}}
		},
		"POST /api/v1/envs/:envId/end-users/by-keyIds": func() call {
			return call{path: m.endUsers() + "/by-keyIds", body: []string{"u1"}, grants: []grant{{access.CanAccessEnv, envRN}}}
		},
		"POST /api/v1/envs/:envId/end-users/download": func() call {
			return call{path: m.endUsers() + "/download", body: map[string]any{"searchText": ""}, grants: []grant{{access.CanAccessEnv, envRN}}}
		},
		"POST /api/v1/envs/:envId/end-users/upload": func() call { // the file as the JSON body; multipart: TestEndUserUploadAndDownload
			return call{path: m.endUsers() + "/upload", body: map[string]any{"users": []map[string]string{{"keyId": fmt.Sprintf("u%d", m.next())}}},
				grants: []grant{{access.UpdateEnvSettings, envRN}}}
		},
		"GET /api/v1/envs/:envId/end-users/get-by-featureflag": func() call {
			return readEnv(m.endUsers() + "/get-by-featureflag?featureFlagKey=" + m.flag(false) + "&from=1&to=1900000000000")()
		},
		"PUT /api/v1/envs/:envId/end-users": func() call {
			key := fmt.Sprintf("u%d", m.next())
			return call{path: m.endUsers(), body: map[string]string{"keyId": key, "name": key}, grants: []grant{{access.UpdateEnvSettings, envRN}}}
		},
		"GET /api/v1/envs/:envId/end-user-properties": readEnv("/api/v1/envs/" + m.env.ID.String() + "/end-user-properties"),
		"PUT /api/v1/envs/:envId/end-user-properties/:propertyId/upsert": func() call {
			return call{path: "/api/v1/envs/" + m.env.ID.String() + "/end-user-properties/" + uuid.NewString() + "/upsert",
				body: map[string]string{"name": fmt.Sprintf("p%d", m.next())}, grants: []grant{{access.UpdateEnvSettings, envRN}}}
		},
		"DELETE /api/v1/envs/:envId/end-user-properties/:id": func() call {
			id := uuid.NewString()
			m.owner("PUT", "/api/v1/envs/"+m.env.ID.String()+"/end-user-properties/"+id+"/upsert", map[string]string{"name": fmt.Sprintf("p%d", m.next())})
			return call{path: "/api/v1/envs/" + m.env.ID.String() + "/end-user-properties/" + id, grants: []grant{{access.UpdateEnvSettings, envRN}}}
		},

		"GET /api/v1/policies": func() call { return iamCall("/api/v1/policies", nil) },
		"POST /api/v1/policies": func() call {
			k := fmt.Sprintf("pol%d", m.next())
			return iamCall("/api/v1/policies", map[string]string{"name": k, "key": k})
		},
		"GET /api/v1/policies/is-key-used": func() call { return iamCall("/api/v1/policies/is-key-used?key=x", nil) },
		"POST /api/v1/policies/clone/:key": func() call {
			k := fmt.Sprintf("pol%d", m.next())
			return iamCall("/api/v1/policies/clone/"+m.policy().Key, map[string]string{"name": k, "key": k})
		},
		"GET /api/v1/policies/:policyId": func() call { return iamCall("/api/v1/policies/"+m.policy().ID.String(), nil) },
		"PUT /api/v1/policies/:policyId/settings": func() call {
			return iamCall("/api/v1/policies/"+m.policy().ID.String()+"/settings", map[string]string{"name": "renamed"})
		},
		"PUT /api/v1/policies/:policyId/statements": func() call { return iamCall("/api/v1/policies/"+m.policy().ID.String()+"/statements", []any{}) },
		"DELETE /api/v1/policies/:policyId":         func() call { return iamCall("/api/v1/policies/"+m.policy().ID.String(), nil) },
		"GET /api/v1/policies/:policyId/members":    func() call { return iamCall("/api/v1/policies/"+m.policy().ID.String()+"/members", nil) },
		"GET /api/v1/policies/:policyId/groups":     func() call { return iamCall("/api/v1/policies/"+m.policy().ID.String()+"/groups", nil) },
		"GET /api/v1/groups":                        func() call { return iamCall("/api/v1/groups", nil) },
		"POST /api/v1/groups":                       func() call { return iamCall("/api/v1/groups", map[string]string{"name": fmt.Sprintf("g%d", m.next())}) },
		"GET /api/v1/groups/:groupId":               func() call { return iamCall("/api/v1/groups/"+m.group(), nil) },
		"PUT /api/v1/groups/:groupId": func() call {
			return iamCall("/api/v1/groups/"+m.group(), map[string]string{"name": fmt.Sprintf("g%d", m.next())})
		},
		"DELETE /api/v1/groups/:groupId":      func() call { return iamCall("/api/v1/groups/"+m.group(), nil) },
		"GET /api/v1/groups/:groupId/members": func() call { return iamCall("/api/v1/groups/"+m.group()+"/members", nil) },
		"PUT /api/v1/groups/:groupId/add-member/:memberId": func() call {
			return iamCall("/api/v1/groups/"+m.group()+"/add-member/"+m.newMember(), nil)
		},
		"PUT /api/v1/groups/:groupId/remove-member/:memberId": func() call {
			g, mem := m.group(), m.newMember()
			m.owner("PUT", "/api/v1/groups/"+g+"/add-member/"+mem, nil)
			return iamCall("/api/v1/groups/"+g+"/remove-member/"+mem, nil)
		},
		"GET /api/v1/groups/:groupId/policies": func() call { return iamCall("/api/v1/groups/"+m.group()+"/policies", nil) },
		"PUT /api/v1/groups/:groupId/add-policy/:policyId": func() call {
			return iamCall("/api/v1/groups/"+m.group()+"/add-policy/"+m.policy().ID.String(), nil)
		},
		"PUT /api/v1/groups/:groupId/remove-policy/:policyId": func() call {
			g, p := m.group(), m.policy().ID.String()
			m.owner("PUT", "/api/v1/groups/"+g+"/add-policy/"+p, nil)
			return iamCall("/api/v1/groups/"+g+"/remove-policy/"+p, nil)
		},
		"GET /api/v1/members": func() call { return iamCall("/api/v1/members", nil) },
		"POST /api/v1/members/add": func() call {
			return iamCall("/api/v1/members/add", map[string]any{"email": fmt.Sprintf("new%d@example.com", m.next()), "policyIds": []string{}, "groupIds": []string{}})
		},
		"GET /api/v1/members/:memberId":                    func() call { return iamCall("/api/v1/members/"+m.newMember(), nil) },
		"DELETE /api/v1/members/remove-from-org/:memberId": func() call { return iamCall("/api/v1/members/remove-from-org/"+m.newMember(), nil) },
		"DELETE /api/v1/members/remove-from-workspace/:memberId": func() call {
			return iamCall("/api/v1/members/remove-from-workspace/"+m.newMember(), nil)
		},
		"GET /api/v1/members/:memberId/policies":           func() call { return iamCall("/api/v1/members/"+m.newMember()+"/policies", nil) },
		"GET /api/v1/members/:memberId/groups":             func() call { return iamCall("/api/v1/members/"+m.newMember()+"/groups", nil) },
		"GET /api/v1/members/:memberId/direct-policies":    func() call { return iamCall("/api/v1/members/"+m.newMember()+"/direct-policies", nil) },
		"GET /api/v1/members/:memberId/inherited-policies": func() call { return iamCall("/api/v1/members/"+m.newMember()+"/inherited-policies", nil) },
		"PUT /api/v1/members/:memberId/add-policy/:policyId": func() call {
			return iamCall("/api/v1/members/"+m.newMember()+"/add-policy/"+m.policy().ID.String(), nil)
		},
		"PUT /api/v1/members/:memberId/remove-policy/:policyId": func() call {
			mem, p := m.newMember(), m.policy().ID.String()
			m.owner("PUT", "/api/v1/members/"+mem+"/add-policy/"+p, nil)
			return iamCall("/api/v1/members/"+mem+"/remove-policy/"+p, nil)
		},
	}
}

// flagBodyCases are the flag routes whose body depends on the flag's variations.
func (m *matrix) flagBodyCases(cases map[string]func() call) {
	withFlag := func(action access.Action, suffix string, body func(flagstore.Flag) any) func() call {
		return func() call {
			key := m.flag(false)
			f := decode[flagstore.Flag](m.s.t, m.owner("GET", m.flags()+"/"+key, nil))
			return call{path: m.flags() + "/" + key + suffix, body: body(f), grants: []grant{{action, envRN + ":flag/" + key}}}
		}
	}
	cases["PUT /api/v1/envs/:envId/feature-flags/:key/variations"] = withFlag(access.UpdateFlagVariations, "/variations", func(f flagstore.Flag) any {
		return map[string]any{"variations": []flagstore.Variation{f.Variations[0], {ID: f.Variations[1].ID, Name: "No", Value: "false"}}}
	})
	cases["PUT /api/v1/envs/:envId/feature-flags/:key/off-variation"] = withFlag(access.UpdateFlagOffVariation, "/off-variation", func(f flagstore.Flag) any {
		return map[string]string{"offVariationId": f.Variations[0].ID}
	})
	cases["PUT /api/v1/envs/:envId/feature-flags/:key/targeting"] = withFlag(access.UpdateFlagIndividualTargeting, "/targeting", func(f flagstore.Flag) any {
		tg := f.Targeting()
		tg.TargetUsers = []flagstore.TargetUser{{KeyIDs: []string{"u"}, VariationID: f.Variations[0].ID}}
		return map[string]any{"targeting": tg}
	})
}
