package flagstore

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"

	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// Change is what every flag and segment change may carry: a comment for the
// history and, for flags, the revision the change was made from.
type Change struct {
	Comment  string     `json:"comment"`
	Revision *uuid.UUID `json:"revision"`
}

// Check reports comment problems; environments may require one.
func (ch Change) Check(v *core.Validator, env core.EnvRow) {
	if strings.TrimSpace(ch.Comment) == "" {
		if env.Environment.RequireChangeComment {
			v.Add("comment", "required")
		}
		return
	}
	v.Text("comment", ch.Comment, core.MaxCommentLen)
}

// FlagInput creates a flag. Only name and key are required; the rest defaults
// to a boolean flag that is off, serving its first variation when on and its
// second when off.
type FlagInput struct {
	Name                string      `json:"name"`
	Key                 string      `json:"key"`
	Description         string      `json:"description"`
	VariationType       string      `json:"variationType"`
	Variations          []Variation `json:"variations"`
	EnabledVariationID  string      `json:"enabledVariationId"`
	DisabledVariationID string      `json:"disabledVariationId"`
	IsEnabled           bool        `json:"isEnabled"`
	Tags                []string    `json:"tags"`
	Change
	// NewFlagRequest is the change request the flag comes in with where
	// the environment's changes need approval.
	NewFlagRequest
}

// DefaultVariations are the variations a new flag of a type starts with, as
// FeatBit's editor makes them.
func DefaultVariations(typ string) []Variation {
	pair := map[string][2][2]string{
		targeting.VariationBoolean: {{"True", "true"}, {"False", "false"}},
		targeting.VariationString:  {{"Variation A", "variation-a"}, {"Variation B", "variation-b"}},
		targeting.VariationNumber:  {{"Variation 1", "1"}, {"Variation 2", "2"}},
		targeting.VariationJSON:    {{"Variation A", "{}"}, {"Variation B", "{}"}},
	}[typ]
	return []Variation{
		{ID: uuid.NewString(), Name: pair[0][0], Value: pair[0][1]},
		{ID: uuid.NewString(), Name: pair[1][0], Value: pair[1][1]},
	}
}

// EnvFlagRN is the resource name permissions are checked on, tags included.
func EnvFlagRN(env core.EnvRow, key string, tags []string) string {
	return FlagRN(env.ProjectKey, env.Environment.Key, key, tags)
}

// FlagRN names a flag with its tags, as permissions are checked on it, so the
// admin pages can hide exactly what the store would refuse.
func FlagRN(projectKey, envKey, flagKey string, tags []string) string {
	return withTags(core.EnvRN(projectKey, envKey)+":flag/"+flagKey, tags)
}

// WithTags adds a resource's tags to its name, as patterns with tags match them.
func withTags(rn string, tags []string) string {
	if len(tags) > 0 {
		rn += ";" + strings.Join(tags, ",")
	}
	return rn
}

// CreateFlag creates a flag in an environment: CreateFlagRequesting's flag.
func (s *Flags) CreateFlag(ctx context.Context, a *core.Actor, envID uuid.UUID, in FlagInput) (Flag, error) {
	out, err := s.CreateFlagRequesting(ctx, a, envID, in)
	return out.Flag, err
}

// CreateFlagRequesting creates a flag in an environment; where its changes
// need approval the flag comes in pending, with a change request of in's
// reason and reviewers (insertFlag), which the answer names.
func (s *Flags) CreateFlagRequesting(ctx context.Context, a *core.Actor, envID uuid.UUID, in FlagInput) (CreatedFlag, error) {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return CreatedFlag{}, err
	}
	if err := MayCreateFlag(a, env); err != nil {
		return CreatedFlag{}, err
	}
	if in.VariationType == "" && len(in.Variations) == 0 {
		in.VariationType = targeting.VariationBoolean
	}
	if len(in.Variations) == 0 {
		in.Variations = DefaultVariations(in.VariationType)
	}
	if in.EnabledVariationID == "" && len(in.Variations) > 0 {
		in.EnabledVariationID = in.Variations[0].ID
	}
	if in.DisabledVariationID == "" && len(in.Variations) > 0 {
		in.DisabledVariationID = in.Variations[min(1, len(in.Variations)-1)].ID
	}
	if in.Tags == nil {
		in.Tags = []string{}
	}
	f := Flag{
		ID: uuid.New(), EnvID: envID, Revision: uuid.New(), CreatorID: a.UserID, UpdatorID: a.UserID,
		Name: strings.TrimSpace(in.Name), Key: in.Key, Description: in.Description,
		VariationType: in.VariationType, Variations: in.Variations, TargetUsers: []TargetUser{}, Rules: []FlagRule{},
		IsEnabled: in.IsEnabled, DisabledVariationID: in.DisabledVariationID,
		Fallthrough: Fallthrough{IncludedInExpt: true, Variations: []RolloutVariation{
			{ID: in.EnabledVariationID, Rollout: []float64{0, 1}, ExptRollout: 1}}},
		ExptIncludeAllTargets: true, Tags: in.Tags,
	}
	in.Change = commentOr(env, in.Change, in.NewFlagRequest)
	var v core.Validator
	CheckFlag(&v, &f)
	in.Change.Check(&v, env)
	if err := v.Err(); err != nil {
		return CreatedFlag{}, err
	}
	if err := a.Require(access.CreateFlag, EnvFlagRN(env, f.Key, f.Tags)); err != nil {
		return CreatedFlag{}, err
	}
	var out CreatedFlag
	err = s.core.InTx(ctx, func(q *db.Queries) (err error) {
		out.Flag, out.PendingApproval, err = s.InsertFlag(ctx, q, a, env, f, nil, in.Comment, in.NewFlagRequest)
		return err
	})
	return out, err
}

// InsertFlag stores a new flag whose rules name refs, and records its
// creation: the one way a flag comes to exist (created, cloned, copied or
// imported). Where env's changes need approval, a flag that is not
// archived comes in pending, with the change request req (pendingFlag):
// SDKs see it only once that is approved and applied.
func (s *Flags) InsertFlag(ctx context.Context, q *db.Queries, a *core.Actor, env core.EnvRow, f Flag, refs []uuid.UUID,
	comment string, req NewFlagRequest) (Flag, *RequestedChange, error) {
	if ApprovalsNeeded(env.Environment) > 0 && !f.IsArchived {
		return s.pendingFlag(ctx, q, a, env, f, refs, comment, req)
	}
	out, err := s.storeNewFlag(ctx, q, a, env, f, refs, comment)
	return out, nil, err
}

// storeNewFlag is insertFlag's writing: the row and its history entry.
func (s *Flags) storeNewFlag(ctx context.Context, q *db.Queries, a *core.Actor, env core.EnvRow, f Flag, refs []uuid.UUID, comment string) (Flag, error) {
	p, err := flagParams(f)
	if err != nil {
		return Flag{}, err
	}
	if refs == nil {
		refs = []uuid.UUID{}
	}
	row, err := q.CreateFlag(ctx, db.CreateFlagParams{EnvID: env.Environment.ID, Key: f.Key, Name: f.Name, Description: f.Description,
		VariationType: f.VariationType, Variations: p.Variations, TargetUsers: p.TargetUsers, Rules: p.Rules,
		IsEnabled: f.IsEnabled, DisabledVariationID: f.DisabledVariationID, Fallthrough: p.Fallthrough,
		ExptIncludeAllTargets: f.ExptIncludeAllTargets, Tags: f.Tags, SegmentRefs: refs,
		Revision: f.Revision, CreatorID: core.ActorID(a), IsArchived: f.IsArchived})
	if err != nil {
		return Flag{}, err
	}
	out, err := FlagFrom(row)
	if err != nil {
		return Flag{}, err
	}
	return out, s.RecordFlag(ctx, q, a, env.OrganizationID, env.Environment.ID, core.OpCreate, nil, &out, comment)
}

// CheckFlag validates a whole flag, as created or as a change leaves it, and
// returns the segments its rules name.
func CheckFlag(v *core.Validator, f *Flag) []uuid.UUID {
	v.Required("name", f.Name, core.MaxNameLen)
	v.Key("key", f.Key)
	v.Text("description", f.Description, core.MaxDescriptionLen)
	problems, refs := targeting.CheckFlag(f)
	for _, p := range problems {
		v.At(p.Field, p.Problem, p.Path, p.Message)
	}
	return refs
}

// GetFlag returns a flag by its exact key.
func (s *Flags) GetFlag(ctx context.Context, a *core.Actor, envID uuid.UUID, key string) (Flag, error) {
	row, err := s.FlagRowIn(ctx, a, envID, key)
	if err != nil {
		return Flag{}, err
	}
	return FlagFrom(row)
}

// ErrFlagIsArchived refuses changing an archived flag; it can only be
// restored or deleted.
var ErrFlagIsArchived = &core.RuleError{Code: "FlagIsArchived"}

// MayCreateFlag checks that a person may create flags in env.
func MayCreateFlag(a *core.Actor, env core.EnvRow) error {
	return a.Require(access.CreateFlag, env.RN()+":flag/*")
}

// RequireFlagActions checks each action on every version of a flag, so a
// change cannot move a flag out of the caller's reach.
func RequireFlagActions(a *core.Actor, env core.EnvRow, actions []access.Action, versions ...Flag) error {
	for _, act := range actions {
		for _, f := range versions {
			if err := a.Require(act, EnvFlagRN(env, f.Key, f.Tags)); err != nil {
				return err
			}
		}
	}
	return nil
}

// StoreFlag writes a changed flag if its revision is still from; a lost race
// is a conflict, never a silent overwrite.
func StoreFlag(ctx context.Context, q *db.Queries, f Flag, from uuid.UUID, refs []uuid.UUID) (Flag, error) {
	p, err := flagParams(f)
	if err != nil {
		return Flag{}, err
	}
	if refs == nil {
		refs = []uuid.UUID{}
	}
	updatedAt, err := q.UpdateFlag(ctx, db.UpdateFlagParams{ID: f.ID, Revision: from, NewRevision: f.Revision,
		Name: f.Name, Description: f.Description, VariationType: f.VariationType, Variations: p.Variations,
		TargetUsers: p.TargetUsers, Rules: p.Rules, IsEnabled: f.IsEnabled, DisabledVariationID: f.DisabledVariationID,
		Fallthrough: p.Fallthrough, ExptIncludeAllTargets: f.ExptIncludeAllTargets, Tags: f.Tags,
		IsArchived: f.IsArchived, SegmentRefs: refs, UpdatorID: f.UpdatorID})
	if err != nil {
		if err = core.Translate(err); err == core.ErrNotFound {
			return Flag{}, core.ErrConflict
		}
		return Flag{}, err
	}
	// The stored flag is f as written: decoding the row back would cost a
	// change as much CPU as encoding it did.
	f.UpdatedAt, f.Tags = updatedAt.UTC(), core.OrEmpty(f.Tags)
	return f, nil
}

// flagEvent tells SDKs and caches that a flag changed.
func flagEvent(orgID uuid.UUID, f Flag) feed.Event {
	return feed.Event{Kind: feed.EventFlag, ID: f.ID, OrgID: orgID, EnvIDs: []uuid.UUID{f.EnvID}}
}

// RecordFlag records a change of a flag in one statement: its revision
// (unless it was removed), its audit entry and its change event, which
// readers of the change outbox see when the transaction commits. The flag
// is encoded once, for both the revision and the audit entry.
func (s *Flags) RecordFlag(ctx context.Context, q *db.Queries, a *core.Actor, orgID, envID uuid.UUID, op string, before, after *Flag, comment string) error {
	p := db.RecordFlagChangeParams{EnvID: &envID, Operation: op, Comment: comment, WorkspaceID: a.WorkspaceID,
		CreatorID: core.ActorID(a), CreatorKind: core.ActorKind(a)}
	if a.OrgID != uuid.Nil {
		p.OrganizationID = &a.OrgID
	}
	changed := after
	if before != nil {
		previous, err := jsonv1.Marshal(before)
		if err != nil {
			return err
		}
		p.Previous, changed = previous, before
	}
	if after != nil {
		current, err := jsonv1.Marshal(after)
		if err != nil {
			return err
		}
		p.Current, p.Revision, changed = current, after.Revision, after
	}
	p.FlagID, p.Keyword = changed.ID, changed.Key+","+changed.Name
	ch := core.Change{RefType: "FeatureFlag", RefID: changed.ID.String(), Keyword: p.Keyword, Operation: op, EnvID: &envID,
		Comment: comment}
	if before != nil {
		ch.Previous = before
	}
	if after != nil {
		ch.Current = after
	}
	event, err := feed.Encode(ctx, flagEvent(orgID, *changed))
	if err != nil {
		return err
	}
	p.Event, p.WebhookEvents = event, s.core.WebhookEvents(a, ch)
	s.core.ChangesRecorded.Add(1)
	subscribed, err := q.RecordFlagChange(ctx, p)
	if err != nil || !subscribed {
		return err
	}
	// The audit entry is written here rather than by audit, so its webhook
	// deliveries are queued here, as audit queues them.
	return s.core.QueueWebhooks(ctx, q, a, ch, p.WebhookEvents)
}

// FlagChangeActions names the action each changed part of a flag needs.
func FlagChangeActions(before, after Flag) []access.Action {
	var actions []access.Action
	add := func(changed bool, action access.Action) {
		if changed {
			actions = append(actions, action)
		}
	}
	add(before.Name != after.Name, access.UpdateFlagName)
	add(before.Description != after.Description, access.UpdateFlagDescription)
	add(before.IsEnabled != after.IsEnabled, access.ToggleFlag)
	add(before.VariationType != after.VariationType || !SameJSON(before.Variations, after.Variations), access.UpdateFlagVariations)
	add(before.DisabledVariationID != after.DisabledVariationID, access.UpdateFlagOffVariation)
	add(!slices.Equal(before.Tags, after.Tags), access.UpdateFlagTags)
	add(!SameJSON(before.TargetUsers, after.TargetUsers), access.UpdateFlagIndividualTargeting)
	add(!SameJSON(before.Rules, after.Rules), access.UpdateFlagTargetingRules)
	add(before.ExptIncludeAllTargets != after.ExptIncludeAllTargets || !SameJSON(before.Fallthrough, after.Fallthrough), access.UpdateFlagDefaultRule)
	add(!before.IsArchived && after.IsArchived, access.ArchiveFlag)
	add(before.IsArchived && !after.IsArchived, access.RestoreFlag)
	if before.Key != after.Key {
		actions = append(actions, access.UpdateFlagName)
	}
	return actions
}

// CreatedShape is f as CreateFlag makes a flag of its name, key,
// description, variations, off variation, tags and state: no individual
// targets, no rules, and a default rule serving one variation (f's first
// there) to everyone, with f's experiment settings. What f serves beyond
// that takes the actions of changing it by hand (flagChangeActions).
// Emptied with [:0], a list encodes as f's would when empty: null for
// none, [] for an empty one.
func CreatedShape(f Flag) Flag {
	all := RolloutVariation{Rollout: []float64{0, 1}}
	if len(f.Fallthrough.Variations) > 0 {
		all.ID, all.ExptRollout = f.Fallthrough.Variations[0].ID, f.Fallthrough.Variations[0].ExptRollout
	} else if len(f.Variations) > 0 {
		all.ID = f.Variations[0].ID
	}
	f.TargetUsers, f.Rules = f.TargetUsers[:0], f.Rules[:0]
	f.Fallthrough.Variations = []RolloutVariation{all}
	return f
}

// SameFlag reports whether a change left every stored part of the flag as it was.
func SameFlag(before, after Flag) bool {
	after.Revision, after.UpdatorID, after.UpdatedAt = before.Revision, before.UpdatorID, before.UpdatedAt
	return SameJSON(before, after)
}

// SameJSON reports whether x and y encode to the same JSON: whether an
// edit changed anything that is stored. The write paths encode with jsonv1:
// encoding/json's output from encoding/json/v2's engine, in less time.
func SameJSON(x, y any) bool {
	a, errA := jsonv1.Marshal(x)
	b, errB := jsonv1.Marshal(y)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// flagJSON holds a flag's JSON columns.
type flagJSON struct {
	Variations, TargetUsers, Rules, Fallthrough json.RawMessage
}

func flagParams(f Flag) (flagJSON, error) {
	var p flagJSON
	var err error
	for _, part := range []struct {
		dst *json.RawMessage
		src any
	}{{&p.Variations, f.Variations}, {&p.TargetUsers, f.TargetUsers}, {&p.Rules, f.Rules}, {&p.Fallthrough, f.Fallthrough}} {
		if *part.dst, err = jsonv1.Marshal(part.src); err != nil {
			return flagJSON{}, err
		}
	}
	return p, nil
}

func FlagFrom(r db.FeatureFlag) (Flag, error) {
	f := Flag{ID: r.ID, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), CreatorID: r.CreatorID,
		UpdatorID: r.UpdatorID, EnvID: r.EnvID, Revision: r.Revision, Name: r.Name, Description: r.Description,
		Key: r.Key, VariationType: r.VariationType, IsEnabled: r.IsEnabled, DisabledVariationID: r.DisabledVariationID,
		ExptIncludeAllTargets: r.ExptIncludeAllTargets, Tags: r.Tags, IsArchived: r.IsArchived}
	if err := DecodeStored(StoredPart{r.Variations, &f.Variations}, StoredPart{r.TargetUsers, &f.TargetUsers},
		StoredPart{r.Rules, &f.Rules}, StoredPart{r.Fallthrough, &f.Fallthrough}); err != nil {
		return Flag{}, err
	}
	if f.Tags == nil {
		f.Tags = []string{}
	}
	return f, nil
}
