// Package sso is the store's single sign-on seam: whether and how the
// sign-in page offers it, and each attempt (its state, nonce and PKCE
// verifier, sealed for the browser that began it) from its start to the
// provider's answer, for the pages and for FeatBit's UI. The workspace's
// OIDC settings, and what a verified identity becomes, are identity's (iam):
// this seam stands on the core and reads those.
package sso

import "github.com/bunting-flags/bunting/sql/store/core"

// SSO is the single sign-on seam over the core.
type SSO struct {
	core *core.Core
}

// New returns the seam over c.
func New(c *core.Core) *SSO { return &SSO{core: c} }
