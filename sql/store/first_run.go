package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
)

// The first-run guide and the organization's deletion page read here: when
// an environment first saw an SDK, and what an organization holds.

// RecordSDKSeen notes that an environment's SDK secret was used, at at;
// only the first time is kept. The SDK endpoints call it once per
// environment and process, so it costs one statement per environment.
func (s *Store) RecordSDKSeen(ctx context.Context, env SDKEnv, at time.Time) error {
	return translate(s.q.RecordSDKSeen(ctx, db.RecordSDKSeenParams{EnvID: env.EnvID, At: at}))
}

// SDKFirstSeen returns when an environment first saw an SDK (a data-sync,
// an evaluation report, an OFREP evaluation), or nil when none has come
// yet. The caller must be able to open the environment.
func (s *Store) SDKFirstSeen(ctx context.Context, a *Actor, envID uuid.UUID) (*time.Time, error) {
	if _, err := s.readableEnv(ctx, a, envID); err != nil {
		return nil, err
	}
	r, err := s.q.SDKFirstSeen(ctx, envID)
	if err != nil || !r.Seen {
		return nil, translate(err)
	}
	return &r.FirstSeenAt, nil
}

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
func (s *Store) CurrentOrganizationContents(ctx context.Context, a *Actor) (OrganizationContents, error) {
	orgID, err := a.org()
	if err != nil {
		return OrganizationContents{}, err
	}
	org, err := s.q.GetOrganization(ctx, orgID)
	if err != nil {
		return OrganizationContents{}, translate(err)
	}
	if err := mayDeleteOrganization(a, org.Key); err != nil {
		return OrganizationContents{}, err
	}
	r, err := s.q.OrganizationContents(ctx, orgID)
	if err != nil {
		return OrganizationContents{}, translate(err)
	}
	return OrganizationContents{Projects: r.Projects, Environments: r.Environments, Flags: r.Flags, Segments: r.Segments,
		Members: r.Members, Groups: r.Groups, Policies: r.Policies, AccessTokens: r.AccessTokens, InWorkspace: r.InWorkspace}, nil
}
