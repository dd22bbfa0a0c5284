package store

import (
	"context"
	"errors"
	"strings"

	"github.com/bunting-flags/bunting/sql/db"
)

// ProfileInput changes the caller's own name and email (FeatBit's
// UpdateProfile body). An empty name becomes the part of the email before "@".
type ProfileInput struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

func profile(u db.User) Profile {
	return Profile{ID: u.ID, Email: u.Email, Name: u.Name, Origin: u.Origin}
}

// UpdateProfile changes the signed-in user's name and email. Access tokens
// may not: a profile is the person's, not an automation's. An email another
// user has is refused with EmailHasBeenUsed.
func (s *Store) UpdateProfile(ctx context.Context, a *Actor, in ProfileInput) (Profile, error) {
	if a.IsToken() {
		return Profile{}, ErrForbidden
	}
	email, name := strings.TrimSpace(in.Email), strings.TrimSpace(in.Name)
	var v validator
	checkEmail(&v, "email", email)
	v.text("name", name, MaxNameLen)
	if err := v.err(); err != nil {
		return Profile{}, err
	}
	if name == "" {
		name = emailName(email)
	}
	var out Profile
	err := s.inTx(ctx, func(q *db.Queries) error {
		before, err := q.GetUser(ctx, a.UserID)
		if err != nil {
			return err
		}
		if !strings.EqualFold(before.Email, email) {
			switch other, err := q.GetUserByEmail(ctx, email); {
			case err == nil && other.ID != a.UserID:
				return ErrEmailUsed
			case err != nil && !errors.Is(translate(err), ErrNotFound):
				return err
			}
		}
		row, err := q.UpdateUserProfile(ctx, db.UpdateUserProfileParams{ID: a.UserID, Name: name, Email: email})
		if err != nil {
			if errors.Is(translate(err), ErrKeyUsed) { // a concurrent taker of the same email
				return ErrEmailUsed
			}
			return err
		}
		out = profile(row)
		if out == profile(before) {
			return nil
		}
		return s.audit(ctx, q, a, change{refType: "User", refID: a.UserID.String(), keyword: email, operation: OpUpdate,
			previous: ProfileInput{Name: before.Name, Email: before.Email}, current: ProfileInput{Name: row.Name, Email: row.Email}})
	})
	return out, err
}

// ListUserWorkspaces returns the workspaces the caller belongs to (an access
// token: its own). Client secrets are masked; the licence is shown only for
// the current workspace and only to those allowed to change it (decisions.md),
// so FeatBit's UI shows its licensed screens to them and its plain ones to
// everyone else.
func (s *Store) ListUserWorkspaces(ctx context.Context, a *Actor) ([]Workspace, error) {
	var rows []db.Workspace
	if a.IsToken() {
		row, err := s.q.GetWorkspace(ctx, a.WorkspaceID)
		if err != nil {
			return nil, translate(err)
		}
		rows = []db.Workspace{row}
	} else {
		var err error
		if rows, err = s.q.ListUserWorkspaces(ctx, a.UserID); err != nil {
			return nil, translate(err)
		}
	}
	out := make([]Workspace, 0, len(rows))
	for _, row := range rows {
		w, err := s.workspace(ctx, a, row)
		if err != nil {
			return nil, err
		}
		if row.ID != a.WorkspaceID {
			w.License = "" // the caller's statements speak for the current workspace only
		}
		out = append(out, w)
	}
	return out, nil
}
