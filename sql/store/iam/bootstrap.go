package iam

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// Owner is the first account, created on an empty database.
type Owner struct {
	Email string
	// Password is the owner's password; when empty one is generated and
	// returned by Bootstrap so it can be shown once.
	Password string
}

// Bootstrapped tells what Bootstrap did.
type Bootstrapped struct {
	// Created is true when the database was empty and got its first workspace.
	Created bool
	// GeneratedPassword is the owner's password when Bootstrap made one up.
	GeneratedPassword string
}

// Bootstrap keeps the built-in policies equal to their definitions and, on an
// empty database, creates the default workspace and organization and the
// owner account. Instances starting together do it once.
func (s *IAM) Bootstrap(ctx context.Context, owner Owner) (Bootstrapped, error) {
	var out Bootstrapped
	// Hash before the transaction when the database looks empty: bcrypt is
	// slow on purpose, and the transaction holds the bootstrap lock.
	var hash string
	if n, err := s.core.Q.CountWorkspaces(ctx); err != nil {
		return out, core.Translate(err)
	} else if n == 0 {
		if owner.Password == "" {
			owner.Password = rand.Text()
			out.GeneratedPassword = owner.Password
		}
		if hash, err = s.hashPassword(owner.Password); err != nil {
			return out, err
		}
	}
	err := s.core.InTx(ctx, func(q *db.Queries) error {
		if err := q.LockBootstrap(ctx); err != nil {
			return err
		}
		for _, p := range core.BuiltinPolicies {
			statements, err := json.Marshal(p.Statements)
			if err != nil {
				return err
			}
			if err := q.UpsertBuiltinPolicy(ctx, db.UpsertBuiltinPolicyParams{ID: p.ID, Name: p.Name, Key: p.Key,
				Description: p.Description, Statements: statements}); err != nil {
				return err
			}
		}
		n, err := q.CountWorkspaces(ctx)
		if err != nil || n > 0 {
			out.GeneratedPassword = "" // another instance bootstrapped first
			return err
		}
		if hash == "" { // emptied since the check above: rare, hash under the lock
			if owner.Password == "" {
				owner.Password = rand.Text()
				out.GeneratedPassword = owner.Password
			}
			if hash, err = s.hashPassword(owner.Password); err != nil {
				return err
			}
		}
		out.Created = true
		// The owner account owns the workspace: its settings stay theirs
		// whatever organizations others add (RequireWorkspaceRight).
		user, err := q.CreateUser(ctx, db.CreateUserParams{Email: owner.Email, Name: emailName(owner.Email), PasswordHash: &hash})
		if err != nil {
			return err
		}
		ws, err := q.CreateWorkspace(ctx, db.CreateWorkspaceParams{Name: "Default Workspace", Key: "default-workspace", OwnerID: &user.ID})
		if err != nil {
			return err
		}
		// It awaits onboarding (FeatBit's, or the pages' first-run guide)
		// until it has a project: FeatBit's admin UI sends a member of an
		// initialized organization without projects to "Permission Denied".
		org, err := q.StartOrganization(ctx, db.StartOrganizationParams{WorkspaceID: ws.ID,
			Name: "Default Organization", Key: "default-organization",
			DefaultPolicyIds: []uuid.UUID{core.DeveloperPolicyID}, DefaultGroupIds: []uuid.UUID{}})
		if err != nil {
			return err
		}
		if err := q.AddWorkspaceUser(ctx, db.AddWorkspaceUserParams{WorkspaceID: ws.ID, UserID: user.ID}); err != nil {
			return err
		}
		if _, err := q.AddOrganizationUser(ctx, db.AddOrganizationUserParams{OrganizationID: org.ID, UserID: user.ID}); err != nil {
			return err
		}
		return q.AddMemberPolicy(ctx, db.AddMemberPolicyParams{OrganizationID: org.ID, UserID: user.ID, PolicyID: core.OwnerPolicyID})
	})
	return out, err
}

// emailName is the part of an email before "@", a user's name until they set one.
func emailName(email string) string {
	name, _, _ := strings.Cut(email, "@")
	return name
}
