package core

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
)

// Resource names offered by the policy editor and the segment scope picker
// (FeatBit's GET /api/v1/resources and /api/v2/resources). Projects and
// environments are listed when the caller may access them or manages IAM
// (who can grant themselves anything anyway); the "all" entries are fixed.

// Resource is a resource a statement can name (FeatBit's Resource).
type Resource struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
	RN   string    `json:"rn"`
	Type string    `json:"type"`
}

// ResourceV2 is a resource with its path of names and an organization-
// prefixed name, as segment scopes use (FeatBit's ResourceV2).
type ResourceV2 struct {
	ID       uuid.UUID `json:"id"`
	Name     string    `json:"name"`
	PathName string    `json:"pathName"`
	RN       string    `json:"rn"`
	Type     string    `json:"type"`
}

// ResourceFilter selects resources of one type whose name contains Name.
type ResourceFilter struct {
	Type string
	Name string
}

// ResourceFilterV2 selects resources of some types (organization, project,
// env) at a space level: the current organization, or every organization of
// the workspace the caller belongs to.
type ResourceFilterV2 struct {
	SpaceLevel string
	Name       string
	Types      []string
}

// Space levels of ResourceFilterV2.
const (
	SpaceWorkspace    = "workspace"
	SpaceOrganization = "organization"
)

// allResources are the fixed "every resource of a type" entries, with
// FeatBit's ids so clients that remember them keep working.
var allResources = map[string]Resource{
	access.TypeAll:          {uuid.MustParse("2bdcb290-2e1b-40d7-bdd1-697fb2193292"), "all", "*", access.TypeAll},
	access.TypeWorkspace:    {uuid.MustParse("5208c66b-ae1e-4985-a253-9250f02f354d"), "workspace", "workspace/*", access.TypeWorkspace},
	access.TypeOrganization: {uuid.MustParse("e394832e-bd98-43de-b174-e0c98e03d19d"), "organization", "organization/*", access.TypeOrganization},
	access.TypeIAM:          {uuid.MustParse("d8791bd2-ca85-4629-a439-1dce20764211"), "iam", IAMRN, access.TypeIAM},
	access.TypeAccessToken:  {uuid.MustParse("150083da-e20f-4670-948c-b842cf8a91a4"), "access token", AccessTokenRN, access.TypeAccessToken},
	access.TypeRelayProxy:   {uuid.MustParse("7d5c3f4e-2a1b-4c8e-9f60-3b2a1d0e5c47"), "relay proxy", RelayProxyRN, access.TypeRelayProxy},
	access.TypeProject:      {uuid.MustParse("e77679a2-e79b-43e5-aa9f-fd6c980239be"), "project", "project/*", access.TypeProject},
	access.TypeEnv:          {uuid.MustParse("c62ed37a-74a9-4987-8ef4-b5a16127f307"), "env", "project/*:env/*", access.TypeEnv},
	access.TypeFlag:         {uuid.MustParse("cc97e362-9688-44b6-9532-2f82f19e1316"), "flag", "project/*:env/*:flag/*", access.TypeFlag},
	access.TypeSegment:      {uuid.MustParse("f03a822a-047f-11ee-be56-0242ac120002"), "segment", "project/*:env/*:segment/*", access.TypeSegment},
}

// allResourcesV2 are the v2 "every resource of a type" entries, listed
// first when no name filter is given.
var allResourcesV2 = map[string]ResourceV2{
	access.TypeOrganization: {allResources[access.TypeOrganization].ID, "All Organizations", "All Organizations", "organization/*", access.TypeOrganization},
	access.TypeProject:      {allResources[access.TypeProject].ID, "All Projects", "All Projects", "organization/*:project/*", access.TypeProject},
	access.TypeEnv:          {allResources[access.TypeEnv].ID, "All Environments", "All Environments", "organization/*:project/*:env/*", access.TypeEnv},
}

// ListResources lists the resources of one type in the current organization
// by their permission names: for projects and environments the "all" entry
// then each one the caller may see; for other types the "all" entry only.
func (s *Core) ListResources(ctx context.Context, a *Actor, f ResourceFilter) ([]Resource, error) {
	orgID, err := a.Org()
	if err != nil {
		return nil, err
	}
	all, ok := allResources[f.Type]
	switch {
	case f.Type == "":
		return nil, Invalid("type_is_required")
	case !ok:
		return nil, Invalid("type_is_invalid")
	}
	out := []Resource{all}
	name := strings.ToLower(strings.TrimSpace(f.Name))
	switch f.Type {
	case access.TypeProject:
		rows, err := s.Q.ListResourceProjects(ctx, []uuid.UUID{orgID})
		if err != nil {
			return nil, Translate(err)
		}
		for _, r := range rows {
			rn := ProjectRN(r.Key)
			if contains(r.Name, name) && seesResource(a.Granted, access.CanAccessProject, rn) {
				out = append(out, Resource{r.ID, r.Name, rn, access.TypeProject})
			}
		}
	case access.TypeEnv:
		rows, err := s.Q.ListResourceEnvironments(ctx, []uuid.UUID{orgID})
		if err != nil {
			return nil, Translate(err)
		}
		for _, r := range rows {
			rn := EnvRN(r.ProjectKey, r.Key)
			if contains(r.Name, name) && seesResource(a.Granted, access.CanAccessEnv, rn) {
				out = append(out, Resource{r.ID, r.Name, rn, access.TypeEnv})
			}
		}
	}
	return out, nil
}

// ListResourcesV2 lists organizations, projects and environments by their
// organization-prefixed names, of the current organization or of every
// organization of the workspace the caller belongs to (an access token: its
// own). Without a name filter each type starts with its "all" entry.
func (s *Core) ListResourcesV2(ctx context.Context, a *Actor, f ResourceFilterV2) ([]ResourceV2, error) {
	var v Validator
	v.OneOf("spaceLevel", f.SpaceLevel, SpaceWorkspace, SpaceOrganization)
	if len(f.Types) == 0 {
		v.Add("types", "required")
	}
	for _, t := range f.Types {
		if _, ok := allResourcesV2[t]; !ok {
			v.Add("types", "invalid")
			break
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	orgID, err := a.Org()
	if err != nil {
		return nil, err
	}
	workspace := f.SpaceLevel == SpaceWorkspace
	// The organizations in space and the caller's statements in each.
	orgs := []uuid.UUID{orgID}
	statements := map[uuid.UUID][]access.Statement{orgID: a.Granted}
	var orgRows []db.Organization
	if workspace && !a.IsToken() {
		if orgRows, err = s.Q.ListUserOrganizations(ctx, db.ListUserOrganizationsParams{WorkspaceID: a.WorkspaceID, UserID: a.UserID}); err != nil {
			return nil, Translate(err)
		}
		orgs = orgs[:0]
		for _, o := range orgRows {
			orgs = append(orgs, o.ID)
			if o.ID != orgID {
				if statements[o.ID], err = s.MemberStatements(ctx, s.Q, o.ID, a.UserID); err != nil {
					return nil, err
				}
			}
		}
	} else if workspace {
		o, err := s.Q.GetOrganization(ctx, orgID)
		if err != nil {
			return nil, Translate(err)
		}
		orgRows = []db.Organization{o}
	}
	name := strings.ToLower(strings.TrimSpace(f.Name))
	var out []ResourceV2
	for _, t := range f.Types {
		if name == "" {
			out = append(out, allResourcesV2[t])
		}
		switch t {
		case access.TypeOrganization:
			if !workspace { // FeatBit lists organizations only at the workspace level
				continue
			}
			for _, o := range orgRows {
				if contains(o.Name, name) {
					out = append(out, ResourceV2{o.ID, o.Name, o.Name, OrganizationRN(o.Key), access.TypeOrganization})
				}
			}
		case access.TypeProject:
			rows, err := s.Q.ListResourceProjects(ctx, orgs)
			if err != nil {
				return nil, Translate(err)
			}
			for _, r := range rows {
				path := r.Name
				if workspace {
					path = r.OrganizationName + "/" + r.Name
				}
				if contains(r.Name, name) && seesResource(statements[r.OrganizationID], access.CanAccessProject, ProjectRN(r.Key)) {
					out = append(out, ResourceV2{r.ID, r.Name, path, OrganizationRN(r.OrganizationKey) + ":" + ProjectRN(r.Key), access.TypeProject})
				}
			}
		case access.TypeEnv:
			rows, err := s.Q.ListResourceEnvironments(ctx, orgs)
			if err != nil {
				return nil, Translate(err)
			}
			for _, r := range rows {
				path := r.ProjectName + "/" + r.Name
				if workspace {
					path = r.OrganizationName + "/" + path
				}
				rn := EnvRN(r.ProjectKey, r.Key)
				if contains(r.Name, name) && seesResource(statements[r.OrganizationID], access.CanAccessEnv, rn) {
					out = append(out, ResourceV2{r.ID, r.Name, path, OrganizationRN(r.OrganizationKey) + ":" + rn, access.TypeEnv})
				}
			}
		}
	}
	if out == nil {
		out = []ResourceV2{}
	}
	return out, nil
}

// seesResource reports whether statements let their holder see a project or
// environment in a resource list: access to it, or IAM management.
func seesResource(statements []access.Statement, action access.Action, rn string) bool {
	return access.Allows(statements, action, rn) || access.Allows(statements, access.CanManageIAM, IAMRN)
}

// contains matches part of a name case-insensitively; lowerPart is lower case.
func contains(name, lowerPart string) bool {
	return lowerPart == "" || strings.Contains(strings.ToLower(name), lowerPart)
}
