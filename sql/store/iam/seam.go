// Package iam is the store's identity and access seam: signing in (password,
// access tokens, what a verified single sign-on identity becomes), sessions,
// workspaces and their OIDC settings, organizations, members, groups and
// policies, profiles and where a person works. It stands on the core and on
// no other seam; the access tokens themselves (accesstokens) and single
// sign-on attempts (sso) are seams over it.
package iam

import "github.com/bunting-flags/bunting/sql/store/core"

// IAM is the identity and access seam over the core.
type IAM struct {
	core *core.Core
}

// New returns the seam over c.
func New(c *core.Core) *IAM { return &IAM{core: c} }
