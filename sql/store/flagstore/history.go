package flagstore

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/sql/instructions"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
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
	// Instructions are FeatBit's semantic patch of the change (from its
	// snapshots, audit_compare.go): what FeatBit's history lists show.
	Instructions []instructions.Instruction `json:"instructions"`
	// SubjectExists is false for a flag or segment since deleted.
	SubjectExists bool `json:"-"`
}

// DataChange is what a change did: the thing before and after (null when it
// did not exist).
type DataChange struct {
	Previous json.RawMessage
	Current  json.RawMessage
}

// MarshalJSON writes FeatBit's DataChange: each snapshot as a string of JSON
// text, "" when the thing did not exist, which FeatBit's clients parse.
func (d DataChange) MarshalJSON() ([]byte, error) {
	text := func(raw json.RawMessage) string {
		if raw == nil || string(raw) == "null" {
			return ""
		}
		return string(raw)
	}
	return json.Marshal(struct {
		Previous string `json:"previous"`
		Current  string `json:"current"`
	}{text(d.Previous), text(d.Current)})
}

// AuditFilter selects a page of an environment's history.
type AuditFilter struct {
	RefType string
	RefID   string
	// Query matches part of the keyword or the comment.
	Query    string
	From, To *time.Time
	// CreatorID selects the changes of one user or access token; nil for all.
	CreatorID *uuid.UUID
	// CrossEnvironment lists the changes of every environment of the
	// organization the caller may access, not only the route's (FeatBit
	// uses it for a shared segment's history).
	CrossEnvironment bool
	Page             core.Page
}

// EnvAuditRefTypes are the kinds of change an environment's history holds:
// those recorded with their environment (core.Change.EnvID). A filter by
// any of them (AuditFilter.RefType) uses the same index as the whole history.
var EnvAuditRefTypes = []string{"FeatureFlag", "Segment", "FlagChangeRequest", "FlagSchedule", "FlagTrigger", "CodeReferences", "EndUser", "EndUserProperty", "Experiment", "ExperimentMetric"}

// ListAuditLogs pages an environment's history, newest first.
func (s *Flags) ListAuditLogs(ctx context.Context, a *core.Actor, envID uuid.UUID, f AuditFilter) (core.Paged[AuditEntry], error) {
	var v core.Validator
	f.Page.Check(&v)
	v.Text("refType", f.RefType, core.MaxNameLen)
	v.Text("refId", f.RefID, core.MaxKeyLen)
	v.Text("query", f.Query, core.MaxNameLen)
	v.When("from", f.From)
	v.When("to", f.To)
	if err := v.Err(); err != nil {
		return core.Paged[AuditEntry]{}, err
	}
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return core.Paged[AuditEntry]{}, err
	}
	envIDs := []uuid.UUID{envID}
	if f.CrossEnvironment {
		// FeatBit drops the environment condition altogether, which would
		// show other organizations' history; here it widens to the
		// environments of the caller's organization the caller may read.
		envs, err := s.core.Q.ListOrganizationEnvironments(ctx, a.OrgID)
		if err != nil {
			return core.Paged[AuditEntry]{}, core.Translate(err)
		}
		envIDs = envIDs[:0]
		for _, e := range envs {
			if a.Can(access.CanAccessEnv, core.EnvRN(e.ProjectKey, e.Key)) {
				envIDs = append(envIDs, e.ID)
			}
		}
	}
	ids := make([]string, len(envIDs))
	for i, id := range envIDs {
		ids[i] = id.String()
	}
	envList := strings.Join(ids, ",")
	pattern := "%" + core.EscapeLike(strings.ToLower(f.Query)) + "%"
	rows, err := s.core.Q.ListEnvAuditLogs(ctx, db.ListEnvAuditLogsParams{EnvIds: envList, RefType: f.RefType, RefID: f.RefID,
		Pattern: pattern, Since: f.From, Until: f.To, CreatorID: f.CreatorID, PageSize: f.Page.Limit(), PageOffset: f.Page.Offset()})
	if err != nil {
		return core.Paged[AuditEntry]{}, core.Translate(err)
	}
	total, err := s.core.Q.CountEnvAuditLogs(ctx, db.CountEnvAuditLogsParams{EnvIds: envList, RefType: f.RefType, RefID: f.RefID,
		Pattern: pattern, Since: f.From, Until: f.To, CreatorID: f.CreatorID})
	if err != nil {
		return core.Paged[AuditEntry]{}, core.Translate(err)
	}
	out := core.Paged[AuditEntry]{TotalCount: total, Items: make([]AuditEntry, len(rows))}
	for i, r := range rows {
		l := r.AuditLog
		out.Items[i] = AuditEntry{ID: l.ID, RefID: l.RefID, RefType: l.RefType, Keyword: l.Keyword, Operation: l.Operation,
			DataChange: DataChange{Previous: orNull(l.Previous), Current: orNull(l.Current)}, Comment: l.Comment,
			CreatorID: l.CreatorID, CreatorName: r.CreatorName, CreatorEmail: r.CreatorEmail, CreatedAt: l.CreatedAt.UTC(),
			Instructions: auditInstructions(l.RefType, l.Previous, l.Current), SubjectExists: r.SubjectExists}
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
func (s *Flags) ListFlagRevisions(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, page core.Page) (core.Paged[FlagRevision], error) {
	var v core.Validator
	page.Check(&v)
	if err := v.Err(); err != nil {
		return core.Paged[FlagRevision]{}, err
	}
	f, err := s.GetFlag(ctx, a, envID, key)
	if err != nil {
		return core.Paged[FlagRevision]{}, err
	}
	rows, err := s.core.Q.ListFlagRevisions(ctx, db.ListFlagRevisionsParams{FlagID: f.ID, PageSize: page.Limit(), PageOffset: page.Offset()})
	if err != nil {
		return core.Paged[FlagRevision]{}, core.Translate(err)
	}
	total, err := s.core.Q.CountFlagRevisions(ctx, f.ID)
	if err != nil {
		return core.Paged[FlagRevision]{}, core.Translate(err)
	}
	out := core.Paged[FlagRevision]{TotalCount: total, Items: make([]FlagRevision, len(rows))}
	for i, r := range rows {
		out.Items[i] = FlagRevision{ID: r.ID, Revision: r.Revision, Flag: r.Snapshot, Comment: r.Comment,
			CreatorID: r.CreatorID, CreatedAt: r.CreatedAt.UTC()}
	}
	return out, nil
}
