package store

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
)

// AuditEntry is one recorded change.
type AuditEntry struct {
	ID           uuid.UUID  `json:"id"`
	RefID        string     `json:"refId"`
	RefType      string     `json:"refType"`
	Keyword      string     `json:"keyword"`
	Operation    string     `json:"operation"`
	DataChange   DataChange `json:"dataChange"`
	Comment      string     `json:"comment"`
	CreatorID    uuid.UUID  `json:"creatorId"`
	CreatorName  string     `json:"creatorName"`
	CreatorEmail string     `json:"creatorEmail"`
	CreatedAt    time.Time  `json:"createdAt"`
}

// DataChange is what a change did: the thing before and after (null when it
// did not exist).
type DataChange struct {
	Previous json.RawMessage `json:"previous"`
	Current  json.RawMessage `json:"current"`
}

// AuditFilter selects a page of an environment's history.
type AuditFilter struct {
	RefType string
	RefID   string
	// Query matches part of the keyword or the comment.
	Query    string
	From, To *time.Time
	Page     Page
}

// ListAuditLogs pages an environment's history, newest first.
func (s *Store) ListAuditLogs(ctx context.Context, a *Actor, envID uuid.UUID, f AuditFilter) (Paged[AuditEntry], error) {
	var v validator
	f.Page.check(&v)
	v.text("refType", f.RefType, maxNameLen)
	v.text("refId", f.RefID, maxKeyLen)
	v.text("query", f.Query, maxNameLen)
	if err := v.err(); err != nil {
		return Paged[AuditEntry]{}, err
	}
	if _, err := s.readableEnv(ctx, a, envID); err != nil {
		return Paged[AuditEntry]{}, err
	}
	pattern := "%" + escapeLike(strings.ToLower(f.Query)) + "%"
	rows, err := s.q.ListEnvAuditLogs(ctx, db.ListEnvAuditLogsParams{EnvID: &envID, RefType: f.RefType, RefID: f.RefID,
		Pattern: pattern, Since: f.From, Until: f.To, PageSize: f.Page.limit(), PageOffset: f.Page.offset()})
	if err != nil {
		return Paged[AuditEntry]{}, translate(err)
	}
	total, err := s.q.CountEnvAuditLogs(ctx, db.CountEnvAuditLogsParams{EnvID: &envID, RefType: f.RefType, RefID: f.RefID,
		Pattern: pattern, Since: f.From, Until: f.To})
	if err != nil {
		return Paged[AuditEntry]{}, translate(err)
	}
	out := Paged[AuditEntry]{TotalCount: total, Items: make([]AuditEntry, len(rows))}
	for i, r := range rows {
		l := r.AuditLog
		out.Items[i] = AuditEntry{ID: l.ID, RefID: l.RefID, RefType: l.RefType, Keyword: l.Keyword, Operation: l.Operation,
			DataChange: DataChange{Previous: orNull(l.Previous), Current: orNull(l.Current)}, Comment: l.Comment,
			CreatorID: l.CreatorID, CreatorName: r.CreatorName, CreatorEmail: r.CreatorEmail, CreatedAt: l.CreatedAt.UTC()}
	}
	return out, nil
}

func orNull(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return json.RawMessage("null")
	}
	return raw
}

// FlagRevision is one version of a flag.
type FlagRevision struct {
	ID        uuid.UUID       `json:"id"`
	Revision  uuid.UUID       `json:"revision"`
	Flag      json.RawMessage `json:"flag"`
	Comment   string          `json:"comment"`
	CreatorID uuid.UUID       `json:"creatorId"`
	CreatedAt time.Time       `json:"createdAt"`
}

// ListFlagRevisions pages a flag's versions, newest first.
func (s *Store) ListFlagRevisions(ctx context.Context, a *Actor, envID uuid.UUID, key string, page Page) (Paged[FlagRevision], error) {
	var v validator
	page.check(&v)
	if err := v.err(); err != nil {
		return Paged[FlagRevision]{}, err
	}
	f, err := s.GetFlag(ctx, a, envID, key)
	if err != nil {
		return Paged[FlagRevision]{}, err
	}
	rows, err := s.q.ListFlagRevisions(ctx, db.ListFlagRevisionsParams{FlagID: f.ID, PageSize: page.limit(), PageOffset: page.offset()})
	if err != nil {
		return Paged[FlagRevision]{}, translate(err)
	}
	total, err := s.q.CountFlagRevisions(ctx, f.ID)
	if err != nil {
		return Paged[FlagRevision]{}, translate(err)
	}
	out := Paged[FlagRevision]{TotalCount: total, Items: make([]FlagRevision, len(rows))}
	for i, r := range rows {
		out.Items[i] = FlagRevision{ID: r.ID, Revision: r.Revision, Flag: r.Snapshot, Comment: r.Comment,
			CreatorID: r.CreatorID, CreatedAt: r.CreatedAt.UTC()}
	}
	return out, nil
}
