package store

import (
	"github.com/bunting-flags/bunting/sql/access"

	"context"

	"github.com/google/uuid"
)

// The pages offer a control only when the store would accept what it sends.
// Rather than restate the store's rules, they ask the store: the answers
// below are built from the same checks the operations make.

// EnvRights tells what a person may create in an environment, and what they
// may do to its flags.
type EnvRights struct {
	CreateFlag    bool
	CreateSegment bool

	a   *Actor
	env envRow
}

// FlagRights tells which of a flag's controls a person may use. An archived
// flag is read-only: only restoring and deleting it are offered.
type FlagRights struct {
	Toggle       bool
	OffVariation bool
	// Targeting is any of individual targets, rules and the default rule:
	// the editor saves whole, and the store checks only the parts that change.
	Targeting   bool
	Variations  bool
	Name        bool
	Description bool
	Tags        bool
	// Clone needs cloning the flag and creating flags in its environment.
	Clone   bool
	Archive bool
	Restore bool
	Delete  bool

	permits func(action access.Action) bool
}

// Permits tells whether the person holds action on the flag, whatever the
// flag's state: a confirmation page offers its button on this, so that a
// change the state refuses (deleting a live flag) is explained when tried.
func (r FlagRights) Permits(action access.Action) bool { return r.permits(action) }

// EnvRights answers what a person may do in an environment of their organization.
func (s *Store) EnvRights(ctx context.Context, a *Actor, envID uuid.UUID) (EnvRights, error) {
	env, err := s.environmentOf(ctx, a, envID)
	if err != nil {
		return EnvRights{}, err
	}
	return envRights(a, env), nil
}

func envRights(a *Actor, env envRow) EnvRights {
	return EnvRights{CreateFlag: mayCreateFlag(a, env) == nil, CreateSegment: mayCreateSegment(a, env) == nil, a: a, env: env}
}

// Flag answers what the person may do to the flag with this key, tags and
// state (a list row has no more of it than that).
func (r EnvRights) Flag(key string, tags []string, archived bool) FlagRights {
	f := Flag{Key: key, Tags: tags, IsArchived: archived}
	may := func(action access.Action) bool {
		return requireFlagActions(r.a, r.env, []access.Action{action}, f) == nil
	}
	change := func(action access.Action) bool { return !archived && may(action) }
	return FlagRights{
		Toggle: change(access.ToggleFlag), OffVariation: change(access.UpdateFlagOffVariation),
		Targeting:  change(access.UpdateFlagIndividualTargeting) || change(access.UpdateFlagTargetingRules) || change(access.UpdateFlagDefaultRule),
		Variations: change(access.UpdateFlagVariations), Name: change(access.UpdateFlagName), Description: change(access.UpdateFlagDescription),
		Tags: change(access.UpdateFlagTags), Clone: mayCloneFlag(r.a, r.env, f) == nil,
		Archive: change(access.ArchiveFlag), Restore: archived && may(access.RestoreFlag), Delete: mayDeleteFlag(r.a, r.env, f) == nil,
		permits: may,
	}
}

// SegmentRights tells which of a segment's controls a person may use: the
// actions allowed on it in every environment it is visible in, as its
// changes are checked. An archived segment is offered read-only, as an
// archived flag is, though the API still changes it.
type SegmentRights struct {
	// Targeting is either who is in the segment or its rules: the editor
	// saves whole, and the store checks only the parts that change.
	Targeting   bool
	Name        bool
	Description bool
	Tags        bool
	Archive     bool
	Restore     bool
	Delete      bool

	permits func(action access.Action) bool
}

// Permits tells whether the person holds action on the segment in every
// environment it is visible in, whatever its state, as FlagRights.Permits.
func (r SegmentRights) Permits(action access.Action) bool { return r.permits(action) }

// SegmentRights answers what a person may do to a segment.
func (s *Store) SegmentRights(ctx context.Context, a *Actor, envID uuid.UUID, sg Segment) (SegmentRights, error) {
	env, err := s.readableEnv(ctx, a, envID)
	if err != nil {
		return SegmentRights{}, err
	}
	envs, err := visibleEnvs(ctx, s.q, env, sg)
	if err != nil {
		return SegmentRights{}, err
	}
	may := func(action access.Action) bool { return requireInEnvs(a, []access.Action{action}, envs, sg) == nil }
	change := func(action access.Action) bool { return !sg.IsArchived && may(action) }
	return SegmentRights{
		Targeting: change(access.UpdateSegmentTargetingUsers) || change(access.UpdateSegmentRules),
		Name:      change(access.UpdateSegmentName), Description: change(access.UpdateSegmentDescription), Tags: change(access.UpdateSegmentTags),
		Archive: change(access.ArchiveSegment), Restore: sg.IsArchived && may(access.RestoreSegment), Delete: may(access.DeleteSegment),
		permits: may,
	}, nil
}

// TokenRights tells what a person may do with access tokens of one type.
type TokenRights struct {
	// Create is creating one; a Service token also needs managing IAM, as
	// it is created with permissions.
	Create bool
	// SetPermissions is changing a Service token's permissions.
	SetPermissions bool
}

// AccessTokenRights answers what a person may do with tokens of type typ;
// AccessTokenAccess what they may do with one of them.
func AccessTokenRights(a *Actor, typ string) TokenRights {
	return TokenRights{Create: mayCreateToken(a, typ) == nil, SetPermissions: maySetTokenPermissions(a) == nil}
}

// OrgRights tells what a person may do in an organization: which of its
// settings they may change (a change is checked on the settings it
// changes), and what they may do there.
type OrgRights struct {
	Name               bool
	DefaultPermissions bool
	SortFlagsBy        bool
	Delete             bool
	// ManageIAM is managing its members, groups and policies.
	ManageIAM bool
	// Webhooks is managing its webhooks.
	Webhooks         bool
	ListAccessTokens bool
	CreateProject    bool
	// CreateOrganization is creating another organization in the workspace.
	CreateOrganization bool

	a *Actor
}

// Settings tells whether the person may change any of the settings the
// organization's page shows: its name or its default permissions.
func (r OrgRights) Settings() bool { return r.Name || r.DefaultPermissions }

// OrganizationRights answers what a person may do in the organization with
// this key.
func OrganizationRights(a *Actor, key string) OrgRights {
	rn := OrganizationRN(key)
	return OrgRights{Name: a.Can(access.UpdateOrgName, rn), DefaultPermissions: a.Can(access.UpdateOrgDefaultUserPermissions, rn),
		SortFlagsBy: a.Can(access.UpdateOrgSortFlagsBy, rn), Delete: mayDeleteOrganization(a, key) == nil,
		ManageIAM: a.requireIAM() == nil, Webhooks: a.Can(WebhookAction, rn), ListAccessTokens: mayListAccessTokens(a) == nil,
		CreateProject: mayCreateProject(a) == nil, CreateOrganization: mayCreateOrganization(a) == nil, a: a}
}

// Project answers what the person may do to the project with this key.
func (r OrgRights) Project(key string) ProjectRights {
	return ProjectRights{Rename: mayRenameProject(r.a, key) == nil, Delete: mayDeleteProject(r.a, key) == nil,
		CreateEnv: mayCreateEnvironment(r.a, key) == nil, a: r.a, key: key}
}

// ProjectRights tells what a person may do to a project.
type ProjectRights struct {
	Rename    bool
	Delete    bool
	CreateEnv bool

	a   *Actor
	key string
}

// Env answers what the person may do to the project's environment with this key.
func (r ProjectRights) Env(key string) EnvironmentRights {
	rn := EnvRN(r.key, key)
	return EnvironmentRights{Settings: r.a.Can(access.UpdateEnvSettings, rn), Delete: r.a.Can(access.DeleteEnv, rn),
		CreateSecret: r.a.Can(access.CreateEnvSecret, rn), RenameSecret: r.a.Can(access.UpdateEnvSecret, rn),
		DeleteSecret: r.a.Can(access.DeleteEnvSecret, rn)}
}

// EnvironmentRights tells what a person may do to an environment itself:
// its settings and secrets, and deleting it.
type EnvironmentRights struct {
	Settings     bool
	Delete       bool
	CreateSecret bool
	RenameSecret bool
	DeleteSecret bool
}

// The checks of the organization's and projects' operations that the rights
// above answer too.

func mayDeleteOrganization(a *Actor, key string) error {
	return a.require(access.DeleteOrg, OrganizationRN(key))
}

func mayCreateOrganization(a *Actor) error { return a.require(access.CreateOrg, OrganizationRN("*")) }

func mayListAccessTokens(a *Actor) error { return a.require(access.ListAccessTokens, AccessTokenRN) }

func mayCreateProject(a *Actor) error { return a.require(access.CreateProject, ProjectRN("*")) }

func mayRenameProject(a *Actor, key string) error {
	return a.require(access.UpdateProjectSettings, ProjectRN(key))
}

func mayDeleteProject(a *Actor, key string) error {
	return a.require(access.DeleteProject, ProjectRN(key))
}

func mayCreateEnvironment(a *Actor, projectKey string) error {
	return a.require(access.CreateEnv, EnvRN(projectKey, "*"))
}
