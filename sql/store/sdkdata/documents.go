package sdkdata

import (
	"context"
	"encoding/json"
	"time"

	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// Documents: where an answer is a stored flag or segment itself, the API
// serves it as the JSON its row keeps, without decoding the targeting the
// database holds as JSON into structs and encoding it again (half of the
// CPU time of reading one flag), and encodes the rest with encoding/json's
// semantics on encoding/json/v2's encoder (jsonv1), in 60% of encoding/json's
// time (2.8 µs against 4.9 µs for a flag). The members are those of Flag and Segment,
// in the same order (documents_test.go holds them to it); the JSON columns
// are spliced in as the database returns them, so within them members come
// in the database's order rather than the structs', which JSON does not
// distinguish.

// FlagDocument has the members of Flag, with its targeting as stored.
type FlagDocument struct {
	ID                    uuid.UUID       `json:"id"`
	CreatedAt             time.Time       `json:"createdAt"`
	UpdatedAt             time.Time       `json:"updatedAt"`
	CreatorID             uuid.UUID       `json:"creatorId"`
	UpdatorID             uuid.UUID       `json:"updatorId"`
	EnvID                 uuid.UUID       `json:"envId"`
	Revision              uuid.UUID       `json:"revision"`
	Name                  string          `json:"name"`
	Description           string          `json:"description"`
	Key                   string          `json:"key"`
	VariationType         string          `json:"variationType"`
	Variations            json.RawMessage `json:"variations"`
	TargetUsers           json.RawMessage `json:"targetUsers"`
	Rules                 json.RawMessage `json:"rules"`
	IsEnabled             bool            `json:"isEnabled"`
	DisabledVariationID   string          `json:"disabledVariationId"`
	Fallthrough           json.RawMessage `json:"fallthrough"`
	ExptIncludeAllTargets bool            `json:"exptIncludeAllTargets"`
	Tags                  []string        `json:"tags"`
	IsArchived            bool            `json:"isArchived"`
}

// flagJSONOf is a flag row as the JSON of its Flag.
func flagJSONOf(r db.FeatureFlag) (json.RawMessage, error) {
	return jsonv1.Marshal(FlagDocument{ID: r.ID, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		CreatorID: r.CreatorID, UpdatorID: r.UpdatorID, EnvID: r.EnvID, Revision: r.Revision, Name: r.Name,
		Description: r.Description, Key: r.Key, VariationType: r.VariationType, Variations: r.Variations,
		TargetUsers: r.TargetUsers, Rules: r.Rules, IsEnabled: r.IsEnabled, DisabledVariationID: r.DisabledVariationID,
		Fallthrough: r.Fallthrough, ExptIncludeAllTargets: r.ExptIncludeAllTargets, Tags: core.OrEmpty(r.Tags),
		IsArchived: r.IsArchived})
}

// SegmentDocument has the members of Segment, with its rules as stored.
type SegmentDocument struct {
	ID                    uuid.UUID       `json:"id"`
	CreatedAt             time.Time       `json:"createdAt"`
	UpdatedAt             time.Time       `json:"updatedAt"`
	WorkspaceID           uuid.UUID       `json:"workspaceId"`
	EnvID                 uuid.UUID       `json:"envId"`
	Name                  string          `json:"name"`
	Key                   string          `json:"key"`
	Type                  string          `json:"type"`
	Scopes                []string        `json:"scopes"`
	Description           string          `json:"description"`
	Included              []string        `json:"included"`
	Excluded              []string        `json:"excluded"`
	Rules                 json.RawMessage `json:"rules"`
	Tags                  []string        `json:"tags"`
	IsArchived            bool            `json:"isArchived"`
	IsEnvironmentSpecific bool            `json:"isEnvironmentSpecific"`
}

// segmentDocumentOf is a segment row as its Segment, but for its rules.
func segmentDocumentOf(r db.Segment) SegmentDocument {
	return SegmentDocument{ID: r.ID, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), WorkspaceID: r.WorkspaceID,
		EnvID: r.EnvID, Name: r.Name, Key: r.Key, Type: r.Type, Scopes: r.Scopes, Description: r.Description,
		Included: core.OrEmpty(r.Included), Excluded: core.OrEmpty(r.Excluded), Rules: r.Rules, Tags: core.OrEmpty(r.Tags),
		IsArchived: r.IsArchived, IsEnvironmentSpecific: r.Type == flagstore.SegmentEnvironmentSpecific}
}

// GetFlagJSON is GetFlag as the JSON of the Flag, for answers that are the
// flag itself.
func (s *SDK) GetFlagJSON(ctx context.Context, a *core.Actor, envID uuid.UUID, key string) (json.RawMessage, error) {
	row, err := s.flags.FlagRowIn(ctx, a, envID, key)
	if err != nil {
		return nil, err
	}
	return flagJSONOf(row)
}

// SegmentsByIDsJSON is SegmentsByIDs as the JSON of the list of Segments.
func (s *SDK) SegmentsByIDsJSON(ctx context.Context, a *core.Actor, envID uuid.UUID, ids []string) (json.RawMessage, error) {
	rows, err := s.segs.VisibleSegmentsByIDs(ctx, a, envID, ids)
	if err != nil {
		return nil, err
	}
	docs := make([]SegmentDocument, len(rows))
	for i, r := range rows {
		docs[i] = segmentDocumentOf(r)
	}
	return jsonv1.Marshal(docs)
}
