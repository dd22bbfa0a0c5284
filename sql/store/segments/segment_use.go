package segments

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// How flags use segments: which flags name a segment, the segments a flag's
// rules may name, and what a change of a segment may do to the flags that
// name it.

// ErrSegmentIsBeingUsed refuses archiving or deleting a segment flags use.
var ErrSegmentIsBeingUsed = &core.RuleError{Code: "SegmentIsBeingUsed"}

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
func (s *Segments) SegmentFlagReferences(ctx context.Context, a *core.Actor, envID, id uuid.UUID) ([]FlagReference, error) {
	u, err := s.SegmentUsageOf(ctx, a, envID, id)
	return u.Flags, err
}

// SegmentUsageOf answers which flags use a segment the caller may read.
func (s *Segments) SegmentUsageOf(ctx context.Context, a *core.Actor, envID, id uuid.UUID) (SegmentUsage, error) {
	if _, err := s.GetSegment(ctx, a, envID, id); err != nil {
		return SegmentUsage{}, err
	}
	rows, err := s.core.Q.ListFlagsReferencingSegment(ctx, id)
	if err != nil {
		return SegmentUsage{}, core.Translate(err)
	}
	u := SegmentUsage{Flags: []FlagReference{}}
	for _, r := range rows {
		if !a.Can(access.CanAccessEnv, core.EnvRN(r.ProjectKey, r.EnvKey)) {
			u.Hidden++
			continue
		}
		u.Flags = append(u.Flags, FlagReference{ID: r.ID, Key: r.Key, Name: r.Name, EnvID: r.EnvID, EnvKey: r.EnvKey,
			EnvName: r.EnvName, ProjectKey: r.ProjectKey, IsArchived: r.IsArchived})
	}
	return u, nil
}

// segmentApproval is the pipeline's approval stage for a segment: a change
// of who is in it is refused where a flag that uses it needs approval to
// change. When who is in it changes, it returns the flags that use it,
// locked, for touchReferencingFlags: one lookup serves both. used
// (lockSegment) tells whether any flag names the segment; when none does,
// the usual case, no flag and no approval setting is read.
func segmentApproval(ctx context.Context, q *db.Queries, before, after flagstore.Segment, used bool) ([]db.FeatureFlag, error) {
	if !used || !flagstore.SegmentServesDifferently(before, after) {
		return nil, nil
	}
	users, err := q.LockFlagsReferencingSegment(ctx, before.ID)
	if err != nil {
		return nil, err
	}
	// Archived flags serve nothing, so they need no approval.
	if slices.ContainsFunc(users, func(f db.FeatureFlag) bool { return !f.IsArchived }) {
		if err := flagstore.SegmentApproval(ctx, q, before.ID); err != nil {
			return nil, err
		}
	}
	return users, nil
}

// guardUse refuses archiving a segment that flags use, and moving it away
// from the environment of a flag that uses it.
func guardUse(ctx context.Context, q *db.Queries, before, after flagstore.Segment, used bool) error {
	archiving := after.IsArchived && !before.IsArchived
	rescoping := after.Type != before.Type || !slices.Equal(after.Scopes, before.Scopes)
	if !used || (!archiving && !rescoping) {
		return nil
	}
	refs, err := q.ListFlagsReferencingSegment(ctx, before.ID)
	if err != nil || len(refs) == 0 {
		return err
	}
	if archiving {
		return ErrSegmentIsBeingUsed
	}
	for _, r := range refs {
		env := core.EnvRow{GetEnvironmentRow: db.GetEnvironmentRow{Environment: db.Environment{ID: r.EnvID, Key: r.EnvKey},
			ProjectKey: r.ProjectKey, OrganizationKey: organizationKeyOf(after)}}
		if !flagstore.VisibleIn(after, env) {
			return ErrSegmentIsBeingUsed
		}
	}
	return nil
}

// organizationKeyOf reads the organization key from a segment's scopes; every
// scope starts with it (validScopes).
func organizationKeyOf(sg flagstore.Segment) string {
	first, _, _ := strings.Cut(sg.Scopes[0], ":")
	return strings.TrimPrefix(first, "organization/")
}

// touchReferencingFlags gives every flag that uses a segment (users, locked
// by segmentApproval) a new revision and a history entry, since who it
// serves changed with the segment.
func (s *Segments) touchReferencingFlags(ctx context.Context, q *db.Queries, a *core.Actor, orgID uuid.UUID, sg flagstore.Segment, users []db.FeatureFlag) error {
	for _, row := range users {
		before, err := flagstore.FlagFrom(row)
		if err != nil {
			return err
		}
		after := before.Clone()
		after.Revision, after.UpdatorID = uuid.New(), core.ActorID(a)
		stored, err := flagstore.StoreFlag(ctx, q, after, before.Revision, row.SegmentRefs)
		if err != nil {
			return err
		}
		if err := s.flags.RecordFlag(ctx, q, a, orgID, row.EnvID, core.OpUpdate, &before, &stored,
			"Referenced segment '"+sg.Name+"' has been updated."); err != nil {
			return err
		}
	}
	return nil
}
