package iam

// The IAM rules that need the database, on real PostgreSQL (sql/dbtest):
// policy keys, built-in policies, statements, members and groups, and the
// last owner.

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// code is the error code the API would answer for err: a business rule's
// code, or the validation codes joined.
func code(err error) string {
	var re *core.RuleError
	var ve *core.ValidationError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, core.ErrNotFound):
		return "ResourceNotFound"
	case errors.As(err, &re):
		return re.Code
	case errors.As(err, &ve):
		return ve.Codes[0]
	}
	return err.Error()
}

func TestStorePolicyRules(t *testing.T) {
	s, a, _ := testStore(t)
	ctx := context.Background()
	p, err := s.CreatePolicy(ctx, a, PolicyInput{Name: "Flags", Key: "flags"})
	must(t, err)
	if p.Type != PolicyCustomerManaged || len(p.Statements) != 0 {
		t.Errorf("a new policy: type %s, %d statements; want CustomerManaged, none", p.Type, len(p.Statements))
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"a built-in key in another case", func() error { _, err := s.CreatePolicy(ctx, a, PolicyInput{Name: "Mine", Key: "OWNER"}); return err }(), "KeyHasBeenUsed"},
		{"an organization's key in another case", func() error { _, err := s.CreatePolicy(ctx, a, PolicyInput{Name: "Mine", Key: "Flags"}); return err }(), "KeyHasBeenUsed"},
		{"no key", func() error { _, err := s.CreatePolicy(ctx, a, PolicyInput{Name: "Mine"}); return err }(), "key_is_required"},
		{"changing a built-in's statements", func() error {
			_, err := s.UpdatePolicyStatements(ctx, a, core.OwnerPolicyID, []access.Statement{})
			return err
		}(), "CannotModifySysManagedPolicy"},
		{"deleting a built-in", s.DeletePolicy(ctx, a, core.AdministratorPolicyID), "CannotModifySysManagedPolicy"},
		{"statements left out", func() error { _, err := s.UpdatePolicyStatements(ctx, a, p.ID, nil); return err }(), "statements_is_required"},
		{"an invalid statement", func() error {
			_, err := s.UpdatePolicyStatements(ctx, a, p.ID, []access.Statement{{ResourceType: "flag", Effect: "allow", Actions: []string{"CreateSegment"}, Resources: []string{"*"}}})
			return err
		}(), "statements_is_invalid"},
		{"a statement id of 129 characters", func() error {
			_, err := s.UpdatePolicyStatements(ctx, a, p.ID, []access.Statement{{ID: string(make([]byte, 129)), ResourceType: "*", Effect: "allow", Actions: []string{"*"}, Resources: []string{"*"}}})
			return err
		}(), "statements_is_invalid"},
		{"cloning an unknown key", func() error { _, err := s.ClonePolicy(ctx, a, "nobody", PolicyInput{Name: "X", Key: "x"}); return err }(), "ResourceNotFound"},
	}
	for _, tt := range tests {
		if got := code(tt.err); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	// A statement without an id gets one; the statements come back as saved.
	st := access.Statement{ResourceType: "flag", Effect: "allow", Actions: []string{"ToggleFlag"}, Resources: []string{"project/web:env/*:flag/*"}}
	saved, err := s.UpdatePolicyStatements(ctx, a, p.ID, []access.Statement{st})
	must(t, err)
	if len(saved.Statements) != 1 || uuid.Validate(saved.Statements[0].ID) != nil || !sameStatements(saved.Statements, []access.Statement{st}) {
		t.Errorf("saved %+v", saved.Statements)
	}
	// A clone copies a built-in's statements into a CustomerManaged policy
	// with an empty description.
	clone, err := s.ClonePolicy(ctx, a, "developer", PolicyInput{Name: "Developer copy", Key: "developer-copy"})
	must(t, err)
	if clone.Type != PolicyCustomerManaged || clone.Description != "" || clone.Key != "developer-copy" || !sameStatements(clone.Statements, builtin(t, "developer")) {
		t.Errorf("clone %+v", clone)
	}
	// Deleting the clone leaves the built-in as it was.
	must(t, s.DeletePolicy(ctx, a, clone.ID))
	if _, err := s.ClonePolicy(ctx, a, "developer-copy", PolicyInput{Name: "Again", Key: "again"}); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("cloning a deleted policy: %v, want ErrNotFound", err)
	}
}

// A member's permissions are their policies in the organization, held
// directly or through groups; the organization keeps an owner.
func TestStoreMemberAndGroupRules(t *testing.T) {
	s, a, _ := testStore(t)
	ctx := context.Background()
	const flag, project = "project/web:env/prod:flag/checkout", "project/web"
	m, err := s.AddMember(ctx, a, MemberInput{Email: "dev@example.com", PolicyIDs: []uuid.UUID{core.DeveloperPolicyID}})
	must(t, err)
	can := func(action access.Action, rn string) bool {
		t.Helper()
		ma, err := s.UserActor(ctx, m.ID, "", "")
		must(t, err)
		return ma.Can(action, rn)
	}
	if !can(access.ToggleFlag, flag) || can(access.CreateProject, project) {
		t.Errorf("a Developer: toggle %v (want true), create a project %v (want false)", can(access.ToggleFlag, flag), can(access.CreateProject, project))
	}
	again, err := s.AddMember(ctx, a, MemberInput{Email: "DEV@example.com"})
	must(t, err)
	if !again.AlreadyMember || again.ID != m.ID {
		t.Errorf("adding the member again (email in another case): %+v, want the same member, already one", again)
	}
	if _, err := s.AddMember(ctx, a, MemberInput{Email: "x@example.com", PolicyIDs: []uuid.UUID{uuid.New()}}); code(err) != "policyIds_is_invalid" {
		t.Errorf("an unknown policy: %v, want policyIds_is_invalid", err)
	}
	if _, err := s.AddMember(ctx, a, MemberInput{Email: "not an email"}); code(err) != "email_is_invalid" {
		t.Errorf("a bad email: %v, want email_is_invalid", err)
	}

	g, err := s.CreateGroup(ctx, a, GroupInput{Name: "Admins"})
	must(t, err)
	if _, err := s.CreateGroup(ctx, a, GroupInput{Name: "ADMINS"}); code(err) != "NameHasBeenUsed" {
		t.Errorf("a group name in another case: %v, want NameHasBeenUsed", err)
	}
	must(t, s.AddGroupPolicy(ctx, a, g.ID, core.AdministratorPolicyID))
	must(t, s.AddGroupMember(ctx, a, g.ID, m.ID))
	must(t, s.AddGroupMember(ctx, a, g.ID, m.ID)) // again: nothing changes
	if !can(access.CreateProject, project) {
		t.Error("a member of a group holding Administrator cannot create a project")
	}
	must(t, s.RemoveGroupMember(ctx, a, g.ID, m.ID))
	if can(access.CreateProject, project) {
		t.Error("after leaving the group, the member still creates projects")
	}
	// A deny in a policy the member holds wins over Developer's allow.
	deny, err := s.CreatePolicy(ctx, a, PolicyInput{Name: "No prod", Key: "no-prod"})
	must(t, err)
	_, err = s.UpdatePolicyStatements(ctx, a, deny.ID, []access.Statement{{ResourceType: "flag", Effect: "deny", Actions: []string{"*"}, Resources: []string{"project/*:env/prod:flag/*"}}})
	must(t, err)
	must(t, s.AddMemberPolicy(ctx, a, m.ID, deny.ID))
	if can(access.ToggleFlag, flag) || !can(access.ToggleFlag, "project/web:env/dev:flag/checkout") {
		t.Error("a deny on prod flags: want prod refused and dev allowed")
	}

	// The only owner cannot give up Owner; with a second owner they can.
	if err := s.RemoveMemberPolicy(ctx, a, a.UserID, core.OwnerPolicyID); code(err) != "CannotRemoveLastOwner" {
		t.Errorf("removing the last owner: %v, want CannotRemoveLastOwner", err)
	}
	must(t, s.AddMemberPolicy(ctx, a, m.ID, core.OwnerPolicyID))
	must(t, s.RemoveMemberPolicy(ctx, a, a.UserID, core.OwnerPolicyID))
	ma, err := s.UserActor(ctx, m.ID, "", "")
	must(t, err)
	if !ma.Can(access.DeleteOrg, "organization/default-organization") {
		t.Error("the new owner cannot delete the organization")
	}
}
