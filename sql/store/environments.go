package store

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

func (in EnvironmentInput) check(v *validator, creating bool) {
	v.required("name", in.Name, MaxNameLen)
	if creating || in.Key != "" {
		v.key("key", in.Key)
	}
	if in.Description != nil {
		v.text("description", *in.Description, MaxDescriptionLen)
	}
	if in.Settings != nil && in.Settings.ChangeRequest != nil {
		in.Settings.ChangeRequest.check(v)
	}
}

// envRow is an environment with the keys that name it.
type envRow struct{ db.GetEnvironmentRow }

// environmentOf loads an environment of the actor's organization, once per
// request whose context remembers it (RememberEnvironment).
func (s *Store) environmentOf(ctx context.Context, a *Actor, envID uuid.UUID) (envRow, error) {
	orgID, err := a.org()
	if err != nil {
		return envRow{}, err
	}
	memo, _ := ctx.Value(envMemoKey{}).(*envMemo)
	if memo != nil && memo.loaded && memo.env.Environment.ID == envID && memo.env.OrganizationID == orgID {
		return memo.env, nil
	}
	row, err := s.q.GetEnvironment(ctx, db.GetEnvironmentParams{OrganizationID: orgID, ID: envID})
	if err != nil {
		return envRow{}, translate(err)
	}
	if memo != nil {
		memo.env, memo.loaded = envRow{row}, true
	}
	return envRow{row}, nil
}

// projectEnvironment loads an environment and checks it belongs to the project.
func (s *Store) projectEnvironment(ctx context.Context, a *Actor, projectID, envID uuid.UUID) (envRow, error) {
	row, err := s.environmentOf(ctx, a, envID)
	if err == nil && row.Environment.ProjectID != projectID {
		err = ErrNotFound
	}
	return row, err
}

func (r envRow) rn() string { return EnvRN(r.ProjectKey, r.Environment.Key) }

// CreateEnvironment adds an environment, with a server and a client secret, to a project.
func (s *Store) CreateEnvironment(ctx context.Context, a *Actor, projectID uuid.UUID, in EnvironmentInput) (Environment, error) {
	var v validator
	in.check(&v, true)
	if err := v.err(); err != nil {
		return Environment{}, err
	}
	p, err := s.project(ctx, a, projectID)
	if err != nil {
		return Environment{}, err
	}
	if err := mayCreateEnvironment(a, p.Key); err != nil {
		return Environment{}, err
	}
	var env Environment
	err = s.inTx(ctx, func(q *db.Queries) error {
		if env, err = createEnvironment(ctx, q, p.ID, in); err != nil {
			return err
		}
		if in.Settings != nil && in.Settings.ChangeRequest != nil {
			row, err := setChangeRequestSettings(ctx, q, p.OrganizationID, env.ID, *in.Settings.ChangeRequest)
			if err != nil {
				return err
			}
			env.Settings.ChangeRequest = ptr(changeRequestSettings(row))
		}
		return s.audit(ctx, q, a, change{refType: "Environment", refID: env.ID.String(), keyword: p.Key + "/" + env.Key,
			operation: OpCreate, current: envSnapshot(env)})
	})
	return env, err
}

// GetEnvironment returns one environment of a project with its secrets.
func (s *Store) GetEnvironment(ctx context.Context, a *Actor, projectID, envID uuid.UUID) (Environment, error) {
	row, err := s.projectEnvironment(ctx, a, projectID, envID)
	if err != nil {
		return Environment{}, err
	}
	if err := a.require(access.CanAccessEnv, row.rn()); err != nil {
		return Environment{}, err
	}
	return s.withSecrets(ctx, row.Environment)
}

func (s *Store) withSecrets(ctx context.Context, r db.Environment) (Environment, error) {
	env := environment(r)
	rows, err := s.q.ListSecrets(ctx, []uuid.UUID{r.ID})
	if err != nil {
		return Environment{}, translate(err)
	}
	for _, sr := range rows {
		env.Secrets = append(env.Secrets, secret(sr))
	}
	return env, nil
}

// UpdateEnvironment changes an environment's name, key, description and settings.
func (s *Store) UpdateEnvironment(ctx context.Context, a *Actor, projectID, envID uuid.UUID, in EnvironmentInput) (Environment, error) {
	var v validator
	in.check(&v, false)
	if err := v.err(); err != nil {
		return Environment{}, err
	}
	row, err := s.projectEnvironment(ctx, a, projectID, envID)
	if err != nil {
		return Environment{}, err
	}
	if err := a.require(access.UpdateEnvSettings, row.rn()); err != nil {
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
	err = s.inTx(ctx, func(q *db.Queries) error {
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
		return s.audit(ctx, q, a, change{refType: "Environment", refID: envID.String(), keyword: row.ProjectKey + "/" + updated.Key,
			operation: OpUpdate, previous: envSnapshot(environment(before)), current: envSnapshot(environment(updated))})
	})
	if err != nil {
		return Environment{}, err
	}
	return s.withSecrets(ctx, updated)
}

// DeleteEnvironment removes an environment and everything in it.
func (s *Store) DeleteEnvironment(ctx context.Context, a *Actor, projectID, envID uuid.UUID) error {
	row, err := s.projectEnvironment(ctx, a, projectID, envID)
	if err != nil {
		return err
	}
	if err := a.require(access.DeleteEnv, row.rn()); err != nil {
		return err
	}
	return s.inTx(ctx, func(q *db.Queries) error {
		if n, err := q.DeleteEnvironment(ctx, envID); err != nil || n == 0 {
			return orNotFound(err)
		}
		if err := s.recordChange(ctx, q, envEvent(row.OrganizationID, envID)); err != nil {
			return err
		}
		return s.audit(ctx, q, a, change{refType: "Environment", refID: envID.String(), keyword: row.ProjectKey + "/" + row.Environment.Key,
			operation: OpRemove, previous: envSnapshot(environment(row.Environment))})
	})
}

// envEvent tells SDK connections and caches that an environment's secrets,
// key or existence changed.
func envEvent(orgID, envID uuid.UUID) feed.Event {
	return feed.Event{Kind: feed.EventEnv, ID: envID, OrgID: orgID, EnvIDs: []uuid.UUID{envID}}
}

// orNotFound is err, or ErrNotFound when a statement affected no row.
func orNotFound(err error) error {
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
func (s *Store) CreateSecret(ctx context.Context, a *Actor, envID uuid.UUID, in SecretInput) (Secret, error) {
	var v validator
	v.required("name", in.Name, MaxNameLen)
	v.oneOf("type", in.Type, SecretServer, SecretClient)
	if err := v.err(); err != nil {
		return Secret{}, err
	}
	row, err := s.environmentOf(ctx, a, envID)
	if err != nil {
		return Secret{}, err
	}
	if err := a.require(access.CreateEnvSecret, row.rn()); err != nil {
		return Secret{}, err
	}
	var out Secret
	err = s.inTx(ctx, func(q *db.Queries) error {
		created, err := q.CreateSecret(ctx, db.CreateSecretParams{EnvID: envID, Name: strings.TrimSpace(in.Name), Type: in.Type, Value: NewSecretValue(envID)})
		if err != nil {
			return err
		}
		out = secret(created)
		return s.audit(ctx, q, a, change{refType: "EnvSecret", refID: out.ID.String(), keyword: out.Name,
			operation: OpCreate, current: masked(out)})
	})
	return out, err
}

// UpdateSecret renames a secret; its value never changes.
func (s *Store) UpdateSecret(ctx context.Context, a *Actor, envID, secretID uuid.UUID, in SecretInput) (Secret, error) {
	var v validator
	v.required("name", in.Name, MaxNameLen)
	if err := v.err(); err != nil {
		return Secret{}, err
	}
	row, err := s.environmentOf(ctx, a, envID)
	if err != nil {
		return Secret{}, err
	}
	before, err := s.q.GetSecret(ctx, db.GetSecretParams{EnvID: envID, ID: secretID})
	if err != nil {
		return Secret{}, translate(err)
	}
	if err := a.require(access.UpdateEnvSecret, row.rn()); err != nil {
		return Secret{}, err
	}
	var out Secret
	err = s.inTx(ctx, func(q *db.Queries) error {
		updated, err := q.UpdateSecretName(ctx, db.UpdateSecretNameParams{EnvID: envID, ID: secretID, Name: strings.TrimSpace(in.Name)})
		if err != nil {
			return err
		}
		out = secret(updated)
		return s.audit(ctx, q, a, change{refType: "EnvSecret", refID: out.ID.String(), keyword: out.Name,
			operation: OpUpdate, previous: masked(secret(before)), current: masked(out)})
	})
	return out, err
}

// DeleteSecret removes a secret; SDKs using it are refused from then on.
func (s *Store) DeleteSecret(ctx context.Context, a *Actor, envID, secretID uuid.UUID) error {
	row, err := s.environmentOf(ctx, a, envID)
	if err != nil {
		return err
	}
	before, err := s.q.GetSecret(ctx, db.GetSecretParams{EnvID: envID, ID: secretID})
	if err != nil {
		return translate(err)
	}
	if err := a.require(access.DeleteEnvSecret, row.rn()); err != nil {
		return err
	}
	return s.inTx(ctx, func(q *db.Queries) error {
		if n, err := q.DeleteSecret(ctx, db.DeleteSecretParams{EnvID: envID, ID: secretID}); err != nil || n == 0 {
			return orNotFound(err)
		}
		if err := s.recordChange(ctx, q, envEvent(row.OrganizationID, envID)); err != nil {
			return err
		}
		return s.audit(ctx, q, a, change{refType: "EnvSecret", refID: secretID.String(), keyword: before.Name,
			operation: OpRemove, previous: masked(secret(before))})
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

// readableEnv loads an environment the caller may read from.
func (s *Store) readableEnv(ctx context.Context, a *Actor, envID uuid.UUID) (envRow, error) {
	env, err := s.environmentOf(ctx, a, envID)
	if err != nil {
		return envRow{}, err
	}
	return env, a.require(access.CanAccessEnv, env.rn())
}
