package iam

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// A check answers for the statements asked about, saved or not, names the
// statement that decided, says whether they differ from the saved ones and
// writes nothing; a question not from the catalogue is refused.
func TestCheckPolicyStatements(t *testing.T) {
	s, a, _ := testStore(t)
	ctx := context.Background()
	p, err := s.CreatePolicy(ctx, a, PolicyInput{Name: "Flags", Key: "flags"})
	must(t, err)
	saved := []access.Statement{{ID: "f", ResourceType: access.TypeFlag, Effect: "allow", Actions: []string{"ToggleFlag", "UpdateFlagName"},
		Resources: []string{"project/web:env/*:flag/*"}}}
	_, err = s.UpdatePolicyStatements(ctx, a, p.ID, saved)
	must(t, err)
	const flag = "project/web:env/prod:flag/checkout"
	// The same statements, actions in another order and without ids: saved.
	same := []access.Statement{{ResourceType: access.TypeFlag, Effect: "allow", Actions: []string{"UpdateFlagName", "ToggleFlag"},
		Resources: []string{"project/web:env/*:flag/*"}}}
	if got, err := s.CheckPolicyStatements(ctx, a, p.ID, same, access.ToggleFlag, flag); err != nil || got != (PolicyCheck{Allowed: true, By: 0}) {
		t.Errorf("saved statements: %+v, %v", got, err)
	}
	edited := append(slices.Clone(same), access.Statement{ResourceType: access.TypeFlag, Effect: "deny", Actions: []string{"*"},
		Resources: []string{"project/web:env/prod:flag/*"}})
	if got, err := s.CheckPolicyStatements(ctx, a, p.ID, edited, access.ToggleFlag, flag); err != nil || got != (PolicyCheck{By: 1, Unsaved: true}) {
		t.Errorf("edited statements: %+v, %v", got, err)
	}
	if got, err := s.CheckPolicyStatements(ctx, a, p.ID, nil, access.ToggleFlag, flag); err != nil || got != (PolicyCheck{By: -1, Unsaved: true}) {
		t.Errorf("no statements: %+v, %v", got, err)
	}
	var verr *core.ValidationError
	if _, err := s.CheckPolicyStatements(ctx, a, p.ID, same, "NoSuchAction", ""); !errors.As(err, &verr) || len(verr.Codes) != 2 {
		t.Errorf("a question not from the lists: %v", err)
	}
	if _, err := s.CheckPolicyStatements(ctx, a, uuid.New(), same, access.ToggleFlag, flag); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("another policy: %v", err)
	}
	if got, err := s.GetPolicy(ctx, a, p.ID); err != nil || len(got.Statements) != 1 {
		t.Errorf("a check wrote the statements: %+v, %v", got.Statements, err)
	}
}
