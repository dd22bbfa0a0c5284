package core

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/feed"
)

// EnvironmentInput creates or updates an environment. On update an empty key
// keeps the current one, and a missing description or settings keeps theirs.
type EnvironmentInput struct {
	Name        string       `json:"name"`
	Key         string       `json:"key"`
	Description *string      `json:"description"`
	Settings    *EnvSettings `json:"settings"`
}

func (in EnvironmentInput) check(v *Validator, creating bool) {
	v.Required("name", in.Name, MaxNameLen)
	if creating || in.Key != "" {
		v.Key("key", in.Key)
	}
	if in.Description != nil {
		v.Text("description", *in.Description, MaxDescriptionLen)
	}
	if in.Settings != nil && in.Settings.ChangeRequest != nil {
		in.Settings.ChangeRequest.check(v)
	}
}

// EnvRow is an environment with the keys that name it.
type EnvRow struct{ db.GetEnvironmentRow }

// EnvironmentOf loads an environment of the actor's organization, once per
// request whose context remembers it (RememberEnvironment).
func (s *Core) EnvironmentOf(ctx context.Context, a *Actor, envID uuid.UUID) (EnvRow, error) {
	orgID, err := a.Org()
	if err != nil {
		return EnvRow{}, err
	}
	memo, _ := ctx.Value(envMemoKey{}).(*envMemo)
	if memo != nil && memo.loaded && memo.env.Environment.ID == envID && memo.env.OrganizationID == orgID {
		return memo.env, nil
	}
	row, err := s.Q.GetEnvironment(ctx, db.GetEnvironmentParams{OrganizationID: orgID, ID: envID})
	if err != nil {
		return EnvRow{}, Translate(err)
	}
	if memo != nil {
		memo.env, memo.loaded = EnvRow{row}, true
	}
	return EnvRow{row}, nil
}

// ProjectEnvironment loads an environment and checks it belongs to the project.
func (s *Core) ProjectEnvironment(ctx context.Context, a *Actor, projectID, envID uuid.UUID) (EnvRow, error) {
	row, err := s.EnvironmentOf(ctx, a, envID)
	if err == nil && row.Environment.ProjectID != projectID {
		err = ErrNotFound
	}
	return row, err
}

func (r EnvRow) RN() string { return EnvRN(r.ProjectKey, r.Environment.Key) }

// CreateEnvironment adds an environment, with a server and a client secret, to a project.
func (s *Core) CreateEnvironment(ctx context.Context, a *Actor, projectID uuid.UUID, in EnvironmentInput) (Environment, error) {
	var v Validator
	in.check(&v, true)
	if err := v.Err(); err != nil {
		return Environment{}, err
	}
	p, err := s.Project(ctx, a, projectID)
	if err != nil {
		return Environment{}, err
	}
	if err := mayCreateEnvironment(a, p.Key); err != nil {
		return Environment{}, err
	}
	var env Environment
	err = s.InTx(ctx, func(q *db.Queries) error {
		if env, err = CreateEnvironment(ctx, q, p.ID, in); err != nil {
			return err
		}
		if in.Settings != nil && in.Settings.ChangeRequest != nil {
			row, err := setChangeRequestSettings(ctx, q, p.OrganizationID, env.ID, *in.Settings.ChangeRequest)
			if err != nil {
				return err
			}
			env.Settings.ChangeRequest = ptr(changeRequestSettings(row))
		}
		return s.Audit(ctx, q, a, Change{RefType: "Environment", RefID: env.ID.String(), Keyword: p.Key + "/" + env.Key,
			Operation: OpCreate, Current: envSnapshot(env)})
	})
	return env, err
}

// GetEnvironment returns one environment of a project with its secrets.
func (s *Core) GetEnvironment(ctx context.Context, a *Actor, projectID, envID uuid.UUID) (Environment, error) {
	row, err := s.ProjectEnvironment(ctx, a, projectID, envID)
	if err != nil {
		return Environment{}, err
	}
	if err := a.Require(access.CanAccessEnv, row.RN()); err != nil {
		return Environment{}, err
	}
	return s.withSecrets(ctx, row.Environment)
}

func (s *Core) withSecrets(ctx context.Context, r db.Environment) (Environment, error) {
	env := EnvironmentFrom(r)
	rows, err := s.Q.ListSecrets(ctx, []uuid.UUID{r.ID})
	if err != nil {
		return Environment{}, Translate(err)
	}
	for _, sr := range rows {
		env.Secrets = append(env.Secrets, secret(sr))
	}
	return env, nil
}

// UpdateEnvironment changes an environment's name, key, description and settings.
func (s *Core) UpdateEnvironment(ctx context.Context, a *Actor, projectID, envID uuid.UUID, in EnvironmentInput) (Environment, error) {
	var v Validator
	in.check(&v, false)
	if err := v.Err(); err != nil {
		return Environment{}, err
	}
	row, err := s.ProjectEnvironment(ctx, a, projectID, envID)
	if err != nil {
		return Environment{}, err
	}
	if err := a.Require(access.UpdateEnvSettings, row.RN()); err != nil {
		return Environment{}, err
	}
	before := row.Environment
	// An environment's key never changes: resource names,
	// policies and shared segments' scopes name it. Sending the same key, or
	// none, is fine.
	if in.Key != "" && in.Key != before.Key {
		return Environment{}, Invalid("key_is_immutable")
	}
	params := db.UpdateEnvironmentParams{ID: envID, Name: strings.TrimSpace(in.Name), Key: before.Key,
		Description: before.Description, RequireChangeComment: before.RequireChangeComment}
	if in.Description != nil {
		params.Description = *in.Description
	}
	if in.Settings != nil {
		params.RequireChangeComment = in.Settings.RequireChangeComment
	}
	var updated db.Environment
	err = s.InTx(ctx, func(q *db.Queries) error {
		if updated, err = q.UpdateEnvironment(ctx, params); err != nil {
			return err
		}
		// Who may edit the environment's settings decides whether its
		// changes need approval.
		if in.Settings != nil && in.Settings.ChangeRequest != nil {
			if updated, err = setChangeRequestSettings(ctx, q, row.OrganizationID, envID, *in.Settings.ChangeRequest); err != nil {
				return err
			}
		}
		return s.Audit(ctx, q, a, Change{RefType: "Environment", RefID: envID.String(), Keyword: row.ProjectKey + "/" + updated.Key,
			Operation: OpUpdate, Previous: envSnapshot(EnvironmentFrom(before)), Current: envSnapshot(EnvironmentFrom(updated))})
	})
	if err != nil {
		return Environment{}, err
	}
	return s.withSecrets(ctx, updated)
}

// DeleteEnvironment removes an environment and everything in it.
func (s *Core) DeleteEnvironment(ctx context.Context, a *Actor, projectID, envID uuid.UUID) error {
	row, err := s.ProjectEnvironment(ctx, a, projectID, envID)
	if err != nil {
		return err
	}
	if err := a.Require(access.DeleteEnv, row.RN()); err != nil {
		return err
	}
	return s.InTx(ctx, func(q *db.Queries) error {
		if n, err := q.DeleteEnvironment(ctx, envID); err != nil || n == 0 {
			return OrNotFound(err)
		}
		if err := s.RecordChange(ctx, q, EnvEvent(row.OrganizationID, envID)); err != nil {
			return err
		}
		return s.Audit(ctx, q, a, Change{RefType: "Environment", RefID: envID.String(), Keyword: row.ProjectKey + "/" + row.Environment.Key,
			Operation: OpRemove, Previous: envSnapshot(EnvironmentFrom(row.Environment))})
	})
}

// EnvEvent tells SDK connections and caches that an environment's secrets,
// key or existence changed.
func EnvEvent(orgID, envID uuid.UUID) feed.Event {
	return feed.Event{Kind: feed.EventEnv, ID: envID, OrgID: orgID, EnvIDs: []uuid.UUID{envID}}
}

// OrNotFound is err, or ErrNotFound when a statement affected no row.
func OrNotFound(err error) error {
	if err != nil {
		return err
	}
	return ErrNotFound
}

// SecretInput creates a secret (name and type) or renames one (name).
type SecretInput struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// CreateSecret adds a secret to an environment.
func (s *Core) CreateSecret(ctx context.Context, a *Actor, envID uuid.UUID, in SecretInput) (Secret, error) {
	var v Validator
	v.Required("name", in.Name, MaxNameLen)
	v.OneOf("type", in.Type, SecretServer, SecretClient)
	if err := v.Err(); err != nil {
		return Secret{}, err
	}
	row, err := s.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return Secret{}, err
	}
	if err := a.Require(access.CreateEnvSecret, row.RN()); err != nil {
		return Secret{}, err
	}
	var out Secret
	err = s.InTx(ctx, func(q *db.Queries) error {
		created, err := q.CreateSecret(ctx, db.CreateSecretParams{EnvID: envID, Name: strings.TrimSpace(in.Name), Type: in.Type, Value: NewSecretValue(envID)})
		if err != nil {
			return err
		}
		out = secret(created)
		return s.Audit(ctx, q, a, Change{RefType: "EnvSecret", RefID: out.ID.String(), Keyword: out.Name,
			Operation: OpCreate, Current: masked(out)})
	})
	return out, err
}

// UpdateSecret renames a secret; its value never changes.
func (s *Core) UpdateSecret(ctx context.Context, a *Actor, envID, secretID uuid.UUID, in SecretInput) (Secret, error) {
	var v Validator
	v.Required("name", in.Name, MaxNameLen)
	if err := v.Err(); err != nil {
		return Secret{}, err
	}
	row, err := s.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return Secret{}, err
	}
	before, err := s.Q.GetSecret(ctx, db.GetSecretParams{EnvID: envID, ID: secretID})
	if err != nil {
		return Secret{}, Translate(err)
	}
	if err := a.Require(access.UpdateEnvSecret, row.RN()); err != nil {
		return Secret{}, err
	}
	var out Secret
	err = s.InTx(ctx, func(q *db.Queries) error {
		updated, err := q.UpdateSecretName(ctx, db.UpdateSecretNameParams{EnvID: envID, ID: secretID, Name: strings.TrimSpace(in.Name)})
		if err != nil {
			return err
		}
		out = secret(updated)
		return s.Audit(ctx, q, a, Change{RefType: "EnvSecret", RefID: out.ID.String(), Keyword: out.Name,
			Operation: OpUpdate, Previous: masked(secret(before)), Current: masked(out)})
	})
	return out, err
}

// DeleteSecret removes a secret; SDKs using it are refused from then on.
func (s *Core) DeleteSecret(ctx context.Context, a *Actor, envID, secretID uuid.UUID) error {
	row, err := s.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return err
	}
	before, err := s.Q.GetSecret(ctx, db.GetSecretParams{EnvID: envID, ID: secretID})
	if err != nil {
		return Translate(err)
	}
	if err := a.Require(access.DeleteEnvSecret, row.RN()); err != nil {
		return err
	}
	return s.InTx(ctx, func(q *db.Queries) error {
		if n, err := q.DeleteSecret(ctx, db.DeleteSecretParams{EnvID: envID, ID: secretID}); err != nil || n == 0 {
			return OrNotFound(err)
		}
		if err := s.RecordChange(ctx, q, EnvEvent(row.OrganizationID, envID)); err != nil {
			return err
		}
		return s.Audit(ctx, q, a, Change{RefType: "EnvSecret", RefID: secretID.String(), Keyword: before.Name,
			Operation: OpRemove, Previous: masked(secret(before))})
	})
}

// masked is a secret as the audit log keeps it: without its value.
func masked(sec Secret) Secret {
	sec.Value = ""
	return sec
}

// envSnapshot is an environment as the audit log keeps it: without secrets.
func envSnapshot(e Environment) Environment {
	e.Secrets = nil
	return e
}

// ReadableEnv loads an environment the caller may read from.
func (s *Core) ReadableEnv(ctx context.Context, a *Actor, envID uuid.UUID) (EnvRow, error) {
	env, err := s.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return EnvRow{}, err
	}
	return env, a.Require(access.CanAccessEnv, env.RN())
}
