package store

import (
	"slices"
	"strings"

	"github.com/google/uuid"
)

// Statement is one rule of a policy: effect on actions over resources of a type.
type Statement struct {
	ID           string   `json:"id"`
	ResourceType string   `json:"resourceType"`
	Effect       string   `json:"effect"`
	Actions      []string `json:"actions"`
	Resources    []string `json:"resources"`
}

// Resource types of statements: the first part of the resource names their
// patterns match (FeatBit's names; * is every type).
const (
	TypeAll          = "*"
	TypeWorkspace    = "workspace"
	TypeOrganization = "organization"
	TypeIAM          = "iam"
	TypeAccessToken  = "access-token"
	TypeProject      = "project"
	TypeEnv          = "env"
	TypeFlag         = "flag"
	TypeSegment      = "segment"
)

// Actions, by FeatBit's names.
const (
	UpdateWorkspaceGeneralSettings = "UpdateWorkspaceGeneralSettings"
	UpdateWorkspaceLicense         = "UpdateWorkspaceLicense"
	UpdateWorkspaceSSOSettings     = "UpdateWorkspaceSSOSettings"

	UpdateOrgName                   = "UpdateOrgName"
	UpdateOrgDefaultUserPermissions = "UpdateOrgDefaultUserPermissions"
	UpdateOrgSortFlagsBy            = "UpdateOrgSortFlagsBy"
	CreateOrg                       = "CreateOrg"
	// DeleteOrg is Bunting's: FeatBit lets any member delete the current
	// organization; here only a policy naming this action (Owner's "*") may.
	DeleteOrg = "DeleteOrg"

	CanManageIAM = "CanManageIAM"

	ListAccessTokens           = "ListAccessTokens"
	ManagePersonalAccessTokens = "ManagePersonalAccessTokens"
	ManageServiceAccessTokens  = "ManageServiceAccessTokens"

	CanAccessProject      = "CanAccessProject"
	CreateProject         = "CreateProject"
	DeleteProject         = "DeleteProject"
	UpdateProjectSettings = "UpdateProjectSettings"
	CreateEnv             = "CreateEnv"

	CanAccessEnv      = "CanAccessEnv"
	DeleteEnv         = "DeleteEnv"
	UpdateEnvSettings = "UpdateEnvSettings"
	CreateEnvSecret   = "CreateEnvSecret"
	UpdateEnvSecret   = "UpdateEnvSecret"
	DeleteEnvSecret   = "DeleteEnvSecret"

	CreateFlag                    = "CreateFlag"
	ArchiveFlag                   = "ArchiveFlag"
	RestoreFlag                   = "RestoreFlag"
	DeleteFlag                    = "DeleteFlag"
	CloneFlag                     = "CloneFlag"
	ToggleFlag                    = "ToggleFlag"
	UpdateFlagName                = "UpdateFlagName"
	UpdateFlagDescription         = "UpdateFlagDescription"
	UpdateFlagOffVariation        = "UpdateFlagOffVariation"
	UpdateFlagVariations          = "UpdateFlagVariations"
	UpdateFlagTags                = "UpdateFlagTags"
	UpdateFlagDefaultRule         = "UpdateFlagDefaultRule"
	UpdateFlagIndividualTargeting = "UpdateFlagIndividualTargeting"
	UpdateFlagTargetingRules      = "UpdateFlagTargetingRules"

	CreateSegment               = "CreateSegment"
	ArchiveSegment              = "ArchiveSegment"
	RestoreSegment              = "RestoreSegment"
	DeleteSegment               = "DeleteSegment"
	UpdateSegmentName           = "UpdateSegmentName"
	UpdateSegmentDescription    = "UpdateSegmentDescription"
	UpdateSegmentTags           = "UpdateSegmentTags"
	UpdateSegmentTargetingUsers = "UpdateSegmentTargetingUsers"
	UpdateSegmentRules          = "UpdateSegmentRules"
)

// ActionGroup is the actions of one resource type, as the catalogue lists them.
type ActionGroup struct {
	ResourceType string   `json:"resourceType"`
	Actions      []string `json:"actions"`
}

// Catalogue is every action the server checks, by resource type.
var Catalogue = []ActionGroup{
	{TypeWorkspace, []string{UpdateWorkspaceGeneralSettings, UpdateWorkspaceLicense, UpdateWorkspaceSSOSettings}},
	{TypeOrganization, []string{UpdateOrgName, UpdateOrgDefaultUserPermissions, UpdateOrgSortFlagsBy, CreateOrg, DeleteOrg}},
	{TypeIAM, []string{CanManageIAM}},
	{TypeAccessToken, []string{ListAccessTokens, ManagePersonalAccessTokens, ManageServiceAccessTokens}},
	{TypeProject, []string{CanAccessProject, CreateProject, DeleteProject, UpdateProjectSettings, CreateEnv}},
	{TypeEnv, []string{CanAccessEnv, DeleteEnv, UpdateEnvSettings, CreateEnvSecret, UpdateEnvSecret, DeleteEnvSecret}},
	{TypeFlag, []string{CreateFlag, ArchiveFlag, RestoreFlag, DeleteFlag, CloneFlag, ToggleFlag,
		UpdateFlagName, UpdateFlagDescription, UpdateFlagOffVariation, UpdateFlagVariations, UpdateFlagTags,
		UpdateFlagDefaultRule, UpdateFlagIndividualTargeting, UpdateFlagTargetingRules}},
	{TypeSegment, []string{CreateSegment, ArchiveSegment, RestoreSegment, DeleteSegment, UpdateSegmentName,
		UpdateSegmentDescription, UpdateSegmentTags, UpdateSegmentTargetingUsers, UpdateSegmentRules}},
}

// actionType maps each action to its resource type.
var actionType = func() map[string]string {
	m := map[string]string{}
	for _, g := range Catalogue {
		for _, a := range g.Actions {
			m[a] = g.ResourceType
		}
	}
	return m
}()

// Built-in policy ids, the same as FeatBit's so exported statements carry over.
var (
	OwnerPolicyID         = uuid.MustParse("98881f6a-5c6c-4277-bcf7-fda94c538785")
	AdministratorPolicyID = uuid.MustParse("3e961f0f-6fd4-4cf4-910f-52d356f8cc08")
	DeveloperPolicyID     = uuid.MustParse("66f3687f-939d-4257-bd3f-c3553d39e1b6")
)

// builtinPolicy is a SysManaged policy as code defines it; bootstrap keeps the
// database copy equal to it.
type builtinPolicy struct {
	id                     uuid.UUID
	name, key, description string
	statements             []Statement
}

func allow(id, rtype string, resources string, actions ...string) Statement {
	return Statement{ID: id, ResourceType: rtype, Effect: "allow", Actions: actions, Resources: []string{resources}}
}

var builtinPolicies = []builtinPolicy{
	{OwnerPolicyID, "Owner", "owner", "Full access to everything in the organization.", []Statement{
		allow("owner-all", TypeAll, "*", "*"),
	}},
	{AdministratorPolicyID, "Administrator", "administrator", "Manages the organization, its members, projects and flags.", []Statement{
		allow("admin-organization", TypeOrganization, "organization/*", UpdateOrgSortFlagsBy, UpdateOrgName, UpdateOrgDefaultUserPermissions, CreateOrg),
		allow("admin-iam", TypeIAM, "iam/*", CanManageIAM),
		allow("admin-access-token", TypeAccessToken, "access-token/*", ListAccessTokens, ManagePersonalAccessTokens, ManageServiceAccessTokens),
		allow("admin-project", TypeProject, "project/*", CanAccessProject, CreateProject, DeleteProject, UpdateProjectSettings, CreateEnv),
		allow("admin-env", TypeEnv, "project/*:env/*", CanAccessEnv, DeleteEnv, UpdateEnvSettings, CreateEnvSecret, DeleteEnvSecret, UpdateEnvSecret),
		allow("admin-workspace", TypeWorkspace, "workspace/*", UpdateWorkspaceGeneralSettings, UpdateWorkspaceLicense, UpdateWorkspaceSSOSettings),
		allow("admin-flag", TypeFlag, "project/*:env/*:flag/*", "*"),
		allow("admin-segment", TypeSegment, "project/*:env/*:segment/*", "*"),
	}},
	{DeveloperPolicyID, "Developer", "developer", "Works with flags and segments in every project.", []Statement{
		allow("developer-access-token", TypeAccessToken, "access-token/*", ListAccessTokens, ManagePersonalAccessTokens, ManageServiceAccessTokens),
		allow("developer-project", TypeProject, "project/*", CanAccessProject),
		allow("developer-env", TypeEnv, "project/*:env/*", CanAccessEnv),
		allow("developer-flag", TypeFlag, "project/*:env/*:flag/*", "*"),
		allow("developer-segment", TypeSegment, "project/*:env/*:segment/*", "*"),
	}},
}

// allows reports whether statements allow action on the resource named rn:
// at least one statement allows it and none denies it.
func allows(statements []Statement, action, rn string) bool {
	rtype := actionType[action]
	allowed := false
	for _, st := range statements {
		if !st.covers(action, rtype, rn) {
			continue
		}
		if st.Effect != "allow" {
			return false
		}
		allowed = true
	}
	return allowed
}

// covers reports whether the statement speaks about action on rn.
func (st Statement) covers(action, rtype, rn string) bool {
	if st.ResourceType != TypeAll && st.ResourceType != rtype {
		return false
	}
	if !slices.Contains(st.Actions, "*") && !slices.Contains(st.Actions, action) {
		return false
	}
	return slices.ContainsFunc(st.Resources, func(p string) bool { return MatchResource(p, rn) })
}

// MatchResource reports whether a resource-name pattern matches a resource
// name. Both are ":"-separated parts of "type/key", optionally followed by
// ";tag1,tag2". Each pattern part must match the name's part at the same
// place, "*" standing for any run of characters; a pattern with fewer parts
// matches everything below it; a pattern part with tags needs at least one
// tag in common with the name's part.
func MatchResource(pattern, name string) bool {
	if pattern == "" || name == "" {
		return false
	}
	pp, np := strings.Split(pattern, ":"), strings.Split(name, ":")
	if len(pp) > len(np) {
		return false
	}
	for i, p := range pp {
		if !matchPart(p, np[i]) {
			return false
		}
	}
	return true
}

func matchPart(pattern, name string) bool {
	pbody, ptags, ptagged := strings.Cut(pattern, ";")
	nbody, ntags, _ := strings.Cut(name, ";")
	if !glob(pbody, nbody) {
		return false
	}
	if !ptagged {
		return true
	}
	for _, pt := range strings.Split(ptags, ",") {
		for _, nt := range strings.Split(ntags, ",") {
			if pt != "" && nt != "" && glob(pt, nt) {
				return true
			}
		}
	}
	return false
}

// glob matches name against pattern where "*" stands for any run of
// characters, in linear time (no backtracking blow-up on hostile patterns).
func glob(pattern, name string) bool {
	px, nx := 0, 0
	starPx, starNx := -1, 0
	for nx < len(name) {
		switch {
		case px < len(pattern) && pattern[px] == '*':
			starPx, starNx = px, nx
			px++
		case px < len(pattern) && pattern[px] == name[nx]:
			px++
			nx++
		case starPx >= 0:
			px = starPx + 1
			starNx++
			nx = starNx
		default:
			return false
		}
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}

// Resource names for permission checks (no organization prefix), exported so
// the admin pages can hide exactly what the store would refuse.

// WorkspaceRN names a workspace by key.
func WorkspaceRN(key string) string { return "workspace/" + key }

// OrganizationRN names an organization by key; OrganizationRN("*") names any.
func OrganizationRN(key string) string { return "organization/" + key }

// ProjectRN names a project by key; ProjectRN("*") names any project.
func ProjectRN(projectKey string) string { return "project/" + projectKey }

// EnvRN names an environment of a project; EnvRN(projectKey, "*") names any of them.
func EnvRN(projectKey, envKey string) string { return ProjectRN(projectKey) + ":env/" + envKey }

// IAMRN names identity and access management; AccessTokenRN every access token.
const (
	IAMRN         = "iam/*"
	AccessTokenRN = "access-token/*"
)

// validateStatements checks statements of a policy or Service token: known
// resource type and effect, actions that exist for the type (or "*"), and
// non-empty well-formed resource patterns.
func validateStatements(statements []Statement) bool {
	return len(StatementProblems(statements)) == 0
}

// StatementProblems tells editors of statements which of them are invalid
// and why, so a page can point at the statement behind statements_is_invalid:
// by index, the first field found wrong ("effect", "resourceType", "actions"
// or "resources"). Valid statements are absent.
func StatementProblems(statements []Statement) map[int]string {
	out := map[int]string{}
	for i, st := range statements {
		if field := statementProblem(st); field != "" {
			out[i] = field
		}
	}
	return out
}

func statementProblem(st Statement) string {
	if st.Effect != "allow" && st.Effect != "deny" {
		return "effect"
	}
	if st.ResourceType != TypeAll && !slices.ContainsFunc(Catalogue, func(g ActionGroup) bool { return g.ResourceType == st.ResourceType }) {
		return "resourceType"
	}
	if len(st.Actions) == 0 {
		return "actions"
	}
	for _, a := range st.Actions {
		if a != "*" && (st.ResourceType != TypeAll && actionType[a] != st.ResourceType || st.ResourceType == TypeAll && actionType[a] == "") {
			return "actions"
		}
	}
	if len(st.Resources) == 0 {
		return "resources"
	}
	for _, r := range st.Resources {
		if !wellFormedPattern(r) {
			return "resources"
		}
	}
	return ""
}

// wellFormedPattern accepts "*" or ":"-separated "type/key[;tags]" parts of
// printable characters.
func wellFormedPattern(p string) bool {
	if p == "*" {
		return true
	}
	if p == "" || len(p) > 1024 {
		return false
	}
	for _, part := range strings.Split(p, ":") {
		body, tags, _ := strings.Cut(part, ";")
		typ, key, ok := strings.Cut(body, "/")
		if !ok || typ == "" || key == "" || strings.ContainsAny(tags, ";") {
			return false
		}
		for _, r := range part {
			if r < 0x21 || r == 0x7f {
				return false
			}
		}
	}
	return true
}
