// Package access decides what statements allow: which actions exist, how a
// resource-name pattern matches a resource name, and how allows and denies
// combine. It needs no database, so the store and its fuzz tests share it.
package access

import (
	"slices"
	"strings"
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
	TypeRelayProxy   = "relay-proxy"
	TypeProject      = "project"
	TypeEnv          = "env"
	TypeFlag         = "flag"
	TypeSegment      = "segment"
)

// Action is something a statement may allow or deny, by FeatBit's name. A
// type of its own, so that an action (access.CreateFlag) and the store method
// that needs it ((*store.Store).CreateFlag) cannot be mistaken for each other.
type Action string

// Actions, by FeatBit's names.
const (
	UpdateWorkspaceGeneralSettings Action = "UpdateWorkspaceGeneralSettings"
	UpdateWorkspaceLicense         Action = "UpdateWorkspaceLicense"
	UpdateWorkspaceSSOSettings     Action = "UpdateWorkspaceSSOSettings"

	UpdateOrgName                   Action = "UpdateOrgName"
	UpdateOrgDefaultUserPermissions Action = "UpdateOrgDefaultUserPermissions"
	UpdateOrgSortFlagsBy            Action = "UpdateOrgSortFlagsBy"
	CreateOrg                       Action = "CreateOrg"
	// DeleteOrg is Bunting's: FeatBit lets any member delete the current
	// organization; here only a policy naming this action (Owner's "*") may.
	DeleteOrg Action = "DeleteOrg"

	CanManageIAM Action = "CanManageIAM"

	ListAccessTokens           Action = "ListAccessTokens"
	ManagePersonalAccessTokens Action = "ManagePersonalAccessTokens"
	ManageServiceAccessTokens  Action = "ManageServiceAccessTokens"

	// Relay proxies are the organization's; FeatBit checks these in its UI
	// only, Bunting in the store.
	ListRelayProxies   Action = "ListRelayProxies"
	ManageRelayProxies Action = "ManageRelayProxies"

	CanAccessProject      Action = "CanAccessProject"
	CreateProject         Action = "CreateProject"
	DeleteProject         Action = "DeleteProject"
	UpdateProjectSettings Action = "UpdateProjectSettings"
	CreateEnv             Action = "CreateEnv"

	CanAccessEnv      Action = "CanAccessEnv"
	DeleteEnv         Action = "DeleteEnv"
	UpdateEnvSettings Action = "UpdateEnvSettings"
	CreateEnvSecret   Action = "CreateEnvSecret"
	UpdateEnvSecret   Action = "UpdateEnvSecret"
	DeleteEnvSecret   Action = "DeleteEnvSecret"

	CreateFlag                    Action = "CreateFlag"
	ArchiveFlag                   Action = "ArchiveFlag"
	RestoreFlag                   Action = "RestoreFlag"
	DeleteFlag                    Action = "DeleteFlag"
	CloneFlag                     Action = "CloneFlag"
	CopyFlagTo                    Action = "CopyFlagTo"
	ToggleFlag                    Action = "ToggleFlag"
	UpdateFlagName                Action = "UpdateFlagName"
	UpdateFlagDescription         Action = "UpdateFlagDescription"
	UpdateFlagOffVariation        Action = "UpdateFlagOffVariation"
	UpdateFlagVariations          Action = "UpdateFlagVariations"
	UpdateFlagTags                Action = "UpdateFlagTags"
	UpdateFlagDefaultRule         Action = "UpdateFlagDefaultRule"
	UpdateFlagIndividualTargeting Action = "UpdateFlagIndividualTargeting"
	UpdateFlagTargetingRules      Action = "UpdateFlagTargetingRules"

	CreateSegment               Action = "CreateSegment"
	ArchiveSegment              Action = "ArchiveSegment"
	RestoreSegment              Action = "RestoreSegment"
	DeleteSegment               Action = "DeleteSegment"
	UpdateSegmentName           Action = "UpdateSegmentName"
	UpdateSegmentDescription    Action = "UpdateSegmentDescription"
	UpdateSegmentTags           Action = "UpdateSegmentTags"
	UpdateSegmentTargetingUsers Action = "UpdateSegmentTargetingUsers"
	UpdateSegmentRules          Action = "UpdateSegmentRules"
)

// ActionGroup is the actions of one resource type, as the catalogue lists them.
type ActionGroup struct {
	ResourceType string   `json:"resourceType"`
	Actions      []Action `json:"actions"`
}

// Catalogue is every action the server checks, by resource type.
var Catalogue = []ActionGroup{
	{TypeWorkspace, []Action{UpdateWorkspaceGeneralSettings, UpdateWorkspaceLicense, UpdateWorkspaceSSOSettings}},
	{TypeOrganization, []Action{UpdateOrgName, UpdateOrgDefaultUserPermissions, UpdateOrgSortFlagsBy, CreateOrg, DeleteOrg}},
	{TypeIAM, []Action{CanManageIAM}},
	{TypeAccessToken, []Action{ListAccessTokens, ManagePersonalAccessTokens, ManageServiceAccessTokens}},
	{TypeRelayProxy, []Action{ListRelayProxies, ManageRelayProxies}},
	{TypeProject, []Action{CanAccessProject, CreateProject, DeleteProject, UpdateProjectSettings, CreateEnv}},
	{TypeEnv, []Action{CanAccessEnv, DeleteEnv, UpdateEnvSettings, CreateEnvSecret, UpdateEnvSecret, DeleteEnvSecret}},
	{TypeFlag, []Action{CreateFlag, ArchiveFlag, RestoreFlag, DeleteFlag, CloneFlag, CopyFlagTo, ToggleFlag,
		UpdateFlagName, UpdateFlagDescription, UpdateFlagOffVariation, UpdateFlagVariations, UpdateFlagTags,
		UpdateFlagDefaultRule, UpdateFlagIndividualTargeting, UpdateFlagTargetingRules}},
	{TypeSegment, []Action{CreateSegment, ArchiveSegment, RestoreSegment, DeleteSegment, UpdateSegmentName,
		UpdateSegmentDescription, UpdateSegmentTags, UpdateSegmentTargetingUsers, UpdateSegmentRules}},
}

// MaxStatements is the most statements a policy or a Service token may
// hold: far more than anyone writes (the built-in policies hold a few), and
// few enough that reading, checking and storing them costs little.
const MaxStatements = 1000

// MaxActions is the most actions one statement may name: every action of
// the catalogue once, and "*". A longer list repeats itself.
var MaxActions = len(actionType) + 1

// actionType maps each action to its resource type.
var actionType = func() map[Action]string {
	m := map[Action]string{}
	for _, g := range Catalogue {
		for _, a := range g.Actions {
			m[a] = g.ResourceType
		}
	}
	return m
}()

// Allows reports whether statements allow action on the resource named rn:
// at least one statement allows it and none denies it.
func Allows(statements []Statement, action Action, rn string) bool {
	allowed, _ := Decide(statements, action, rn)
	return allowed
}

// Decide is Allows with the statement that decided, by index: the first
// that denies, else the first that allows; -1 when none speaks about action
// on rn (which denies).
func Decide(statements []Statement, action Action, rn string) (allowed bool, by int) {
	rtype := actionType[action]
	by = -1
	for i, st := range statements {
		if !st.covers(action, rtype, rn) {
			continue
		}
		if st.Effect != "allow" {
			return false, i
		}
		if by < 0 {
			by = i
		}
	}
	return by >= 0, by
}

// covers reports whether the statement speaks about action on rn.
func (st Statement) covers(action Action, rtype, rn string) bool {
	if st.ResourceType != TypeAll && st.ResourceType != rtype {
		return false
	}
	if !slices.Contains(st.Actions, "*") && !slices.Contains(st.Actions, string(action)) {
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

// ValidStatements checks statements of a policy or Service token: known
// resource type and effect, actions that exist for the type (or "*"), and
// non-empty well-formed resource patterns.
func ValidStatements(statements []Statement) bool {
	return len(statements) <= MaxStatements && len(StatementProblems(statements)) == 0
}

// StatementProblems tells editors of statements which of them are invalid
// and why, so a page can point at what is behind statements_is_invalid: by
// index, every field found wrong, in the order "effect", "resourceType",
// "actions", "resources". Valid statements are absent.
func StatementProblems(statements []Statement) map[int][]string {
	out := map[int][]string{}
	for i, st := range statements {
		if fields := statementProblems(st); len(fields) > 0 {
			out[i] = fields
		}
	}
	return out
}

func statementProblems(st Statement) []string {
	var fields []string
	if st.Effect != "allow" && st.Effect != "deny" {
		fields = append(fields, "effect")
	}
	knownType := st.ResourceType == TypeAll || slices.ContainsFunc(Catalogue, func(g ActionGroup) bool { return g.ResourceType == st.ResourceType })
	if !knownType {
		fields = append(fields, "resourceType")
	}
	// Actions are judged by a known type; under an unknown one only their absence is.
	if len(st.Actions) == 0 || len(st.Actions) > MaxActions || knownType && slices.ContainsFunc(st.Actions, func(a string) bool {
		return a != "*" && (st.ResourceType != TypeAll && actionType[Action(a)] != st.ResourceType || st.ResourceType == TypeAll && actionType[Action(a)] == "")
	}) {
		fields = append(fields, "actions")
	}
	if len(st.Resources) == 0 || slices.ContainsFunc(st.Resources, func(r string) bool { return !wellFormedPattern(r) }) {
		fields = append(fields, "resources")
	}
	return fields
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
