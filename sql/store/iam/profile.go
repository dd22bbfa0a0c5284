package iam

import (
	"context"
	"errors"
	"strings"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
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
func (s *IAM) UpdateProfile(ctx context.Context, a *core.Actor, in ProfileInput) (Profile, error) {
	if a.IsToken() {
		return Profile{}, core.ErrForbidden
	}
	email, name := strings.TrimSpace(in.Email), strings.TrimSpace(in.Name)
	var v core.Validator
	checkEmail(&v, "email", email)
	v.Text("name", name, core.MaxNameLen)
	if err := v.Err(); err != nil {
		return Profile{}, err
	}
	if name == "" {
		name = emailName(email)
	}
	var out Profile
	err := s.core.InTx(ctx, func(q *db.Queries) error {
		before, err := q.GetUser(ctx, a.UserID)
		if err != nil {
			return err
		}
		if !strings.EqualFold(before.Email, email) {
			switch other, err := q.GetUserByEmail(ctx, email); {
			case err == nil && other.ID != a.UserID:
				return core.ErrEmailUsed
			case err != nil && !errors.Is(core.Translate(err), core.ErrNotFound):
				return err
			}
		}
		row, err := q.UpdateUserProfile(ctx, db.UpdateUserProfileParams{ID: a.UserID, Name: name, Email: email})
		if err != nil {
			if errors.Is(core.Translate(err), core.ErrKeyUsed) { // a concurrent taker of the same email
				return core.ErrEmailUsed
			}
			return err
		}
		out = profile(row)
		if out == profile(before) {
			return nil
		}
		s.core.AccessChanged() // the pages' cached sessions show the profile
		return s.core.Audit(ctx, q, a, core.Change{RefType: "User", RefID: a.UserID.String(), Keyword: email, Operation: core.OpUpdate,
			Previous: ProfileInput{Name: before.Name, Email: before.Email}, Current: ProfileInput{Name: row.Name, Email: row.Email}})
	})
	return out, err
}

// ListUserWorkspaces returns the workspaces the caller belongs to (an access
// token: its own). Client secrets are masked; the licence is shown only for
// the current workspace and only to those allowed to change it (api/README.md, The license),
// so FeatBit's UI shows its licensed screens to them and its plain ones to
// everyone else.
func (s *IAM) ListUserWorkspaces(ctx context.Context, a *core.Actor) ([]Workspace, error) {
	var rows []db.Workspace
	if a.IsToken() {
		row, err := s.core.Q.GetWorkspace(ctx, a.WorkspaceID)
		if err != nil {
			return nil, core.Translate(err)
		}
		rows = []db.Workspace{row}
	} else {
		var err error
		if rows, err = s.core.Q.ListUserWorkspaces(ctx, a.UserID); err != nil {
			return nil, core.Translate(err)
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
