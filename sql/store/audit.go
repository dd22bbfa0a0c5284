package store

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/feed"
)

// Audit operations: what an audit entry says was done to its subject.
const (
	OpCreate  = "Create"
	OpUpdate  = "Update"
	OpArchive = "Archive"
	OpRestore = "Restore"
	OpRemove  = "Remove"
)

// accessRefTypes are the things whose changes can alter who may do what.
var accessRefTypes = map[string]bool{"AccessToken": true, "Policy": true, "Group": true, "Member": true, "Organization": true}

// change describes one audited change.
type change struct {
	refType   string
	refID     string
	keyword   string
	operation string
	envID     *uuid.UUID
	previous  any // nil for a creation
	current   any // nil for a removal
	comment   string
	// event, when set, tells SDKs and caches of the change: the audit
	// entry's statement writes it into the change outbox (recordChange).
	event *feed.Event
}

// audit records a change in the caller's transaction, so the entry exists
// exactly when the change does.
func (s *Store) audit(ctx context.Context, q *db.Queries, a *Actor, ch change) error {
	if accessRefTypes[ch.refType] {
		s.accessChanged()
	}
	var orgID *uuid.UUID
	if a.OrgID != uuid.Nil {
		orgID = &a.OrgID
	}
	previous, err := snapshot(ch.previous)
	if err != nil {
		return err
	}
	current, err := snapshot(ch.current)
	if err != nil {
		return err
	}
	var event *string
	if ch.event != nil {
		encoded, err := feed.Encode(*ch.event)
		if err != nil {
			return err
		}
		event = &encoded
		s.changesRecorded.Add(1)
	}
	hookEvents := s.hookEvents(a, ch)
	subscribed, err := q.InsertAuditLog(ctx, db.InsertAuditLogParams{
		WorkspaceID:    a.WorkspaceID,
		OrganizationID: orgID,
		EnvID:          ch.envID,
		RefType:        ch.refType,
		RefID:          ch.refID,
		Keyword:        ch.keyword,
		Operation:      ch.operation,
		Previous:       previous,
		Current:        current,
		Comment:        ch.comment,
		CreatorID:      actorID(a),
		CreatorKind:    actorKind(a),
		Event:          event,
		WebhookEvents:  hookEvents,
	})
	if err != nil || !subscribed {
		return err
	}
	// Every flag and segment change is audited here, so its webhook
	// deliveries are queued here, in the same transaction.
	return s.hookQueue(ctx, q, a, ch, hookEvents)
}

func snapshot(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	return json.Marshal(v)
}

// actorID is who a change is attributed to: the token when one was used,
// the trigger when one was called.
func actorID(a *Actor) uuid.UUID {
	if a.TriggerID != uuid.Nil {
		return a.TriggerID
	}
	if a.IsToken() {
		return a.TokenID
	}
	return a.UserID
}

// actorKind says whether actorID is a user, an access token or a trigger (system).
func actorKind(a *Actor) string {
	if a.TriggerID != uuid.Nil {
		return "system"
	}
	if a.IsToken() {
		return "token"
	}
	return "user"
}
