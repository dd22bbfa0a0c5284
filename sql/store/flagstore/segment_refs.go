package flagstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// What flags and segments both ask of a segment, kept below the segments
// seam (sql/store/segments) because a flag's writes need it too: the
// segment types, who may create one, the segments a flag's rules may name,
// and the description and tags inputs both change.

// Segment types.
const (
	SegmentEnvironmentSpecific = "environment-specific"
	SegmentShared              = "shared"
)

// MayCreateSegment checks that a person may create segments in env; a
// shared one is then checked in every environment it will be visible in.
func MayCreateSegment(a *core.Actor, env core.EnvRow) error {
	return a.Require(access.CreateSegment, env.RN()+":segment/*")
}

// DescriptionInput changes a description. Description is required (it may
// be empty): a body without it names nothing to change.
type DescriptionInput struct {
	Description *string `json:"description"`
	Change
}

// TagsInput replaces a tag list; Tags is required (it may be empty).
type TagsInput struct {
	Tags *[]string `json:"tags"`
	Change
}

// CheckSegmentRefs checks that every segment a flag's rules name exists, is
// visible in the flag's environment and is not archived; the problem points
// at the first condition naming one that is not.
func (s *Flags) CheckSegmentRefs(ctx context.Context, q *db.Queries, env core.EnvRow, rules []FlagRule, refs []uuid.UUID) error {
	if len(refs) == 0 {
		return nil
	}
	rows, err := q.SegmentStatesByIDs(ctx, db.SegmentStatesByIDsParams{OrganizationID: env.OrganizationID, Ids: refs,
		EnvID: env.Environment.ID, Scopes: EnvScopes(env)})
	if err != nil {
		return err
	}
	usable := make(map[string]bool, len(rows))
	for _, r := range rows {
		usable[r.ID.String()] = !r.IsArchived
	}
	for i, r := range rules {
		for j, c := range r.Conditions {
			if c.Property != targeting.SegmentIn && c.Property != targeting.SegmentNotIn {
				continue
			}
			var ids []string
			_ = json.Unmarshal([]byte(c.Value), &ids)
			for _, id := range ids {
				if parsed, err := uuid.Parse(id); err == nil && !usable[parsed.String()] {
					var v core.Validator
					v.At("rules", "invalid", fmt.Sprintf("rules[%d].conditions[%d].value", i, j),
						"segment "+id+" does not exist here or is archived")
					return v.Err()
				}
			}
		}
	}
	return nil
}

// SegmentRNIn is the resource name permissions are checked on, tags included.
func SegmentRNIn(env core.EnvRow, key string, tags []string) string {
	return SegmentRN(env.ProjectKey, env.Environment.Key, key, tags)
}

// SegmentRN names a segment with its tags, as permissions are checked on it
// in the environment it is managed from.
func SegmentRN(projectKey, envKey, segmentKey string, tags []string) string {
	return withTags(core.EnvRN(projectKey, envKey)+":segment/"+segmentKey, tags)
}
