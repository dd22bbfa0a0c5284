package store

import "github.com/bunting-flags/bunting/sql/access"

// The names below moved to package access; they stay here only until the
// callers name access directly (a scripted rename), so that parallel
// changes keep compiling. Do not add to this file.

type (
	Statement   = access.Statement
	ActionGroup = access.ActionGroup
)

var (
	Catalogue         = access.Catalogue
	MatchResource     = access.MatchResource
	StatementProblems = access.StatementProblems
)

const (
	TypeAll                         = access.TypeAll
	TypeWorkspace                   = access.TypeWorkspace
	TypeOrganization                = access.TypeOrganization
	TypeIAM                         = access.TypeIAM
	TypeAccessToken                 = access.TypeAccessToken
	TypeProject                     = access.TypeProject
	TypeEnv                         = access.TypeEnv
	TypeFlag                        = access.TypeFlag
	TypeSegment                     = access.TypeSegment
	UpdateWorkspaceGeneralSettings  = access.UpdateWorkspaceGeneralSettings
	UpdateWorkspaceLicense          = access.UpdateWorkspaceLicense
	UpdateWorkspaceSSOSettings      = access.UpdateWorkspaceSSOSettings
	UpdateOrgName                   = access.UpdateOrgName
	UpdateOrgDefaultUserPermissions = access.UpdateOrgDefaultUserPermissions
	UpdateOrgSortFlagsBy            = access.UpdateOrgSortFlagsBy
	CreateOrg                       = access.CreateOrg
	DeleteOrg                       = access.DeleteOrg
	CanManageIAM                    = access.CanManageIAM
	ListAccessTokens                = access.ListAccessTokens
	ManagePersonalAccessTokens      = access.ManagePersonalAccessTokens
	ManageServiceAccessTokens       = access.ManageServiceAccessTokens
	CanAccessProject                = access.CanAccessProject
	CreateProject                   = access.CreateProject
	DeleteProject                   = access.DeleteProject
	UpdateProjectSettings           = access.UpdateProjectSettings
	CreateEnv                       = access.CreateEnv
	CanAccessEnv                    = access.CanAccessEnv
	DeleteEnv                       = access.DeleteEnv
	UpdateEnvSettings               = access.UpdateEnvSettings
	CreateEnvSecret                 = access.CreateEnvSecret
	UpdateEnvSecret                 = access.UpdateEnvSecret
	DeleteEnvSecret                 = access.DeleteEnvSecret
	CreateFlag                      = access.CreateFlag
	ArchiveFlag                     = access.ArchiveFlag
	RestoreFlag                     = access.RestoreFlag
	DeleteFlag                      = access.DeleteFlag
	CloneFlag                       = access.CloneFlag
	ToggleFlag                      = access.ToggleFlag
	UpdateFlagName                  = access.UpdateFlagName
	UpdateFlagDescription           = access.UpdateFlagDescription
	UpdateFlagOffVariation          = access.UpdateFlagOffVariation
	UpdateFlagVariations            = access.UpdateFlagVariations
	UpdateFlagTags                  = access.UpdateFlagTags
	UpdateFlagDefaultRule           = access.UpdateFlagDefaultRule
	UpdateFlagIndividualTargeting   = access.UpdateFlagIndividualTargeting
	UpdateFlagTargetingRules        = access.UpdateFlagTargetingRules
	CreateSegment                   = access.CreateSegment
	ArchiveSegment                  = access.ArchiveSegment
	RestoreSegment                  = access.RestoreSegment
	DeleteSegment                   = access.DeleteSegment
	UpdateSegmentName               = access.UpdateSegmentName
	UpdateSegmentDescription        = access.UpdateSegmentDescription
	UpdateSegmentTags               = access.UpdateSegmentTags
	UpdateSegmentTargetingUsers     = access.UpdateSegmentTargetingUsers
	UpdateSegmentRules              = access.UpdateSegmentRules
)
