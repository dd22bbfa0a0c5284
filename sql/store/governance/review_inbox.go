package governance

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// The reviews inbox: the change requests waiting for a person's decision in
// every environment of their organization, not only the one they work in.

// ReviewWaiting is a change request waiting for the caller's review, with
// where it is and who asked.
type ReviewWaiting struct {
	ID                       uuid.UUID
	EnvID                    uuid.UUID
	FlagKey, FlagName        string
	ProjectName, EnvName     string
	Reason                   string
	CreatorName, CreatorMail string
	CreatedAt                time.Time
}

// ReviewsWaiting lists the change requests of the caller's organization
// waiting for their decision, oldest first, at most 200, in the
// environments they may read (a reviewer since refused an environment
// sees nothing of it). A token, and a person outside any organization,
// has none.
func (s *Governance) ReviewsWaiting(ctx context.Context, a *core.Actor) ([]ReviewWaiting, error) {
	if a.OrgID == uuid.Nil || a.IsToken() || a.UserID == uuid.Nil {
		return nil, nil
	}
	rows, err := s.core.Q.ListOrganizationAwaitingReview(ctx, db.ListOrganizationAwaitingReviewParams{MemberID: a.UserID, OrganizationID: a.OrgID})
	if err != nil {
		return nil, core.Translate(err)
	}
	out := make([]ReviewWaiting, 0, len(rows))
	for _, r := range rows {
		if !a.Can(access.CanAccessEnv, core.EnvRN(r.ProjectKey, r.EnvKey)) {
			continue
		}
		out = append(out, ReviewWaiting{ID: r.ID, EnvID: r.EnvID, FlagKey: r.FlagKey, FlagName: r.FlagName,
			ProjectName: r.ProjectName, EnvName: r.EnvName, Reason: r.Reason, CreatorName: r.CreatorName,
			CreatorMail: r.CreatorEmail, CreatedAt: r.CreatedAt})
	}
	return out, nil
}

// ChangeRequestPlace is the environment a change request is in.
type ChangeRequestPlace struct {
	EnvID                uuid.UUID
	ProjectName, EnvName string
}

// ChangeRequestPlace finds the environment of a change request of the
// caller's organization, for a link that names only the request (a
// webhook's message); a request in an environment the caller may not read
// is not found.
func (s *Governance) ChangeRequestPlace(ctx context.Context, a *core.Actor, id uuid.UUID) (ChangeRequestPlace, error) {
	orgID, err := a.Org()
	if err != nil {
		return ChangeRequestPlace{}, err
	}
	r, err := s.core.Q.GetOrganizationChangeRequestPlace(ctx, db.GetOrganizationChangeRequestPlaceParams{ID: id, OrganizationID: orgID})
	if err != nil {
		return ChangeRequestPlace{}, core.Translate(err)
	}
	if !a.Can(access.CanAccessEnv, core.EnvRN(r.ProjectKey, r.EnvKey)) {
		return ChangeRequestPlace{}, core.ErrNotFound
	}
	return ChangeRequestPlace{EnvID: r.EnvID, ProjectName: r.ProjectName, EnvName: r.EnvName}, nil
}
