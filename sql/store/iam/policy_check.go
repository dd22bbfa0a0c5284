package iam

import (
	"context"
	"slices"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// maxCheckedResourceLen bounds the resource name a check asks about: longer
// than any name the server checks (keys are at most 128 characters each).
const maxCheckedResourceLen = 1024

// PolicyCheck answers "what does this allow?" for a policy's statements as
// they are being edited.
type PolicyCheck struct {
	Allowed bool
	// By is the index of the statement that decided: the first that denies,
	// else the first that allows; -1 when none speaks about it (a deny).
	By int
	// Unsaved tells that the statements asked about differ from the
	// policy's saved ones, so the answer is not yet what members get.
	Unsaved bool
}

// CheckPolicyStatements answers whether statements (those in the policy's
// editor, saved or not) allow action on the resource named resource, with
// the decision the server makes on every request (access.Decide), and
// whether they differ from the policy's saved statements. Whoever may read
// the policy may ask; nothing is written, and the statements need not be
// valid yet (an editor holds half-made ones).
func (s *IAM) CheckPolicyStatements(ctx context.Context, a *core.Actor, id uuid.UUID, statements []access.Statement, action access.Action, resource string) (PolicyCheck, error) {
	pol, err := s.GetPolicy(ctx, a, id)
	if err != nil {
		return PolicyCheck{}, err
	}
	var v core.Validator
	if !slices.ContainsFunc(access.Catalogue, func(g access.ActionGroup) bool { return slices.Contains(g.Actions, action) }) {
		v.Add("action", "invalid")
	}
	v.Required("resource", resource, maxCheckedResourceLen)
	if err := v.Err(); err != nil {
		return PolicyCheck{}, err
	}
	allowed, by := access.Decide(statements, action, resource)
	return PolicyCheck{Allowed: allowed, By: by, Unsaved: !sameStatements(statements, pol.Statements)}, nil
}

// sameStatements reports whether two lists say the same, statement by
// statement in order: ids aside (a statement gets one when saved), and
// actions and resources as sets (an editor lists them in its own order).
func sameStatements(a, b []access.Statement) bool {
	return slices.EqualFunc(a, b, func(x, y access.Statement) bool {
		return x.ResourceType == y.ResourceType && x.Effect == y.Effect &&
			sameSet(x.Actions, y.Actions) && sameSet(x.Resources, y.Resources)
	})
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
