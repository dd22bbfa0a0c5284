package sdkdata

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// ImportUser is one end user of an upload or a download (FeatBit's ImportUser).
type ImportUser struct {
	KeyID                string              `json:"keyId"`
	Name                 *string             `json:"name"`
	CustomizedProperties []eval.UserProperty `json:"customizedProperties"`
}

// ImportUserData is FeatBit's file of end users: the users and the names
// of the environment's properties.
type ImportUserData struct {
	Users          []ImportUser `json:"users"`
	UserProperties []string     `json:"userProperties"`
}

// MaxEndUsersPerFile bounds an upload and a download: FeatBit's
// EndUserLoadLimit.
const MaxEndUsersPerFile = 50_000

// MaxPropertyNamesPerFile bounds the property names of an upload: no more
// are kept per environment.
const MaxPropertyNamesPerFile = core.MaxEndUserProperties

// exportPage is how many end users a download reads at a time.
const exportPage = 1_000

// EachEndUser hands the end users whose key or name contains search,
// most recently seen first, to each, at most MaxEndUsersPerFile, reading
// them a page at a time so a download holds one page in memory.
func (s *SDK) EachEndUser(ctx context.Context, a *core.Actor, envID uuid.UUID, search string, each func(ImportUser) error) error {
	var v core.Validator
	v.Text("searchText", search, core.MaxNameLen)
	if err := v.Err(); err != nil {
		return err
	}
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return err
	}
	cur, pattern := maxCursor, searchPattern(search)
	for n := 0; n < MaxEndUsersPerFile; {
		rows, err := s.core.Q.EndUsersBefore(ctx, db.EndUsersBeforeParams{EnvID: envID, UpdatedAt: cur.UpdatedAt, ID: cur.ID,
			Pattern: pattern, Lim: int32(min(exportPage, MaxEndUsersPerFile-n))})
		if err != nil {
			return core.Translate(err)
		}
		for _, r := range rows {
			u := endUserFrom(r)
			if err := each(ImportUser{KeyID: u.KeyID, Name: u.Name, CustomizedProperties: u.CustomizedProperties}); err != nil {
				return err
			}
		}
		n += len(rows)
		if len(rows) < exportPage {
			return nil
		}
		last := rows[len(rows)-1]
		cur = PageCursor{ID: last.ID, UpdatedAt: last.UpdatedAt}
	}
	return nil
}

// ImportEndUsers adds or replaces the file's end users, seen now, and adds
// its property names, all or nothing: a user the SDK endpoints would
// refuse, more than MaxEndUsersPerFile users, or new keys past the
// environment's bound refuse the whole file.
func (s *SDK) ImportEndUsers(ctx context.Context, a *core.Actor, envID uuid.UUID, in ImportUserData) (int, error) {
	var v core.Validator
	if len(in.Users) > MaxEndUsersPerFile {
		v.Add("users", "invalid")
	}
	if len(in.UserProperties) > MaxPropertyNamesPerFile {
		v.Add("userProperties", "invalid")
	}
	seen := map[string]bool{}
	for i, u := range in.Users {
		if CheckEndUser(eval.EndUser{KeyID: u.KeyID, Name: u.Name, CustomizedProperties: u.CustomizedProperties}) != nil || seen[u.KeyID] {
			v.At("users", "invalid", fmt.Sprintf("users[%d]", i), "a user whose key is missing, repeated or too long, or whose name or properties are invalid")
			break
		}
		seen[u.KeyID] = true
	}
	for _, n := range in.UserProperties {
		if !v.Text("userProperties", n, core.MaxNameLen) {
			break
		}
	}
	if err := v.Err(); err != nil {
		return 0, err
	}
	env, err := s.writableEnv(ctx, a, envID)
	if err != nil {
		return 0, err
	}
	now := time.Now()
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		for rest := in.Users; len(rest) > 0; {
			n := min(len(rest), EndUserBatch)
			batch := make([]SeenEndUser, n)
			for i, u := range rest[:n] {
				batch[i] = SeenEndUser{EnvID: envID, KeyID: u.KeyID, Name: u.Name, Properties: u.CustomizedProperties, FirstSeen: now, LastSeen: now}
			}
			rest = rest[n:]
			dropped, err := q.UpsertEndUsers(ctx, s.upsertEndUsers(batch))
			if err != nil {
				return err
			}
			if dropped > 0 {
				return core.Invalid("end_users_limit_is_reached")
			}
		}
		if len(in.UserProperties) > 0 {
			if err := q.AddEndUserPropertyNames(ctx, db.AddEndUserPropertyNamesParams{EnvID: envID, Names: in.UserProperties,
				MaxProperties: core.MaxEndUserProperties}); err != nil {
				return err
			}
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "EndUser", RefID: envID.String(), Keyword: fmt.Sprintf("%d end users imported", len(in.Users)),
			Operation: core.OpUpdate, EnvID: &env.Environment.ID, Current: map[string]int{"imported": len(in.Users)}})
	})
	if err != nil {
		return 0, err
	}
	return len(in.Users), nil
}
