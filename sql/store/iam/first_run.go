package iam

import (
	"context"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// The first-run guide and the organization's deletion page read here: when
// an environment first saw an SDK, and what an organization holds.

// OrganizationContents is what deleting an organization removes with it,
// and how many organizations its workspace has (the last one stays).
type OrganizationContents struct {
	Projects, Environments, Flags, Segments int64
	Members, Groups, Policies, AccessTokens int64
	InWorkspace                             int64
}

// CurrentOrganizationContents counts what the current organization holds,
// for the page that confirms its deletion; only those who may delete it
// (DeleteOrg) are told.
func (s *IAM) CurrentOrganizationContents(ctx context.Context, a *core.Actor) (OrganizationContents, error) {
	orgID, err := a.Org()
	if err != nil {
		return OrganizationContents{}, err
	}
	org, err := s.core.Q.GetOrganization(ctx, orgID)
	if err != nil {
		return OrganizationContents{}, core.Translate(err)
	}
	if err := core.MayDeleteOrganization(a, org.Key); err != nil {
		return OrganizationContents{}, err
	}
	r, err := s.core.Q.OrganizationContents(ctx, orgID)
	if err != nil {
		return OrganizationContents{}, core.Translate(err)
	}
	return OrganizationContents{Projects: r.Projects, Environments: r.Environments, Flags: r.Flags, Segments: r.Segments,
		Members: r.Members, Groups: r.Groups, Policies: r.Policies, AccessTokens: r.AccessTokens, InWorkspace: r.InWorkspace}, nil
}
