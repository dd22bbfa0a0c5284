package sdkdata

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// End users seen by the SDK endpoints are not written while the request
// waits: sql/runner buffers them, coalescing repeated keys, and hands them
// here in batches.
const (
	// EndUserBatch is how many end users one statement writes; the buffer
	// asks for a write as soon as that many are pending.
	EndUserBatch = 1_000
)

// SeenEndUser is an end user the SDKs of an environment reported: the
// latest name and properties they sent, and when it was first and last seen.
type SeenEndUser struct {
	EnvID               uuid.UUID
	KeyID               string
	Name                *string
	Properties          []eval.UserProperty
	FirstSeen, LastSeen time.Time
}

// WriteEndUsers writes end users the SDKs reported: a key new to its
// environment is added (past MaxEndUsersPerEnv it is dropped), a known one
// takes the name, properties and times. users are sorted in place and
// written in key order, EndUserBatch to a statement, so writers on several
// instances lock rows in one order. A batch the database refuses is
// dropped, the rest still written, and the first error returned: end users
// are a convenience, and keeping them would let memory grow while the
// database is away.
func (s *SDK) WriteEndUsers(ctx context.Context, users []SeenEndUser) error {
	slices.SortFunc(users, func(a, b SeenEndUser) int {
		if c := bytes.Compare(a.EnvID[:], b.EnvID[:]); c != 0 {
			return c
		}
		return strings.Compare(a.KeyID, b.KeyID)
	})
	var firstErr error
	for len(users) > 0 {
		n := min(len(users), EndUserBatch)
		dropped, err := s.core.Q.UpsertEndUsers(ctx, s.upsertEndUsers(users[:n]))
		users = users[n:]
		if err != nil {
			if firstErr == nil {
				firstErr = core.Translate(err)
			}
			continue
		}
		if dropped > 0 {
			s.core.Log.DebugContext(ctx, "new end users dropped: their environments keep the most allowed", "count", dropped)
		}
	}
	return firstErr
}

// upsertEndUsers is one statement's parameters for a batch of end users,
// within the environments' bounds.
func (s *SDK) upsertEndUsers(batch []SeenEndUser) db.UpsertEndUsersParams {
	n := len(batch)
	p := db.UpsertEndUsersParams{MaxPerEnv: s.core.MaxEndUsersPerEnv, MaxProperties: core.MaxEndUserProperties,
		EnvIds: make([]uuid.UUID, n), KeyIds: make([]string, n), Names: make([]string, n),
		Properties: make([]json.RawMessage, n), FirstSeen: make([]time.Time, n), LastSeen: make([]time.Time, n)}
	for i, u := range batch {
		p.EnvIds[i], p.KeyIds[i], p.FirstSeen[i], p.LastSeen[i] = u.EnvID, u.KeyID, u.FirstSeen, u.LastSeen
		if u.Name != nil {
			p.Names[i] = *u.Name
		}
		p.Properties[i] = propertiesJSON(u.Properties)
	}
	return p
}

// propertiesJSON is customizedProperties as stored: never null.
func propertiesJSON(props []eval.UserProperty) json.RawMessage {
	if props == nil {
		props = []eval.UserProperty{}
	}
	b, _ := json.Marshal(props)
	return b
}

// UnknownEndUsers reports, for each of users, whether its environment keeps
// no end user of its key yet: writing it would add one. It reads only (one
// statement through the (env_id, key_id) index), so the caller may hold new
// ones back, as a secret's limit of new end users does.
func (s *SDK) UnknownEndUsers(ctx context.Context, users []SeenEndUser) ([]bool, error) {
	p := db.KnownEndUserKeysParams{EnvIds: make([]uuid.UUID, len(users)), KeyIds: make([]string, len(users))}
	for i, u := range users {
		p.EnvIds[i], p.KeyIds[i] = u.EnvID, u.KeyID
	}
	rows, err := s.core.Q.KnownEndUserKeys(ctx, p)
	if err != nil {
		return nil, core.Translate(err)
	}
	known := make(map[db.KnownEndUserKeysRow]bool, len(rows))
	for _, r := range rows {
		known[r] = true
	}
	out := make([]bool, len(users))
	for i, u := range users {
		out[i] = !known[db.KnownEndUserKeysRow{EnvID: u.EnvID, KeyID: u.KeyID}]
	}
	return out, nil
}
