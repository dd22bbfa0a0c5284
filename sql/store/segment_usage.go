package store

import (
	"context"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
)

// FlagReference is a flag whose rules name a segment.
type FlagReference struct {
	ID         uuid.UUID `json:"id"`
	Key        string    `json:"key"`
	Name       string    `json:"name"`
	EnvID      uuid.UUID `json:"envId"`
	EnvKey     string    `json:"envKey"`
	EnvName    string    `json:"envName"`
	ProjectKey string    `json:"projectKey"`
	IsArchived bool      `json:"isArchived"`
}

// SegmentUsage is which flags use a segment, as the caller may see them: a
// shared segment is used in several environments, and those the caller may
// not access (CanAccessEnv) must not show their flags' keys and names, only
// how many there are, since they still keep the segment from being archived
// or deleted.
type SegmentUsage struct {
	Flags []FlagReference
	// Hidden counts the flags in environments the caller may not access.
	Hidden int
}

// SegmentFlagReferences lists the flags whose rules name a segment, in every
// environment the caller may access (FeatBit lists them in all).
func (s *Store) SegmentFlagReferences(ctx context.Context, a *Actor, envID, id uuid.UUID) ([]FlagReference, error) {
	u, err := s.SegmentUsageOf(ctx, a, envID, id)
	return u.Flags, err
}

// SegmentUsageOf answers which flags use a segment the caller may read.
func (s *Store) SegmentUsageOf(ctx context.Context, a *Actor, envID, id uuid.UUID) (SegmentUsage, error) {
	if _, err := s.GetSegment(ctx, a, envID, id); err != nil {
		return SegmentUsage{}, err
	}
	rows, err := s.q.ListFlagsReferencingSegment(ctx, id)
	if err != nil {
		return SegmentUsage{}, translate(err)
	}
	u := SegmentUsage{Flags: []FlagReference{}}
	for _, r := range rows {
		if !a.Can(access.CanAccessEnv, EnvRN(r.ProjectKey, r.EnvKey)) {
			u.Hidden++
			continue
		}
		u.Flags = append(u.Flags, FlagReference{ID: r.ID, Key: r.Key, Name: r.Name, EnvID: r.EnvID, EnvKey: r.EnvKey,
			EnvName: r.EnvName, ProjectKey: r.ProjectKey, IsArchived: r.IsArchived})
	}
	return u, nil
}
