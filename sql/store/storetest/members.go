package storetest

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// OwnerMember adds a member with the Owner policy and signs them in.
func OwnerMember(t *testing.T, s *store.Store, owner *core.Actor, pool *pgxpool.Pool, email string) *core.Actor {
	t.Helper()
	return NewMember(t, s, owner, email, core.OwnerPolicyID)
}

// NewMember adds a member with a built-in policy and signs them in.
func NewMember(t *testing.T, s *store.Store, owner *core.Actor, email string, policy uuid.UUID) *core.Actor {
	t.Helper()
	ctx := context.Background()
	m, err := s.IAM().AddMember(ctx, owner, iam.MemberInput{Email: email, PolicyIDs: []uuid.UUID{policy}})
	Must(t, err)
	session, err := s.IAM().Login(ctx, iam.LoginInput{Email: email, Password: *m.InitialPassword}, "192.0.2.1")
	Must(t, err)
	a, err := s.IAM().Authenticate(ctx, iam.Credentials{Authorization: "Bearer " + session.Token})
	Must(t, err)
	return a
}

// ApprovalEnv makes prod need n approvals from the given members.
func ApprovalEnv(t *testing.T, s *store.Store, owner *core.Actor, env core.Environment, n int, approvers ...*core.Actor) {
	t.Helper()
	ids := []uuid.UUID{}
	for _, ap := range approvers {
		ids = append(ids, ap.UserID)
	}
	_, err := s.Projects().UpdateEnvironment(context.Background(), owner, env.ProjectID, env.ID, core.EnvironmentInput{Name: env.Name,
		Settings: &core.EnvSettings{ChangeRequest: &core.ChangeRequestSettings{IsEnabled: true, ApprovalsRequired: n, ApproverMemberIDs: ids}}})
	Must(t, err)
}

// Developer adds a member with the built-in Developer policy (every flag and
// segment action in every project) and signs them in.
func Developer(t *testing.T, s *store.Store, owner *core.Actor, email string) *core.Actor {
	t.Helper()
	return NewMember(t, s, owner, email, core.DeveloperPolicyID)
}

// Serves is what the flag key of env gives the end user keyID, as SDKs
// evaluate it: its variation's value, "" when it gives nothing.
func Serves(t *testing.T, s *store.Store, a *core.Actor, envID uuid.UUID, key, keyID string) string {
	t.Helper()
	ev, err := s.SDK().EvaluateFlag(context.Background(), a, envID, key, eval.EndUser{KeyID: keyID})
	Must(t, err)
	if ev.Variation == nil {
		return ""
	}
	return ev.Variation.Value
}

// Flag creates a flag in the environment envID.
func Flag(t testing.TB, s *store.Store, a *core.Actor, envID uuid.UUID, in flagstore.FlagInput) flagstore.Flag {
	t.Helper()
	f, err := s.Flags().CreateFlag(context.Background(), a, envID, in)
	Must(t, err)
	return f
}

func FlagHistory(t *testing.T, s *store.Store, a *core.Actor, envID uuid.UUID, f flagstore.Flag) []flagstore.AuditEntry {
	t.Helper()
	page, err := s.Flags().ListAuditLogs(context.Background(), a, envID, flagstore.AuditFilter{RefType: "FeatureFlag", RefID: f.ID.String(), Page: core.Page{Size: 100}})
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}
