package core

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
)

// Project is a project with the environments the caller may see.
type Project struct {
	ID           uuid.UUID     `json:"id"`
	Name         string        `json:"name"`
	Key          string        `json:"key"`
	Environments []Environment `json:"environments"`
}

// Environment is an environment of a project.
type Environment struct {
	ID          uuid.UUID   `json:"id"`
	CreatedAt   time.Time   `json:"createdAt"`
	UpdatedAt   time.Time   `json:"updatedAt"`
	ProjectID   uuid.UUID   `json:"projectId"`
	Name        string      `json:"name"`
	Key         string      `json:"key"`
	Description string      `json:"description"`
	Secrets     []Secret    `json:"secrets"`
	Settings    EnvSettings `json:"settings"`
}

// EnvSettings are an environment's settings.
type EnvSettings struct {
	RequireChangeComment bool `json:"requireChangeComment"`
	// ChangeRequest is the setting "changes need approval". Answers always
	// carry it; an update that leaves it out keeps it.
	ChangeRequest *ChangeRequestSettings `json:"changeRequest"`
}

// Secret is an environment secret an SDK authenticates with.
type Secret struct {
	ID    uuid.UUID `json:"id"`
	Name  string    `json:"name"`
	Type  string    `json:"type"`
	Value string    `json:"value"`
}

// Secret types.
const (
	SecretServer = "server"
	SecretClient = "client"
)

// ProjectInput creates a project (name and key) or renames one (name).
type ProjectInput struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// ProjectName is the answer to a rename.
type ProjectName struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

// defaultEnvironments are created with every project, in this order.
var defaultEnvironments = []struct{ name, key string }{{"Prod", "prod"}, {"Dev", "dev"}}

// CreateProject creates a project with environments Prod and Dev, each with a
// server and a client secret.
func (s *Core) CreateProject(ctx context.Context, a *Actor, in ProjectInput) (Project, error) {
	orgID, err := a.Org()
	if err != nil {
		return Project{}, err
	}
	var v Validator
	v.Required("name", in.Name, MaxNameLen)
	v.Key("key", in.Key)
	if err := v.Err(); err != nil {
		return Project{}, err
	}
	if err := MayCreateProject(a); err != nil {
		return Project{}, err
	}
	var p Project
	err = s.InTx(ctx, func(q *db.Queries) error {
		row, err := q.CreateProject(ctx, db.CreateProjectParams{OrganizationID: orgID, Name: strings.TrimSpace(in.Name), Key: in.Key})
		if err != nil {
			return err
		}
		p = Project{ID: row.ID, Name: row.Name, Key: row.Key}
		for _, de := range defaultEnvironments {
			env, err := CreateEnvironment(ctx, q, row.ID, EnvironmentInput{Name: de.name, Key: de.key})
			if err != nil {
				return err
			}
			p.Environments = append(p.Environments, env)
		}
		return s.Audit(ctx, q, a, Change{RefType: "Project", RefID: p.ID.String(), Keyword: p.Key,
			Operation: OpCreate, Current: ProjectSnapshot(p)})
	})
	return p, err
}

// CreateEnvironment inserts an environment with the two standard secrets.
func CreateEnvironment(ctx context.Context, q *db.Queries, projectID uuid.UUID, in EnvironmentInput) (Environment, error) {
	id := uuid.New()
	row, err := q.CreateEnvironment(ctx, db.CreateEnvironmentParams{ID: id, ProjectID: projectID,
		Name: strings.TrimSpace(in.Name), Key: in.Key, Description: Deref(in.Description),
		RequireChangeComment: in.Settings != nil && in.Settings.RequireChangeComment})
	if err != nil {
		return Environment{}, err
	}
	env := EnvironmentFrom(row)
	for _, sec := range []struct{ name, typ string }{{"Server Key", SecretServer}, {"Client Key", SecretClient}} {
		srow, err := q.CreateSecret(ctx, db.CreateSecretParams{EnvID: id, Name: sec.name, Type: sec.typ, Value: NewSecretValue(id)})
		if err != nil {
			return Environment{}, err
		}
		env.Secrets = append(env.Secrets, secret(srow))
	}
	return env, nil
}

// ListProjects returns the organization's projects the caller may access,
// each with the environments the caller may access.
func (s *Core) ListProjects(ctx context.Context, a *Actor) ([]Project, error) {
	orgID, err := a.Org()
	if err != nil {
		return nil, err
	}
	rows, err := s.Q.ListProjects(ctx, orgID)
	if err != nil {
		return nil, Translate(err)
	}
	var visible []db.Project
	for _, r := range rows {
		if MayOpenProject(a, r.Key) {
			visible = append(visible, r)
		}
	}
	return s.withEnvironments(ctx, a, visible)
}

// MayOpenProject and MayOpenEnv tell the projects and environments a person
// sees in lists and may work in.
func MayOpenProject(a *Actor, key string) bool { return a.Can(access.CanAccessProject, ProjectRN(key)) }

func MayOpenEnv(a *Actor, projectKey, key string) bool {
	return a.Can(access.CanAccessEnv, EnvRN(projectKey, key))
}

// GetProject returns one project with the environments the caller may access.
func (s *Core) GetProject(ctx context.Context, a *Actor, id uuid.UUID) (Project, error) {
	row, err := s.Project(ctx, a, id)
	if err != nil {
		return Project{}, err
	}
	if err := a.Require(access.CanAccessProject, ProjectRN(row.Key)); err != nil {
		return Project{}, err
	}
	ps, err := s.withEnvironments(ctx, a, []db.Project{row})
	if err != nil {
		return Project{}, err
	}
	return ps[0], nil
}

// project loads one of the actor's organization's projects.
func (s *Core) Project(ctx context.Context, a *Actor, id uuid.UUID) (db.Project, error) {
	orgID, err := a.Org()
	if err != nil {
		return db.Project{}, err
	}
	row, err := s.Q.GetProject(ctx, db.GetProjectParams{OrganizationID: orgID, ID: id})
	return row, Translate(err)
}

func (s *Core) withEnvironments(ctx context.Context, a *Actor, rows []db.Project) ([]Project, error) {
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	envRows, err := s.Q.ListEnvironments(ctx, ids)
	if err != nil {
		return nil, Translate(err)
	}
	keys := map[uuid.UUID]string{}
	for _, r := range rows {
		keys[r.ID] = r.Key
	}
	var envs []Environment
	var envIDs []uuid.UUID
	for _, e := range envRows {
		if MayOpenEnv(a, keys[e.ProjectID], e.Key) {
			envs = append(envs, EnvironmentFrom(e))
			envIDs = append(envIDs, e.ID)
		}
	}
	secretRows, err := s.Q.ListSecrets(ctx, envIDs)
	if err != nil {
		return nil, Translate(err)
	}
	secrets := map[uuid.UUID][]Secret{}
	for _, sr := range secretRows {
		secrets[sr.EnvID] = append(secrets[sr.EnvID], secret(sr))
	}
	byProject := map[uuid.UUID][]Environment{}
	for _, e := range envs {
		if sec := secrets[e.ID]; sec != nil {
			e.Secrets = sec
		}
		byProject[e.ProjectID] = append(byProject[e.ProjectID], e)
	}
	projects := make([]Project, len(rows))
	for i, r := range rows {
		projects[i] = Project{ID: r.ID, Name: r.Name, Key: r.Key, Environments: byProject[r.ID]}
		if projects[i].Environments == nil {
			projects[i].Environments = []Environment{}
		}
	}
	return projects, nil
}

// RenameProject updates a project's name.
func (s *Core) RenameProject(ctx context.Context, a *Actor, id uuid.UUID, in ProjectInput) (ProjectName, error) {
	var v Validator
	v.Required("name", in.Name, MaxNameLen)
	if err := v.Err(); err != nil {
		return ProjectName{}, err
	}
	before, err := s.Project(ctx, a, id)
	if err != nil {
		return ProjectName{}, err
	}
	if err := mayRenameProject(a, before.Key); err != nil {
		return ProjectName{}, err
	}
	var out ProjectName
	err = s.InTx(ctx, func(q *db.Queries) error {
		row, err := q.UpdateProjectName(ctx, db.UpdateProjectNameParams{OrganizationID: a.OrgID, ID: id, Name: strings.TrimSpace(in.Name)})
		if err != nil {
			return err
		}
		out = ProjectName{ID: row.ID, Name: row.Name}
		return s.Audit(ctx, q, a, Change{RefType: "Project", RefID: id.String(), Keyword: row.Key, Operation: OpUpdate,
			Previous: ProjectName{ID: before.ID, Name: before.Name}, Current: out})
	})
	return out, err
}

// DeleteProject removes a project with its environments and everything in them.
func (s *Core) DeleteProject(ctx context.Context, a *Actor, id uuid.UUID) error {
	before, err := s.Project(ctx, a, id)
	if err != nil {
		return err
	}
	if err := mayDeleteProject(a, before.Key); err != nil {
		return err
	}
	return s.InTx(ctx, func(q *db.Queries) error {
		envs, err := q.ListEnvironments(ctx, []uuid.UUID{id})
		if err != nil {
			return err
		}
		n, err := q.DeleteProject(ctx, db.DeleteProjectParams{OrganizationID: a.OrgID, ID: id})
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		for _, e := range envs {
			if err := s.RecordChange(ctx, q, EnvEvent(a.OrgID, e.ID)); err != nil {
				return err
			}
		}
		return s.Audit(ctx, q, a, Change{RefType: "Project", RefID: id.String(), Keyword: before.Key, Operation: OpRemove,
			Previous: ProjectInput{Name: before.Name, Key: before.Key}})
	})
}

// ProjectSnapshot is a project as the audit log keeps it: without secret values.
func ProjectSnapshot(p Project) any {
	type env struct {
		ID   uuid.UUID `json:"id"`
		Name string    `json:"name"`
		Key  string    `json:"key"`
	}
	envs := make([]env, len(p.Environments))
	for i, e := range p.Environments {
		envs[i] = env{e.ID, e.Name, e.Key}
	}
	return map[string]any{"id": p.ID, "name": p.Name, "key": p.Key, "environments": envs}
}

func EnvironmentFrom(r db.Environment) Environment {
	return Environment{ID: r.ID, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), ProjectID: r.ProjectID,
		Name: r.Name, Key: r.Key, Description: r.Description, Secrets: []Secret{},
		Settings: EnvSettings{RequireChangeComment: r.RequireChangeComment, ChangeRequest: ptr(changeRequestSettings(r))}}
}

func ptr[T any](v T) *T { return &v }

func Deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func secret(r db.EnvSecret) Secret {
	return Secret{ID: r.ID, Name: r.Name, Type: r.Type, Value: r.Value}
}
