package core

import (
	"testing"

	"github.com/bunting-flags/bunting/sql/access"
)

func TestBuiltinPoliciesAreValid(t *testing.T) {
	for _, p := range BuiltinPolicies {
		if !access.ValidStatements(p.Statements) {
			t.Errorf("built-in policy %s has invalid statements", p.Key)
		}
	}
}
