package iam

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Several organizations per workspace: creating one,
// onboarding it, reading one and deleting the current one.

// NewOrganizationInput creates an organization (FeatBit's CreateOrganization body).
type NewOrganizationInput struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// GetOrganization returns an organization of the current workspace the
// caller belongs to (an access token: only its own); any other id is unknown.
func (s *IAM) GetOrganization(ctx context.Context, a *core.Actor, id uuid.UUID) (Organization, error) {
	wsID, err := a.Workspace()
	if err != nil {
		return Organization{}, err
	}
	row, err := s.core.Q.GetOrganization(ctx, id)
	if err != nil {
		return Organization{}, core.Translate(err)
	}
	if row.WorkspaceID != wsID || a.IsToken() && id != a.OrgID {
		return Organization{}, core.ErrNotFound
	}
	member, err := s.core.Q.IsOrganizationUser(ctx, db.IsOrganizationUserParams{OrganizationID: id, UserID: a.UserID})
	if err != nil {
		return Organization{}, core.Translate(err)
	}
	if !member {
		return Organization{}, core.ErrNotFound
	}
	return organization(row), nil
}

// Bounds on organizations. Each one is a place its creator owns and the
// workspace's other owners are not in, so creating them is bounded: at
// most MaxWorkspaceOrganizations in a workspace, and at most
// MaxCreatedOrganizations made by one person (not counting the workspace's
// owner, who is held to the total only), so one member cannot use up the
// workspace's room.
const (
	MaxWorkspaceOrganizations = 100
	MaxCreatedOrganizations   = 10
)

// ErrOrganizationLimit refuses an organization past either bound.
var ErrOrganizationLimit = &core.RuleError{Code: "TooManyOrganizations"}

// CreateOrganization adds an organization to the current workspace (action
// CreateOrg on organization/*), within the bounds above. The creator
// becomes its member with the Owner policy; new members default to
// Developer. It starts uninitialized, so FeatBit's clients take the
// creator through onboarding.
func (s *IAM) CreateOrganization(ctx context.Context, a *core.Actor, in NewOrganizationInput) (Organization, error) {
	wsID, err := a.Workspace()
	if err != nil {
		return Organization{}, err
	}
	var v core.Validator
	v.Required("name", in.Name, core.MaxNameLen)
	v.Key("key", in.Key)
	if err := v.Err(); err != nil {
		return Organization{}, err
	}
	if err := core.MayCreateOrganization(a); err != nil {
		return Organization{}, err
	}
	var out Organization
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		if err := q.LockWorkspace(ctx, wsID); err != nil {
			return err
		}
		ws, err := q.GetWorkspace(ctx, wsID)
		if err != nil {
			return err
		}
		n, err := q.CountWorkspaceOrganizations(ctx, db.CountWorkspaceOrganizationsParams{WorkspaceID: wsID, CreatorID: a.UserID})
		if err != nil {
			return err
		}
		if n.Total >= MaxWorkspaceOrganizations || n.Created >= MaxCreatedOrganizations && !core.IsWorkspaceOwner(a, ws) {
			return ErrOrganizationLimit
		}
		creator := a.UserID
		row, err := q.StartOrganization(ctx, db.StartOrganizationParams{WorkspaceID: wsID, Name: strings.TrimSpace(in.Name),
			Key: in.Key, DefaultPolicyIds: []uuid.UUID{core.DeveloperPolicyID}, DefaultGroupIds: []uuid.UUID{}, CreatorID: &creator})
		if err != nil {
			return err
		}
		out = organization(row)
		if _, err := q.AddOrganizationUser(ctx, db.AddOrganizationUserParams{OrganizationID: row.ID, UserID: a.UserID}); err != nil {
			return err
		}
		if err := q.AddMemberPolicy(ctx, db.AddMemberPolicyParams{OrganizationID: row.ID, UserID: a.UserID, PolicyID: core.OwnerPolicyID}); err != nil {
			return err
		}
		// The entry belongs to the new organization's history.
		in := *a
		in.OrgID = row.ID
		return s.core.Audit(ctx, q, &in, core.Change{RefType: "Organization", RefID: row.ID.String(), Keyword: row.Key,
			Operation: core.OpCreate, Current: out})
	})
	return out, err
}

// OnboardingInput names the current organization and creates its first
// project (FeatBit's Onboarding body). Environments are names; each key is
// the name in lower case, as FeatBit derives it.
type OnboardingInput struct {
	OrganizationName string   `json:"organizationName"`
	OrganizationKey  string   `json:"organizationKey"`
	ProjectName      string   `json:"projectName"`
	ProjectKey       string   `json:"projectKey"`
	Environments     []string `json:"environments"`
}

// MaxOnboardingEnvironments bounds how many environments onboarding makes at once.
const MaxOnboardingEnvironments = 20

// Onboard names and keys the current organization, marks it initialized and
// creates a project with the given environments, each with its two secrets,
// in one transaction. It needs UpdateOrgName on the organization and
// CreateProject.
func (s *IAM) Onboard(ctx context.Context, a *core.Actor, in OnboardingInput) error {
	orgID, err := a.Org()
	if err != nil {
		return err
	}
	var v core.Validator
	v.Required("organizationName", in.OrganizationName, core.MaxNameLen)
	v.Key("organizationKey", in.OrganizationKey)
	v.Required("projectName", in.ProjectName, core.MaxNameLen)
	v.Key("projectKey", in.ProjectKey)
	envs := make([]core.EnvironmentInput, 0, len(in.Environments))
	keys := map[string]bool{}
	switch {
	case len(in.Environments) == 0:
		v.Add("environments", "required")
	case len(in.Environments) > MaxOnboardingEnvironments:
		v.Add("environments", "invalid")
	default:
		for _, name := range in.Environments {
			name = strings.TrimSpace(name)
			key := strings.ToLower(name)
			var ev core.Validator
			ev.Required("name", name, core.MaxNameLen)
			ev.Key("key", key)
			if ev.Err() != nil || keys[key] {
				v.Add("environments", "invalid")
				break
			}
			keys[key] = true
			envs = append(envs, core.EnvironmentInput{Name: name, Key: key})
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	before, err := s.core.Q.GetOrganization(ctx, orgID)
	if err != nil {
		return core.Translate(err)
	}
	if err := a.Require(access.UpdateOrgName, core.OrganizationRN(before.Key)); err != nil {
		return err
	}
	if err := core.MayCreateProject(a); err != nil {
		return err
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		row, err := q.OnboardOrganization(ctx, db.OnboardOrganizationParams{ID: orgID,
			Name: strings.TrimSpace(in.OrganizationName), Key: in.OrganizationKey})
		if err != nil {
			return err
		}
		if err := s.core.Audit(ctx, q, a, core.Change{RefType: "Organization", RefID: orgID.String(), Keyword: row.Key,
			Operation: core.OpUpdate, Previous: organization(before), Current: organization(row)}); err != nil {
			return err
		}
		prow, err := q.CreateProject(ctx, db.CreateProjectParams{OrganizationID: orgID, Name: strings.TrimSpace(in.ProjectName), Key: in.ProjectKey})
		if err != nil {
			return err
		}
		p := core.Project{ID: prow.ID, Name: prow.Name, Key: prow.Key}
		for _, e := range envs {
			env, err := core.CreateEnvironment(ctx, q, prow.ID, e)
			if err != nil {
				return err
			}
			p.Environments = append(p.Environments, env)
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Project", RefID: p.ID.String(), Keyword: p.Key,
			Operation: core.OpCreate, Current: core.ProjectSnapshot(p)})
	})
}

// DeleteOrganization removes the current organization with everything in it:
// projects, environments, flags, segments, policies, groups, memberships and
// access tokens (action DeleteOrg). The last organization of a workspace
// stays (CannotDeleteLastOrganization). The audit entry is the workspace's,
// so it outlives the organization.
func (s *IAM) DeleteOrganization(ctx context.Context, a *core.Actor) error {
	orgID, err := a.Org()
	if err != nil {
		return err
	}
	before, err := s.core.Q.GetOrganization(ctx, orgID)
	if err != nil {
		return core.Translate(err)
	}
	if err := core.MayDeleteOrganization(a, before.Key); err != nil {
		return err
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		if err := q.LockWorkspace(ctx, before.WorkspaceID); err != nil {
			return err
		}
		n, err := q.CountWorkspaceOrganizations(ctx, db.CountWorkspaceOrganizationsParams{WorkspaceID: before.WorkspaceID})
		if err != nil {
			return err
		}
		if n.Total <= 1 {
			return core.ErrLastOrganization
		}
		projects, err := q.ListProjects(ctx, orgID)
		if err != nil {
			return err
		}
		ids := make([]uuid.UUID, len(projects))
		for i, p := range projects {
			ids[i] = p.ID
		}
		envs, err := q.ListEnvironments(ctx, ids)
		if err != nil {
			return err
		}
		if n, err := q.DeleteOrganization(ctx, orgID); err != nil || n == 0 {
			return core.OrNotFound(err)
		}
		// SDK connections and caches of its environments must let go.
		for _, e := range envs {
			if err := s.core.RecordChange(ctx, q, core.EnvEvent(orgID, e.ID)); err != nil {
				return err
			}
		}
		ws := *a
		ws.OrgID = uuid.Nil
		return s.core.Audit(ctx, q, &ws, core.Change{RefType: "Organization", RefID: orgID.String(), Keyword: before.Key,
			Operation: core.OpRemove, Previous: organization(before)})
	})
}
