package core

import (
	"context"
	"encoding/json"

	jsonv1 "github.com/go-json-experiment/json/v1"
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
type Change struct {
	RefType   string
	RefID     string
	Keyword   string
	Operation string
	EnvID     *uuid.UUID
	Previous  any // nil for a creation
	Current   any // nil for a removal
	Comment   string
	// event, when set, tells SDKs and caches of the change: the audit
	// entry's statement writes it into the change outbox (RecordChange).
	Event *feed.Event
}

// audit records a change in the caller's transaction, so the entry exists
// exactly when the change does.
func (s *Core) Audit(ctx context.Context, q *db.Queries, a *Actor, ch Change) error {
	if accessRefTypes[ch.RefType] {
		s.AccessChanged()
	}
	var orgID *uuid.UUID
	if a.OrgID != uuid.Nil {
		orgID = &a.OrgID
	}
	previous, err := snapshot(ch.Previous)
	if err != nil {
		return err
	}
	current, err := snapshot(ch.Current)
	if err != nil {
		return err
	}
	var event *string
	if ch.Event != nil {
		encoded, err := feed.Encode(ctx, *ch.Event)
		if err != nil {
			return err
		}
		event = &encoded
		s.ChangesRecorded.Add(1)
	}
	var hookEvents []string
	if s.hookEvents != nil {
		hookEvents = s.hookEvents(a, ch)
	}
	subscribed, err := q.InsertAuditLog(ctx, db.InsertAuditLogParams{
		WorkspaceID:    a.WorkspaceID,
		OrganizationID: orgID,
		EnvID:          ch.EnvID,
		RefType:        ch.RefType,
		RefID:          ch.RefID,
		Keyword:        ch.Keyword,
		Operation:      ch.Operation,
		Previous:       previous,
		Current:        current,
		Comment:        ch.Comment,
		CreatorID:      ActorID(a),
		CreatorKind:    ActorKind(a),
		Event:          event,
		WebhookEvents:  hookEvents,
	})
	if err != nil || !subscribed || s.hookQueue == nil {
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
	return jsonv1.Marshal(v) // encoding/json's output, in less time
}

// ActorID is who a change is attributed to: the token when one was used,
// the trigger when one was called.
func ActorID(a *Actor) uuid.UUID {
	if a.TriggerID != uuid.Nil {
		return a.TriggerID
	}
	if a.IsToken() {
		return a.TokenID
	}
	return a.UserID
}

// ActorKind says whether ActorID is a user, an access token or a trigger (system).
func ActorKind(a *Actor) string {
	if a.TriggerID != uuid.Nil {
		return "system"
	}
	if a.IsToken() {
		return "token"
	}
	return "user"
}
