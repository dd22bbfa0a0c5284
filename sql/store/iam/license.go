package iam

import (
	"encoding/base64"
	"encoding/json"

	"github.com/bunting-flags/bunting/sql/db"
)

// FeatBit's admin UI shows schedules, change requests, flag comparison,
// several organizations, single sign-on, shared segments and fine-grained
// policy actions only when the workspace's `license` grants them. It reads
// the licence without checking its signature: the second of the two
// dot-separated parts, base64 JSON {plan, sub, wsId, iat, exp, issuer,
// features}. Bunting is not licensed (every feature it has is on), so it
// answers a licence that says exactly which of FeatBit's features it has.
// It is derived from the workspace on every answer, not stored: nobody can
// raise it, and it changes when Bunting gains a feature.

// FeatBit's licence feature names (its LicenseFeatures).
const (
	LicenseSSO               = "sso"
	LicenseSchedule          = "schedule"
	LicenseChangeRequest     = "change-request"
	LicenseMultiOrganization = "multi-organization"
	LicenseShareableSegment  = "shareable-segment"
	LicenseFineGrainedAccess = "fine-grained-ac"
	LicenseFlagComparison    = "flag-comparison"
)

// LicenseFeatures are the features Bunting has. Not FeatBit's "*" (it would
// claim the two it lacks), "global-user" (workspace-wide end users: end users
// here belong to an environment) nor "auto-agents" (Bunting runs no agents).
var LicenseFeatures = []string{
	LicenseSSO,               // OIDC sign-in, PUT /workspaces/sso-oidc
	LicenseSchedule,          // scheduled flag changes
	LicenseChangeRequest,     // change requests with reviewers
	LicenseMultiOrganization, // several organizations per workspace
	LicenseShareableSegment,  // segment scopes
	LicenseFineGrainedAccess, // every flag and segment part has its own action
	LicenseFlagComparison,    // compare and copy between environments
}

// LicenseNeverExpires is the licence's exp: 9999-12-31T23:59:59Z in Unix
// milliseconds (FeatBit's unit). FeatBit's UI treats a licence past its exp
// as granting nothing and shows one more than a year away as "Forever"; an
// absent exp breaks its licence page (it formats the date).
const LicenseNeverExpires int64 = 253402300799000

// licenseSignature fills the signature part, which FeatBit's UI skips. It
// is no signature, and FeatBit's server, which verifies one, refuses it.
const licenseSignature = "unsigned"

// License is the payload of the licence Bunting reports.
type License struct {
	Plan     string   `json:"plan"`
	Sub      string   `json:"sub"`
	WsID     string   `json:"wsId"`
	Iat      int64    `json:"iat"`
	Exp      int64    `json:"exp"`
	Issuer   string   `json:"issuer"`
	Features []string `json:"features"`
}

// workspaceLicense is the licence of a workspace: issued to its key when it
// was created, for the features Bunting has, never expiring.
func workspaceLicense(ws db.Workspace) string {
	payload, err := json.Marshal(License{Plan: "Bunting", Sub: ws.Key, WsID: ws.ID.String(),
		Iat: ws.CreatedAt.UnixMilli(), Exp: LicenseNeverExpires, Issuer: "bunting", Features: LicenseFeatures})
	if err != nil { // a struct of strings and numbers always encodes
		panic(err)
	}
	return licenseSignature + "." + base64.StdEncoding.EncodeToString(payload)
}
