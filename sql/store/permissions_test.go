package store

import (
	"testing"

	"github.com/bunting-flags/bunting/sql/access"
)

func TestBuiltinPoliciesAreValid(t *testing.T) {
	for _, p := range builtinPolicies {
		if !access.ValidStatements(p.statements) {
			t.Errorf("built-in policy %s has invalid statements", p.key)
		}
	}
}
